import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** A process started for the benchmark, with the JSON line that said it is ready. */
export interface Started {
  proc: ChildProcess;
  ready: Record<string, unknown>;
  /** Milliseconds from spawn to the ready line. */
  ms: number;
  /** The JSON lines written before the ready line, parsed. */
  before: Array<Record<string, unknown>>;
  stop(): Promise<void>;
}

/** Spawns a process and resolves on the first stdout JSON line whose `msg` is one of `readyMsgs`. */
export function startProcess(
  cmd: string,
  args: string[],
  env: Record<string, string>,
  readyMsgs: string[],
): Promise<Started> {
  const t0 = performance.now();
  const proc = spawn(cmd, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  proc.stderr?.on('data', (c: Buffer) => (err += c.toString()));
  return new Promise((resolve, reject) => {
    let buf = '';
    const before: Array<Record<string, unknown>> = [];
    const onData = (c: Buffer): void => {
      buf += c.toString();
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        if (!line.startsWith('{')) continue;
        const rec = JSON.parse(line) as Record<string, unknown>;
        if (!readyMsgs.includes(rec.msg as string)) before.push(rec);
        else {
          const ms = performance.now() - t0;
          proc.stdout?.off('data', onData);
          proc.stdout?.resume();
          resolve({
            proc,
            ready: rec,
            ms,
            before,
            stop: () =>
              new Promise<void>((res) => {
                if (proc.exitCode !== null) return res();
                proc.once('exit', () => res());
                proc.kill('SIGTERM');
              }),
          });
        }
      }
    };
    proc.stdout?.on('data', onData);
    proc.once('exit', (code) =>
      reject(new Error(`${cmd} ${args.join(' ')} exited ${code} before ready: ${err}`)),
    );
  });
}

/**
 * The node flags of `npm start` (package.json's start script, `exec node <flags>
 * dist/bin/mesh-cp.cjs run`): the bench runs mesh-cp with them, as `npm start` does.
 */
export function startScriptFlags(): string[] {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } };
  const m = /^exec node((?: --[^ ]+)*) dist\/bin\/mesh-cp\.cjs run$/.exec(pkg.scripts.start);
  if (!m)
    throw new Error(
      `package.json's start script is not "exec node [flags] dist/bin/mesh-cp.cjs run": ${pkg.scripts.start}`,
    );
  return m[1].split(' ').filter(Boolean);
}

/**
 * Starts mesh-cp as users start it (`npm start`'s command: node with the start script's flags,
 * `mesh-cp run`), on a data dir, free ports. Node flags for the server alone (to profile it under
 * a scenario) come from BENCH_SERVER_NODE_FLAGS, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`; a
 * scenario adds its own in `nodeFlags` (`--inspect=…`).
 */
export function startMeshCp(
  dataDir: string,
  extraEnv: Record<string, string> = {},
  nodeFlags: readonly string[] = [],
): Promise<Started> {
  const flags = (process.env.BENCH_SERVER_NODE_FLAGS ?? '').split(' ').filter(Boolean);
  return startProcess(
    'node',
    [...startScriptFlags(), ...flags, ...nodeFlags, 'dist/bin/mesh-cp.cjs', 'run'],
    {
      MESH_STORE_LEVEL_PATH: dataDir,
      MESH_API_SERVER_PORT: '0',
      MESH_API_SERVER_HTTPS_PORT: '0',
      MESH_DIAGNOSTICS_PORT: '0',
      MESH_XDS_SERVER_GRPC_PORT: '0',
      MESH_LOG_LEVEL: 'info',
      ...extraEnv,
    },
    ['mesh-cp ready'],
  );
}

/** Starts a TypeScript baseline server through tsx (`nodeFlags`: e.g. `--inspect=…` for its heap). */
export function startTsBaseline(
  file: string,
  args: string[] = [],
  nodeFlags: readonly string[] = [],
): Promise<Started> {
  return startProcess('node', [...nodeFlags, '--import', 'tsx', file, ...args], {}, ['ready']);
}

/** Resident set size of a process in bytes (Linux /proc). */
export function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

/** Runs a process to its end; resolves with the parsed last JSON line and the elapsed ms. */
export function runToEnd(cmd: string, args: string[]): Promise<{ out: Record<string, unknown>; ms: number }> {
  const t0 = performance.now();
  const proc = spawn(cmd, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  proc.stderr?.on('data', (c: Buffer) => (err += c.toString()));
  return new Promise((resolve, reject) => {
    proc.once('exit', (code) => {
      const ms = performance.now() - t0;
      if (code !== 0) return reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${err}`));
      const last = out.trim().split('\n').pop() ?? '{}';
      resolve({ out: JSON.parse(last) as Record<string, unknown>, ms });
    });
  });
}

/** Result of one autocannon run (load-worker.mjs). */
export interface LoadResult {
  rps: number;
  total: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  /** How many answers had each status code. */
  statusCodes: Record<string, number>;
  timeouts: number;
}

/** Runs autocannon in its own process against a URL. */
export async function load(opts: {
  url: string;
  connections: number;
  duration: number;
  /** Seconds of the same load before the counted `duration`, not counted (a varying load goes on). */
  warmup?: number;
  method?: string;
  paths?: string[];
  bodies?: string[];
  /** A text every body holds (`"port":8080`): each request sets it anew, so every PUT is a change. */
  vary?: string;
  /** With `vary`: the pass over `paths` whose values the load starts from (default 0). */
  firstPass?: number;
  /** With `vary`: `paths` are etcd keys, each request a `/v3/kv/put` of the body as their value. */
  etcdPut?: boolean;
  headers?: Record<string, string>;
}): Promise<LoadResult> {
  const file = join(tmpdir(), `mesh-bench-load-${process.pid}-${Date.now()}.json`);
  writeFileSync(file, JSON.stringify(opts));
  const { out } = await runToEnd('node', ['bench/lib/load-worker.mjs', file]).finally(() =>
    rmSync(file, { force: true }),
  );
  const r = out as unknown as LoadResult;
  if (r.errors > 0 || r.timeouts > 0)
    throw new Error(`load run had ${r.errors} errors, ${r.timeouts} timeouts`);
  return r;
}

/** CPU time (user + system) a process has used, in ms (Linux /proc, 10 ms ticks). */
export function cpuMsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  // After "pid (comm) ": state is field 0, utime 11, stime 12 (clock ticks of 10 ms on Linux).
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * Waits until `pids` and this process are idle: less than 10% of a core each over three 150 ms
 * windows in a row (at most `maxMs`); longer than mesh-cp's quiet time (250 ms), so a snapshot
 * that waits for quiet has started by then. Before a run, so that work the last one left behind (a
 * snapshot due after a burst or at start-up, a compaction) is not counted in the next measurement,
 * ours or a baseline's.
 */
export async function settle(pids: readonly number[], maxMs = 30_000): Promise<void> {
  const WINDOW = 150;
  const end = performance.now() + maxMs;
  let quiet = 0;
  while (quiet < 3 && performance.now() < end) {
    const before = pids.map(cpuMsOf);
    const self = process.cpuUsage();
    await new Promise((r) => setTimeout(r, WINDOW));
    const used = process.cpuUsage(self);
    const selfMs = (used.user + used.system) / 1000;
    const idle = selfMs < WINDOW / 10 && pids.every((pid, i) => cpuMsOf(pid) - before[i] < WINDOW / 10);
    quiet = idle ? quiet + 1 : 0;
  }
}

/** A free TCP port on loopback (for a server's `--inspect`). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Bytes of heap in use after two full GCs of a process started with `--inspect=127.0.0.1:port`. */
export async function heapAfterGc(inspectPort: number): Promise<number> {
  const targets = (await (await fetch(`http://127.0.0.1:${inspectPort}/json/list`)).json()) as Array<{
    webSocketDebuggerUrl: string;
  }>;
  const flags = Number(process.versions.node.split('.')[0]) < 22 ? ['--experimental-websocket'] : [];
  const { out } = await runToEnd('node', [
    ...flags,
    'bench/lib/heap-worker.mjs',
    targets[0].webSocketDebuggerUrl,
  ]);
  return out.heapUsed as number;
}
