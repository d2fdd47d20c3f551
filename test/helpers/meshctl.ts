import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from './process.js';

/** What a meshctl run printed and how it ended. */
export interface MeshctlRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the built CLI (`node dist/bin/meshctl.js <args>`) as a process until it exits, with the
 * config file `config` (MESHCTL_CONFIG) and `stdin` written to its standard input.
 */
export function meshctl(
  args: string[],
  opts: { config: string; stdin?: string; env?: Record<string, string>; cwd?: string },
): Promise<MeshctlRun> {
  return new Promise((resolve) => {
    const proc = spawn('node', [join(REPO_ROOT, 'dist/bin/meshctl.js'), ...args], {
      cwd: opts.cwd ?? REPO_ROOT,
      env: { ...process.env, MESHCTL_CONFIG: opts.config, ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    proc.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    proc.stdin.end(opts.stdin ?? '');
    proc.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A call of the HTTP API at `base` (JSON `body` when given): its status, headers, text, and the text parsed (undefined when empty). */
export async function callApi(
  base: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; headers: Headers; text: string; body: Record<string, unknown> | undefined }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    text,
    body: text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>),
  };
}

/** The rows of a printed table, each split into its cells (columns are 3+ spaces apart). */
export function tableRows(text: string): string[][] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '' && !l.startsWith('Rest of the list'))
    .map((l) => l.split(/ {3,}/).map((c) => c.trim()));
}

/** A meshctl process still running (`watch`), with what it has printed so far. */
export interface MeshctlProcess {
  proc: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves once `predicate` holds for stdout; rejects after `ms` or when it exits first, with what it printed. */
  until(predicate: (stdout: string) => boolean, ms?: number): Promise<void>;
  exited: Promise<MeshctlRun>;
}

/** Starts the built CLI with the config file `config` and leaves it running (stdin closed). */
export function startMeshctl(
  args: string[],
  opts: { config: string; env?: Record<string, string> },
): MeshctlProcess {
  const proc = spawn('node', [join(REPO_ROOT, 'dist/bin/meshctl.js'), ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, MESHCTL_CONFIG: opts.config, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const waiters = new Set<() => void>();
  const wake = (): void => {
    for (const w of [...waiters]) w();
  };
  proc.stdout.on('data', (c: Buffer) => {
    stdout += c.toString();
    wake();
  });
  proc.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<MeshctlRun>((resolve) =>
    proc.on('close', (code) => {
      resolve({ code, stdout, stderr });
      wake();
    }),
  );
  const until = (predicate: (out: string) => boolean, ms = 10_000): Promise<void> =>
    new Promise((resolve, reject) => {
      const done = (err?: Error): void => {
        clearTimeout(timer);
        waiters.delete(check);
        if (err) reject(err);
        else resolve();
      };
      const check = (): void => {
        if (predicate(stdout)) done();
        else if (proc.exitCode !== null || proc.signalCode !== null) {
          done(
            new Error(
              `meshctl exited (${proc.exitCode ?? proc.signalCode}); stdout:\n${stdout}\nstderr:\n${stderr}`,
            ),
          );
        }
      };
      const timer = setTimeout(
        () => done(new Error(`not printed within ${ms} ms; stdout:\n${stdout}\nstderr:\n${stderr}`)),
        ms,
      );
      waiters.add(check);
      check();
    });
  return { proc, stdout: () => stdout, stderr: () => stderr, until, exited };
}
