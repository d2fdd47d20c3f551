import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
// @ts-expect-error: a build script, plain JavaScript without types
import { inputsHash, upToDate, writeStamp } from '../../scripts/build-stamp.mjs';
import { tempDir } from '../helpers/control-plane.js';

const hashOf = inputsHash as (root: string) => string;
const isUpToDate = upToDate as (root: string, inputs: string) => boolean;
const stamp = writeStamp as (root: string, inputs: string) => void;

/** A repository-shaped tree: sources, a lock file, generated types and a built dist. */
function tree(): { root: string; write(path: string, text: string): void; cleanup(): void } {
  const dir = tempDir('mesh-cp-build-stamp-');
  const write = (path: string, text: string): void => {
    mkdirSync(join(dir.path, path, '..'), { recursive: true });
    writeFileSync(join(dir.path, path), text);
  };
  write('src/a.ts', 'export const a = 1;\n');
  write('gui/src/app.tsx', 'export {};\n');
  write('gui/src/generated/openapi.d.ts', '// generated\n');
  write('proto/x.proto', 'syntax = "proto3";\n');
  write('package-lock.json', '{}\n');
  write('dist/bin/mesh-cp.cjs', '// built\n');
  return { root: dir.path, write, cleanup: dir.cleanup };
}

describe('npm run build skips a build whose inputs are those of the last one', () => {
  let t: ReturnType<typeof tree>;
  afterEach(() => t.cleanup());

  it('is up to date after a build, until a source, a proto or the lock file changes', () => {
    t = tree();
    const built = hashOf(t.root);
    expect(isUpToDate(t.root, built)).toBe(false); // never built: no stamp
    stamp(t.root, built);
    expect(isUpToDate(t.root, hashOf(t.root))).toBe(true);
    for (const [path, text] of [
      ['src/a.ts', 'export const a = 2;\n'],
      ['src/new.ts', 'export {};\n'],
      ['proto/x.proto', 'syntax = "proto2";\n'],
      ['package-lock.json', '{"v":2}\n'],
    ]) {
      t.write(path, text);
      expect(isUpToDate(t.root, hashOf(t.root)), path).toBe(false);
      stamp(t.root, hashOf(t.root));
      expect(isUpToDate(t.root, hashOf(t.root)), path).toBe(true);
    }
  });

  it('ignores the API types it generates itself, and builds again when one of its outputs is gone', () => {
    t = tree();
    stamp(t.root, hashOf(t.root));
    t.write('gui/src/generated/openapi.d.ts', '// generated again\n');
    expect(isUpToDate(t.root, hashOf(t.root))).toBe(true);
    // Files a run adds to dist (V8 code caches) are not outputs of the build.
    t.write('dist/bin/mesh-cp.bundle.cjs.run.v8-cache', 'cache');
    expect(isUpToDate(t.root, hashOf(t.root))).toBe(true);
    rmSync(join(t.root, 'dist', 'bin', 'mesh-cp.cjs'));
    expect(isUpToDate(t.root, hashOf(t.root))).toBe(false);
  });
});
