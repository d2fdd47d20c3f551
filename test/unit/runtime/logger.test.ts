import { closeSync, mkdtempSync, openSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
});
