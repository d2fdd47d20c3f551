import { connect, createServer } from 'node:net';
import type { Socket } from 'node:net';
import { Transform } from 'node:stream';

/** A TCP forwarder on 127.0.0.1: an emulated load balancer in front of several servers. */
export interface TcpForwarder {
  port: number;
  /** The backend port each forwarded connection went to, in order of connection. */
  readonly forwarded: number[];
  /**
   * Loses the answer to the next request that contains `marker` (in one chunk the client sends):
   * the backend gets the request and acts on it, its answer is dropped until `complete(answer so
   * far)` says it is whole (default: its first bytes), then both sides of that connection are closed.
   * A network that fails after the server committed and before the client heard back. Resolves
   * once it has done so.
   */
  loseReplyTo(marker: string, complete?: (answer: Buffer) => boolean): Promise<void>;
  close(): Promise<void>;
}

/** A request whose answer is to be lost, and the connection it was seen on. */
interface Cut {
  marker: Buffer;
  complete: (answer: Buffer) => boolean;
  done: () => void;
  seenOn?: Socket;
}

/**
 * Listens on a free port of 127.0.0.1 and forwards each connection to the first of `backends`
 * (ports on 127.0.0.1) that accepts one, as a load balancer that skips a dead backend does. A
 * client whose backend goes away loses its connection and, when it connects again, lands on the
 * next live one. A client no backend accepts is disconnected.
 */
export async function startTcpForwarder(backends: readonly number[]): Promise<TcpForwarder> {
  const sockets = new Set<Socket>();
  const forwarded: number[] = [];
  let cut: Cut | undefined;
  const track = (socket: Socket): Socket => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    // Either side's error ends the pair (below); the error itself is expected when a backend dies.
    socket.on('error', () => undefined);
    return socket;
  };

  /** Passes the backend's bytes to the client, unless they answer the request being cut. */
  const gate = (client: Socket, backend: Socket): Transform => {
    let dropped = Buffer.alloc(0);
    return new Transform({
      transform(chunk: Buffer, _encoding, done) {
        const losing = cut;
        if (losing?.seenOn !== client) {
          done(null, chunk);
          return;
        }
        dropped = Buffer.concat([dropped, chunk]);
        if (losing.complete(dropped)) {
          cut = undefined;
          client.destroy();
          backend.destroy();
          losing.done();
        }
        done();
      },
    });
  };

  const forward = (client: Socket, from: number): void => {
    if (from >= backends.length || client.destroyed) {
      client.destroy();
      return;
    }
    const backend = track(connect({ host: '127.0.0.1', port: backends[from] }));
    const refused = (): void => forward(client, from + 1);
    backend.once('error', refused);
    backend.once('connect', () => {
      backend.off('error', refused);
      forwarded.push(backends[from]);
      backend.on('close', () => client.destroy());
      client.on('close', () => backend.destroy());
      client.pipe(backend);
      // After the pipe's own listener: the request is on its way when its answer is marked for loss.
      client.on('data', (chunk: Buffer) => {
        if (cut !== undefined && cut.seenOn === undefined && chunk.includes(cut.marker)) cut.seenOn = client;
      });
      backend.pipe(gate(client, backend)).pipe(client);
      client.resume();
    });
  };

  // Paused until a backend accepts: the client's first bytes (a TLS hello) wait in its socket.
  const server = createServer({ pauseOnConnect: true }, (client) => forward(track(client), 0));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return {
    port: (server.address() as { port: number }).port,
    forwarded,
    loseReplyTo: (marker, complete = () => true) =>
      new Promise<void>((resolve) => {
        cut = { marker: Buffer.from(marker), complete, done: resolve };
      }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
