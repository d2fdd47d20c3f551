import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * Which top folders under src/ each folder may import (the shared design/architecture.md, "Folders and what each
 * owns"). A folder may always import itself. Compare this table with the architecture file.
 */
const ALLOWED_IMPORTS: Record<string, readonly string[]> = {
  util: [],
  resources: ['util'],
  events: ['resources', 'util'],
  projections: ['events', 'resources', 'util'],
  status: ['resources', 'util'],
  app: ['util', 'resources', 'events', 'projections', 'status', 'tokens', 'inspect', 'config', 'policies'],
  api: ['app', 'resources', 'util', 'config', 'events', 'status', 'projections', 'tokens'],
  zones: ['app', 'resources', 'util', 'config', 'events', 'status'],
  policies: ['projections', 'resources', 'util'],
  xds: ['app', 'resources', 'util', 'inspect', 'status', 'policies'],
  inspect: ['resources', 'util'],
  tokens: ['resources', 'util'],
  config: ['util'],
  // "everything" above it: cli sits on top of runtime, so runtime -> cli would be a cycle.
  runtime: [
    'util',
    'resources',
    'events',
    'projections',
    'status',
    'app',
    'api',
    'zones',
    'xds',
    'inspect',
    'policies',
    'tokens',
    'config',
  ],
  cli: ['runtime', 'app', 'config', 'util', 'events', 'resources'],
  // The client, as the design's table says: the registry's kinds (a literal in dist, see
  // scripts/build.mjs); it talks to a server over HTTP and never loads one (the wire shapes it
  // reads are its own, src/meshctl/wire-types.ts).
  meshctl: ['resources', 'util'],
};

/** Edges that must never exist, whatever the table above says: the two transports stay apart. */
const FORBIDDEN_IMPORTS: readonly [string, string][] = [
  ['api', 'zones'],
  ['zones', 'api'],
];

/** One relative import: the importing file, its top folder, and the top folder it reaches. */
interface Edge {
  file: string;
  from: string;
  to: string;
  specifier: string;
}

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SRC = join(ROOT, 'src');
/** The "folder" of a file directly in src/, which the table does not know. */
const SRC_ROOT = '(src root)';

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.isFile() && entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Every module specifier of a source: `import ... from`, `import '...'`, `export ... from`, `import('...')`. */
function specifiersOf(source: string): string[] {
  return ts.preProcessFile(source, true, true).importedFiles.map((file) => file.fileName);
}

/** The top folder under src/ of an absolute path, or undefined when it is outside src/. */
function topFolder(path: string): string | undefined {
  const inside = relative(SRC, path);
  if (inside.startsWith('..') || inside === '') return undefined;
  const segments = inside.split(sep);
  return segments.length === 1 ? SRC_ROOT : segments[0];
}

/** The edges between top folders of one file (relative imports that stay inside src/). */
function edgesOf(file: string, source: string): Edge[] {
  const from = topFolder(file) ?? SRC_ROOT;
  return specifiersOf(source)
    .filter((specifier) => specifier.startsWith('./') || specifier.startsWith('../'))
    .flatMap((specifier) => {
      const to = topFolder(resolve(dirname(file), specifier));
      return to === undefined ? [] : [{ file: relative(ROOT, file), from, to, specifier }];
    });
}

/** The edges the table does not allow, as `file -> folder ('specifier'): why` lines. */
function violations(edges: readonly Edge[]): string[] {
  const found: string[] = [];
  for (const edge of edges) {
    if (edge.from === edge.to) continue;
    const line = `${edge.file} -> ${edge.to} ('${edge.specifier}')`;
    const allowed = ALLOWED_IMPORTS[edge.from];
    if (FORBIDDEN_IMPORTS.some(([from, to]) => from === edge.from && to === edge.to)) {
      found.push(`${line}: ${edge.from} and ${edge.to} never import each other`);
    } else if (allowed === undefined) {
      found.push(`${line}: folder ${edge.from} is not in the architecture table`);
    } else if (!allowed.includes(edge.to)) {
      const may = allowed.length === 0 ? 'nothing of ours' : `only ${allowed.join(', ')}`;
      found.push(`${line}: ${edge.from} may import ${may}`);
    }
  }
  return found;
}

describe('architecture', () => {
  const files = sourceFiles(SRC);
  const edges = files.flatMap((file) => edgesOf(file, readFileSync(file, 'utf8')));

  it('every relative import in src/ follows the folder table', () => {
    expect(violations(edges)).toEqual([]);
  });

  it('knows every folder under src/', () => {
    const folders = readdirSync(SRC, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    expect(folders.filter((folder) => !(folder in ALLOWED_IMPORTS))).toEqual([]);
    expect(files.filter((file) => topFolder(file) === SRC_ROOT).map((file) => relative(ROOT, file))).toEqual(
      [],
    );
  });

  it('has a table that names only known folders and never allows api <-> zones', () => {
    for (const [from, targets] of Object.entries(ALLOWED_IMPORTS)) {
      for (const to of targets) expect(Object.keys(ALLOWED_IMPORTS), `${from} -> ${to}`).toContain(to);
    }
    for (const [from, to] of FORBIDDEN_IMPORTS) expect(ALLOWED_IMPORTS[from]).not.toContain(to);
  });

  describe('the checker itself', () => {
    it('finds every import form', () => {
      const source = [
        "import a from '../a/x.js';",
        "import type { B } from '../b/x.js';",
        "import '../c/x.js';",
        "export * from '../d/x.js';",
        "export { e } from '../e/x.js';",
        "export type { F } from '../f/x.js';",
        "const g = await import('../g/x.js');",
        "type H = typeof import('../h/x.js');",
        'import {',
        '  i,',
        "} from '../i/x.js';",
        "import { z } from 'zod';",
        "import { readFileSync } from 'node:fs';",
      ].join('\n');
      expect(specifiersOf(source)).toEqual([
        '../a/x.js',
        '../b/x.js',
        '../c/x.js',
        '../d/x.js',
        '../e/x.js',
        '../f/x.js',
        '../g/x.js',
        '../h/x.js',
        '../i/x.js',
        'zod',
        'node:fs',
      ]);
    });

    it('resolves relative imports to top folders and ignores packages and paths outside src/', () => {
      const file = join(SRC, 'api', 'routes', 'meshes.ts');
      const source = [
        "import { x } from './helpers.js';",
        "import { y } from '../server.js';",
        "import { z } from '../../app/commands.js';",
        "import { w } from '../../../package.json';",
        "import { v } from 'fastify';",
      ].join('\n');
      expect(edgesOf(file, source).map((edge) => `${edge.from}->${edge.to}`)).toEqual([
        'api->api',
        'api->api',
        'api->app',
      ]);
    });

    it('sees the imports of the real tree', () => {
      expect(files.length).toBeGreaterThan(0);
      expect(edges.some((edge) => edge.from === 'config' && edge.to === 'util')).toBe(true);
    });

    it('reports a fake edge that goes the wrong way, and passes allowed ones', () => {
      const fake = (from: string, to: string): Edge => ({
        file: `src/${from}/fake.ts`,
        from,
        to,
        specifier: `../${to}/x.js`,
      });
      expect(
        violations([
          fake('resources', 'api'),
          fake('api', 'zones'),
          fake('zones', 'api'),
          fake('util', 'resources'),
          fake('config', 'resources'),
          fake('nowhere', 'util'),
          fake('events', 'resources'),
          fake('runtime', 'zones'),
          fake('api', 'api'),
        ]),
      ).toEqual([
        "src/resources/fake.ts -> api ('../api/x.js'): resources may import only util",
        "src/api/fake.ts -> zones ('../zones/x.js'): api and zones never import each other",
        "src/zones/fake.ts -> api ('../api/x.js'): zones and api never import each other",
        "src/util/fake.ts -> resources ('../resources/x.js'): util may import nothing of ours",
        "src/config/fake.ts -> resources ('../resources/x.js'): config may import only util",
        "src/nowhere/fake.ts -> util ('../util/x.js'): folder nowhere is not in the architecture table",
      ]);
    });
  });
});
