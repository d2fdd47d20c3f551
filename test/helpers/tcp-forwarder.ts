import { connect, createServer } from 'node:net';
import type { Socket } from 'node:net';

/** A TCP forwarder on 127.0.0.1: an emulated load balancer in front of several servers. */
export interface TcpForwarder {
  port: number;
  /** The backend port each forwarded connection went to, in order of connection. */
  readonly forwarded: number[];
  close(): Promise<void>;
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
  const track = (socket: Socket): Socket => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    // Either side's error ends the pair (below); the error itself is expected when a backend dies.
    socket.on('error', () => undefined);
    return socket;
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
      backend.pipe(client);
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
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
