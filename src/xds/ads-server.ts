import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { EventEmitter } from 'eventemitter3';
import type { AdsCall, DiscoveryRequest, Node } from './ads-protocol.js';
import { ADS_SERVICE } from './ads-protocol.js';
import { ADS_LIMITS, clipDetails } from './ads-limits.js';
import { AdsStream, type StreamHooks } from './ads-stream.js';
import type { ConfigSource, ProxyHandle, StreamFollower } from './config-source.js';
import type { StreamStatus } from './grpc-status.js';
import { streamStatusOf } from './grpc-status.js';
import { AppError } from '../util/errors.js';
import { epochTime, SmallTypeTable, streamTime, type StreamInfo } from './stream-info.js';

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
  private readonly side: ServerSide;

  constructor(
    source: ConfigSource,
    private readonly options: AdsServerOptions = {},
  ) {
    super();
    this.side = { events: this, source, now: options.now ?? (() => new Date()), open: new Map() };
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
      // No channelz (nothing reads it): it costs every call a tracker of four closures and every
      // message two clock reads.
      'grpc.enable_channelz': 0,
    });
    server.addService(ADS_SERVICE, {
      StreamAggregatedResources: (call: AdsCall) => accept(this.side, call),
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
    return [...this.side.open.values()].map((c) => (c.stream as AdsStream).info);
  }

  /** The stream of an id, while it is open (its `served(typeUrl)` gives the encoded resources). */
  stream(id: string): AdsStream | undefined {
    return this.side.open.get(id)?.stream;
  }

  /** Ends every stream with UNAVAILABLE and stops the server. */
  async close(): Promise<void> {
    for (const c of [...this.side.open.values()])
      c.finish({ code: grpc.status.UNAVAILABLE, details: 'the control plane is stopping' });
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
}

/** What the calls of one server share: its events, source, clock and open streams. */
interface ServerSide {
  readonly events: EventEmitter<AdsServerEvents>;
  readonly source: ConfigSource;
  readonly now: () => Date;
  readonly open: Map<string, Connection>;
}

/**
 * One call, from its first request to its end: the first request must carry the node; requests
 * that arrive while the source decides are kept and handled in order once it accepted the stream.
 * Its fields are all its state (10,000 calls hold no closures of their own: the call's listeners
 * are shared functions that find the connection by the call, and the connection is its stream's
 * hooks).
 */
class Connection implements StreamHooks, StreamFollower {
  /** Requests that came before the source accepted the stream (none once it did). */
  early: DiscoveryRequest[] | undefined = [];
  stream: AdsStream | undefined = undefined;
  handle: ProxyHandle | undefined = undefined;
  stopChanges: (() => void) | undefined = undefined;
  stopEnd: (() => void) | undefined = undefined;
  opening = false;
  ended = false;

  constructor(
    readonly side: ServerSide,
    readonly call: AdsCall,
  ) {}

  /** Ends the call with `unclipped` (sent to the proxy unless it ended the call itself). */
  finish(unclipped: StreamStatus, fromPeer = false): void {
    if (this.ended) return;
    this.ended = true;
    this.early = undefined;
    const status = { code: unclipped.code, details: clipDetails(unclipped.details) };
    if (!fromPeer) {
      if (status.code === grpc.status.OK) this.call.end();
      // grpc-js: an `error` event on a server stream becomes the call's status.
      else this.call.emit('error', status);
    }
    this.stopChanges?.();
    this.stopEnd?.();
    this.handle?.closed();
    const stream = this.stream;
    if (stream) {
      stream.end();
      this.side.open.delete(stream.info.id);
      stream.info.disconnectTime = this.side.now();
      this.side.events.emit('disconnect', stream.info, status);
    }
  }

  updated(info: StreamInfo): void {
    this.side.events.emit('update', info);
  }

  /** The source says config may have changed. */
  changed(): void {
    this.stream?.changed();
  }

  /** The source ends the stream (its token no longer holds: an AppError, told as the status). */
  end(err: unknown): void {
    if (!(err instanceof AppError) && this.stream)
      this.side.events.emit('streamError', this.stream.info, err);
    this.finish(streamStatusOf(err));
  }

  failed(err: unknown): void {
    if (this.stream) this.side.events.emit('streamError', this.stream.info, err);
    this.finish(streamStatusOf(err));
  }

  /** One request of the proxy. */
  data(req: DiscoveryRequest): void {
    if (this.ended) return;
    const problem = this.unusable(req);
    if (problem && this.stream) return this.finish(problem);
    if (problem) return this.refuse(req.node, problem, new Error(problem.details));
    if (this.stream) return this.stream.receive(req);
    const early = this.early as DiscoveryRequest[];
    if (early.length >= ADS_LIMITS.earlyRequests) {
      const details = `${early.length + 1} requests came before the first one was answered; at most ${ADS_LIMITS.earlyRequests}`;
      return this.refuse(
        early[0]?.node,
        { code: grpc.status.RESOURCE_EXHAUSTED, details },
        new Error(details),
      );
    }
    early.push(req);
    if (this.opening) return;
    this.opening = true;
    const node = req.node;
    if (!node) {
      const status = {
        code: grpc.status.INVALID_ARGUMENT,
        details: 'the first DiscoveryRequest carries no node',
      };
      return this.refuse(undefined, status, new Error(status.details));
    }
    this.side.source.open(node, this.call.metadata).then(
      (h) => this.opened(node, h),
      (err: unknown) => this.refuse(node, streamStatusOf(err), err),
    );
  }

  private refuse(node: Node | undefined, status: StreamStatus, err: unknown): void {
    const clipped = { code: status.code, details: clipDetails(status.details) };
    this.finish(clipped);
    this.side.events.emit('refuse', node, clipped, err, this.call.getPeer());
  }

  /** Why a request is not served (it cannot be read, or asks too much), or undefined. */
  private unusable(req: DiscoveryRequest): StreamStatus | undefined {
    if (req.invalid !== undefined) return { code: grpc.status.INVALID_ARGUMENT, details: req.invalid };
    if (req.type_url.length > ADS_LIMITS.typeUrlLength) {
      return {
        code: grpc.status.INVALID_ARGUMENT,
        details: `the type_url is ${req.type_url.length} characters long; at most ${ADS_LIMITS.typeUrlLength}`,
      };
    }
    const types = this.stream?.info.types;
    if (types && !types.has(req.type_url) && types.size >= ADS_LIMITS.typesPerStream) {
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
  }

  private opened(node: Node, h: ProxyHandle): void {
    if (this.ended) return h.closed();
    this.handle = h;
    const info = new OpenStreamInfo(randomUUID(), node, this.call.getPeer(), this.side.now(), h.proxy);
    const s = new AdsStream(this.call, h, info, this, this.side.now);
    this.stream = s;
    this.side.open.set(info.id, this);
    if (h.follow) h.follow(this);
    else {
      this.stopChanges = h.onChange(() => s.changed());
      this.stopEnd = h.onEnd?.((err) => this.end(err));
    }
    this.side.events.emit('connect', info);
    const early = this.early ?? [];
    this.early = undefined;
    for (const req of early) {
      // Checked again now that the stream counts its types (it did not exist when they came).
      const problem = this.unusable(req);
      if (problem) return this.finish(problem);
      s.receive(req);
    }
  }
}

/**
 * A stream's {@link StreamInfo}: its times are kept as numbers and read as Dates (a Date costs
 * about 100 bytes, and there are 10,000 streams); the user agent is the node's.
 */
class OpenStreamInfo implements StreamInfo {
  readonly types = new SmallTypeTable();
  readonly userAgent: { name: string; version: string };
  /** The times, as `streamTime`s. */
  private readonly connectAt: number;
  private lastUpdateAt: number;
  private disconnectAt: number | undefined = undefined;

  constructor(
    readonly id: string,
    readonly node: Node,
    readonly peer: string,
    connectTime: Date,
    readonly proxy: { readonly mesh: string; readonly name: string } | undefined,
  ) {
    this.connectAt = streamTime(connectTime.getTime());
    this.lastUpdateAt = this.connectAt;
    this.userAgent = userAgentOf(node);
  }

  get connectTime(): Date {
    return new Date(epochTime(this.connectAt));
  }

  get lastUpdateTime(): Date {
    return new Date(this.lastUpdateMs);
  }

  set lastUpdateTime(at: Date) {
    this.lastUpdateAt = streamTime(at.getTime());
  }

  get lastUpdateMs(): number {
    return epochTime(this.lastUpdateAt);
  }

  get disconnectTime(): Date | undefined {
    return this.disconnectAt === undefined ? undefined : new Date(epochTime(this.disconnectAt));
  }

  set disconnectTime(at: Date | undefined) {
    this.disconnectAt = at === undefined ? undefined : streamTime(at.getTime());
  }
}

/** Distinct user agents kept for sharing; past it the table starts again. */
const USER_AGENTS_MAX = 1024;
const USER_AGENTS = new Map<string, { name: string; version: string }>();

/** The node's user agent, as one object per distinct agent (a mesh runs a few client builds). */
function userAgentOf(node: Node): { name: string; version: string } {
  const key = JSON.stringify([node.user_agent_name, node.user_agent_version]);
  let agent = USER_AGENTS.get(key);
  if (!agent) {
    if (USER_AGENTS.size >= USER_AGENTS_MAX) USER_AGENTS.clear();
    agent = Object.freeze({ name: node.user_agent_name, version: node.user_agent_version });
    USER_AGENTS.set(key, agent);
  }
  return agent;
}

/** The connection of each call (the call's listeners are shared functions; `this` is the call). */
const CONNECTIONS = new WeakMap<AdsCall, Connection>();

function accept(side: ServerSide, call: AdsCall): void {
  CONNECTIONS.set(call, new Connection(side, call));
  call.on('data', onData);
  call.on('end', onEnd);
  call.on('cancelled', onCancelled);
  call.on('error', onError);
  call.on('close', onClose);
}

function onData(this: AdsCall, req: DiscoveryRequest): void {
  CONNECTIONS.get(this)?.data(req);
}
function onEnd(this: AdsCall): void {
  CONNECTIONS.get(this)?.finish({ code: grpc.status.OK, details: 'the proxy ended the stream' });
}
function onCancelled(this: AdsCall): void {
  CONNECTIONS.get(this)?.finish({ code: grpc.status.CANCELLED, details: 'the proxy went away' }, true);
}
function onError(this: AdsCall, err: Error & { code?: number }): void {
  CONNECTIONS.get(this)?.finish({ code: err.code ?? grpc.status.UNKNOWN, details: err.message }, true);
}
function onClose(this: AdsCall): void {
  CONNECTIONS.get(this)?.finish({ code: grpc.status.UNAVAILABLE, details: 'the stream closed' }, true);
}
