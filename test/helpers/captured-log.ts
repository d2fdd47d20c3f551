import { Writable } from 'node:stream';

/** Every line the control plane logs, kept as text (what its standard output would hold). */
export function capturedLog(): { stream: Writable; lines: string[]; bytes: () => number } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(line);
      done();
    },
  });
  return { stream, lines, bytes: () => lines.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0) };
}
