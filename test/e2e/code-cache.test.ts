import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/process.js';

const run = promisify(execFile);

/**
 * The built `mesh-cp` command (dist/bin/mesh-cp.cjs) and its V8 code cache, on a copy of the two
 * built files in a folder of their own (inside the checkout, so that the bundle finds its packages
 * in node_modules as the installed one does): the suite's other processes share dist/bin's caches.
 */
describe('mesh-cp keeps a compile cache per command beside its bundle', () => {
  const bin = join(REPO_ROOT, 'dist', `code-cache-test-${process.pid}`, 'bin');
  const launcher = join(bin, 'mesh-cp.cjs');
  const cacheOf = (command: string) => join(bin, `mesh-cp.bundle.cjs.${command}.v8-cache`);
  const meshCp = (args: string[], nodeFlags: string[] = []) =>
    // NODE_OPTIONS counts as node flags too: none here, whatever the suite runs under.
    run('node', [...nodeFlags, launcher, ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, NODE_OPTIONS: '' },
    });
  /** The file's identity: a rewrite is a rename of a new file, so its inode changes. */
  const identity = (file: string) => {
    const s = statSync(file);
    return `${s.ino}:${s.mtimeMs}:${s.size}`;
  };

  beforeAll(() => {
    mkdirSync(bin, { recursive: true });
    for (const file of ['mesh-cp.cjs', 'mesh-cp.bundle.cjs'])
      copyFileSync(join(REPO_ROOT, 'dist', 'bin', file), join(bin, file));
  });
  afterAll(() => rmSync(join(bin, '..'), { recursive: true, force: true }));

  it('writes a cache when a command ends without one, and the next run uses it as it is', async () => {
    expect(existsSync(cacheOf('config-keys'))).toBe(false);
    const first = await meshCp(['config-keys']);
    expect(first.stdout).toContain('MESH_MODE');
    expect(statSync(cacheOf('config-keys')).size).toBeGreaterThan(100_000);
    const before = identity(cacheOf('config-keys'));
    const second = await meshCp(['config-keys']);
    expect(second.stdout).toBe(first.stdout);
    // V8 took the cache: the process found a usable one and wrote none.
    expect(identity(cacheOf('config-keys'))).toBe(before);
    // Another command keeps its own.
    expect(existsSync(cacheOf('other'))).toBe(false);
    expect((await meshCp(['--version'])).stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    expect(existsSync(cacheOf('other'))).toBe(true);
    expect(identity(cacheOf('config-keys'))).toBe(before);
  });

  it('runs through a cache V8 refuses (damaged) and replaces it; other node flags keep a cache of their own', async () => {
    const expected = (await meshCp(['config-keys'])).stdout;
    writeFileSync(cacheOf('config-keys'), Buffer.alloc(200_000, 7));
    const damaged = identity(cacheOf('config-keys'));
    expect((await meshCp(['config-keys'])).stdout).toBe(expected);
    const replaced = identity(cacheOf('config-keys'));
    expect(replaced).not.toBe(damaged);
    expect((await meshCp(['config-keys'])).stdout).toBe(expected);
    expect(identity(cacheOf('config-keys'))).toBe(replaced);
    // Other node flags (V8 would refuse the cache made without them): a cache of their own, used by
    // the next run with the same flags, and the one without flags stays as it is.
    const cachesBefore = readdirSync(bin).filter((f) => f.startsWith('mesh-cp.bundle.cjs.config-keys'));
    expect(await meshCp(['config-keys'], ['--max-semi-space-size=32'])).toMatchObject({ stdout: expected });
    const flagged = readdirSync(bin).filter(
      (f) => f.startsWith('mesh-cp.bundle.cjs.config-keys') && !cachesBefore.includes(f),
    );
    expect(flagged).toHaveLength(1);
    expect(flagged[0]).toMatch(/^mesh-cp\.bundle\.cjs\.config-keys-[0-9a-f]{8}\.v8-cache$/);
    const underFlags = identity(join(bin, flagged[0]));
    await meshCp(['config-keys'], ['--max-semi-space-size=32']);
    expect(identity(join(bin, flagged[0]))).toBe(underFlags);
    expect(identity(cacheOf('config-keys'))).toBe(replaced);
    await meshCp(['config-keys']);
    expect(identity(cacheOf('config-keys'))).toBe(replaced);
    // No temporary file is left behind.
    expect(readdirSync(bin).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('with --enable-source-maps requires the bundle as node does, and writes no cache', async () => {
    rmSync(cacheOf('other'), { force: true });
    const out = await meshCp(['--version'], ['--enable-source-maps']);
    expect(out.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    expect(existsSync(cacheOf('other'))).toBe(false);
  });
});
