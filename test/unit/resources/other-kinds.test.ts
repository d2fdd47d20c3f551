import { describe, expect, it } from 'vitest';
import {
  dataplaneOverview,
  globalInsights,
  meshInsight,
  serviceInsight,
  zoneEgressOverview,
  zoneIngressOverview,
  zoneOverview,
} from '../../../src/resources/kinds/derived.js';
import { externalService } from '../../../src/resources/kinds/external-service.js';
import { globalSecret, secret } from '../../../src/resources/kinds/secret.js';
import { zoneEgress } from '../../../src/resources/kinds/zone-egress.js';
import { zoneIngress } from '../../../src/resources/kinds/zone-ingress.js';
import { zone } from '../../../src/resources/kinds/zone.js';
import { validateBody } from '../../../src/resources/validate.js';
import { expectCauses, expectValid } from './helpers.js';

const SVC = 'mesh.io/service';

describe('ExternalService', () => {
  const tags = { [SVC]: 'httpbin', 'mesh.io/protocol': 'http' };
  it('accepts host:port addresses and TLS settings', () => {
    expectValid(externalService, { networking: { address: 'httpbin.org:443', tls: {} }, tags });
    expectValid(externalService, { networking: { address: '[::1]:8080' }, tags });
    expectValid(externalService, {
      networking: {
        address: '10.0.0.1:443',
        tls: {
          enabled: true,
          caCert: { inline: 'LS0tLS1CRUdJTg==' },
          clientCert: { secret: 'client-cert' },
          clientKey: { inlineString: '-----BEGIN KEY-----' },
          allowRenegotiation: false,
          serverName: 'httpbin.org',
        },
      },
      tags,
    });
  });
  it('requires the address and the service tag', () => {
    expectCauses(externalService, {}, [
      ['networking', 'cannot be empty'],
      ['tags', 'cannot be empty'],
    ]);
    expectCauses(externalService, { networking: {}, tags: { 'mesh.io/protocol': 'http' } }, [
      ['networking.address', 'cannot be empty'],
      ['tags', 'mandatory tag "mesh.io/service" is missing'],
    ]);
  });
  it('checks address, base64 and TLS fields', () => {
    expectCauses(
      externalService,
      {
        networking: {
          address: 'httpbin.org',
          tls: { enabled: 'yes', caCert: { inline: '%%%' }, clientKey: {}, sni: 'x' },
        },
        tags,
      },
      [
        // As in Kuma, each part of a bad address has its cause (no port: none to parse, no host either).
        ['networking.address', 'must be host:port'],
        ['networking.address', 'host must be a valid IP address or domain name'],
        ['networking.address', 'port must be in the range 1-65535'],
        ['networking.tls.enabled', 'must be a boolean'],
        ['networking.tls.caCert.inline', 'must be valid base64'],
        ['networking.tls.clientKey', 'data source cannot be empty'],
        ['networking.tls.sni', 'unknown field'],
      ],
    );
    expectCauses(externalService, { networking: { address: 'httpbin.org:70000' }, tags }, [
      'networking.address',
    ]);
  });
});

describe('Secret and GlobalSecret (spec 2.10)', () => {
  it('hold base64 data', () => {
    expect(expectValid(secret, { data: 'c2VjcmV0' })).toEqual({ data: 'c2VjcmV0' });
    expectValid(globalSecret, { data: 'c2VjcmV0' });
    expectCauses(secret, {}, [['data', 'cannot be empty']]);
    expectCauses(secret, { data: '' }, [['data', 'cannot be empty']]);
    expectCauses(globalSecret, { data: 'not base64', extra: 1 }, [
      ['data', 'must be valid base64'],
      ['extra', 'unknown field'],
    ]);
  });
  it('accept type Secret for both, and GlobalSecret for the global one', () => {
    const target = { name: 's1' };
    expect(validateBody(globalSecret, { type: 'Secret', name: 's1', data: 'eA==' }, target).ok).toBe(true);
    expect(validateBody(globalSecret, { type: 'GlobalSecret', name: 's1', data: 'eA==' }, target).ok).toBe(
      true,
    );
    expect(
      validateBody(
        secret,
        { type: 'GlobalSecret', name: 's1', mesh: 'm', data: 'eA==' },
        { ...target, mesh: 'm' },
      ),
    ).toEqual({
      ok: false,
      causes: [{ field: 'type', message: 'must be "Secret"' }],
    });
    expect(
      validateBody(globalSecret, { type: 'Secret', name: 's1', mesh: 'm', data: 'eA==' }, target),
    ).toEqual({
      ok: false,
      causes: [{ field: 'mesh', message: 'unknown field: this kind is not mesh-scoped' }],
    });
  });
});

describe('Zone, ZoneIngress, ZoneEgress', () => {
  it('Zone has an optional enabled flag', () => {
    expectValid(zone, {});
    expect(expectValid(zone, { enabled: false })).toEqual({ enabled: false });
    expectCauses(zone, { enabled: 'no', address: 'x' }, [
      ['enabled', 'must be a boolean'],
      ['address', 'unknown field'],
    ]);
  });
  it('ZoneIngress accepts the fields of spec 2.13', () => {
    expectValid(zoneIngress, {
      zone: 'zone-1',
      networking: {
        address: '10.0.0.1',
        advertisedAddress: 'ingress.example.com',
        port: 10001,
        advertisedPort: 10002,
        admin: { port: 9901 },
      },
      availableServices: [
        { tags: { [SVC]: 'backend' }, instances: 2, mesh: 'default' },
        { tags: { [SVC]: 'httpbin' }, instances: 0, mesh: 'default', externalService: true },
      ],
    });
    // As in Kuma: only the port is required; availableServices are the control plane's to fill.
    expectValid(zoneIngress, { networking: { port: 10001 }, availableServices: [{ tags: { [SVC]: 'a' } }] });
  });
  it('ZoneIngress checks its fields', () => {
    expectCauses(zoneIngress, {}, [['networking', 'cannot be empty']]);
    expectCauses(
      zoneIngress,
      {
        networking: { address: 'not an address', port: 0, advertisedPort: 'x' },
        availableServices: [{ tags: { [SVC]: 'a' }, instances: -1 }, { tags: { version: 'v1' } }],
      },
      [
        ['networking.address', 'must be a valid IP address or domain name'],
        ['networking.port', 'must be in the range 1-65535'],
        ['networking.advertisedPort', 'must be an integer'],
        ['networking.advertisedAddress', 'has to be defined with advertisedPort'],
        ['availableServices[0].instances', 'must be greater than or equal to 0'],
        ['availableServices[1].tags', 'mandatory tag "mesh.io/service" is missing'],
      ],
    );
  });
  it('ZoneEgress requires a port (as in Kuma, the address is optional)', () => {
    expectValid(zoneEgress, {
      zone: 'zone-1',
      networking: { address: '10.0.0.2', port: 10002, admin: { port: 9902 } },
    });
    expectCauses(zoneEgress, { networking: {} }, [['networking.port', 'cannot be empty']]);
    expectCauses(
      zoneEgress,
      { zone: 3, networking: { address: '10.0.0.2', port: 10002, advertisedPort: 1 } },
      [
        ['zone', 'must be a string'],
        ['networking.advertisedPort', 'unknown field'],
      ],
    );
  });
});

describe('derived kinds', () => {
  const derived = [
    dataplaneOverview,
    meshInsight,
    serviceInsight,
    globalInsights,
    zoneOverview,
    zoneIngressOverview,
    zoneEgressOverview,
  ];
  it('have no spec fields to write', () => {
    for (const d of derived) {
      expectValid(d, {});
      expectCauses(d, { dataplaneInsight: {} }, [['dataplaneInsight', 'unknown field']]);
    }
  });
});
