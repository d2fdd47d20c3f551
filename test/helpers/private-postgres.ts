import { execFile, execFileSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A PostgreSQL cluster of its own for one test, so that the test may stop, crash and restart it:
 * the machine's shared PostgreSQL (127.0.0.1:5432) serves other tests in parallel and must keep
 * running. Trust auth, user `postgres`, listening on 127.0.0.1 at `port`, its socket in its dir.
 */
export interface PrivatePostgres {
  host: string;
  port: number;
  user: string;
  /** The temp dir holding the data dir, the socket and `server.log`. */
  dir: string;
  /** Starts the server and waits until it accepts connections. */
  start(): Promise<void>;
  /** `fast` disconnects the sessions and checkpoints; `immediate` kills the server like a crash. */
  stop(options?: { mode?: StopMode }): Promise<void>;
  /** `pg_ctl restart`: a stop in `mode` (default fast), then a start (crash recovery after immediate). */
  restart(options?: { mode?: StopMode }): Promise<void>;
  /** Stops the server (immediate) if it runs, and deletes the cluster. */
  remove(): Promise<void>;
  /** The last lines of the server's own log (for failure messages). */
  serverLog(): string;
}

export type StopMode = 'fast' | 'immediate';

/** pg_ctl waits this long for a start or a stop (crash recovery on a loaded machine included). */
const PG_CTL_WAIT_S = 120;

function hasServer(dir: string): boolean {
  return existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'));
}

/**
 * Where `initdb` and `pg_ctl` are: `pg_config --bindir` (Debian's wrapper names the newest
 * installed server), else the newest /usr/lib/postgresql/<version>/bin. Throws, never skips: a
 * machine without the server binaries cannot run these tests and must say so.
 */
export function postgresBinDir(): string {
  const tried: string[] = [];
  try {
    const dir = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
    if (hasServer(dir)) return dir;
    tried.push(`pg_config --bindir gave ${dir}, which has no initdb and pg_ctl`);
  } catch (error) {
    tried.push(`pg_config --bindir failed (${(error as Error).message.split('\n')[0]})`);
  }
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((name) => /^\d+$/.test(name))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  const found = versions.map((version) => join(root, version, 'bin')).find(hasServer);
  if (found !== undefined) return found;
  tried.push(`${root}/*/bin has none (${versions.length === 0 ? 'no versions' : versions.join(', ')})`);
  throw new Error(
    `the PostgreSQL server binaries (initdb, pg_ctl) are not on this machine: ${tried.join('; ')}. ` +
      `This test runs a private PostgreSQL cluster to restart it: install the server ` +
      `(apt-get install postgresql-15)`,
  );
}

/** A TCP port nobody listens on now (PostgreSQL binds it a moment later). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Runs `command` to its end; rejects with its output when it fails. */
function run(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error) {
        reject(new Error(`${command} ${args.join(' ')} failed: ${error.message}\n${stdout}${stderr}`));
      } else {
        resolve(stdout);
      }
    });
  });
}

/**
 * Makes a cluster (initdb) in a new temp dir and starts it. PostgreSQL refuses to run as root,
 * and CI runs as root: then the dir belongs to the `postgres` OS user and every command runs as it.
 */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = postgresBinDir();
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), 'mesh-cp-pg-'));
  const data = join(dir, 'data');
  const logFile = join(dir, 'server.log');
  const pg = (tool: string, args: string[]): Promise<string> =>
    asRoot ? run('runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]) : run(join(bin, tool), args);
  const serverLog = (): string => {
    try {
      return readFileSync(logFile, 'utf8').split('\n').slice(-50).join('\n');
    } catch {
      return '(no server log)';
    }
  };
  /** Stops a server still running (its pid file is there) like a crash, and deletes the dir. */
  const removeCluster = async (): Promise<void> => {
    try {
      if (existsSync(join(data, 'postmaster.pid'))) await pgCtl(['stop', '-m', 'immediate']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  /** pg_ctl with the data dir, the log file and waiting; its failure carries the server's log. */
  const pgCtl = (args: string[]): Promise<string> =>
    pg('pg_ctl', [...args, '-D', data, '-l', logFile, '-w', '-t', String(PG_CTL_WAIT_S)]).catch(
      (error: Error) => {
        throw new Error(`${error.message}\nserver log:\n${serverLog()}`);
      },
    );

  try {
    if (asRoot) await run('chown', ['postgres:', dir]);
    await pg('initdb', [
      '-D',
      data,
      '-U',
      'postgres',
      '--auth=trust',
      '--no-sync',
      '-E',
      'UTF8',
      '--locale=C',
    ]);
    const port = await freePort();
    // In the conf file, so that every start and restart listens there.
    appendFileSync(
      join(data, 'postgresql.conf'),
      `listen_addresses = '127.0.0.1'\nport = ${port}\nunix_socket_directories = '${dir}'\nshared_buffers = 32MB\n`,
    );
    const cluster: PrivatePostgres = {
      host: '127.0.0.1',
      port,
      user: 'postgres',
      dir,
      start: () => pgCtl(['start']).then(() => undefined),
      stop: ({ mode = 'fast' } = {}) => pgCtl(['stop', '-m', mode]).then(() => undefined),
      restart: ({ mode = 'fast' } = {}) => pgCtl(['restart', '-m', mode]).then(() => undefined),
      remove: () => removeCluster(),
      serverLog,
    };
    await cluster.start();
    return cluster;
  } catch (error) {
    await removeCluster().catch(() => undefined);
    throw error;
  }
}
