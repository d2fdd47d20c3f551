import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// The GUI (gui/) is browser code that talks to the API over HTTP only: nothing of src/ (or of any
// file outside gui/) may be in its bundle. Types may be shared (`import type` leaves no code).

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const GUI = join(ROOT, 'gui');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'generated' ? [] : sources(path);
    return /\.tsx?$/.test(e.name) ? [path] : [];
  });
}

describe('gui/ imports', () => {
  it('loads nothing from outside gui/ at run time (type-only imports aside) and no node built-in', () => {
    const files = sources(join(GUI, 'src'));
    expect(files.length).toBeGreaterThan(10);
    const wrong: string[] = [];
    for (const file of files) {
      const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
      for (const node of source.statements) {
        if (!ts.isImportDeclaration(node) && !ts.isExportDeclaration(node)) continue;
        const spec = node.moduleSpecifier;
        if (!spec || !ts.isStringLiteral(spec)) continue;
        const typeOnly = ts.isImportDeclaration(node)
          ? node.importClause?.isTypeOnly === true
          : node.isTypeOnly;
        const where = `${relative(ROOT, file)}: ${spec.text}`;
        if (spec.text.startsWith('node:')) wrong.push(where);
        if (!spec.text.startsWith('.')) continue;
        const target = resolve(dirname(file), spec.text);
        if (!typeOnly && !`${target}${sep}`.startsWith(`${GUI}${sep}`)) wrong.push(where);
      }
    }
    expect(wrong).toEqual([]);
  });
});
