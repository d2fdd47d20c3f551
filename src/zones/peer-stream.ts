import * as grpc from '@grpc/grpc-js';
import type { ReceivedMessage, SyncClientStream, SyncMessage, SyncStream } from './sync-protocol.js';

/** Why a stream ended: a gRPC status code and words for the log. */
export interface StreamEnd {
  code: grpc.status;
  details: string;
}

/** Timers of a sync stream (a dead peer is seen within 15 s). */
export interface StreamTimers {
  /** A Ping is sent after this long without sending anything. */
  heartbeatMs: number;
  /** The stream is closed after this long without receiving anything. */
  idleTimeoutMs: number;
}

/** The default timers: a ping every 3 s, a silent peer dropped after 10 s. */
export const DEFAULT_TIMERS: StreamTimers = { heartbeatMs: 3000, idleTimeoutMs: 10_000 };

/** One side of a sync stream: one writer, and a read loop that never waits on a send. */
export interface PeerStream {
  /** Queues a message; the single writer hands it to gRPC as soon as gRPC takes more. */
  send(msg: SyncMessage): void;
  /** Messages queued and not yet taken by gRPC. */
  queued(): number;
  /** Stops delivering messages (back-pressure towards the peer) until `resume`. */
  pause(): void;
  resume(): void;
  /** Ends the stream: OK ends it cleanly, any other code as an error status (server) or a cancel (client). */
  close(end?: StreamEnd): void;
  readonly ended: boolean;
}

type AnyCall = SyncStream | SyncClientStream;

/**
 * Wraps a gRPC duplex call. `onMessage` is called for every message but pings, synchronously and
 * in order: it must not wait on anything, and it only ever queues what it wants to send. `onEnd` is
 * called once, whichever side ended the stream and however.
 */
export function createPeerStream(
  call: AnyCall,
  opts: {
    timers: StreamTimers;
    onMessage(msg: ReceivedMessage): void;
    onEnd(end: StreamEnd): void;
  },
): PeerStream {
  let queue: SyncMessage[] = [];
  let head = 0;
  let draining = false;
  let ended = false;
  let lastWrite = Date.now();
  let lastRead = Date.now();

  /** The one writer: writes while gRPC accepts, then waits for `drain`. */
  const flush = (): void => {
    while (!ended && !draining && head < queue.length) {
      const msg = queue[head];
      queue[head] = undefined as unknown as SyncMessage;
      head += 1;
      lastWrite = Date.now();
      if (!call.write(msg)) {
        draining = true;
        call.once('drain', () => {
          draining = false;
          flush();
        });
      }
    }
    if (head === queue.length) {
      queue = [];
      head = 0;
    } else if (head > 1024) {
      queue = queue.slice(head);
      head = 0;
    }
  };

  const finish = (end: StreamEnd): void => {
    if (ended) return;
    ended = true;
    clearInterval(timer);
    queue = [];
    head = 0;
    opts.onEnd(end);
  };

  const timer = setInterval(
    () => {
      const now = Date.now();
      if (now - lastRead > opts.timers.idleTimeoutMs) {
        close({
          code: grpc.status.DEADLINE_EXCEEDED,
          details: `nothing received from the peer for ${opts.timers.idleTimeoutMs} ms`,
        });
        return;
      }
      if (now - lastWrite >= opts.timers.heartbeatMs && head === queue.length) send({ ping: {} });
    },
    Math.max(50, Math.floor(Math.min(opts.timers.heartbeatMs, opts.timers.idleTimeoutMs) / 3)),
  );
  timer.unref();

  const send = (msg: SyncMessage): void => {
    if (ended) return;
    queue.push(msg);
    flush();
  };

  const close = (end: StreamEnd = { code: grpc.status.OK, details: 'closed' }): void => {
    if (ended) return;
    if ('cancel' in call) {
      call.cancel();
    } else if (end.code === grpc.status.OK) {
      call.end();
    } else {
      // grpc-js: an `error` event on a server stream becomes the call's status.
      call.emit('error', { code: end.code, details: end.details });
    }
    finish(end);
  };

  call.on('data', (msg: unknown) => {
    const m = msg as ReceivedMessage;
    lastRead = Date.now();
    if (ended || m.body === 'ping') return;
    opts.onMessage(m);
  });
  call.on('error', (err: Error & { code?: number; details?: string }) => {
    finish({ code: err.code ?? grpc.status.UNKNOWN, details: err.details ?? err.message });
  });
  call.on('end', () => {
    // The peer half-closed: nothing more comes. A server ends its side too (status OK), or the
    // call would stay open with no timer left to end it.
    if (!ended && !('cancel' in call)) call.end();
    finish({ code: grpc.status.OK, details: 'the peer ended the stream' });
  });
  call.on('cancelled', () => finish({ code: grpc.status.CANCELLED, details: 'the peer went away' }));
  call.on('close', () => finish({ code: grpc.status.UNAVAILABLE, details: 'the stream closed' }));

  return {
    send,
    queued: () => queue.length - head,
    pause: () => call.pause(),
    resume: () => call.resume(),
    close,
    get ended() {
      return ended;
    },
  };
}
