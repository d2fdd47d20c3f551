import type { ServerResponse } from 'node:http';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { deadlineTimer } from '../util/deadline-timer.js';
import type { History, SecretData } from '../app/history.js';
import { eventItem } from '../app/history.js';
import type { LogEntry } from '../events/types.js';
import { openEventStream } from './event-stream.js';

/** Limits of the watch streams (config `apiServer.watch`). */
export interface WatchOptions {
  /** A `:` comment is sent this often (0: never). */
  heartbeatMs: number;
  /** A client with more than this many bytes waiting in its socket buffer is cut off. */
  bufferLimit: number;
  /** While catching up, a client that takes no data for this long is cut off (default 4 heartbeats, at least 1 s). */
  stallMs?: number;
  /** A cut-off client has this long to read its final event before the socket is destroyed (default 5 s). */
  graceMs?: number;
}

/** Why a stream ends: the title and details of its last `event: error`. */
export interface StreamEnd {
  title: string;
  details: string;
}

/** What ends a stream opened with a user token: its expiry, and its revocation or key change. */
export interface StreamCredential {
  /** Milliseconds the token has left, and what the stream says when they are over; absent: it does not expire. */
  expiry?: StreamEnd & { inMs: number };
  /** Whether a committed entry may change whether the token holds (its revocation list, its signing keys). */
  affects(e: LogEntry): boolean;
  /** Verifies the token again: why it no longer holds, or undefined while it does. */
  recheck(): Promise<StreamEnd | undefined>;
}

/** One stream: where it is in the log and what it wants. */
interface Watcher {
  res: ServerResponse;
  /** The next revision this watcher has not been sent (or skipped by its filter). */
  next: number;
  match: (e: LogEntry) => boolean;
  /** How its secret entries show their data. */
  secretData: SecretData;
  /** False while it reads its backlog from the log; then entries come from the bus. */
  live: boolean;
  closed: boolean;
  requestId: string;
  credential?: StreamCredential;
  /** The credential held with the log at this revision: later entries it `affects` need a re-check. */
  checkedTo: number;
  /** Cancels the cut-off at the credential's expiry. */
  stopExpiry?: () => void;
}

/** Entries read from the log per step of a backlog. */
const BACKLOG_CHUNK = 200;

/** The SSE text of one entry: `id`, `event` (the operation) and `data` (the audit-log item, redacted when `redact`). */
export function sseEvent(e: LogEntry, redact: boolean): string {
  return `id: ${e.revision}\nevent: ${e.operation}\ndata: ${JSON.stringify(eventItem(e, redact))}\n\n`;
}

const errorEvent = (title: string, details: string): string =>
  `event: error\ndata: ${JSON.stringify({ title, details })}\n\n`;

/**
 * The watch streams of one server (decisions §8). One bus listener queues committed batches and a
 * later turn fans them out, so a commit never waits on a watcher; each write is checked against the
 * buffer limit and a client that falls behind is cut off with a final `event: error`.
 */
export function createWatchHub(deps: {
  history: Pick<History, 'head' | 'read' | 'subscribe'>;
  options: WatchOptions;
  /** Whether entries of a kind are redacted for a watcher that shows secret data as `secretData`. */
  redacts: (kind: string, secretData: SecretData) => boolean;
  logger?: FastifyBaseLogger;
}) {
  const { history, options } = deps;
  /** The SSE text of an entry for a watcher. */
  const textFor = (w: Watcher, e: LogEntry): string => sseEvent(e, deps.redacts(e.kind, w.secretData));
  const stallMs = options.stallMs ?? Math.max(1000, 4 * options.heartbeatMs);
  const graceMs = options.graceMs ?? 5000;
  const watchers = new Set<Watcher>();
  let queue: Array<readonly LogEntry[]> = [];
  let scheduled = false;
  let unsubscribe: (() => void) | undefined;
  let heartbeat: NodeJS.Timeout | undefined;

  const stopIfIdle = (): void => {
    if (watchers.size > 0) return;
    unsubscribe?.();
    unsubscribe = undefined;
    queue = [];
    if (heartbeat) clearInterval(heartbeat);
    heartbeat = undefined;
  };

  const drop = (w: Watcher): void => {
    w.closed = true;
    w.stopExpiry?.();
    watchers.delete(w);
    stopIfIdle();
  };

  /** Ends a stream with a final error event; a client that does not read it is destroyed after the grace. */
  const cut = (w: Watcher, title: string, details: string): void => {
    if (w.closed) return;
    drop(w);
    deps.logger?.info({ reqId: w.requestId, next: w.next, reason: title }, 'watch stream cut off');
    w.res.end(errorEvent(title, details));
    const timer = setTimeout(() => w.res.destroy(), graceMs);
    timer.unref();
    w.res.once('close', () => clearTimeout(timer));
  };

  const tooSlow = (w: Watcher): void =>
    cut(
      w,
      'Slow client',
      `the client read too slowly: more than ${options.bufferLimit} bytes were waiting to be sent; ` +
        `reconnect with Last-Event-ID: ${w.next - 1} to resume`,
    );

  /** Writes to a live watcher; never waits: over the limit, the watcher is cut off. */
  const push = (w: Watcher, text: string): void => {
    w.res.write(text);
    if (w.res.writableLength > options.bufferLimit) tooSlow(w);
  };

  const fanOut = (): void => {
    scheduled = false;
    const batches = queue;
    queue = [];
    for (const entries of batches) {
      for (const e of entries) {
        // The entry's text as each kind of watcher sees it, made once per entry (and only when sent).
        let digestText: string | undefined;
        let dataText: string | undefined;
        for (const w of watchers) {
          if (!w.live || w.closed || e.revision < w.next) continue;
          if (mayRevoke(w, e)) {
            // Nothing from this entry on is sent until the token is checked; then the log resumes it.
            w.live = false;
            run(w);
            continue;
          }
          w.next = e.revision + 1;
          if (!w.match(e)) continue;
          push(w, w.secretData === 'include' ? (dataText ??= textFor(w, e)) : (digestText ??= textFor(w, e)));
        }
      }
    }
  };

  const onCommitted = (entries: readonly LogEntry[]): void => {
    queue.push(entries);
    if (!scheduled) {
      scheduled = true;
      setImmediate(fanOut);
    }
  };

  const beat = (): void => {
    for (const w of watchers) {
      if (w.live) push(w, ': heartbeat\n\n');
      // Catching up, it is paced by drain (and cut when it stalls); a heartbeat only when it is idle.
      else if (w.res.writableLength === 0) w.res.write(': heartbeat\n\n');
    }
  };

  /** Resolves true once the socket drains, false when the watcher closes or stalls first. */
  const drained = (w: Watcher): Promise<boolean> =>
    new Promise((resolve) => {
      const done = (ok: boolean): void => {
        clearTimeout(timer);
        w.res.off('drain', onDrain);
        w.res.off('close', onClose);
        resolve(ok);
      };
      const onDrain = (): void => done(true);
      const onClose = (): void => done(false);
      const timer = setTimeout(() => done(false), stallMs);
      w.res.on('drain', onDrain);
      w.res.on('close', onClose);
    });

  /**
   * Sends the backlog from the log at the client's pace, then turns live in the same turn that finds
   * it has caught up with the head: every later entry is queued for the fan-out, none is missed, and
   * entries the fan-out already holds are skipped by revision.
   */
  const catchUp = async (w: Watcher): Promise<void> => {
    while (!w.closed) {
      const head = history.head();
      if (w.next > head) {
        w.live = true;
        return;
      }
      const to = Math.min(head, w.next + BACKLOG_CHUNK - 1);
      const entries: LogEntry[] = [];
      for await (const e of history.read(w.next, to)) entries.push(e);
      if (entries.length === 0) w.next = to + 1;
      for (const e of entries) {
        if (w.closed) return;
        if (mayRevoke(w, e) && !(await stillHolds(w))) return;
        w.next = e.revision + 1;
        if (!w.match(e)) continue;
        if (!w.res.write(textFor(w, e)) && !(await drained(w))) {
          if (!w.closed) {
            cut(w, 'Slow client', `the client read nothing for ${stallMs} ms while catching up`);
          }
          return;
        }
      }
    }
  };

  /** Checks the token of a stream again; ends the stream when it no longer holds. */
  const stillHolds = async (w: Watcher): Promise<boolean> => {
    if (!w.credential) return true;
    // Entries committed while the check runs may or may not be seen by it: they are checked again.
    const head = history.head();
    const end = await w.credential.recheck();
    if (w.closed) return false;
    if (end) {
      cut(w, end.title, end.details);
      return false;
    }
    w.checkedTo = Math.max(w.checkedTo, head);
    return true;
  };

  const mayRevoke = (w: Watcher, e: LogEntry): boolean =>
    w.credential !== undefined && e.revision > w.checkedTo && w.credential.affects(e);

  /** Checks the token (it may have changed since the request was authenticated), then catches up. */
  const run = (w: Watcher): void => {
    const going = w.credential ? stillHolds(w).then((ok) => (ok ? catchUp(w) : undefined)) : catchUp(w);
    going.catch((err: unknown) => {
      deps.logger?.error({ err, reqId: w.requestId }, 'watch backlog failed');
      if (!w.closed) {
        drop(w);
        w.res.end(errorEvent('Internal server error', `reading the log failed (request id ${w.requestId})`));
      }
    });
  };

  /** Ends the stream when its token expires; re-armed while the time left is beyond one timer. */
  const armExpiry = (w: Watcher, expiry: StreamEnd & { inMs: number }): void => {
    w.stopExpiry = deadlineTimer(expiry.inMs, () => cut(w, expiry.title, expiry.details));
  };

  return {
    /**
     * Streams entries from `from` on (backlog, then live) that pass `match`, while `credential`
     * holds; secret entries show their data as `secretData` says.
     */
    serve(
      req: FastifyRequest,
      reply: FastifyReply,
      watch: {
        from: number;
        match: (e: LogEntry) => boolean;
        secretData: SecretData;
        credential?: StreamCredential;
      },
    ) {
      const res = openEventStream(reply, { 'x-mesh-revision': String(history.head()) });
      res.flushHeaders();
      const w: Watcher = {
        res,
        next: watch.from,
        match: watch.match,
        secretData: watch.secretData,
        live: false,
        closed: false,
        requestId: req.id,
        credential: watch.credential,
        checkedTo: 0,
      };
      watchers.add(w);
      unsubscribe ??= history.subscribe(onCommitted);
      if (options.heartbeatMs > 0 && !heartbeat) {
        heartbeat = setInterval(beat, options.heartbeatMs);
        heartbeat.unref();
      }
      res.on('close', () => drop(w));
      if (watch.credential?.expiry) armExpiry(w, watch.credential.expiry);
      run(w);
    },

    /** Ends every stream (server shutdown); clients resume with Last-Event-ID. */
    closeAll(): void {
      for (const w of [...watchers]) {
        drop(w);
        w.res.end();
        const timer = setTimeout(() => w.res.destroy(), 1000);
        timer.unref();
        w.res.once('close', () => clearTimeout(timer));
      }
    },

    /** Open streams (for tests and metrics). */
    size: (): number => watchers.size,
  };
}

/** The hub of {@link createWatchHub}. */
export type WatchHub = ReturnType<typeof createWatchHub>;
