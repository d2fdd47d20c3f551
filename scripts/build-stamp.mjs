// What `npm run build` reads and writes, so that a build whose inputs are those of the last one
// leaves dist as it is (scripts/build.mjs).
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** What a build reads, relative to the repository root: folders whole, and single files. */
export const INPUTS = [
  'src',
  'gui',
  'proto',
  'scripts',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
];

/** The generated API types are an output of the build, though they sit under gui/. */
export const GENERATED = join('gui', 'src', 'generated');

/** Where the last build's inputs hash and its output files are kept. */
export const STAMP = join('dist', '.build-stamp.json');

/** Every file under `dir` (relative to `root`), sorted. */
function filesUnder(root, dir) {
  return readdirSync(join(root, dir), { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => relative(root, join(d.parentPath ?? d.path, d.name)))
    .sort();
}

/** A hash of the build's inputs under `root`: each file's path and content, and the Node.js version. */
export function inputsHash(root) {
  const hash = createHash('sha256').update(`${process.version}\0`);
  for (const entry of INPUTS) {
    const path = join(root, entry);
    if (!existsSync(path)) continue;
    const files = statSync(path).isDirectory()
      ? filesUnder(root, entry).filter((file) => !file.startsWith(GENERATED))
      : [entry];
    for (const file of files)
      hash
        .update(`${file}\0`)
        .update(readFileSync(join(root, file)))
        .update('\0');
  }
  return hash.digest('hex');
}

/** Whether dist under `root` was built from `inputs` and still holds every file that build wrote. */
export function upToDate(root, inputs) {
  try {
    const stamp = JSON.parse(readFileSync(join(root, STAMP), 'utf8'));
    return stamp.inputs === inputs && stamp.outputs.every((file) => existsSync(join(root, file)));
  } catch {
    return false;
  }
}

/** Records a finished build: its inputs hash, and the files dist holds now (before any run adds code caches). */
export function writeStamp(root, inputs) {
  const outputs = [...filesUnder(root, 'dist'), join(GENERATED, 'openapi.d.ts')];
  writeFileSync(join(root, STAMP), `${JSON.stringify({ inputs, outputs }, null, 2)}\n`);
}
