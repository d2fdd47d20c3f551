import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/process.js';

/** The modules that join and split composite keys: the in-memory keys, and the storage (LevelDB) keys. */
const KEY_MODULES = new Set(['src/resources/keys.ts', 'src/events/keys.ts']);

/**
 * Spellings of a composite key made or read by hand, each with what to call instead. They catch
 * the spellings the code used before the keys module, not every way to write a key.
 */
const HAND_MADE: ReadonlyArray<{ pattern: RegExp; instead: string; except?: RegExp }> = [
  { pattern: /\\u0001/, instead: 'resourceKey / kindOfResourceKey / meshRange' },
  {
    pattern: /\.split\(\s*['"`]\\(?:u0000|0|x00)['"`]\s*\)/,
    instead: 'a split… function of the keys module',
  },
  { pattern: /\\(?:u0000|0|x00)\$\{/, instead: 'a key function of the keys module' },
  { pattern: /\blocation\[0\]/, instead: 'locationPlace / locationIndex / locationService' },
  { pattern: /`[a-z]\$\{(?:index|i|j)\}`/, instead: 'inboundLocation / outboundLocation' },
  { pattern: /\$\{[\w.]*zone\}\./, instead: 'zonedName / nameInZone' },
  {
    pattern: /\$\{[\w.]*kind\}\/\$\{[\w.]*name\}|\$\{\w+\.type\}\/\$\{\w+\.name\}/,
    instead: 'policyKey / kindOfPolicyKey / nameOfPolicyKey',
  },
  { pattern: /\$\{[\w.]*mesh\}\.\$\{[\w.]*name\}/, instead: 'nodeId' },
  // The user CLI prints `<mesh>/<name>` for people to read: a label, not a key.
  {
    pattern: /\$\{[\w.]*mesh\}\/\$\{[\w.]*name\}/,
    instead: 'dataplaneStatusKey / meshNameKey',
    except: /^src\/meshctl\//,
  },
];

/**
 * Keys joined by hand and left so on purpose: each is made in one place, used as a map key in its
 * own file only and never split back.
 */
const LOCAL_KEYS = new Set([
  // (mesh, sorted tags) of a zone's service: the counter of each distinct service.
  'src/projections/service-counts.ts: const key = `${mesh}\\u0000${JSON.stringify(tags)}`;',
  // (kind, mesh) of a reader's visibility, remembered while one request's entries are filtered.
  "src/api/history-routes.ts: const key = `${e.kind}\\u0000${mesh ?? ''}`;",
  // (proxy class or server, subscribed names) of a config rendered at one revision.
  'src/xds/mesh-config-source.ts: const key = `${who}\\u0000${namesKey}`;',
]);

/** Every TypeScript file under src/, relative to the repository root with `/` separators. */
function sourceFiles(): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts')) found.push(relative(REPO_ROOT, path).split(sep).join('/'));
    }
  };
  walk(join(REPO_ROOT, 'src'));
  return found;
}

/** The hand-made keys of one file's text, as `path:line: the line (instead: …)`. */
function handMade(path: string, text: string): string[] {
  return text.split('\n').flatMap((line, i) => {
    const at = `${path}: ${line.trim()}`;
    if (LOCAL_KEYS.has(at)) return [];
    return HAND_MADE.filter((h) => h.pattern.test(line) && !h.except?.test(path)).map(
      (h) => `${path}:${i + 1}: ${line.trim()} (instead: ${h.instead})`,
    );
  });
}

describe('composite keys are joined and split by the keys modules only', () => {
  it('no other source file joins or splits one by hand', () => {
    const files = sourceFiles();
    for (const module of KEY_MODULES) expect(files).toContain(module);
    const found = files
      .filter((path) => !KEY_MODULES.has(path))
      .flatMap((path) => handMade(path, readFileSync(join(REPO_ROOT, path), 'utf8')));
    expect(found).toEqual([]);
  });

  it('the keys left local are still there (else the list above is stale)', () => {
    for (const entry of LOCAL_KEYS) {
      const [path, line] = entry.split(': ', 2) as [string, string];
      const lines = readFileSync(join(REPO_ROOT, path), 'utf8')
        .split('\n')
        .map((l) => l.trim());
      expect(lines, entry).toContain(line);
    }
  });

  it('the check finds the spellings the keys module replaced', () => {
    for (const line of [
      "const key = `${e.kind}\\u0001${e.mesh ?? ''}\\u0000${e.name}`;",
      "const kind = key.slice(0, key.indexOf('\\u0001'));",
      "const [mesh, name] = key.split('\\u0000');",
      'const key = `${mesh}\\0${name}`;',
      'const key = `${p.mesh}\\u0000${name}`;',
      'return ob && itemOf.get(`outbound\\u0000${ob.name}`);',
      "if (at === 'i' || location[0] === 'o') return;",
      'return p.cls.cells.policiesAt(`i${index}`, kind);',
      'const name = `${zone}.${p.name}`;',
      'if (!ref.name.startsWith(`${zone}.`)) return;',
      'yield `${kind}/${policy.name}`;',
      'const written = new Set(events.map((e) => `${e.kind}/${e.name}`));',
      'return { allows, policies: selecting.map((p) => `${p.type}/${p.name}`) };',
      'id: `${mesh}.${name}`,',
      "merged('dataplane', `${mesh}/${name}`, own.dataplaneInsight(mesh, name)),",
    ])
      expect(handMade('src/x.ts', line), line).not.toEqual([]);
  });

  it('the check passes what is not a composite key', () => {
    for (const line of [
      "const key = sorted.join('\\u0000');",
      'if (diff) item.diff = jsonDiff(`${type}/${name}`, b, a);',
      'return `/meshes/${encodeURIComponent(mesh)}/${k.path}`;',
      'const REFUSED = `\\\\u0000-\\\\u001f${BEYOND_C0}`;',
      'throw fail(\'FORBIDDEN\', `zone "${zone}" is disabled (enabled: false)`);',
    ])
      expect(handMade('src/x.ts', line), line).toEqual([]);
    const label = 'return e.mesh === undefined ? e.name : `${e.mesh}/${e.name}`;';
    expect(handMade('src/meshctl/event-rows.ts', label)).toEqual([]);
  });
});
