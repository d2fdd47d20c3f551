import type { ChildProcess } from 'node:child_process';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/control-plane.js';
import { DOCUMENTED_PORTS, countMarkers, rewriteBlock, shellBlocks } from '../helpers/doc-blocks.js';
import { REPO_ROOT } from '../helpers/process.js';

/**
 * The pages whose shell blocks run, each in order in its own temp directory against a fresh
 * control plane: the test's, or the ones its `background` blocks start (multi-zone).
 * docs/development.md is not here: its blocks are the test commands themselves.
 */
const PAGES = [
  'README.md',
  'docs/running.md',
  'docs/security.md',
  'docs/history-and-audit.md',
  'docs/multi-zone.md',
];

const CLI = join(REPO_ROOT, 'dist', 'bin', 'mesh-cp.cjs');
const BLOCK_TIMEOUT_MS = 20_000;
const READY = '"msg":"mesh-cp ready"';

/** Whether a command the blocks use is installed (they use curl and jq, as a user would). */
const has = (cmd: string): boolean => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;

/** A free TCP port on 127.0.0.1. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** A server a block started (or the test's own), with what it wrote. */
interface Started {
  proc: ChildProcess;
  output: () => string;
  exited: Promise<void>;
}

/** Runs `code` with bash in its own process group, resolving once it logs `mesh-cp ready`. */
async function startInBackground(code: string, cwd: string, env: NodeJS.ProcessEnv): Promise<Started> {
  const proc = spawn('bash', ['-euo', 'pipefail', '-c', code], { cwd, env, detached: true, stdio: 'pipe' });
  let out = '';
  const exited = new Promise<void>((res) => proc.on('exit', () => res()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`not ready after ${BLOCK_TIMEOUT_MS} ms:\n${out}`)),
      BLOCK_TIMEOUT_MS,
    );
    const onData = (chunk: Buffer): void => {
      out += chunk.toString();
      if (out.includes(READY)) {
        clearTimeout(timer);
        resolve();
      }
    };
    proc.stdout.on('data', onData);
    proc.stderr.on('data', onData);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`exited before ready:\n${out}`));
    });
  });
  return { proc, output: () => out, exited };
}

/** Stops a started server's whole process group and waits for it. */
async function stop(s: Started): Promise<void> {
  if (s.proc.exitCode !== null || s.proc.signalCode !== null || s.proc.pid === undefined) return;
  process.kill(-s.proc.pid, 'SIGTERM');
  await s.exited;
}

/** The log lines of level error or above among what a server wrote. */
const errorLines = (output: string): string[] =>
  output.split('\n').filter((l) => /^\{.*"level":(5\d|60)\b/.test(l));

describe.each(PAGES)('the shell blocks of %s run as written on a fresh store', (page) => {
  const markdown = readFileSync(join(REPO_ROOT, page), 'utf8');
  const blocks = shellBlocks(markdown);
  const startsItsOwn = blocks.some((b) => b.mode === 'background');
  const work = tempDir('mesh-cp-doc-');
  const servers: Started[] = [];
  const ports = new Map<number, number>();
  let env: NodeJS.ProcessEnv = {};

  beforeAll(async () => {
    expect(has('curl') && has('jq'), 'the documentation blocks need curl and jq on the PATH').toBe(true);
    for (const p of DOCUMENTED_PORTS) ports.set(p, await freePort());
    const at = (p: number): string => String(ports.get(p));
    // What an unset port means in the blocks: the documented default, moved to a free port.
    env = {
      ...process.env,
      NO_COLOR: '1',
      // meshctl keeps its contexts here, not in the HOME of whoever runs the tests.
      MESHCTL_CONFIG: join(work.path, 'meshctl.yaml'),
      MESH_API_SERVER_PORT: at(5681),
      MESH_API_SERVER_HTTPS_PORT: at(5682),
      MESH_DIAGNOSTICS_PORT: at(5680),
      MESH_MULTIZONE_GLOBAL_KDS_GRPC_PORT: at(5685),
      MESH_XDS_SERVER_GRPC_PORT: at(5678),
    };
    // The page's server runs in the blocks' directory with its default data dir, so `./data/...` holds.
    if (!startsItsOwn) servers.push(await startInBackground(`exec node ${CLI} run`, work.path, env));
  });

  afterAll(async () => {
    for (const s of servers.reverse()) await stop(s);
    work.cleanup();
  });

  it('runs every block but those its markers name, and has blocks that run', () => {
    expect(blocks.filter((b) => b.mode === 'skip').length).toBe(countMarkers(markdown, 'skip'));
    expect(blocks.filter((b) => b.mode === 'background').length).toBe(countMarkers(markdown, 'background'));
    expect(blocks.filter((b) => b.mode === 'run').length).toBeGreaterThan(0);
  });

  // A block its marker skips is no test at all (the count above holds the page to its markers).
  for (const block of blocks.filter((b) => b.mode !== 'skip')) {
    const title = `${page}:${block.line}${block.reason ? ` (${block.mode}: ${block.reason})` : ''}`;
    it(
      title,
      async () => {
        const code = rewriteBlock(block.code, ports, CLI);
        if (block.mode === 'background') {
          servers.push(await startInBackground(code, work.path, env));
          return;
        }
        const run = spawnSync('bash', ['-euo', 'pipefail', '-c', code], {
          cwd: work.path,
          encoding: 'utf8',
          timeout: BLOCK_TIMEOUT_MS,
          env,
        });
        const output = `$ ${code}\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}`;
        expect(run.error, output).toBeUndefined();
        expect(run.status, output).toBe(0);
      },
      BLOCK_TIMEOUT_MS + 5_000,
    );
  }

  it('leaves its servers running, with no error logged', () => {
    for (const s of servers) {
      expect(s.proc.exitCode, s.output()).toBeNull();
      expect(errorLines(s.output())).toEqual([]);
    }
  });
});
