import { createParser } from 'eventsource-parser';
import { request } from './client.js';

/** One entry of the audit log, as `/_events` sends it. */
export interface LogEvent {
  revision: number;
  time: string;
  kind: string;
  mesh?: string;
  name: string;
  operation: 'create' | 'update' | 'delete';
  actor: { name: string; groups: string[]; address: string };
  changeSet?: string;
  resource?: Record<string, unknown>;
}

/** A proxy going online or offline, as `/_status/events` sends it. */
export interface StatusEvent {
  mesh: string;
  name: string;
  online: boolean;
}

/** The state of a live stream, for the connection indicator. */
export type StreamState = 'connecting' | 'live' | 'lost';

interface StreamOptions {
  path: string;
  query?: Record<string, string | undefined>;
  /** The `Last-Event-ID` to send on each (re)connection; undefined: none. */
  lastEventId: () => number | undefined;
  onMessage: (event: string | undefined, data: string) => void;
  onState: (s: StreamState) => void;
}

/**
 * Follows a stream of server-sent events over `fetch`, so that a user token goes in a header, never
 * in the URL. A lost stream is reported, then opened again (with `Last-Event-ID` where the stream
 * has ids, so that nothing is missed); the wait between tries grows up to 4 s. Returns the function
 * that stops it.
 */
function follow(opts: StreamOptions): () => void {
  const abort = new AbortController();
  let delay = 500;
  const run = async (): Promise<void> => {
    while (!abort.signal.aborted) {
      opts.onState('connecting');
      try {
        const last = opts.lastEventId();
        const res = await request(opts.path, {
          accept: 'text/event-stream',
          query: opts.query,
          timeless: true,
          signal: abort.signal,
          headers: last === undefined ? {} : { 'last-event-id': String(last) },
        });
        opts.onState('live');
        delay = 500;
        const parser = createParser({
          onEvent(ev) {
            if (ev.event !== 'error') opts.onMessage(ev.event, ev.data);
          },
        });
        const reader = (res.body as ReadableStream<Uint8Array>).getReader();
        const decoder = new TextDecoder();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          parser.feed(decoder.decode(value, { stream: true }));
        }
      } catch {
        // Aborted (stopped), refused or cut: reported below, and tried again unless stopped.
      }
      if (abort.signal.aborted) return;
      opts.onState('lost');
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 4_000);
    }
  };
  void run();
  return () => abort.abort();
}

export interface WatchOptions {
  /** Filters of `/_events` (`kind`, `mesh`, `name`, `actor`, `changeSet`). */
  filters?: Record<string, string | undefined>;
  /** Start after this revision (the backlog from there, then live); absent: only what comes next. */
  after?: number;
  onEvent: (e: LogEvent) => void;
  onState: (s: StreamState) => void;
}

/**
 * Follows the audit log (`/_events`); on reconnection it resumes after the last revision it
 * received, so that nothing is missed. Returns the function that stops it.
 */
export function watchEvents(opts: WatchOptions): () => void {
  let last = opts.after;
  return follow({
    path: '/_events',
    query: opts.filters,
    lastEventId: () => last,
    onMessage: (_event, data) => {
      const entry = JSON.parse(data) as LogEvent;
      last = entry.revision;
      opts.onEvent(entry);
    },
    onState: opts.onState,
  });
}

/**
 * Follows proxies going online and offline (`/_status/events`: runtime status, never in the audit
 * log). Nothing is replayed on reconnection, so `onState('live')` after a loss means: read again.
 */
export function watchStatus(opts: { onStatus: (s: StatusEvent) => void; onState: (s: StreamState) => void }) {
  return follow({
    path: '/_status/events',
    lastEventId: () => undefined,
    onMessage: (event, data) => {
      if (event === 'status') opts.onStatus(JSON.parse(data) as StatusEvent);
    },
    onState: opts.onState,
  });
}
