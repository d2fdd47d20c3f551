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

/** The state of a live stream, for the connection indicator. */
export type StreamState = 'connecting' | 'live' | 'lost';

export interface WatchOptions {
  /** Filters of `/_events` (`kind`, `mesh`, `name`, `actor`). */
  filters?: Record<string, string | undefined>;
  /** Start after this revision (the backlog from there, then live); absent: only what comes next. */
  after?: number;
  onEvent: (e: LogEvent) => void;
  onState: (s: StreamState) => void;
}

/**
 * Follows `/_events` as server-sent events, over `fetch` so that a user token goes in a header,
 * never in the URL. A lost stream is reported, then resumed with `Last-Event-ID` set to the last
 * revision seen, so that nothing is missed; the wait between tries grows up to 4 s. Returns the
 * function that stops it.
 */
export function watchEvents(opts: WatchOptions): () => void {
  const abort = new AbortController();
  let last = opts.after;
  let delay = 500;
  const run = async (): Promise<void> => {
    while (!abort.signal.aborted) {
      opts.onState('connecting');
      try {
        const res = await request('/_events', {
          accept: 'text/event-stream',
          query: opts.filters,
          timeless: true,
          signal: abort.signal,
          headers: last === undefined ? {} : { 'last-event-id': String(last) },
        });
        opts.onState('live');
        delay = 500;
        const parser = createParser({
          onEvent(ev) {
            if (ev.event === 'error') return;
            const entry = JSON.parse(ev.data) as LogEvent;
            last = entry.revision;
            opts.onEvent(entry);
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
