import type { ClientRequest, IncomingMessage } from 'node:http';
import { request } from 'node:http';

/** One server-sent event, or a comment line (`:`) when `comment` is set. */
export interface SseEvent {
  id?: string;
  event?: string;
  data?: string;
  comment?: string;
}

/** A streaming client of `/_events` on a real port: events are parsed as they arrive. */
export interface SseClient {
  status: number;
  headers: IncomingMessage['headers'];
  /** Every event and comment so far, in order. */
  events: SseEvent[];
  /** Entry events only (those with an id). */
  entries(): SseEvent[];
  /** Resolves once `predicate` holds for what has arrived (rejects after `ms`). */
  until(predicate: (events: SseEvent[]) => boolean, ms?: number): Promise<void>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  /** Stops reading (the socket buffers fill up) and resumes. */
  pause(): void;
  resume(): void;
  close(): void;
}

/** Opens `path` on 127.0.0.1:`port` with `Accept: text/event-stream`; resolves once headers arrive. */
export function openSse(
  port: number,
  path: string,
  headers: Record<string, string> = {},
): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    let req: ClientRequest | undefined = undefined;
    req = request(
      { host: '127.0.0.1', port, path, headers: { accept: 'text/event-stream', ...headers } },
      (res) => {
        const events: SseEvent[] = [];
        const waiters = new Set<() => void>();
        let buf = '';
        let endedResolve: () => void;
        const ended = new Promise<void>((r) => (endedResolve = r));
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buf += chunk;
          let i;
          while ((i = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, i);
            buf = buf.slice(i + 2);
            const ev: SseEvent = {};
            for (const line of block.split('\n')) {
              if (line.startsWith(':')) ev.comment = line.slice(1).trim();
              else {
                const j = line.indexOf(':');
                const key = line.slice(0, j) as 'id' | 'event' | 'data';
                ev[key] = line.slice(j + 1).replace(/^ /, '');
              }
            }
            events.push(ev);
          }
          for (const w of [...waiters]) w();
        });
        const finish = () => {
          endedResolve();
          for (const w of [...waiters]) w();
        };
        res.on('end', finish);
        res.on('close', finish);
        res.on('error', finish);
        let done = false;
        void ended.then(() => (done = true));
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          events,
          entries: () => events.filter((e) => e.id !== undefined),
          until(predicate, ms = 10_000) {
            return new Promise((ok, fail) => {
              const check = () => {
                if (predicate(events)) {
                  waiters.delete(check);
                  clearTimeout(timer);
                  ok();
                } else if (done) {
                  waiters.delete(check);
                  clearTimeout(timer);
                  fail(new Error(`stream ended before the condition held (${events.length} events)`));
                }
              };
              const timer = setTimeout(() => {
                waiters.delete(check);
                fail(new Error(`timed out with ${events.length} events`));
              }, ms);
              waiters.add(check);
              check();
            });
          },
          ended,
          pause: () => res.pause(),
          resume: () => res.resume(),
          close: () => req?.destroy(),
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}
