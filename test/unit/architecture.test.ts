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

/** The source file a relative specifier names (`./x.js` is `./x.ts`), or undefined when it is not one of `files`. */
function importedFile(file: string, specifier: string, files: ReadonlySet<string>): string | undefined {
  if (!specifier.startsWith('./') && !specifier.startsWith('../')) return undefined;
  const target = resolve(dirname(file), specifier).replace(/\.js$/, '.ts');
  return files.has(target) ? target : undefined;
}

/** Which files of src/ each file imports (type-only imports included: a loop of types is a loop). */
function importGraph(sources: ReadonlyMap<string, string>): Map<string, string[]> {
  const files = new Set(sources.keys());
  const graph = new Map<string, string[]>();
  for (const [file, source] of sources) {
    const targets = specifiersOf(source).flatMap((specifier) => importedFile(file, specifier, files) ?? []);
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/**
 * The import loops among files, one line each (`a.ts -> b.ts -> a.ts`, from the loop's first file
 * in name order): a shortest path back to itself from the first file of each strongly connected
 * set of more than one file, or of a file that imports itself.
 */
function importLoops(graph: ReadonlyMap<string, readonly string[]>): string[] {
  // Tarjan's strongly connected components.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(file, Math.min(low.get(file)!, index.get(next)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || (graph.get(file) ?? []).includes(file)) components.push(component);
  };
  for (const file of [...graph.keys()].sort()) if (!index.has(file)) visit(file);
  return components
    .map((component) => {
      const members = new Set(component);
      const [first] = [...component].sort();
      // Breadth first from `first`, inside the component, until an edge leads back to it.
      const via = new Map<string, string>();
      const queue = [first];
      for (let i = 0; i < queue.length; i += 1) {
        const at = queue[i];
        for (const next of graph.get(at) ?? []) {
          if (next === first) {
            const path: string[] = [];
            for (let step = at; step !== first; step = via.get(step)!) path.unshift(step);
            return [first, ...path, first].map((file) => relative(ROOT, file)).join(' -> ');
          }
          if (members.has(next) && !via.has(next)) {
            via.set(next, at);
            queue.push(next);
          }
        }
      }
      throw new Error(`no loop through ${first}`);
    })
    .sort();
}

describe('architecture', () => {
  const files = sourceFiles(SRC);
  const sources = new Map(files.map((file) => [file, readFileSync(file, 'utf8')]));
  const edges = files.flatMap((file) => edgesOf(file, sources.get(file)!));

  it('every relative import in src/ follows the folder table', () => {
    expect(violations(edges)).toEqual([]);
  });

  it('has no import loop between files of src/, type-only imports included', () => {
    expect(importLoops(importGraph(sources))).toEqual([]);
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

    it('finds import loops between files, type-only imports and longer loops included', () => {
      const file = (name: string): string => join(SRC, 'fake', name);
      const sources = new Map([
        [file('a.ts'), "import type { B } from './b.js';"],
        [file('b.ts'), "import { a } from './a.js';\nimport { c } from './c.js';"],
        [file('c.ts'), "import { d } from '../fake/d.js';"],
        [file('d.ts'), "export { e } from './e.js';"],
        [file('e.ts'), "const c = await import('./c.js');"],
        [
          file('f.ts'),
          "import { a } from './a.js';\nimport { z } from 'zod';\nimport { y } from './missing.js';",
        ],
        [file('g.ts'), "import type { G } from './g.js';"],
      ]);
      expect(importLoops(importGraph(sources))).toEqual([
        'src/fake/a.ts -> src/fake/b.ts -> src/fake/a.ts',
        'src/fake/c.ts -> src/fake/d.ts -> src/fake/e.ts -> src/fake/c.ts',
        'src/fake/g.ts -> src/fake/g.ts',
      ]);
      sources.set(file('b.ts'), "import { c } from './c.js';");
      sources.set(file('e.ts'), '');
      sources.set(file('g.ts'), '');
      expect(importLoops(importGraph(sources))).toEqual([]);
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
