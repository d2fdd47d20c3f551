import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Level } from 'level';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/control-plane.js';
import { meshCp } from '../helpers/process.js';

/** Name, size and content of each file of a dir but LevelDB's own info log (`LOG`, `LOG.old`). */
function contents(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const name of readdirSync(dir).sort()) {
    if (name === 'LOG' || name === 'LOG.old') continue;
    files[name] = `${statSync(join(dir, name)).size}:${readFileSync(join(dir, name)).toString('base64')}`;
  }
  return files;
}

describe('a store that fails to open', () => {
  const dir = tempDir();
  afterAll(() => dir.cleanup());

  it('prints the underlying cause and leaves the data dir as it was', async () => {
    const db = new Level<string, string>(dir.path, { valueEncoding: 'utf8' });
    await db.put('m!probe', 'x');
    await db.close();
    // A real open failure with a cause: LevelDB refuses a CURRENT file cut short.
    writeFileSync(join(dir.path, 'CURRENT'), 'MANIFEST-0000');
    const before = contents(dir.path);

    const result = await meshCp(['run'], {
      MESH_STORE_TYPE: 'level',
      MESH_STORE_LEVEL_PATH: dir.path,
      MESH_API_SERVER_PORT: '0',
      MESH_API_SERVER_HTTPS_ENABLED: 'false',
      MESH_DIAGNOSTICS_PORT: '0',
      MESH_XDS_SERVER_GRPC_PORT: '0',
    });
    expect(result.code).toBe(1);
    const fatal = result.stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { level: number; msg: string })
      .find((line) => line.level === 60);
    expect(fatal?.msg).toBe(
      `cannot open the event log at ${dir.path}: Database failed to open: Corruption: CURRENT file does not end with newline`,
    );
    expect(contents(dir.path)).toEqual(before);
  }, 30_000);

  const start = (path: string) =>
    meshCp(['run'], {
      MESH_STORE_TYPE: 'level',
      MESH_STORE_LEVEL_PATH: path,
      MESH_API_SERVER_PORT: '0',
      MESH_API_SERVER_HTTPS_PORT: '0',
      MESH_DIAGNOSTICS_PORT: '0',
      MESH_XDS_SERVER_GRPC_PORT: '0',
    });
  const fatalOf = (stdout: string) =>
    stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { level: number; msg: string })
      .find((line) => line.level === 60)?.msg;

  it('a data dir that cannot be made stops start-up with exit 2 and names the key', async () => {
    // Node's recursive mkdir never returns for /proc/nope (a core spun, no output, SIGTERM ignored).
    const result = await start('/proc/nope');
    expect(result.code).toBe(2);
    expect(fatalOf(result.stdout)).toBe(
      "cannot create the data dir /proc/nope: ENOENT: no such file or directory, mkdir '/proc/nope'; " +
        'set store.level.path (MESH_STORE_LEVEL_PATH) to a directory mesh-cp may create and write',
    );
  }, 15_000);

  it('a data dir under a file: exit 2, said as such', async () => {
    const file = join(dir.path, 'a-file');
    writeFileSync(file, 'x');
    const result = await start(join(file, 'data'));
    expect(result.code).toBe(2);
    expect(fatalOf(result.stdout)).toContain(
      'it (or a parent) is a file, not a directory; set store.level.path',
    );
  }, 15_000);

  it('a port in use stops start-up with exit 2, naming the key and env variable that move it', async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '0.0.0.0', resolve));
    const port = (busy.address() as AddressInfo).port;
    try {
      for (const [key, env] of [
        ['apiServer.port', 'MESH_API_SERVER_PORT'],
        ['xdsServer.grpcPort', 'MESH_XDS_SERVER_GRPC_PORT'],
      ]) {
        const result = await meshCp(['run'], {
          MESH_STORE_TYPE: 'memory',
          MESH_API_SERVER_PORT: '0',
          MESH_API_SERVER_HTTPS_ENABLED: 'false',
          MESH_DIAGNOSTICS_PORT: '0',
          MESH_XDS_SERVER_GRPC_PORT: '0',
          [env]: String(port),
        });
        expect(result.code).toBe(2);
        expect(fatalOf(result.stdout)).toBe(
          `port ${port} (${key}) is in use by another process; set ${key} (${env}) to a free port, or 0 for any`,
        );
      }
    } finally {
      busy.close();
    }
  }, 30_000);

  it('several ports in use: one failed start names every busy port setting, not one per try', async () => {
    const held = await Promise.all(
      [0, 1, 2].map(async () => {
        const server = createServer();
        await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
        return { server, port: (server.address() as AddressInfo).port };
      }),
    );
    const [api, diagnostics, xds] = held.map((h) => h.port);
    try {
      const result = await meshCp(['run'], {
        MESH_STORE_TYPE: 'memory',
        MESH_API_SERVER_PORT: String(api),
        MESH_API_SERVER_HTTPS_ENABLED: 'false',
        MESH_DIAGNOSTICS_PORT: String(diagnostics),
        MESH_XDS_SERVER_GRPC_PORT: String(xds),
      });
      expect(result.code).toBe(2);
      expect(fatalOf(result.stdout)).toBe(
        `ports in use by another process: ${api} (apiServer.port), ${diagnostics} (diagnostics.port), ` +
          `${xds} (xdsServer.grpcPort); set each to a free port, or 0 for any (environment: ` +
          'MESH_API_SERVER_PORT=<port> MESH_DIAGNOSTICS_PORT=<port> MESH_XDS_SERVER_GRPC_PORT=<port>)',
      );
    } finally {
      for (const { server } of held) server.close();
    }
  }, 30_000);

  it('log.format: text writes the lines for people (pino-pretty), the same events', async () => {
    const result = await meshCp(['run'], {
      MESH_LOG_FORMAT: 'text',
      MESH_STORE_TYPE: 'level',
      MESH_STORE_LEVEL_PATH: '/proc/nope',
      MESH_API_SERVER_PORT: '0',
      MESH_DIAGNOSTICS_PORT: '0',
      MESH_XDS_SERVER_GRPC_PORT: '0',
    });
    expect(result.code).toBe(2);
    expect(result.stdout).toMatch(
      /^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\] FATAL: cannot create the data dir \/proc\/nope: /m,
    );
    expect(result.stdout).not.toContain('{"level"');
  }, 15_000);
});
