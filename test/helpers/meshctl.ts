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

/** The rows of a printed table, each split into its cells (columns are 3+ spaces apart). */
export function tableRows(text: string): string[][] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '' && !l.startsWith('Rest of the list'))
    .map((l) => l.split(/ {3,}/).map((c) => c.trim()));
}
