import { describe, expect, it } from 'vitest';

import { GENESIS_HASH, hashEntry, sealEntry } from '../../../src/events/hash.js';
import type { EventInput } from '../../../src/events/types.js';
import type { WireResource } from '../../../src/events/types.js';

const resource = (name: string, extra: Record<string, unknown> = {}): WireResource => ({
  type: 'Dataplane',
  mesh: 'default',
  name,
  creationTime: '2026-01-01T00:00:00.000Z',
  modificationTime: '2026-01-02T00:00:00.000Z',
  networking: { address: '10.0.0.1', inbound: [{ port: 8080, tags: { 'mesh.io/service': 'a' } }] },
  ...extra,
});

// Inputs whose strings need JSON escapes, with and without a mesh, a previous state, odd actors.
const inputs: EventInput[] = [
  {
    kind: 'Dataplane',
    mesh: 'default',
    name: 'dp-1',
    operation: 'update',
    resource: resource('dp-1'),
    actor: { name: 'admin', groups: ['mesh-system:admin'], address: '127.0.0.1' },
    origin: 'local',
  },
  {
    kind: 'GlobalSecret',
    name: 'key "quoted" \\ back\u2028slash',
    operation: 'create',
    resource: { type: 'GlobalSecret', name: 'x', creationTime: 't', modificationTime: 't', data: 'AA==' },
    actor: { name: 'zone:ünïcode 😀', groups: [], address: '::1' },
    origin: 'zone-1\n\t\u0000',
  },
  {
    kind: 'MeshTrafficPermission',
    mesh: 'm\u00e9sh',
    name: 'p',
    operation: 'update',
    resource: resource('p', { spec: { targetRef: { kind: 'Mesh' }, n: 1.5e-7, big: 1e21, neg: -0 } }),
    previous: resource('p', { spec: { old: true } }),
    actor: { name: 'a', groups: ['g1', 'g2'], address: '10.1.2.3' },
    origin: 'local',
  },
  {
    kind: 'TrafficRoute',
    mesh: 'shop',
    name: 'route',
    operation: 'create',
    resource: resource('route'),
    actor: { name: 'a', groups: [], address: '10.1.2.3' },
    origin: 'local',
    changeSet: 'cs-\u0001"set"',
  },
];

describe('sealEntry with the resource JSON given', () => {
  it('writes the same JSON and hash as serializing the whole entry', () => {
    for (const input of inputs) {
      const plain = sealEntry(input, 42, '2026-11-27T14:00:00.123Z', GENESIS_HASH);
      const spliced = sealEntry(
        { ...input, resourceJson: JSON.stringify(input.resource) },
        42,
        '2026-11-27T14:00:00.123Z',
        GENESIS_HASH,
      );
      expect(spliced.json).toBe(plain.json);
      expect(spliced.entry.hash).toBe(plain.entry.hash);
      expect(JSON.parse(spliced.json)).toEqual(JSON.parse(JSON.stringify(spliced.entry)));
      // The entry verifies as any other, and does not carry the spliced text.
      const { hash, ...unsealed } = spliced.entry;
      expect(hashEntry(unsealed)).toBe(hash);
      expect(spliced.entry).not.toHaveProperty('resourceJson');
    }
  });

  it('is what a PUT through the log stores (the resource JSON comes from the decision)', () => {
    const input = inputs[0];
    const json = JSON.stringify(input.resource);
    const { json: stored } = sealEntry({ ...input, resourceJson: json }, 7, 'now', 'f'.repeat(64));
    expect(stored).toContain(`"resource":${json},`);
  });
});
