import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createLogger, stdoutDestination } from '../../../src/runtime/logger.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** The messages of the complete lines of `file` (a buffered write may be half done when it is read). */
const messages = (file: string): string[] => {
  const text = readFileSync(file, 'utf8');
  return text
    .slice(0, text.lastIndexOf('\n') + 1)
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { msg: string }).msg);
};

describe('log output (standard output of mesh-cp run)', () => {
  it('writes start-up lines at once, then buffers until 4 KiB or the periodic flush', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'logger-')), 'out.log');
    const fd = openSync(file, 'a');
    // A periodic flush far away, so that only the buffer's size or a flush writes a buffered line.
    const out = stdoutDestination(fd, 60_000);
    const logger = createLogger('info', out);
    logger.info('starting');
    logger.info('mesh-cp ready');
    expect(messages(file)).toEqual(['starting', 'mesh-cp ready']);
    out.buffer();
    logger.info('resource created');
    await sleep(100);
    expect(messages(file)).toEqual(['starting', 'mesh-cp ready']);
    logger.info({ pad: 'x'.repeat(5000) }, 'big');
    for (let i = 0; i < 100 && messages(file).length < 4; i++) await sleep(10);
    expect(messages(file)).toEqual(['starting', 'mesh-cp ready', 'resource created', 'big']);
    closeSync(fd);
  });

  it('keeps every buffered line, whatever its characters, in order through the exit', () => {
    // A process that logs buffered lines (accents, CJK, an emoji, a 6 KB line) and exits as
    // `mesh-cp run` does, in the callback of the destination's flush: every line is written, in
    // order, byte for byte. (A bare process.exit while a buffered write is in flight can reorder
    // them: sonic-boom's exit flush does not wait for that write. mesh-cp's exits wait for it.)
    const logger = pathToFileURL(join(import.meta.dirname, '../../../src/runtime/logger.ts')).href;
    const script = `
      import { createLogger, stdoutDestination } from ${JSON.stringify(logger)};
      const out = stdoutDestination();
      const log = createLogger('info', out);
      log.info('mesh-cp ready');
      out.buffer();
      for (let i = 0; i < 50; i++) log.info({ i, zone: 'zoné-東京-🚀' }, 'resource updated');
      log.info({ pad: 'é'.repeat(3000) }, 'big');
      out.flush(() => process.exit(0));`;
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
    });
    expect(run.status, run.stderr).toBe(0);
    const lines = run.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => l.msg)).toEqual(['mesh-cp ready', ...Array(50).fill('resource updated'), 'big']);
    expect(lines.slice(1, 51).map((l) => [l.i, l.zone])).toEqual(
      Array.from({ length: 50 }, (_, i) => [i, 'zoné-東京-🚀']),
    );
    expect(lines[51].pad).toBe('é'.repeat(3000));
  });
});
