import type { EventSourceMessage } from 'eventsource-parser';
import { createParser } from 'eventsource-parser';

import { sleep } from '../util/sleep.js';
import type { ApiClient, ApiStream, Query } from './api-client.js';
import { ApiError } from './api-client.js';
import type { EventItem } from './wire-types.js';

/** What {@link followEvents} follows and where it reports. */
export interface FollowOptions {
  /** Filters and `fromRevision` of `/_events` (decisions §8). */
  query: Query;
  /** Aborting it ends the stream and resolves the follow. */
  signal: AbortSignal;
  onEvent(item: EventItem): void;
  /** A line for the user about the connection (lost, resumed). */
  onNotice(text: string): void;
  /** The first wait before a reconnection; it doubles up to `maxRetryMs` while nothing comes. */
  retryMs?: number;
  maxRetryMs?: number;
}

/** How one stream ended: the server closed it, the connection dropped, or a last `event: error` said why. */
interface StreamEnd {
  error?: { title: string; details: string };
  dropped?: string;
}

/** Resolves (with nothing) once `signal` is aborted. */
const aborted = (signal: AbortSignal): Promise<undefined> =>
  new Promise((resolve) => {
    if (signal.aborted) resolve(undefined);
    else signal.addEventListener('abort', () => resolve(undefined), { once: true });
  });

const headerOf = (stream: ApiStream, name: string): string | undefined => {
  const v = stream.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

/** Reads one stream until it ends, handing each entry to `onEntry` with its SSE id. */
function readStream(
  stream: ApiStream,
  signal: AbortSignal,
  onEntry: (id: string | undefined, data: string) => void,
): Promise<StreamEnd> {
  return new Promise((resolve) => {
    const end: StreamEnd = {};
    const parser = createParser({
      onEvent: (m: EventSourceMessage) => {
        if (m.event === 'error') {
          const body = JSON.parse(m.data) as { title?: string; details?: string };
          end.error = { title: body.title ?? 'Stream error', details: body.details ?? '' };
        } else onEntry(m.id, m.data);
      },
    });
    const finish = (): void => {
      signal.removeEventListener('abort', stop);
      resolve(end);
    };
    const stop = (): void => stream.close();
    signal.addEventListener('abort', stop);
    if (signal.aborted) stop();
    stream.body.setEncoding('utf8');
    stream.body.on('data', (chunk: string) => parser.feed(chunk));
    stream.body.on('error', (err: Error) => {
      end.dropped = err.message;
    });
    stream.body.on('close', finish);
  });
}

/**
 * Follows `GET /_events` with `Accept: text/event-stream`: the backlog from `fromRevision`, then
 * live entries. A stream that ends (the server stopped, the connection dropped, a slow-client cut)
 * is opened again with `Last-Event-ID` set to the last revision seen, or to the head at the first
 * connection when none came, so no entry is missed or repeated. An answer of the server that is not
 * a stream (401 once a token expired, 400) ends the follow with that error; only the first
 * connection's failure to connect is an error, later ones are retried.
 */
export async function followEvents(api: ApiClient, opts: FollowOptions): Promise<void> {
  const { signal } = opts;
  const retryMs = opts.retryMs ?? 250;
  const maxRetryMs = opts.maxRetryMs ?? 5000;
  const from = opts.query.fromRevision;
  let lastId: string | undefined = from === undefined ? undefined : String(Number(from) - 1);
  let delay = retryMs;
  let connected = false;
  let lost = false;
  while (!signal.aborted) {
    let stream: ApiStream | undefined;
    try {
      const opening = api.stream('GET', '/_events', {
        query: opts.query,
        accept: 'text/event-stream',
        headers: connected && lastId !== undefined ? { 'last-event-id': lastId } : {},
      });
      // A stop while it connects does not wait for the connection (nor for its failure).
      stream = await Promise.race([opening, aborted(signal)]);
      if (!stream) {
        opening.then(
          (late) => late.close(),
          () => undefined,
        );
        return;
      }
    } catch (err) {
      if (signal.aborted) return;
      if (!connected || err instanceof ApiError) throw err;
      if (!lost) opts.onNotice(`${(err as Error).message}; retrying`);
      lost = true;
      await sleep(delay, signal);
      delay = Math.min(delay * 2, maxRetryMs);
      continue;
    }
    if (lost) opts.onNotice(`reconnected; resuming after revision ${lastId ?? 0}`);
    lost = false;
    // Without an entry yet, a resumed stream starts after the head this one started at.
    if (lastId === undefined) lastId = headerOf(stream, 'x-mesh-revision');
    connected = true;
    let received = false;
    const end = await readStream(stream, signal, (id, data) => {
      if (id !== undefined) lastId = id;
      received = true;
      opts.onEvent(JSON.parse(data) as EventItem);
    });
    if (signal.aborted) return;
    const why = end.error
      ? `${end.error.title}: ${end.error.details}`
      : (end.dropped ?? 'the control plane ended the stream');
    opts.onNotice(`${why}; reconnecting after revision ${lastId ?? 0}`);
    if (received) delay = retryMs;
    await sleep(delay, signal);
    if (!received) delay = Math.min(delay * 2, maxRetryMs);
  }
}
