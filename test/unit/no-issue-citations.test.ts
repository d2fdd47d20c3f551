import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/process.js';

/** Folders of the repository's own text, walked whole (a folder that does not exist is passed over). */
const TREES = ['src', 'test', 'bench', 'docs', 'proto', 'scripts', 'examples', 'gui'];
/** Files of the repository's own text outside those folders. */
const FILES = [
  'README.md',
  '.ci/run',
  '.gitignore',
  '.prettierignore',
  '.prettierrc.json',
  'package.json',
  'tsconfig.json',
  'eslint.config.js',
  'vitest.config.ts',
];
/** The kinds of text file read under TREES. */
const TEXT = /\.(ts|mts|cts|tsx|js|mjs|cjs|md|proto|ya?ml|json|html|css)$/;
/** Folders never read, wherever they are: installed packages, build output, git's own. */
const SKIP_NAMES = new Set(['node_modules', 'dist', '.git']);
/**
 * Paths (from the repository root) never read: the Envoy/xDS protos copied unchanged from upstream,
 * whose comments cite upstream's own issues, and the bench's output (rewritten by every bench run).
 * The README of proto/third_party/ is ours and is read.
 */
const SKIP_PATHS = [/^proto\/third_party\/(?!README\.md$)/, /^bench\/results\//];

/**
 * A citation of an issue by number: the word "issue" or "issues" then a number, with or without
 * "#", also wrapped onto the next line of a comment; and a bare "#" and a number where it reads as
 * one (in parentheses, or after "see", "fixes", "closes"…). Not "Issues and verifies tokens",
 * "issue a token", "PKCS#1" or a link to a public tracker (".../issues/" and a number), which a
 * reader can open. The test below gives examples of each.
 */
const CITATION = [
  /\bissues?(?:\s|\/\/|\*|#|-)*\d/gi,
  /\(#\d+\b|\b(?:see|fixes|fixed|closes|closed|resolves|per)\s+#\d+\b/gi,
];

/** Every path to check, relative to the repository root with `/` separators. */
function ownFiles(): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      const rel = relative(REPO_ROOT, path).split(sep).join('/');
      if (SKIP_NAMES.has(name) || SKIP_PATHS.some((re) => re.test(rel))) continue;
      if (statSync(path).isDirectory()) walk(path);
      else if (TEXT.test(name)) found.push(rel);
    }
  };
  for (const tree of TREES) if (existsSync(join(REPO_ROOT, tree))) walk(join(REPO_ROOT, tree));
  return [...found, ...FILES.filter((f) => existsSync(join(REPO_ROOT, f)))];
}

/** Each citation in a text, as "line: the line". */
function citations(text: string): string[] {
  const lines = text.split('\n');
  return CITATION.flatMap((re) =>
    [...text.matchAll(re)].map((m) => {
      const line = text.slice(0, m.index).split('\n').length;
      return `${line}: ${lines[line - 1].trim()}`;
    }),
  );
}

describe('the code says what and why, not where a task came from', () => {
  it("no file of the repository's own text cites an issue number (a reader of the repository cannot open those)", () => {
    const paths = ownFiles();
    // The walk reached each part of the repository (a wrong root would pass on nothing).
    for (const part of ['src/', 'test/', 'bench/', 'docs/', 'proto/', 'README.md', '.ci/run'])
      expect(paths.some((p) => p.startsWith(part))).toBe(true);
    expect(paths).toContain('test/unit/no-issue-citations.test.ts');
    expect(paths).toContain('proto/third_party/README.md');
    expect(paths.some((p) => p.startsWith('proto/third_party/envoy-api/'))).toBe(false);

    const found = paths.flatMap((path) =>
      citations(readFileSync(join(REPO_ROOT, path), 'utf8')).map((c) => `${path}:${c}`),
    );
    expect(found).toEqual([]);
  });

  // The examples are built from a number so that this file holds no citation itself.
  const n = 18;
  it('the check finds a citation', () => {
    for (const text of [
      `// the limit (issue ${n})`,
      `// Issue ${n}: the PostgreSQL tests`,
      `describe('the match view (issue ${n} point 6)'`,
      `// issues ${n} and ${n + 1}`,
      `see issue #${n}`,
      `a fix (#${n})`,
      `fixes #${n}`,
      `// wrapped onto the next line: as said in issue\n// ${n}`,
      ` * as said in issue\n * ${n}, the reason`,
    ])
      expect(citations(text), text).toHaveLength(1);
  });

  it('the check passes prose that uses the word, and numbers that are not citations', () => {
    for (const text of [
      '/** Issues and verifies tokens. */',
      '// issue a token (POST /tokens/dataplane) and reconnect',
      'for (const issue of result.error?.issues ?? []) {',
      'the key PKCS#1 PEM, #333 on #fff',
      `upstream's https://github.com/envoyproxy/envoy/issues/${n}`,
    ])
      expect(citations(text), text).toEqual([]);
  });
});
