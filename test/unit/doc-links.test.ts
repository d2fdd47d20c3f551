import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/process.js';

/** The pages users read: the README and every page of docs/. */
const PAGES = [
  'README.md',
  ...readdirSync(join(REPO_ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** Every markdown page a user of the repository may open, examples and bench notes included. */
const ALL_PAGES = [...PAGES, 'bench/README.md', 'examples/greeter/README.md'];

/** Markdown links `[text](target)` outside code spans and fenced blocks. */
function linksOf(markdown: string): string[] {
  const prose = markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] ?? '');
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes. */
const slug = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');

/** The anchors a markdown page defines through its headings. */
const anchorsOf = (markdown: string): Set<string> =>
  new Set(
    markdown
      .replace(/^```[\s\S]*?^```/gm, '')
      .split('\n')
      .filter((l) => /^#{1,6} /.test(l))
      .map((l) => slug(l.replace(/^#+ /, '').replace(/`/g, ''))),
  );

describe('relative links of the README and docs/', () => {
  it.each(PAGES)('%s links only to files (and headings) that exist', (page) => {
    const markdown = readFileSync(join(REPO_ROOT, page), 'utf8');
    const broken: string[] = [];
    for (const link of linksOf(markdown)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // https:, mailto:
      const [path = '', anchor] = link.split('#');
      const target = path === '' ? join(REPO_ROOT, page) : join(REPO_ROOT, dirname(page), path);
      if (!existsSync(target)) {
        broken.push(`${link} (no file ${relative(REPO_ROOT, target)})`);
        continue;
      }
      if (anchor && target.endsWith('.md') && !anchorsOf(readFileSync(target, 'utf8')).has(anchor)) {
        broken.push(`${link} (no heading #${anchor} in ${relative(REPO_ROOT, target)})`);
      }
    }
    expect(broken).toEqual([]);
  });
});

describe('the repository stands alone', () => {
  it.each(ALL_PAGES)('%s names no file outside the repository', (page) => {
    const markdown = readFileSync(join(REPO_ROOT, page), 'utf8');
    const outside = markdown
      .split('\n')
      .filter((line) => /\.\.\/shared\/|(^|[\s(`])shared\/(spec|design)\//.test(line));
    expect(outside).toEqual([]);
  });

  it.each(ALL_PAGES)('%s points to other pages by links, not by a section name in words', (page) => {
    const markdown = readFileSync(join(REPO_ROOT, page), 'utf8');
    expect(markdown.match(/README, "[^"]*/g) ?? []).toEqual([]);
  });
});
