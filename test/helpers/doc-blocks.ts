import { dirname, join } from 'node:path';
/** How the documentation test treats a shell block: run it, skip it, or start it as a server. */
export type BlockMode = 'run' | 'skip' | 'background';

/** A fenced shell block of a markdown page, and what the page's marker before it says. */
export interface ShellBlock {
  /** 1-based line of the opening fence. */
  line: number;
  code: string;
  mode: BlockMode;
  /** The reason a `<!-- readme-test: skip|background (reason) -->` marker gives. */
  reason?: string;
}

const FENCE = /^```(\S*)\s*$/;
const MARKER = /^<!-- readme-test: (skip|background) \((.+)\) -->$/;
const SHELL_LANGS = new Set(['sh', 'bash', 'shell']);

/** Counts the markers of one mode on a page, wherever they are (one that precedes no shell block is a mistake). */
export function countMarkers(markdown: string, mode: Exclude<BlockMode, 'run'>): number {
  return markdown.split('\n').filter((l) => l.trim().startsWith(`<!-- readme-test: ${mode}`)).length;
}

/**
 * The `sh`/`bash`/`shell` blocks of a page in order. A marker applies to the next block when only
 * blank lines separate them.
 */
export function shellBlocks(markdown: string): ShellBlock[] {
  const lines = markdown.split('\n');
  const blocks: ShellBlock[] = [];
  let pending: { mode: BlockMode; reason: string } | undefined;
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i] ?? '';
    const marker = MARKER.exec(text.trim());
    if (marker) {
      pending = { mode: marker[1] as BlockMode, reason: marker[2] ?? '' };
      continue;
    }
    const fence = FENCE.exec(text);
    if (!fence) {
      if (text.trim() !== '') pending = undefined;
      continue;
    }
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i] ?? ''); i++) body.push(lines[i] ?? '');
    if (SHELL_LANGS.has(fence[1] ?? '')) {
      blocks.push({ line: start + 1, code: body.join('\n'), mode: 'run', ...pending });
    }
    pending = undefined;
  }
  return blocks;
}

/** The ports the documentation names (their defaults, and the zone's of the multi-zone page). */
export const DOCUMENTED_PORTS = [5678, 5680, 5681, 5682, 5685, 15680, 15681, 15682] as const;

/**
 * A block as the test runs it: every documented port becomes the test's free port for it,
 * `npx mesh-cp` and `npm start` the built CLI (the test's directory is not the repository).
 */
export function rewriteBlock(code: string, ports: ReadonlyMap<number, number>, cli: string): string {
  const pattern = new RegExp(`(?<![\\d.])(${DOCUMENTED_PORTS.join('|')})(?![\\d])`, 'g');
  return (
    code
      .replace(pattern, (port) => String(ports.get(Number(port)) ?? port))
      .replace(/\bnpx mesh-cp\b/g, `node ${cli}`)
      // meshctl's default context is the documented API port: the test's is elsewhere.
      .replace(
        /\bnpx meshctl\b/g,
        `node ${join(dirname(cli), 'meshctl.js')} --api-address http://127.0.0.1:${ports.get(5681) ?? 5681}`,
      )
      .replace(/\bnpm start\b/g, `node ${cli} run`)
  );
}
