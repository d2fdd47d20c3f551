import { describe, it } from 'vitest';
import { meshGatewayRoute } from '../../../src/resources/kinds/mesh-gateway-route.js';
import { meshGateway } from '../../../src/resources/kinds/mesh-gateway.js';
import { virtualOutbound } from '../../../src/resources/kinds/virtual-outbound.js';
import { ALL, expectCauses, expectValid } from './helpers.js';

const SVC = 'mesh.io/service';
const gw = (listeners: unknown[]) => ({ selectors: ALL, tags: { product: 'edge' }, conf: { listeners } });

// Kuma 2.0 (gateway_validator.go) decides what MeshGateway accepts: these tests follow it.
describe('MeshGateway', () => {
  it('accepts listeners of every protocol Kuma builds', () => {
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
          tls: { mode: 'TERMINATE', certificates: [{ secret: 'cert' }], options: {} },
        },
        { port: 9001, protocol: 'TCP' },
        { port: 9002, protocol: 'HTTP', hostname: '' },
      ]),
    );
  });
  it('takes tags without the service tag, or none: the selectors name the service', () => {
    expectValid(meshGateway, gw([{ port: 80, protocol: 'HTTP' }]));
    expectValid(meshGateway, { selectors: ALL, conf: { listeners: [{ port: 80, protocol: 'HTTP' }] } });
  });
  it('requires selectors with the service tag and at least one listener', () => {
    expectCauses(meshGateway, { conf: { listeners: [] } }, [
      ['selectors', 'cannot be empty'],
      ['conf.listeners', 'must have at least one element'],
    ]);
    expectCauses(
      meshGateway,
      {
        selectors: [{ match: { version: 'v1' } }, { match: {} }],
        conf: { listeners: [{ port: 1, protocol: 'TCP' }] },
      },
      [
        ['selectors[0].match', 'mandatory tag "mesh.io/service" is missing'],
        ['selectors[1].match', 'must have at least one tag'],
        ['selectors[1].match', 'mandatory tag "mesh.io/service" is missing'],
      ],
    );
    expectCauses(meshGateway, { selectors: ALL }, [['conf', 'cannot be empty']]);
  });
  it('refuses the tags a proxy sets, on the gateway and on its listeners', () => {
    expectCauses(
      meshGateway,
      {
        selectors: ALL,
        tags: { [SVC]: 'edge', 'mesh.io/zone': 'z' },
        conf: { listeners: [{ port: 1, protocol: 'TCP', tags: { 'mesh.io/protocol': 'tcp' } }] },
      },
      [
        ['tags["mesh.io/service"]', 'tag name must not be "mesh.io/service"'],
        ['tags["mesh.io/zone"]', 'tag name must not be "mesh.io/zone"'],
        ['conf.listeners[0].tags["mesh.io/protocol"]', 'tag name must not be "mesh.io/protocol"'],
      ],
    );
  });
  it('checks listeners', () => {
    expectCauses(
      meshGateway,
      gw([
        { port: 0, protocol: 'UDP', hostname: 'bad host' },
        { protocol: 'HTTP', foo: 1 },
        { port: 2, hostname: 'Upper.example.com' },
      ]),
      [
        [
          'conf.listeners[0].hostname',
          'invalid hostname: must be "*", "*.<domain>" or a domain of lowercase DNS labels',
        ],
        ['conf.listeners[0].port', 'must be in the range 1-65535'],
        ['conf.listeners[0].protocol', 'must be one of "TCP", "HTTP", "HTTPS"'],
        ['conf.listeners[1].port', 'cannot be empty'],
        ['conf.listeners[1].foo', 'unknown field'],
        ['conf.listeners[2].protocol', 'must be one of "TCP", "HTTP", "HTTPS"'],
        [
          'conf.listeners[2].hostname',
          'invalid hostname: must be "*", "*.<domain>" or a domain of lowercase DNS labels',
        ],
      ],
    );
  });
  it('needs tls with a mode on HTTPS listeners, with certificates to terminate', () => {
    expectCauses(meshGateway, gw([{ port: 443, protocol: 'HTTPS' }]), [
      ['conf.listeners[0].tls', 'cannot be empty for HTTPS listeners'],
    ]);
    expectCauses(meshGateway, gw([{ port: 443, protocol: 'HTTPS', tls: {} }]), [
      ['conf.listeners[0].tls.mode', 'cannot be empty'],
    ]);
    expectCauses(meshGateway, gw([{ port: 443, protocol: 'HTTPS', tls: { mode: 'TERMINATE' } }]), [
      ['conf.listeners[0].tls.certificates', 'has to have 1 or 2 certificates in TERMINATE mode'],
    ]);
    expectCauses(
      meshGateway,
      gw([{ port: 443, protocol: 'HTTPS', tls: { mode: 'PASSTHROUGH', certificates: [{ secret: 'c' }] } }]),
      [['conf.listeners[0].tls.certificates', 'must be empty in PASSTHROUGH mode']],
    );
    expectCauses(
      meshGateway,
      gw([
        {
          port: 443,
          protocol: 'HTTPS',
          tls: { mode: 'TERMINATE', certificates: [{ secret: 'a' }, { inline: 'Zm9v' }, { file: '/c' }] },
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
          tls: {
            mode: 'TERMINATE',
            certificates: [{ secret: 'a', inlineString: 'b' }, { inline: '!' }],
            options: { x: 1 },
          },
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
  it('keeps TLS and more than one selector off cross-mesh gateways', () => {
    expectCauses(
      meshGateway,
      {
        selectors: [{ match: { [SVC]: 'a' } }, { match: { [SVC]: 'b' } }],
        conf: {
          listeners: [
            { port: 80, protocol: 'HTTP', crossMesh: true, tls: { mode: 'TERMINATE' } },
            { port: 81, protocol: 'HTTP', crossMesh: true, tls: {} },
          ],
        },
      },
      [
        ['selectors[1]', 'there can be at most one selector with a crossMesh listener'],
        ['conf.listeners[0].tls', 'must be empty with crossMesh'],
      ],
    );
  });
  it('refuses listeners on one port that cannot share it', () => {
    expectValid(
      meshGateway,
      gw([
        { port: 80, protocol: 'HTTP', hostname: 'a.com', resources: { connectionLimit: 5 } },
        { port: 80, protocol: 'HTTP', hostname: 'b.com', resources: { connectionLimit: 5 } },
        { port: 80, protocol: 'HTTP', resources: { connectionLimit: 0 } },
      ]),
    );
    expectCauses(
      meshGateway,
      gw([
        { port: 80, protocol: 'HTTP', hostname: '*', resources: { connectionLimit: 5 } },
        { port: 80, protocol: 'HTTP', resources: { connectionLimit: 6 } },
        { port: 80, protocol: 'TCP', hostname: 'c.com' },
      ]),
      [
        ['conf.listeners[0]', 'protocol conflicts with other listeners on this port'],
        ['conf.listeners[1]', 'protocol conflicts with other listeners on this port'],
        ['conf.listeners[2]', 'protocol conflicts with other listeners on this port'],
        ['conf.listeners[0]', 'multiple listeners for hostname on this port'],
        ['conf.listeners[1]', 'multiple listeners for hostname on this port'],
        ['conf.listeners[0].resources.connectionLimit', 'conflicting values for this port'],
        ['conf.listeners[1].resources.connectionLimit', 'conflicting values for this port'],
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
        http: { rules: [{ matches: [{ method: 'GET' }], backends: [backend] }] },
      }),
      ['conf'],
    );
  });
  // Kuma 2.0 (gateway_route_validator.go) decides what MeshGatewayRoute accepts: these follow it.
  it('takes backends without a weight, TCP routes without rules, filters of no kind', () => {
    expectValid(meshGatewayRoute, route({ tcp: {} }));
    expectValid(meshGatewayRoute, route({ tcp: { rules: [{ backends: [] }] } }));
    expectValid(
      meshGatewayRoute,
      route({
        http: {
          hostnames: ['any text'],
          rules: [
            {
              matches: [{ path: { match: 'REGEX', value: '.*' } }],
              filters: [{}, { rewrite: {} }],
              backends: [{ destination: { [SVC]: 'backend' } }],
            },
          ],
        },
      }),
    );
  });
  it('checks rules, backends and filters', () => {
    expectCauses(meshGatewayRoute, route({ tcp: { rules: [{ backends: [{ destination: {} }] }] } }), [
      ['conf.tcp.rules[0].backends[0].destination', 'must have at least one tag'],
      ['conf.tcp.rules[0].backends[0].destination', 'mandatory tag "mesh.io/service" is missing'],
    ]);
    expectCauses(
      meshGatewayRoute,
      route({
        http: {
          rules: [
            { matches: [], backends: [backend] },
            { matches: [{ path: { match: 'GLOB', value: '' }, method: 'FETCH' }] },
            {
              matches: [{}, { path: { value: 'rel' } }, { path: { match: 'PREFIX', value: '/a/' } }],
              filters: [
                { requestHeader: { set: [] } },
                { rewrite: { replaceFull: '/', replacePrefixMatch: '/' } },
                { mirror: { backend, percentage: 200 } },
                { mirror: { backend: { weight: -1, destination: { version: 'v1' } } } },
              ],
              backends: [backend],
            },
          ],
        },
      }),
      [
        ['conf.http.rules[0].matches', 'must have at least one element'],
        'conf.http.rules[1].matches[0].path.match',
        ['conf.http.rules[1].matches[0].path.value', 'must be an absolute path'],
        'conf.http.rules[1].matches[0].method',
        ['conf.http.rules[1].backends', 'cannot be empty'],
        ['conf.http.rules[2].matches[0]', 'cannot be empty: give a path, method, headers or queryParameters'],
        ['conf.http.rules[2].matches[1].path.value', 'must be an absolute path'],
        [
          'conf.http.rules[2].matches[2].path.value',
          'does not need a trailing slash: only a `/`-separated prefix or an entire path is matched',
        ],
        [
          'conf.http.rules[2].filters[0].requestHeader',
          'cannot be empty: give headers to set, add or remove',
        ],
        [
          'conf.http.rules[2].filters[1].rewrite',
          'only one of "replaceFull", "replacePrefixMatch" can be set, got "replaceFull", "replacePrefixMatch"',
        ],
        ['conf.http.rules[2].filters[2].mirror.percentage', 'must be less than or equal to 100'],
        ['conf.http.rules[2].filters[3].mirror.percentage', 'cannot be empty'],
        ['conf.http.rules[2].filters[3].mirror.backend.weight', 'must be greater than or equal to 0'],
        [
          'conf.http.rules[2].filters[3].mirror.backend.destination',
          'mandatory tag "mesh.io/service" is missing',
        ],
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
              matches: [{ path: { value: '/' } }],
              filters: [{ redirect: { port: 65536, statusCode: 200 } }, { rewrite: { replaceFull: '/' } }],
              backends: [backend],
            },
            {
              matches: [{ path: { value: '/' } }],
              filters: [{ redirect: { scheme: 'https', hostname: 'a', statusCode: 301 } }],
              backends: [backend],
            },
            {
              matches: [{ path: { value: '/' } }],
              filters: [{ rewrite: { replacePrefixMatch: '/b' } }],
              backends: [backend],
            },
          ],
        },
      }),
      [
        ['conf.http.rules[0].filters[0].redirect.scheme', 'cannot be empty'],
        ['conf.http.rules[0].filters[0].redirect.hostname', 'cannot be empty'],
        [
          'conf.http.rules[0].filters[0].redirect.port',
          'must be in the range 1-65535 (or 0: the port of the request)',
        ],
        ['conf.http.rules[0].filters[0].redirect.statusCode', 'must be in the range 300-308'],
        ['conf.http.rules[0].filters', 'a redirect filter must be the only filter'],
        ['conf.http.rules[1].backends', 'must be empty when a redirect filter is given'],
        [
          'conf.http.rules[2].filters[0].rewrite.replacePrefixMatch',
          'cannot be used without a match on a path prefix',
        ],
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
