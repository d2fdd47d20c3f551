import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { keptKeysEnv } from './signing-keys.js';

/** The repository root (where `npm start` runs). */
export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** A control plane started as users start it, with its log lines parsed. */
export interface CpProcess {
  proc: ChildProcess;
  /** Parsed JSON log lines (pino), in order. */
  lines: Array<Record<string, unknown>>;
  /** Raw stderr. */
  stderr: () => string;
  /** The `mesh-cp ready` line: ports and the pid of the control plane process itself. */
  ready: Promise<{
    apiPort: number;
    httpsPort: number;
    diagnosticsPort: number;
    /** Global's sync port (0 unless mode is global). */
    kdsPort: number;
    /** The xDS port (0 on Global). */
    xdsPort: number;
    pid: number;
    revision: number;
  }>;
  /** Resolves with the exit code (or signal) when the process ends. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Free ports for every listener, overridable by the caller's env. */
const FREE_PORTS = {
  MESH_API_SERVER_PORT: '0',
  MESH_API_SERVER_HTTPS_PORT: '0',
  MESH_DIAGNOSTICS_PORT: '0',
  MESH_XDS_SERVER_GRPC_PORT: '0',
};

/** Runs `npm start` with the given env (free ports by default), in the repository root. */
export function startNpm(env: Record<string, string>, args: string[] = ['start']): CpProcess {
  return startCpProcess('npm', args, env);
}

/** Runs `node dist/bin/mesh-cp.cjs run` (the built CLI, no npm in between) with the given env (free ports by default). */
export function startMeshCp(env: Record<string, string>, args: string[] = ['run']): CpProcess {
  return startCpProcess('node', ['dist/bin/mesh-cp.cjs', ...args], env);
}

function startCpProcess(command: string, args: string[], env: Record<string, string>): CpProcess {
  const proc = spawn(command, args, {
    cwd: REPO_ROOT,
    env: { ...process.env, ...FREE_PORTS, ...keptKeysEnv(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return watchProcess(proc);
}

/** Runs `node dist/bin/mesh-cp.cjs run` in `cwd` (so `./data` is under it), free ports by default. */
export function startMeshCpIn(cwd: string, env: Record<string, string> = {}): CpProcess {
  const proc = spawn('node', [join(REPO_ROOT, 'dist', 'bin', 'mesh-cp.cjs'), 'run'], {
    cwd,
    env: { ...process.env, ...FREE_PORTS, ...keptKeysEnv(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return watchProcess(proc);
}

/** Parses the log lines of a started control plane and follows its `ready` line and its exit. */
function watchProcess(proc: ChildProcess): CpProcess {
  const lines: Array<Record<string, unknown>> = [];
  let err = '';
  let buf = '';
  let resolveReady: (v: {
    apiPort: number;
    httpsPort: number;
    diagnosticsPort: number;
    kdsPort: number;
    xdsPort: number;
    pid: number;
    revision: number;
  }) => void;
  let rejectReady: (e: Error) => void;
  const ready = new Promise<{
    apiPort: number;
    httpsPort: number;
    diagnosticsPort: number;
    kdsPort: number;
    xdsPort: number;
    pid: number;
    revision: number;
  }>((res, rej) => {
    resolveReady = res;
    rejectReady = rej;
  });
  proc.stdout?.on('data', (chunk: Buffer) => {
    buf += chunk.toString();
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (!line.startsWith('{')) continue;
      const rec = JSON.parse(line) as Record<string, unknown>;
      lines.push(rec);
      if (rec.msg === 'mesh-cp ready') {
        resolveReady({
          apiPort: rec.apiPort as number,
          httpsPort: rec.httpsPort as number,
          diagnosticsPort: rec.diagnosticsPort as number,
          kdsPort: rec.kdsPort as number,
          xdsPort: rec.xdsPort as number,
          pid: rec.pid as number,
          revision: rec.revision as number,
        });
      }
    }
  });
  proc.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => {
    proc.on('exit', (code, signal) => {
      rejectReady(new Error(`process exited (${code ?? signal}) before ready: ${err}`));
      res({ code, signal });
    });
  });
  // A test that expects a failed start awaits `exited` only; the rejection must not go unhandled.
  ready.catch(() => undefined);
  return { proc, lines, stderr: () => err, ready, exited };
}

/** Runs `mesh-cp <args>` (the built CLI) as a process until it exits. */
export function meshCp(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const proc = spawn('node', ['dist/bin/mesh-cp.cjs', ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    proc.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    proc.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
