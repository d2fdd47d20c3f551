import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from './process.js';

/** A program of examples/greeter run as a child process, its JSON stdout lines parsed. */
export interface GreeterProcess {
  proc: ChildProcess;
  /** Parsed JSON lines of stdout, in order. */
  lines: Array<Record<string, unknown>>;
  /** Raw stderr (grpc-js logs and traces). */
  stderr: () => string;
  /** Resolves with the first line (already printed or to come) that `match` accepts. */
  line: (match: (l: Record<string, unknown>) => boolean) => Promise<Record<string, unknown>>;
  /** Resolves with the exit code (or signal) when the process has ended and its output is read. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Runs `node examples/greeter/<script> <args>` from the repository root, with `env` added. */
export function startGreeter(
  script: 'server.mjs' | 'client.mjs',
  args: string[],
  env: Record<string, string> = {},
): GreeterProcess {
  const proc = spawn('node', [join('examples', 'greeter', script), ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Array<Record<string, unknown>> = [];
  const waiters: Array<{
    match: (l: Record<string, unknown>) => boolean;
    resolve: (l: Record<string, unknown>) => void;
  }> = [];
  let err = '';
  let buf = '';
  proc.stdout?.on('data', (chunk: Buffer) => {
    buf += chunk.toString();
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const text = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (!text.startsWith('{')) continue;
      const rec = JSON.parse(text) as Record<string, unknown>;
      lines.push(rec);
      for (const w of waiters.filter((w) => w.match(rec))) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(rec);
      }
    }
  });
  proc.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) =>
    proc.on('close', (code, signal) => res({ code, signal })),
  );
  const line = (match: (l: Record<string, unknown>) => boolean) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const found = lines.find(match);
      if (found) return resolve(found);
      waiters.push({ match, resolve });
      void exited.then(({ code, signal }) =>
        reject(new Error(`${script} exited (${code ?? signal}) without the line: ${err}`)),
      );
    });
  return { proc, lines, stderr: () => err, line, exited };
}
