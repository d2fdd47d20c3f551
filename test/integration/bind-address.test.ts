import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { startListeningPlane, tempDir } from '../helpers/control-plane.js';
import { startGlobal } from '../helpers/multizone.js';

/** Whether a TCP connection to `host:port` opens (`open`) or the error code that stopped it. */
function dial(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.setTimeout(5000, () => {
      socket.destroy();
      resolve('timeout');
    });
    socket.once('connect', () => {
      socket.destroy();
      resolve('open');
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

/**
 * Another address of this machine than 127.0.0.1: on Linux every 127.x.y.z is local; else a
 * non-loopback IPv4 address of an interface, if the machine has one.
 */
function otherLocalAddress(): string | undefined {
  if (process.platform === 'linux') return '127.0.0.2';
  return Object.values(networkInterfaces())
    .flat()
    .find((info) => info && info.family === 'IPv4' && !info.internal)?.address;
}

const LOOPBACK = '127.0.0.1';
const other = otherLocalAddress();

describe('bindAddress of each listener', () => {
  let cp: ControlPlane;
  beforeAll(async () => {
    cp = await startListeningPlane({
      MESH_API_SERVER_HTTPS_ENABLED: 'true',
      MESH_API_SERVER_HTTPS_PORT: '0',
      MESH_API_SERVER_BIND_ADDRESS: LOOPBACK,
      MESH_API_SERVER_HTTPS_BIND_ADDRESS: LOOPBACK,
      MESH_DIAGNOSTICS_BIND_ADDRESS: LOOPBACK,
      MESH_XDS_SERVER_BIND_ADDRESS: LOOPBACK,
    });
  });
  afterAll(() => cp?.close());

  it('the HTTP and HTTPS API listen on the configured address', () => {
    expect(cp.app.server.address()).toMatchObject({ address: LOOPBACK, port: cp.ports.api });
    expect(cp.httpsServer?.address()).toMatchObject({ address: LOOPBACK, port: cp.ports.https });
  });

  it.each(['api', 'https', 'diagnostics', 'xds'] as const)(
    '%s accepts on 127.0.0.1 and refuses on another local address',
    async (listener) => {
      const port = cp.ports[listener];
      expect(port).toBeGreaterThan(0);
      expect(await dial(LOOPBACK, port)).toBe('open');
      if (other !== undefined) expect(await dial(other, port)).toBe('ECONNREFUSED');
    },
  );

  it('by default (0.0.0.0) a listener accepts on every local address', async () => {
    const open = await startListeningPlane();
    try {
      expect(open.app.server.address()).toMatchObject({ address: '0.0.0.0' });
      if (other !== undefined) {
        expect(await dial(other, open.ports.api)).toBe('open');
        expect(await dial(other, open.ports.xds)).toBe('open');
      }
    } finally {
      await open.close();
    }
  });
});

describe('multizone.global.kds.bindAddress', () => {
  const dir = tempDir('bind-address-global-');
  let global: ControlPlane;
  beforeAll(async () => {
    global = await startGlobal(dir.path, { MESH_MULTIZONE_GLOBAL_KDS_BIND_ADDRESS: LOOPBACK });
  });
  afterAll(async () => {
    await global?.close();
    dir.cleanup();
  });

  it('the Global sync server accepts on 127.0.0.1 and refuses on another local address', async () => {
    expect(global.ports.kds).toBeGreaterThan(0);
    expect(await dial(LOOPBACK, global.ports.kds)).toBe('open');
    if (other !== undefined) expect(await dial(other, global.ports.kds)).toBe('ECONNREFUSED');
  });
});
