/** A fenced shell block of a markdown page, and whether the page marks it as not run by tests. */
export interface ShellBlock {
  /** 1-based line of the opening fence. */
  line: number;
  code: string;
  /** The reason given by a `<!-- readme-test: skip (reason) -->` marker just before the block. */
  skip?: string;
}

const FENCE = /^```(\S*)\s*$/;
const SKIP_MARKER = /^<!-- readme-test: skip \((.+)\) -->$/;
const SHELL_LANGS = new Set(['sh', 'bash', 'shell']);

/** Counts the skip markers of a page, wherever they are (a marker that precedes no shell block is a mistake). */
export function countSkipMarkers(markdown: string): number {
  return markdown.split('\n').filter((l) => l.trim().startsWith('<!-- readme-test: skip')).length;
}

/**
 * The `sh`/`bash`/`shell` blocks of a page in order. A skip marker applies to the next block when
 * only blank lines separate them.
 */
export function shellBlocks(markdown: string): ShellBlock[] {
  const lines = markdown.split('\n');
  const blocks: ShellBlock[] = [];
  let pendingSkip: string | undefined;
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i] ?? '';
    const marker = SKIP_MARKER.exec(text.trim());
    if (marker) {
      pendingSkip = marker[1];
      continue;
    }
    const fence = FENCE.exec(text);
    if (!fence) {
      if (text.trim() !== '') pendingSkip = undefined;
      continue;
    }
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i] ?? ''); i++) body.push(lines[i] ?? '');
    if (SHELL_LANGS.has(fence[1] ?? '')) {
      blocks.push({ line: start + 1, code: body.join('\n'), ...(pendingSkip ? { skip: pendingSkip } : {}) });
    }
    pendingSkip = undefined;
  }
  return blocks;
}

/** The listeners a block's addresses are rewritten to. */
export interface BlockPorts {
  apiPort: number;
  httpsPort: number;
  diagnosticsPort: number;
}

/**
 * A block as the test runs it: the documented default ports (API 5681, HTTPS 5682, diagnostics
 * 5680) on localhost or 127.0.0.1 become the test server's, and `npx mesh-cp` the built CLI.
 */
export function rewriteBlock(code: string, ports: BlockPorts, cli: string): string {
  const byDefault: Record<string, number> = {
    '5681': ports.apiPort,
    '5682': ports.httpsPort,
    '5680': ports.diagnosticsPort,
  };
  return code
    .replace(/\b(localhost|127\.0\.0\.1):(568[012])\b/g, (_, host: string, port: string) => `${host}:${byDefault[port]}`)
    .replace(/\bnpx mesh-cp\b/g, `node ${cli}`);
}
