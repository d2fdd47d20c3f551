import { describe, it } from 'vitest';
import { meshGatewayRoute } from '../../../src/resources/kinds/mesh-gateway-route.js';
import { meshGateway } from '../../../src/resources/kinds/mesh-gateway.js';
import { virtualOutbound } from '../../../src/resources/kinds/virtual-outbound.js';
import { ALL, expectCauses, expectValid } from './helpers.js';

const SVC = 'mesh.io/service';
const gw = (listeners: unknown[]) => ({ selectors: ALL, tags: { [SVC]: 'edge' }, conf: { listeners } });

describe('MeshGateway', () => {
  it('accepts listeners of every protocol', () => {
    expectValid(
      meshGateway,
      gw([
        {
          port: 8080,
          protocol: 'HTTP',
          hostname: '*',
          tags: { port: 'http' },
          crossMesh: true,
          resources: { connectionLimit: 100 },
        },
        {
          port: 8443,
          protocol: 'HTTPS',
          hostname: '*.example.com',
          tls: { certificates: [{ secret: 'cert' }], options: {} },
        },
        { port: 9000, protocol: 'TLS', tls: { mode: 'PASSTHROUGH' } },
        { port: 9001, protocol: 'TCP' },
        { port: 9002, protocol: 'UDP', hostname: 'foo.example.com' },
      ]),
    );
  });
  it('requires selectors, the service tag and at least one listener', () => {
    expectCauses(meshGateway, { tags: {}, conf: { listeners: [] } }, [
      ['selectors', 'cannot be empty'],
      ['tags["mesh.io/service"]', 'tag has to exist'],
      ['conf.listeners', 'must have at least one element'],
    ]);
    expectCauses(meshGateway, { selectors: ALL, tags: { [SVC]: 'edge' } }, [['conf', 'cannot be empty']]);
  });
  it('checks listeners', () => {
    expectCauses(
      meshGateway,
      gw([
        { port: 0, protocol: 'GRPC', hostname: 'bad host' },
        { protocol: 'HTTP', foo: 1 },
      ]),
      [
        ['conf.listeners[0].hostname', 'must be a hostname, optionally starting with "*.", or "*"'],
        ['conf.listeners[0].port', 'must be in the range 1-65535'],
        ['conf.listeners[0].protocol', 'must be one of "TCP", "UDP", "TLS", "HTTP", "HTTPS"'],
        ['conf.listeners[1].port', 'cannot be empty'],
        ['conf.listeners[1].foo', 'unknown field'],
      ],
    );
  });
  it('needs tls on HTTPS and TLS listeners, with certificates to terminate', () => {
    expectCauses(meshGateway, gw([{ port: 443, protocol: 'HTTPS' }]), [
      ['conf.listeners[0].tls', 'has to be set for HTTPS listeners'],
    ]);
    expectCauses(meshGateway, gw([{ port: 443, protocol: 'TLS', tls: { mode: 'TERMINATE' } }]), [
      ['conf.listeners[0].tls.certificates', 'has to have 1 or 2 certificates in TERMINATE mode'],
    ]);
    expectCauses(
      meshGateway,
      gw([{ port: 443, protocol: 'TLS', tls: { mode: 'PASSTHROUGH', certificates: [{ secret: 'c' }] } }]),
      [['conf.listeners[0].tls.certificates', 'must be empty in PASSTHROUGH mode']],
    );
    expectCauses(
      meshGateway,
      gw([
        {
          port: 443,
          protocol: 'HTTPS',
          tls: { certificates: [{ secret: 'a' }, { inline: 'Zm9v' }, { file: '/c' }] },
        },
      ]),
      [['conf.listeners[0].tls.certificates', 'must have at most 2 elements']],
    );
    expectCauses(
      meshGateway,
      gw([
        {
          port: 443,
          protocol: 'HTTPS',
          tls: { certificates: [{ secret: 'a', inlineString: 'b' }, { inline: '!' }], options: { x: 1 } },
        },
      ]),
      [
        [
          'conf.listeners[0].tls.certificates[0]',
          'only one of "secret", "inline", "inlineString", "file" can be set, got "secret", "inlineString"',
        ],
        ['conf.listeners[0].tls.certificates[1].inline', 'must be valid base64'],
        ['conf.listeners[0].tls.options.x', 'unknown field'],
      ],
    );
  });
});

const backend = { weight: 1, destination: { [SVC]: 'backend' } };
const route = (conf: unknown) => ({ selectors: ALL, conf });

describe('MeshGatewayRoute', () => {
  it('accepts TCP and HTTP routes', () => {
    expectValid(meshGatewayRoute, route({ tcp: { rules: [{ backends: [backend] }] } }));
    expectValid(
      meshGatewayRoute,
      route({
        http: {
          hostnames: ['example.com', '*.example.com'],
          rules: [
            {
              matches: [
                {
                  path: { match: 'PREFIX', value: '/api' },
                  method: 'GET',
                  headers: [{ match: 'EXACT', name: 'x-a', value: 'b' }],
                  queryParameters: [{ name: 'q', value: '1' }],
                },
              ],
              filters: [
                {
                  requestHeader: {
                    set: [{ name: 'x-set', value: '1' }],
                    add: [{ name: 'x-add', value: '2' }],
                    remove: ['x-rm'],
                  },
                },
                { mirror: { backend, percentage: 10 } },
                { rewrite: { replacePrefixMatch: '/v2' } },
              ],
              backends: [backend, { weight: 0, destination: { [SVC]: 'other', version: 'v2' } }],
            },
            {
              matches: [{ path: { value: '/old' } }],
              filters: [
                { redirect: { scheme: 'https', hostname: 'new.example.com', port: 443, statusCode: 301 } },
              ],
            },
          ],
        },
      }),
    );
  });
  it('requires exactly one of tcp and http', () => {
    expectCauses(meshGatewayRoute, route({}), [['conf', 'requires one of "tcp", "http"']]);
    expectCauses(
      meshGatewayRoute,
      route({
        tcp: { rules: [{ backends: [backend] }] },
        http: { rules: [{ matches: [{}], backends: [backend] }] },
      }),
      ['conf'],
    );
  });
  it('checks rules, backends and filters', () => {
    expectCauses(
      meshGatewayRoute,
      route({ tcp: { rules: [{ backends: [] }, { backends: [{ destination: {} }] }] } }),
      [
        ['conf.tcp.rules[0].backends', 'must have at least one element'],
        ['conf.tcp.rules[1].backends[0].weight', 'cannot be empty'],
        ['conf.tcp.rules[1].backends[0].destination', 'must have at least one tag'],
        'conf.tcp.rules[1].backends[0].destination["mesh.io/service"]',
      ],
    );
    expectCauses(
      meshGatewayRoute,
      route({
        http: {
          rules: [
            { matches: [], backends: [backend] },
            { matches: [{ path: { match: 'GLOB', value: '' }, method: 'FETCH' }] },
            {
              matches: [{}],
              filters: [{}, { rewrite: {} }, { mirror: { backend, percentage: 200 } }],
              backends: [backend],
            },
          ],
        },
      }),
      [
        ['conf.http.rules[0].matches', 'must have at least one element'],
        'conf.http.rules[1].matches[0].path.match',
        ['conf.http.rules[1].matches[0].path.value', 'cannot be empty'],
        'conf.http.rules[1].matches[0].method',
        ['conf.http.rules[1].backends', 'cannot be empty'],
        ['conf.http.rules[2].filters[0]', 'requires one of "requestHeader", "mirror", "redirect", "rewrite"'],
        ['conf.http.rules[2].filters[1].rewrite', 'requires one of "replaceFull", "replacePrefixMatch"'],
        ['conf.http.rules[2].filters[2].mirror.percentage', 'must be less than or equal to 100'],
      ],
    );
  });
  it('keeps a redirect alone and without backends', () => {
    expectCauses(
      meshGatewayRoute,
      route({
        http: {
          rules: [
            {
              matches: [{}],
              filters: [{ redirect: { port: 65535, statusCode: 200 } }, { rewrite: { replaceFull: '/' } }],
              backends: [backend],
            },
          ],
        },
      }),
      [
        ['conf.http.rules[0].filters[0].redirect.port', 'must be less than or equal to 65534'],
        ['conf.http.rules[0].filters[0].redirect.statusCode', 'must be greater than or equal to 300'],
        ['conf.http.rules[0].filters', 'a redirect filter must be the only filter'],
        ['conf.http.rules[0].backends', 'must be empty when a redirect filter is given'],
      ],
    );
  });
});

describe('VirtualOutbound', () => {
  const conf = {
    host: '{{.svc}}.{{.version}}.mesh',
    port: '8080',
    parameters: [{ name: 'svc', tagKey: SVC }, { name: 'version' }],
  };
  it('accepts templates over declared parameters', () => {
    expectValid(virtualOutbound, { selectors: ALL, conf });
  });
  it('requires selectors and conf with host, port and parameters', () => {
    expectCauses(virtualOutbound, {}, ['selectors', ['conf', 'cannot be empty']]);
    expectCauses(virtualOutbound, { selectors: ALL, conf: { parameters: [] } }, [
      ['conf.host', 'cannot be empty'],
      ['conf.port', 'cannot be empty'],
      // Kuma's rule: one parameter takes the service tag.
      ['conf.parameters', 'must contain a parameter with "mesh.io/service" as its tagKey'],
    ]);
  });
  it('checks parameters and the names the templates use', () => {
    expectCauses(
      virtualOutbound,
      {
        selectors: ALL,
        conf: {
          host: '{{.svc}}.{{ .zone }}',
          port: '{{.port}}',
          parameters: [{ name: 'svc' }, { name: 'svc' }, { name: 'x_1', tagKey: 'bad key' }],
        },
      },
      [
        // Kuma's rules: names of letters and digits, one parameter with the service tag.
        ['conf.parameters[2].name', 'must consist of letters and digits to be used as a template key'],
        ['conf.parameters', 'must contain a parameter with "mesh.io/service" as its tagKey'],
        ['conf.parameters[2].tagKey', 'tag key must be non-empty and of [a-zA-Z0-9._:/-]'],
        ['conf.parameters[1].name', '"svc" name is already used for another parameter'],
        ['conf.host', 'template uses "zone" which is not in parameters'],
        ['conf.port', 'template uses "port" which is not in parameters'],
      ],
    );
  });
});
