import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { registry } from '../../src/resources/registry.js';

/**
 * A policy kind is one unit: its resource file (`src/resources/kinds/`), its policy file
 * (`src/policies/kinds/`) and the registry that lists it are the only code that names it. Everything
 * else reads kinds through their declarations (`src/policies/kind-sets.ts`, descriptor fields), so
 * adding a kind touches no other file. "Names" means a string or template literal in which the kind
 * appears as a word, an identifier spelled as the kind (`item.TrafficRoute`), or an import of a policy
 * kind's own file; comments may name kinds.
 */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SRC = join(ROOT, 'src');

const POLICY_KINDS = registry.all.filter((d) => d.isPolicy).map((d) => d.kind);

/** Where naming a policy kind is the point. */
const MAY_NAME = ['src/resources/kinds/', 'src/policies/kinds/', 'src/resources/registry.ts'];

/**
 * Files that name a kind for a reason of their own, each with why; kept short on purpose.
 * `MeshGatewayRoute` there is a value of a targetRef's `kind` field (Kuma's targetRef vocabulary,
 * beside `Mesh` and `MeshService`), which happens to share the resource kind's name.
 */
const EXCEPTIONS: Record<string, RegExp> = {
  'src/resources/target-ref.ts': /^MeshGatewayRoute$/,
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.isFile() && entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The policy kinds' own files (resource files of policy kinds, and policy files but their index). */
function kindFiles(): Set<string> {
  const files = new Set<string>();
  for (const file of sourceFiles(join(SRC, 'resources', 'kinds'))) {
    if (/isPolicy: true/.test(readFileSync(file, 'utf8'))) files.add(file);
  }
  for (const file of sourceFiles(join(SRC, 'policies', 'kinds'))) {
    if (!file.endsWith(`${'/'}index.ts`)) files.add(file);
  }
  return files;
}

/** The places in `source` (of `file`, relative to the root) that name a policy kind, as `file:line: what`. */
export function kindNamings(
  file: string,
  source: string,
  kinds: readonly string[],
  own: Set<string>,
): string[] {
  const word = new RegExp(`\\b(${kinds.join('|')})\\b`);
  const exception = EXCEPTIONS[file];
  const found: string[] = [];
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const at = (node: ts.Node, what: string) =>
    found.push(`${file}:${sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1}: ${what}`);
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) {
      const spec = node.moduleSpecifier;
      if (spec && ts.isStringLiteral(spec) && spec.text.startsWith('.')) {
        const target = resolve(dirname(join(ROOT, file)), spec.text).replace(/\.js$/, '.ts');
        if (own.has(target) && existsSync(target)) at(node, `imports ${relative(ROOT, target)}`);
      }
      return;
    }
    if (
      ts.isStringLiteral(node) ||
      ts.isNoSubstitutionTemplateLiteral(node) ||
      ts.isTemplateHead(node) ||
      ts.isTemplateMiddle(node) ||
      ts.isTemplateTail(node)
    ) {
      const m = word.exec(node.text);
      if (m && !(exception && exception.test(node.text))) at(node, `'${node.text}' names ${m[1]}`);
    } else if (
      ts.isIdentifier(node) &&
      kinds.includes(node.text) &&
      !ts.isQualifiedName(node.parent) &&
      !(exception && exception.test(node.text))
    ) {
      at(node, `identifier ${node.text}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

describe('architecture: a policy kind is one unit', () => {
  it('knows the policy kinds from the registry', () => {
    expect(POLICY_KINDS).toContain('TrafficRoute');
    expect(POLICY_KINDS).toContain('MeshGatewayRoute');
    expect(POLICY_KINDS).not.toContain('Dataplane');
  });

  it('every policy kind has its policy file, named from the registry', () => {
    const missing = registry.all
      .filter((d) => d.isPolicy)
      .map((d) => d.kind.replace(/(?<=[a-z])(?=[A-Z])/g, '-').toLowerCase())
      .filter((name) => !existsSync(join(SRC, 'policies', 'kinds', `${name}.ts`)));
    expect(missing).toEqual([]);
  });

  it('nothing outside the kinds’ own files names a policy kind', () => {
    const own = kindFiles();
    const found = sourceFiles(SRC)
      .map((path) => relative(ROOT, path))
      .filter((file) => !MAY_NAME.some((prefix) => file.startsWith(prefix)))
      .flatMap((file) => kindNamings(file, readFileSync(join(ROOT, file), 'utf8'), POLICY_KINDS, own));
    expect(found).toEqual([]);
  });

  it('the checker finds every form of naming and lets comments and qualified type names be', () => {
    const own = new Set([join(SRC, 'resources', 'kinds', 'timeout.ts')]);
    const source = [
      '// a comment about TrafficRoute',
      "const a = 'TrafficRoute';",
      'const b = `Timeout/${name}`;',
      'const c = `x ${y} FaultInjection ${z} w`;',
      'const d = item.matchedPolicies.TrafficLog;',
      'const e = { Retry: 1 };',
      "import { timeout } from '../resources/kinds/timeout.js';",
      'let t: NodeJS.Timeout;',
      "const ok = 'Timeouts'; const ok2 = 'TrafficRoutes are fine';",
    ].join('\n');
    expect(kindNamings('src/app/x.ts', source, POLICY_KINDS, own)).toEqual([
      "src/app/x.ts:2: 'TrafficRoute' names TrafficRoute",
      "src/app/x.ts:3: 'Timeout/' names Timeout",
      "src/app/x.ts:4: ' FaultInjection ' names FaultInjection",
      'src/app/x.ts:5: identifier TrafficLog',
      'src/app/x.ts:6: identifier Retry',
      'src/app/x.ts:7: imports src/resources/kinds/timeout.ts',
    ]);
  });
});
