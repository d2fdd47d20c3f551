import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { EventEmitter } from 'eventemitter3';
import type { AdsCall, DiscoveryRequest, Node } from './ads-protocol.js';
import { ADS_SERVICE } from './ads-protocol.js';
import { ADS_LIMITS, clipDetails } from './ads-limits.js';
import { AdsStream } from './ads-stream.js';
import type { ConfigSource, ProxyHandle } from './config-source.js';
import type { StreamStatus } from './grpc-status.js';
import { streamStatusOf } from './grpc-status.js';
import { AppError } from '../util/errors.js';
import type { StreamInfo } from './stream-info.js';

/** Events of the ADS server; payloads are live objects, kept in memory only. */
export interface AdsServerEvents {
  /** A proxy's stream was accepted by the source. */
  connect: (info: StreamInfo) => void;
  /** Counters or subscriptions of a stream changed. */
  update: (info: StreamInfo) => void;
  /** A stream ended (`info.disconnectTime` is set). */
  disconnect: (info: StreamInfo, status: StreamStatus) => void;
  /** A stream was refused before it opened (no node, a request it cannot read, or the source refused); `peer` is the caller's address. */
  refuse: (node: Node | undefined, status: StreamStatus, err: unknown, peer: string) => void;
  /** Computing or encoding config failed; the stream ends with INTERNAL. */
  streamError: (info: StreamInfo, err: unknown) => void;
}

/** Options of {@link AdsServer}. */
export interface AdsServerOptions {
  /** Keepalive ping interval (default 10 s) and how long an unanswered ping may wait (default 5 s). */
  keepaliveTimeMs?: number;
  keepaliveTimeoutMs?: number;
  now?: () => Date;
}

/**
 * The ADS server: `envoy.service.discovery.v3.AggregatedDiscoveryService`, state of the world,
 * over plain gRPC. It knows the protocol only; which proxy is connecting and what it is served
 * come from the {@link ConfigSource}. Keepalive pings detect proxies that vanished without closing
 * their connection (a host that died), within keepaliveTime + keepaliveTimeout.
 */
export class AdsServer extends EventEmitter<AdsServerEvents> {
  private server: grpc.Server | undefined;
  private readonly open = new Map<string, { stream: AdsStream; finish: (status: StreamStatus) => void }>();
  private readonly now: () => Date;

  constructor(
    private readonly source: ConfigSource,
    private readonly options: AdsServerOptions = {},
  ) {
    super();
    this.now = options.now ?? (() => new Date());
  }

  /** Binds `host:port` (port 0: any free port) and resolves with the bound port. */
  async start({ port, host = '0.0.0.0' }: { port: number; host?: string }): Promise<number> {
    const server = new grpc.Server({
      'grpc.keepalive_time_ms': this.options.keepaliveTimeMs ?? 10_000,
      'grpc.keepalive_timeout_ms': this.options.keepaliveTimeoutMs ?? 5_000,
      // @grpc/grpc-js-xds pings every 5 minutes; let clients ping without calls too.
      'grpc.keepalive_permit_without_calls': 1,
      'grpc.max_send_message_length': 64 * 1024 * 1024,
      'grpc.max_receive_message_length': ADS_LIMITS.requestBytes,
    });
    server.addService(ADS_SERVICE, {
      StreamAggregatedResources: (call: AdsCall) => this.accept(call),
    });
    const bound = await new Promise<number>((resolve, reject) =>
      server.bindAsync(
        `${host.includes(':') ? `[${host}]` : host}:${port}`,
        grpc.ServerCredentials.createInsecure(),
        (err, p) => (err ? reject(err) : resolve(p)),
      ),
    );
    this.server = server;
    return bound;
  }

  /** Every open stream. */
  streams(): StreamInfo[] {
    return [...this.open.values()].map((s) => s.stream.info);
  }

  /** The stream of an id, while it is open (its `served(typeUrl)` gives the encoded resources). */
  stream(id: string): AdsStream | undefined {
    return this.open.get(id)?.stream;
  }

  /** Ends every stream with UNAVAILABLE and stops the server. */
  async close(): Promise<void> {
    for (const s of [...this.open.values()])
      s.finish({ code: grpc.status.UNAVAILABLE, details: 'the control plane is stopping' });
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    await new Promise<void>((resolve) => {
      const force = setTimeout(() => {
        server.forceShutdown();
        resolve();
      }, 1000);
      server.tryShutdown(() => {
        clearTimeout(force);
        resolve();
      });
    });
  }

  /**
   * One call: the first request must carry the node; requests that arrive while the source
   * decides are kept and handled in order once it accepted the stream.
   */
  private accept(call: AdsCall): void {
    const early: DiscoveryRequest[] = [];
    let stream: AdsStream | undefined;
    let handle: ProxyHandle | undefined;
    let unsubscribe: (() => void) | undefined;
    let opening = false;
    let ended = false;

    const finish = (unclipped: StreamStatus, fromPeer = false): void => {
      if (ended) return;
      ended = true;
      const status = { code: unclipped.code, details: clipDetails(unclipped.details) };
      if (!fromPeer) {
        if (status.code === grpc.status.OK) call.end();
        // grpc-js: an `error` event on a server stream becomes the call's status.
        else call.emit('error', status);
      }
      unsubscribe?.();
      handle?.closed();
      if (stream) {
        stream.end();
        this.open.delete(stream.info.id);
        stream.info.disconnectTime = this.now();
        this.emit('disconnect', stream.info, status);
      }
    };

    const refuse = (node: Node | undefined, status: StreamStatus, err: unknown): void => {
      const clipped = { code: status.code, details: clipDetails(status.details) };
      finish(clipped);
      this.emit('refuse', node, clipped, err, call.getPeer());
    };

    /** Why a request is not served (it cannot be read, or asks too much), or undefined. */
    const unusable = (req: DiscoveryRequest): StreamStatus | undefined => {
      if (req.invalid !== undefined) return { code: grpc.status.INVALID_ARGUMENT, details: req.invalid };
      if (req.type_url.length > ADS_LIMITS.typeUrlLength) {
        return {
          code: grpc.status.INVALID_ARGUMENT,
          details: `the type_url is ${req.type_url.length} characters long; at most ${ADS_LIMITS.typeUrlLength}`,
        };
      }
      if (
        stream &&
        !stream.info.types.has(req.type_url) &&
        stream.info.types.size >= ADS_LIMITS.typesPerStream
      ) {
        return {
          code: grpc.status.RESOURCE_EXHAUSTED,
          details: `a stream subscribes to at most ${ADS_LIMITS.typesPerStream} resource types`,
        };
      }
      if (req.resource_names.length > ADS_LIMITS.resourceNames) {
        return {
          code: grpc.status.RESOURCE_EXHAUSTED,
          details: `a DiscoveryRequest names ${req.resource_names.length} resources; at most ${ADS_LIMITS.resourceNames} per request (a client asks for the services it dials)`,
        };
      }
      return undefined;
    };

    const opened = (node: Node, h: ProxyHandle): void => {
      if (ended) return h.closed();
      handle = h;
      const now = this.now();
      const info: StreamInfo = {
        id: randomUUID(),
        node,
        peer: call.getPeer(),
        connectTime: now,
        lastUpdateTime: now,
        userAgent: { name: node.user_agent_name, version: node.user_agent_version },
        types: new Map(),
      };
      const s = new AdsStream(
        call,
        h,
        info,
        {
          updated: (i) => this.emit('update', i),
          failed: (err) => {
            this.emit('streamError', info, err);
            finish(streamStatusOf(err));
          },
        },
        this.now,
      );
      stream = s;
      this.open.set(info.id, { stream: s, finish });
      const unsubscribeChange = h.onChange(() => s.changed());
      const unsubscribeEnd = h.onEnd?.((err) => {
        if (!(err instanceof AppError)) this.emit('streamError', info, err);
        finish(streamStatusOf(err));
      });
      unsubscribe = () => {
        unsubscribeChange();
        unsubscribeEnd?.();
      };
      this.emit('connect', info);
      for (const req of early.splice(0)) {
        // Checked again now that the stream counts its types (it did not exist when they came).
        const problem = unusable(req);
        if (problem) return finish(problem);
        s.receive(req);
      }
    };

    call.on('data', (req: DiscoveryRequest) => {
      if (ended) return;
      const problem = unusable(req);
      if (problem && stream) return finish(problem);
      if (problem) return refuse(req.node, problem, new Error(problem.details));
      if (stream) return stream.receive(req);
      if (early.length >= ADS_LIMITS.earlyRequests) {
        const details = `${early.length + 1} requests came before the first one was answered; at most ${ADS_LIMITS.earlyRequests}`;
        return refuse(early[0]?.node, { code: grpc.status.RESOURCE_EXHAUSTED, details }, new Error(details));
      }
      early.push(req);
      if (opening) return;
      opening = true;
      const node = req.node;
      if (!node) {
        const status = {
          code: grpc.status.INVALID_ARGUMENT,
          details: 'the first DiscoveryRequest carries no node',
        };
        return refuse(undefined, status, new Error(status.details));
      }
      this.source.open(node, call.metadata).then(
        (h) => opened(node, h),
        (err: unknown) => refuse(node, streamStatusOf(err), err),
      );
    });
    call.on('end', () => finish({ code: grpc.status.OK, details: 'the proxy ended the stream' }));
    call.on('cancelled', () => finish({ code: grpc.status.CANCELLED, details: 'the proxy went away' }, true));
    call.on('error', (err: Error & { code?: number }) =>
      finish({ code: err.code ?? grpc.status.UNKNOWN, details: err.message }, true),
    );
    call.on('close', () => finish({ code: grpc.status.UNAVAILABLE, details: 'the stream closed' }, true));
  }
}
