import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeDir } from '../../../src/util/make-dir.js';
import { tempDir } from '../../helpers/control-plane.js';

describe('makeDir', () => {
  const dir = tempDir();
  afterAll(() => dir.cleanup());

  it('makes missing parents and accepts an existing dir', async () => {
    const deep = join(dir.path, 'a', 'b', 'c');
    await makeDir(deep);
    expect(existsSync(deep)).toBe(true);
    await makeDir(deep);
  });

  it('refuses at once under /proc (where recursive fs.mkdir never returns), and under a file', async () => {
    await expect(makeDir('/proc/nope/data')).rejects.toMatchObject({ code: 'ENOENT' });
    writeFileSync(join(dir.path, 'file'), 'x');
    await expect(makeDir(join(dir.path, 'file', 'data'))).rejects.toMatchObject({ code: 'ENOTDIR' });
  });
});
