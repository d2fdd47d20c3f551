import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { REPO_ROOT } from './process.js';

/** What a finished `meshctl` run printed and its exit code. */
export interface MeshctlResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A `meshctl` process still running (watch), with what it printed so far. */
export interface MeshctlProcess {
  proc: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves once `predicate` holds for stdout (rejects after `ms`, naming what was printed). */
  until(predicate: (stdout: string) => boolean, ms?: number): Promise<void>;
  exited: Promise<MeshctlResult>;
}

// No config file: `--address` names the server, and a test never reads the user's ~/.meshctl.
const ENV = { MESHCTL_CONFIG: join(tmpdir(), 'meshctl-test-no-config.yaml') };

/** Starts the built CLI (`dist/bin/meshctl.js`) against `address`. */
export function startMeshctl(
  address: string,
  args: string[],
  env: Record<string, string> = {},
): MeshctlProcess {
  const proc = spawn('node', ['dist/bin/meshctl.js', '--api-address', address, ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...ENV, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const waiters = new Set<() => void>();
  proc.stdout?.on('data', (c: Buffer) => {
    stdout += c.toString();
    for (const w of [...waiters]) w();
  });
  proc.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<MeshctlResult>((resolve) =>
    proc.on('close', (code) => {
      for (const w of [...waiters]) w();
      resolve({ code, stdout, stderr });
    }),
  );
  return {
    proc,
    stdout: () => stdout,
    stderr: () => stderr,
    until: (predicate, ms = 10_000) =>
      new Promise((resolve, reject) => {
        const check = (): void => {
          if (predicate(stdout)) {
            clearTimeout(timer);
            waiters.delete(check);
            resolve();
          } else if (proc.exitCode !== null) {
            clearTimeout(timer);
            waiters.delete(check);
            reject(new Error(`meshctl exited (${proc.exitCode}); stdout:\n${stdout}\nstderr:\n${stderr}`));
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`not printed within ${ms} ms; stdout:\n${stdout}\nstderr:\n${stderr}`));
        }, ms);
        waiters.add(check);
        check();
      }),
    exited,
  };
}

/** Runs the built CLI against `address` until it exits. */
export function meshctl(
  address: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<MeshctlResult> {
  return startMeshctl(address, args, env).exited;
}
