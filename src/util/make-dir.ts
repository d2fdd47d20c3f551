import { mkdir, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

/**
 * `mkdir -p` without `fs.mkdir`'s `recursive` option, which on Node 20 never returns for a path
 * under a file system that refuses new entries with ENOENT (`/proc/nope` spins a core). Missing
 * parents are made one at a time (with `mode`, when given); the first refusal is thrown with its own
 * code.
 */
export async function makeDir(path: string, mode?: number): Promise<void> {
  const target = resolve(path);
  const missing: string[] = [];
  for (let dir = target; ; dir = dirname(dir)) {
    const found = await stat(dir).then(
      (s) => s,
      (err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return undefined;
        throw err;
      },
    );
    if (found) {
      if (!found.isDirectory()) {
        throw Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${dir}'`), {
          code: 'ENOTDIR',
          path: dir,
        });
      }
      break;
    }
    missing.push(dir);
    if (dirname(dir) === dir) break;
  }
  for (const dir of missing.reverse()) {
    await mkdir(dir, mode === undefined ? undefined : { mode }).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    });
  }
}
