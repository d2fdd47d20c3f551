import { describe, expect, it } from 'vitest';
import { proxyInterfaces } from '../../../src/policies/proxy-interfaces.js';

describe('proxyInterfaces: the service of an outbound', () => {
  it('is its mesh.io/service tag, else its older `service` field (Kuma: tags, when there are some)', () => {
    const { outbounds } = proxyInterfaces({
      address: '10.0.0.1',
      outbound: [
        { port: 10001, tags: { 'mesh.io/service': 'redis' } },
        { port: 10002, service: 'web' },
        { port: 10003, tags: {}, service: 'api' },
        { port: 10004, tags: { 'mesh.io/service': 'db' }, service: 'ignored' },
      ],
    });
    expect(outbounds.map((o) => o.service)).toEqual(['redis', 'web', 'api', 'db']);
  });
});
