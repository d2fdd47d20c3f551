import { createServer } from 'node:net';
import { envNameOf } from '../config/config-keys.js';
import type { Config } from '../config/schema.js';
import { AppError } from '../util/errors.js';

/** A listener's config: the keys of its port and bind address, and their values. */
export interface ListenerKeys {
  portKey: string;
  port: number;
  bindKey: string;
  address: string;
}

/** The {@link ListenerKeys} of the listener whose keys are `<section>.<portName>` and `<section>.bindAddress`. */
export function listenerKeys(config: Config, section: string, portName: string): ListenerKeys {
  const at = (key: string): unknown =>
    key.split('.').reduce<unknown>((value, segment) => (value as Record<string, unknown>)[segment], config);
  const portKey = `${section}.${portName}`;
  const bindKey = `${section}.bindAddress`;
  return { portKey, port: at(portKey) as number, bindKey, address: at(bindKey) as string };
}

/** Every listener the config's mode binds, in the order a start binds them. */
export function listenersOf(config: Config): ListenerKeys[] {
  return [
    listenerKeys(config, 'apiServer', 'port'),
    ...(config.apiServer.https.enabled ? [listenerKeys(config, 'apiServer.https', 'port')] : []),
    listenerKeys(config, 'diagnostics', 'port'),
    ...(config.mode === 'global' ? [listenerKeys(config, 'multizone.global.kds', 'grpcPort')] : []),
    ...(config.mode !== 'global' ? [listenerKeys(config, 'xdsServer', 'grpcPort')] : []),
  ];
}

/**
 * Runs one listener's start; a port in use (or not allowed), or a bind address that is not this
 * machine's, is said with the config key and env variable to change. grpc-js reports it only in
 * its message ("No address added … EADDRINUSE").
 */
export async function bound<T>(listener: ListenerKeys, start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const code = ['EADDRINUSE', 'EACCES', 'EADDRNOTAVAIL'].find(
      (c) => e.code === c || String(e.message).includes(c),
    );
    if (code === undefined) throw err;
    const { portKey, port, bindKey, address } = listener;
    const details =
      code === 'EADDRNOTAVAIL'
        ? `address ${address} (${bindKey}) is not an address of this machine; set ${bindKey} ` +
          `(${envNameOf(bindKey.split('.'))}) to one of its addresses, or 0.0.0.0 for every one`
        : `port ${port} (${portKey}) ` +
          (code === 'EADDRINUSE' ? 'is in use by another process' : 'may not be used by this user') +
          `; set ${portKey} (${envNameOf(portKey.split('.'))}) to a free port, or 0 for any`;
    const error = new AppError('UNAVAILABLE', 'cannot listen', details);
    error.cause = Object.assign(err as object, { code });
    throw error;
  }
}

/**
 * A start that failed on a port in use, told with every other configured port that is in use too
 * (probed once the start has closed its own listeners), so that one failed start names every
 * setting to change (a second mesh-cp on the machine holds all of them) instead of one per try.
 * Any other error is returned as it is.
 */
export async function withEveryBusyPort(err: unknown, listeners: ListenerKeys[]): Promise<unknown> {
  const cause = (err as { cause?: { code?: unknown } } | undefined)?.cause;
  if (!(err instanceof AppError) || err.title !== 'cannot listen' || cause?.code !== 'EADDRINUSE') return err;
  const busy: ListenerKeys[] = [];
  for (const listener of listeners) if (await inUse(listener)) busy.push(listener);
  if (busy.length < 2) return err;
  const env = busy.map((l) => `${envNameOf(l.portKey.split('.'))}=<port>`).join(' ');
  const error = new AppError(
    'UNAVAILABLE',
    'cannot listen',
    `ports in use by another process: ${busy.map((l) => `${l.port} (${l.portKey})`).join(', ')}; ` +
      `set each to a free port, or 0 for any (environment: ${env})`,
  );
  error.cause = err.cause;
  return error;
}

/** Whether another process holds the listener's port now (port 0 never is). */
function inUse({ port, address }: ListenerKeys): Promise<boolean> {
  if (port === 0) return Promise.resolve(false);
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (e: NodeJS.ErrnoException) => resolve(e.code === 'EADDRINUSE'));
    probe.listen({ port, host: address, exclusive: true }, () => probe.close(() => resolve(false)));
  });
}
