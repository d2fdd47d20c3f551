import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { startTestPlane } from '../helpers/control-plane.js';
import { expectErrorShape } from '../helpers/error-shape.js';

// Bodies that cost far more than their size.

const TP_URL = '/meshes/default/traffic-permissions/tp';
const trafficPermission = (sources: unknown[]) => ({
  type: 'TrafficPermission',
  mesh: 'default',
  name: 'tp',
  sources,
  destinations: [{ match: { 'kuma.io/service': '*' } }],
});
const yaml = { 'content-type': 'application/yaml' };

/** PUTs a YAML body, expects it refused with `status` in our shape, and nothing stored at `url`. */
async function expectYamlRefused(
  cp: ControlPlane,
  url: string,
  payload: string,
  status: number,
): Promise<Record<string, unknown>> {
  const res = await cp.app.inject({ method: 'PUT', url, headers: yaml, payload });
  expect(res.statusCode).toBe(status);
  const body = res.json();
  expectErrorShape(body);
  expect((await cp.app.inject({ method: 'GET', url })).statusCode).toBe(404);
  return body;
}

describe('invalid arrays', () => {
  let cp: ControlPlane;
  beforeAll(async () => {
    cp = await startTestPlane();
  });
  afterAll(async () => {
    await cp.close();
  });

  // 30,000 elements pass the bounds of the JSON text (50,000 nodes, deep-bodies.test.ts) and reach
  // the resource check.
  it('30k invalid elements are 400 with at most 101 causes, not a 500', async () => {
    const res = await cp.app.inject({
      method: 'PUT',
      url: TP_URL,
      payload: trafficPermission(Array(30_000).fill(1)),
    });
    expect(res.statusCode).toBe(400);
    const body = res.json();
    expectErrorShape(body);
    expect(body.causes.length).toBeGreaterThan(0);
    expect(body.causes.length).toBeLessThanOrEqual(101);
    expect(body.causes[0]).toEqual({
      field: 'sources',
      message: 'too many values: a body may hold at most 20000 array elements and object fields in all',
    });
  });

  it('control-character causes and schema causes together are capped at 100 and a count', async () => {
    // Schema causes on 150 sources that are not objects; character causes on 150 destinations.
    const body = trafficPermission(Array(150).fill(1));
    body.destinations = Array.from({ length: 150 }, () => ({ match: { 'kuma.io/service': 'a\u0000' } }));
    const res = await cp.app.inject({ method: 'PUT', url: TP_URL, payload: body });
    expect(res.statusCode).toBe(400);
    const answer = res.json();
    expectErrorShape(answer);
    expect(answer.causes).toHaveLength(101);
    expect(answer.causes[0].field).toBe('destinations[0].match["kuma.io/service"]');
    expect(answer.causes[100].field).toBe('');
    expect(answer.causes[100].message).toMatch(/^and \d+ more causes \(only the first 100 are listed\)$/);
  });

  it('100k invalid elements answer a small error body', async () => {
    const res = await cp.app.inject({
      method: 'PUT',
      url: TP_URL,
      payload: trafficPermission(Array(100_000).fill(1)),
    });
    expect(res.statusCode).toBe(400);
    expect(res.body.length).toBeLessThan(20_000);
    expectErrorShape(res.json());
  });

  it('lists the first 100 causes and one that counts the rest', async () => {
    const res = await cp.app.inject({
      method: 'PUT',
      url: TP_URL,
      payload: trafficPermission(Array(5_000).fill(1)),
    });
    expect(res.statusCode).toBe(400);
    const body = res.json();
    expectErrorShape(body);
    expect(body.causes).toHaveLength(101);
    expect(body.causes.slice(0, 100)).toEqual(
      Array.from({ length: 100 }, (_, i) => ({ field: `sources[${i}]`, message: 'must be an object' })),
    );
    expect(body.causes[100]).toEqual({
      field: '',
      message: 'and 4900 more causes (only the first 100 are listed)',
    });
    expect(res.body.length).toBeLessThan(20_000);
  });

  it('counts unknown fields and the URL checks under the same cap', async () => {
    const payload: Record<string, unknown> = { type: 'Wrong', mesh: 'other', name: 'other' };
    for (let i = 0; i < 300; i++) payload[`extra${i}`] = i;
    const res = await cp.app.inject({ method: 'PUT', url: TP_URL, payload });
    expect(res.statusCode).toBe(400);
    const causes = res.json().causes as Array<{ field: string; message: string }>;
    expect(causes).toHaveLength(101);
    expect(causes.slice(0, 3).map((c) => c.field)).toEqual(['type', 'name', 'mesh']);
    // 3 URL causes, 300 unknown fields and the missing sources and destinations: 305 in all.
    expect(causes[100]).toEqual({
      field: '',
      message: 'and 205 more causes (only the first 100 are listed)',
    });
  });

  it('counts object fields too: a selector with 21,000 tags is 400 on that map', async () => {
    const match: Record<string, string> = {};
    for (let i = 0; i < 21_000; i++) match[`bad key ${i}`] = 'x';
    const res = await cp.app.inject({ method: 'PUT', url: TP_URL, payload: trafficPermission([{ match }]) });
    expect(res.statusCode).toBe(400);
    expect(res.json().causes).toEqual([
      {
        field: 'sources[0].match',
        message: 'too many values: a body may hold at most 20000 array elements and object fields in all',
      },
    ]);
  });

  it('refuses a body nested deeper than 32 levels with a cause on the field', async () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 40; i++) deep = [deep];
    const res = await cp.app.inject({
      method: 'PUT',
      url: TP_URL,
      payload: trafficPermission([{ match: { 'kuma.io/service': deep } }]),
    });
    expect(res.statusCode).toBe(400);
    const body = res.json();
    expectErrorShape(body);
    expect(body.causes).toEqual([
      {
        field: `sources[0].match["kuma.io/service"]${'[0]'.repeat(28)}`,
        message: 'must not nest deeper than 32 levels',
      },
    ]);
  });

  it('still validates a large valid body within the bounds', async () => {
    const sources = Array.from({ length: 5_000 }, (_, i) => ({ match: { 'kuma.io/service': `s${i}` } }));
    const res = await cp.app.inject({ method: 'PUT', url: TP_URL, payload: trafficPermission(sources) });
    expect(res.statusCode).toBe(201);
  });
});

describe('YAML alias amplification and stored size', () => {
  let cp: ControlPlane;
  beforeAll(async () => {
    cp = await startTestPlane();
  });
  afterAll(async () => {
    await cp.close();
  });

  const proxyTemplate = (name: string, imports: string) =>
    `type: ProxyTemplate\nmesh: default\nname: ${name}\nselectors: [{match: {mesh.io/service: '*'}}]\nconf:\n  imports: ${imports}\n`;

  it('refuses a ~1 MB scalar aliased 98 times (413) and stores nothing', async () => {
    const body = proxyTemplate('bomb', `[&a ${'x'.repeat(1_000_000)}, ${Array(98).fill('*a').join(', ')}]`);
    expect(body.length).toBeLessThan(1_048_576);
    const answer = await expectYamlRefused(cp, '/meshes/default/proxytemplates/bomb', body, 413);
    expect(answer.details).toBe(
      'the YAML body expands to more than 1048576 bytes of JSON, the limit of a body (apiServer.bodyLimit)',
    );
  });

  it('refuses an anchor used more than 100 times (400 naming the limit)', async () => {
    const body = proxyTemplate('many', `[&a x, ${Array(101).fill('*a').join(', ')}]`);
    const answer = await expectYamlRefused(cp, '/meshes/default/proxytemplates/many', body, 400);
    expect(answer.details).toBe(
      'invalid YAML: an anchor is used through aliases more than 100 times (aliases nested in it multiply the count)',
    );
  });

  it('refuses a self-referencing alias (413, not a 500)', async () => {
    const res = await cp.app.inject({
      method: 'PUT',
      url: '/meshes/loop',
      headers: yaml,
      payload: 'type: Mesh\nname: loop\nx: &a [1, *a]\n',
    });
    expect(res.statusCode).toBe(413);
    expectErrorShape(res.json());
  });

  it('writes nothing of a body to the process: a YAML warning is not emitted', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      const res = await cp.app.inject({
        method: 'PUT',
        url: '/meshes/directive',
        headers: yaml,
        payload: '%EVIL \u001b[31mdirective\n---\ntype: Mesh\nname: directive\n',
      });
      expect(res.statusCode).toBe(201);
      await new Promise((r) => setImmediate(r));
      expect(warnings.map((w) => w.message)).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('accepts aliases that stay within the limits', async () => {
    // Imports must name known profiles (Kuma's rule): the long aliased value is a selector here.
    const selector = `{match: {mesh.io/service: ${'x'.repeat(1000)}}}`;
    const body = `type: ProxyTemplate\nmesh: default\nname: fine\nselectors: [&a ${selector}, ${Array(50).fill('*a').join(', ')}]\nconf: {imports: [default-proxy]}\n`;
    const res = await cp.app.inject({
      method: 'PUT',
      url: '/meshes/default/proxytemplates/fine',
      headers: yaml,
      payload: body,
    });
    expect(res.statusCode).toBe(201);
    expect(res.json().selectors).toHaveLength(51);
  });
});

describe('stored JSON larger than apiServer.bodyLimit', () => {
  const LIMIT = 4000;
  let cp: ControlPlane;
  beforeAll(async () => {
    cp = await startTestPlane({ MESH_API_SERVER_BODY_LIMIT: String(LIMIT) });
  });
  afterAll(async () => {
    await cp.close();
  });

  it('refuses a YAML body without aliases whose JSON exceeds the limit (413)', async () => {
    const imports = `[${Array(1200).fill('a').join(', ')}]`;
    const body = `type: ProxyTemplate\nmesh: default\nname: flow\nselectors: [{match: {mesh.io/service: '*'}}]\nconf: {imports: ${imports}}\n`;
    expect(body.length).toBeLessThan(LIMIT);
    const answer = await expectYamlRefused(cp, '/meshes/default/proxytemplates/flow', body, 413);
    expect(answer.details).toContain(`more than ${LIMIT} bytes of JSON`);
    expect(answer.details).toContain('apiServer.bodyLimit');
  });

  it('refuses a body whose stored resource (with its times) exceeds the limit, dry run included (413)', async () => {
    const base = { type: 'Secret', mesh: 'default', name: 'big', data: '' };
    const room = LIMIT - JSON.stringify(base).length - 4;
    const payload = { ...base, data: 'QUFB'.repeat(Math.floor(room / 4)) };
    const sent = JSON.stringify(payload);
    expect(sent.length).toBeLessThanOrEqual(LIMIT);
    for (const url of ['/meshes/default/secrets/big?dryRun=true', '/meshes/default/secrets/big']) {
      const res = await cp.app.inject({
        method: 'PUT',
        url,
        headers: { 'content-type': 'application/json' },
        payload: sent,
      });
      expect(res.statusCode).toBe(413);
      expectErrorShape(res.json());
      const stored = sent.length + ',"creationTime":"","modificationTime":""'.length + 2 * 24;
      expect(res.json().details).toBe(
        `the resource would be stored as ${stored} bytes of JSON, more than the limit of ${LIMIT} bytes (apiServer.bodyLimit)`,
      );
    }
    expect((await cp.app.inject({ method: 'GET', url: '/meshes/default/secrets/big' })).statusCode).toBe(404);
    // What is stored can always be sent back: a resource just within the limit round-trips.
    const fits = { ...base, data: 'QUFB'.repeat(Math.floor((room - 100) / 4)) };
    const put = await cp.app.inject({ method: 'PUT', url: '/meshes/default/secrets/big', payload: fits });
    expect(put.statusCode).toBe(201);
    expect(put.body.length).toBeLessThanOrEqual(LIMIT);
    const again = await cp.app.inject({
      method: 'PUT',
      url: '/meshes/default/secrets/big',
      headers: { 'content-type': 'application/json' },
      payload: put.body,
    });
    expect(again.statusCode).toBe(200);
  });
});

describe("the stored-size limit is the API's", () => {
  it('start-up still writes signing keys larger than a small apiServer.bodyLimit', async () => {
    const cp = await startTestPlane({ MESH_API_SERVER_BODY_LIMIT: '500' });
    try {
      for (const url of [
        '/global-secrets/user-token-signing-key-1',
        '/meshes/default/secrets/dataplane-token-signing-key-default-1',
      ]) {
        const res = await cp.app.inject({ method: 'GET', url });
        expect(res.statusCode).toBe(200);
        expect(res.body.length).toBeGreaterThan(500);
      }
    } finally {
      await cp.close();
    }
  });
});
