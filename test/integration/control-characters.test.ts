import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeRefusal } from '../../src/app/write-policy.js';
import { registry } from '../../src/resources/registry.js';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { startTestPlane } from '../helpers/control-plane.js';
import { samplesBySegment } from '../helpers/golden.js';

const refused = (codePoint: string): string =>
  `must not contain control characters or bidirectional formatting characters (found ${codePoint})`;

const all = [{ match: { 'mesh.io/service': '*' } }];

/** Every string of a spec field, with its path as the API writes it (decisions §4). */
function stringLeaves(v: unknown, path = ''): Array<{ path: string; set: (s: string) => unknown }> {
  const out: Array<{ path: string; set: (s: string) => unknown }> = [];
  const walk = (value: unknown, p: string, rebuild: (x: unknown) => unknown): void => {
    if (typeof value === 'string') out.push({ path: p, set: (s) => rebuild(value + s) });
    else if (Array.isArray(value)) {
      value.forEach((item, i) =>
        walk(item, `${p}[${i}]`, (x) => rebuild(value.map((old, j) => (j === i ? x : old)))),
      );
    } else if (value && typeof value === 'object') {
      for (const [k, item] of Object.entries(value)) {
        if (p === '' && ['type', 'name', 'mesh'].includes(k)) continue;
        const seg = /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(k)
          ? p === ''
            ? k
            : `${p}.${k}`
          : `${p}[${JSON.stringify(k)}]`;
        walk(item, seg, (x) => rebuild({ ...value, [k]: x }));
      }
    }
  };
  walk(v, path, (x) => x);
  return out;
}

describe('control and bidi characters in bodies', () => {
  let cp: ControlPlane;
  beforeAll(async () => {
    cp = await startTestPlane();
  });
  afterAll(async () => {
    await cp?.close();
  });
  const put = async (url: string, payload: unknown) => {
    const res = await cp.app.inject({ method: 'PUT', url, payload: payload as Record<string, unknown> });
    return { status: res.statusCode, body: res.json() as { title: string; causes?: unknown[] } };
  };

  it('refuses a NUL in a mesh backend name, with the exact field and nothing written', async () => {
    const res = await put('/meshes/m-nul', {
      type: 'Mesh',
      name: 'm-nul',
      logging: { backends: [{ name: 'a\u0000b', type: 'file', conf: { path: '/tmp/log' } }] },
    });
    expect(res).toEqual({
      status: 400,
      body: {
        title: 'Resource is not valid',
        details: 'the resource has invalid fields',
        causes: [{ field: 'logging.backends[0].name', message: refused('U+0000') }],
      },
    });
    expect((await cp.app.inject({ method: 'GET', url: '/meshes/m-nul' })).statusCode).toBe(404);
  });

  it('refuses bidi overrides and isolates in a path, a host and a tag value', async () => {
    const path = await put('/meshes/default/health-checks/hc', {
      type: 'HealthCheck',
      mesh: 'default',
      name: 'hc',
      sources: all,
      destinations: all,
      conf: {
        interval: '1s',
        timeout: '1s',
        unhealthyThreshold: 1,
        healthyThreshold: 1,
        http: {
          path: '/health\u202e',
          requestHeadersToAdd: [{ header: { key: 'x', value: 'a\r\nX-Evil: 1' } }],
        },
      },
    });
    expect(path.status).toBe(400);
    expect(path.body.causes).toEqual([
      { field: 'conf.http.path', message: refused('U+202E') },
      { field: 'conf.http.requestHeadersToAdd[0].header.value', message: refused('U+000D') },
    ]);

    const host = await put('/meshes/default/external-services/es', {
      type: 'ExternalService',
      mesh: 'default',
      name: 'es',
      networking: { address: 'example\u202ecom:443' },
      tags: { 'mesh.io/service': 'es' },
    });
    // One cause per field: the character, not also the host:port pattern.
    expect(host).toMatchObject({
      status: 400,
      body: { causes: [{ field: 'networking.address', message: refused('U+202E') }] },
    });

    const tag = await put('/meshes/default/dataplanes/dp', {
      type: 'Dataplane',
      mesh: 'default',
      name: 'dp',
      networking: {
        address: '10.0.0.1',
        inbound: [{ port: 8080, tags: { 'mesh.io/service': 'web', version: 'v1\u2066' } }],
      },
    });
    expect(tag).toMatchObject({
      status: 400,
      body: { causes: [{ field: 'networking.inbound[0].tags.version', message: refused('U+2066') }] },
    });
  });

  it('refuses a control character in a proxy template, but takes tab and newlines in its raw configuration', async () => {
    const template = (value: string, resourceName = 'r') => ({
      type: 'ProxyTemplate',
      mesh: 'default',
      name: 'pt',
      selectors: all,
      conf: {
        imports: ['default-proxy'],
        resources: [
          // Raw configuration must decode (Kuma's rule): the tab is whitespace inside a flow map.
          {
            name: resourceName,
            version: 'v1',
            resource: 'name: r\ntype: STATIC\nconnect_timeout: {seconds:\t5}\r\n',
          },
        ],
        modifications: [{ cluster: { operation: 'patch', value } }],
      },
    });
    const esc = await put('/meshes/default/proxytemplates/pt', template('connectTimeout: 5s\n\u001b[2J'));
    expect(esc).toMatchObject({
      status: 400,
      body: { causes: [{ field: 'conf.modifications[0].cluster.value', message: refused('U+001B') }] },
    });
    const line = await put('/meshes/default/proxytemplates/pt', template('connectTimeout: 5s', 'r\nx'));
    expect(line).toMatchObject({
      status: 400,
      body: { causes: [{ field: 'conf.resources[0].name', message: refused('U+000A') }] },
    });
    const ok = await put(
      '/meshes/default/proxytemplates/pt',
      template('connectTimeout: 5s\nhttp2: {a:\t1}\r\n'),
    );
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
  });

  it('takes newlines where the text spans lines: PEM certificates and access log formats', async () => {
    const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    const res = await put('/meshes/m-text', {
      type: 'Mesh',
      name: 'm-text',
      mtls: {
        backends: [
          {
            name: 'ca',
            type: 'provided',
            conf: { cert: { inlineString: pem }, key: { inlineString: pem } },
          },
        ],
      },
      logging: {
        backends: [
          { name: 'f', type: 'file', format: '[%START_TIME%]\t%KUMA_MESH%\n', conf: { path: '/tmp/l' } },
        ],
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  });

  it('refuses C1 controls, DEL and line separators, in a zone name of an ingress and in keys', async () => {
    const ingress = await put('/zone-ingresses/zi', {
      type: 'ZoneIngress',
      name: 'zi',
      zone: 'zone\u0085a',
      networking: { address: '10.0.0.1', port: 10001 },
    });
    expect(ingress).toMatchObject({
      status: 400,
      body: { causes: [{ field: 'zone', message: refused('U+0085') }] },
    });
    const key = await put('/meshes/default/traffic-permissions/tp', {
      type: 'TrafficPermission',
      mesh: 'default',
      name: 'tp',
      sources: [{ match: { 'mesh.io/service\u007f': '*' } }],
      destinations: [{ match: { 'mesh.io/service': '*\u2028' } }],
    });
    expect(key.status).toBe(400);
    // The key is written escaped in the field path, as every cause writes it.
    expect(key.body.causes).toEqual([
      { field: 'sources[0].match["mesh.io/service\\u007f"]', message: refused('U+007F') },
      { field: 'destinations[0].match["mesh.io/service"]', message: refused('U+2028') },
    ]);
  });

  it('refuses a NUL in every string field of every writable kind, with that field as the cause', async () => {
    const samples = samplesBySegment();
    const standalone = { mode: 'standalone', environment: 'universal', readOnly: false } as const;
    let checked = 0;
    for (const d of registry.all.filter((k) => !k.singleton && writeRefusal(k, standalone) === undefined)) {
      const sample = samples.get(d.path);
      expect(sample, d.kind).toBeDefined();
      const prefix = d.scope === 'mesh' ? '/meshes/default/' : '/';
      for (const leaf of stringLeaves(sample)) {
        const res = await put(`${prefix}${d.path}/${String(sample?.name)}`, leaf.set('\u0000'));
        expect(res.status, `${d.kind} ${leaf.path}`).toBe(400);
        expect(res.body.causes, `${d.kind} ${leaf.path}`).toContainEqual({
          field: leaf.path,
          message: refused('U+0000'),
        });
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(40);
  });

  it('refuses a NUL in a token request and in a mesh name of the URL', async () => {
    const token = await cp.app.inject({
      method: 'POST',
      url: '/tokens/dataplane',
      payload: { mesh: 'default', tags: { 'mesh.io/service': ['web\u0000'] } },
    });
    expect(token.statusCode).toBe(400);
    expect(token.json().causes).toEqual([
      { field: 'tags["mesh.io/service"][0]', message: refused('U+0000') },
    ]);
    const secret = await put('/meshes/a%E2%80%AEb/secrets/s', {
      type: 'Secret',
      mesh: 'a\u202eb',
      name: 's',
      data: 'YQ==',
    });
    expect(secret).toMatchObject({
      status: 400,
      body: { causes: [{ field: 'mesh', message: refused('U+202E') }] },
    });
  });

  it('answers a deeply nested body with a bad character at the bottom with 400, not a stack overflow', async () => {
    const depth = 200_000;
    const payload = `{"type":"Mesh","name":"deep","x":${'['.repeat(depth)}"\\u0000"${']'.repeat(depth)}}`;
    const res = await cp.app.inject({
      method: 'PUT',
      url: '/meshes/deep',
      headers: { 'content-type': 'application/json' },
      payload,
    });
    expect(res.statusCode, res.body.slice(0, 300)).toBe(400);
    // Refused on the text, before the character check walks it (deep-bodies.test.ts).
    expect(res.json().details).toMatch(/^the JSON body is too deep at line 1, column \d+: /);
  });
});
