import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/process.js';

/** Every TypeScript and Markdown file under a folder. */
function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : /\.(ts|md)$/.test(path) ? [path] : [];
  });
}

describe('the code says what and why, not where a task came from', () => {
  it('no comment, string or README in src/ cites an issue number (a reader of the repository cannot open those)', () => {
    const found: string[] = [];
    for (const path of files(join(REPO_ROOT, 'src'))) {
      readFileSync(path, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (/\b[Ii]ssue #?\d+/.test(line))
            found.push(`${path.slice(REPO_ROOT.length + 1)}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(found).toEqual([]);
  });

  it('the check finds a citation', () => {
    expect(/\b[Ii]ssue #?\d+/.test('// the limit (issue 15)')).toBe(true);
    expect(/\b[Ii]ssue #?\d+/.test('// Issues and verifies tokens.')).toBe(false);
  });
});
