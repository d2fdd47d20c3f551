import type { ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../util/errors.js';
import { meshNameKey } from '../resources/keys.js';
import type { RouteInfo } from './route-info.js';
import { openEventStream } from './event-stream.js';

/** What the status stream needs: the runtime status store's change feed and a proxy's online state. */
export interface StatusWatchDeps {
  /** Called with a proxy's mesh and name (or a zone's change: mesh '' and no name) on every status write. */
  onStatusChange: (listener: (mesh: string, name?: string) => void) => void;
  /** Whether a proxy has a connected subscription now. */
  dataplaneOnline: (mesh: string, name: string) => boolean;
  /** A `:` comment this often (0: never). */
  heartbeatMs: number;
  /** A client with more than this many bytes unread is cut off. */
  bufferLimit: number;
}

/** The path of the stream of proxies going online and offline. */
export const STATUS_EVENTS_PATH = '/_status/events';

/**
 * `GET /_status/events`: server-sent events, one `event: status` with `{mesh, name, online}` each
 * time a data plane proxy connects (its first subscription) or its last stream ends. Runtime status
 * is not in the audit log (decisions §8), so `/_events` never carries it: this stream lets a client
 * (the GUI) show it live without polling. Counter updates, which come several times a second per
 * proxy, are not sent: only changes of online state, once per proxy, whatever the number of
 * listeners. Nothing is replayed: a client reads the current state first, then follows this.
 */
export function registerStatusWatch(app: FastifyInstance, deps: StatusWatchDeps): void {
  const clients = new Set<ServerResponse>();
  const online = new Map<string, boolean>();
  let subscribed = false;
  let heartbeat: NodeJS.Timeout | undefined;

  const send = (text: string): void => {
    for (const res of clients) {
      if (res.writableLength > deps.bufferLimit) {
        clients.delete(res);
        res.destroy();
        continue;
      }
      res.write(text);
    }
  };
  const onChange = (mesh: string, name?: string): void => {
    if (name === undefined || clients.size === 0) return;
    const key = meshNameKey(mesh, name);
    const now = deps.dataplaneOnline(mesh, name);
    if (online.get(key) === now) return;
    online.set(key, now);
    send(`event: status\ndata: ${JSON.stringify({ mesh, name, online: now })}\n\n`);
  };
  const stop = (res: ServerResponse): void => {
    clients.delete(res);
    if (clients.size === 0) {
      // Nobody listens: forget what was sent (a later listener reads the state first).
      online.clear();
      if (heartbeat) clearInterval(heartbeat);
      heartbeat = undefined;
    }
  };

  app.get(
    STATUS_EVENTS_PATH,
    { exposeHeadRoute: false, config: { kind: 'Dataplane', action: 'read' } satisfies RouteInfo },
    async (req, reply) => {
      // A stream only: a plain GET would wait for ever (there is no list of it to answer).
      if (!String(req.headers.accept ?? '').includes('text/event-stream')) {
        throw new AppError(
          'BAD_REQUEST',
          'Bad request',
          'this is a stream of server-sent events: ask with "Accept: text/event-stream"',
        );
      }
      const res = openEventStream(reply);
      // A first comment, so that the client knows the stream is open.
      res.write(': status of data plane proxies\n\n');
      clients.add(res);
      if (!subscribed) {
        subscribed = true;
        deps.onStatusChange(onChange);
      }
      if (deps.heartbeatMs > 0 && !heartbeat) {
        heartbeat = setInterval(() => send(': heartbeat\n\n'), deps.heartbeatMs);
        heartbeat.unref();
      }
      res.on('close', () => stop(res));
    },
  );
  // On shutdown the streams end first (the server would otherwise wait for them).
  app.addHook('preClose', async () => {
    for (const res of [...clients]) {
      stop(res);
      res.end();
    }
  });
}
