import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { readYaml } from '../../../src/util/bounded-yaml.js';

describe('readYaml: the bounds of one document', () => {
  const dataplane = (name: string) =>
    stringify({
      type: 'Dataplane',
      mesh: 'default',
      name,
      networking: {
        address: '10.0.0.1',
        inbound: [{ port: 80, tags: { 'mesh.io/service': 'web' } }],
        outbound: Array.from({ length: 2000 }, (_, i) => ({
          port: 10_000 + i,
          tags: { 'mesh.io/service': `s${i}` },
        })),
      },
    });

  it('holds per document: five large Dataplanes in one file are each within them', () => {
    const text = ['a', 'b', 'c', 'd', 'e'].map(dataplane).join('---\n');
    expect(readYaml(text).documents.map((d) => (d.toJS() as { name: string }).name)).toEqual([
      'a',
      'b',
      'c',
      'd',
      'e',
    ]);
  });

  it('counts empty values: "-" alone on 120,000 lines passes the node bound', () => {
    expect(() => readYaml('-\n'.repeat(120_000))).toThrow(/more than 50000 keys and values/);
  });
});
