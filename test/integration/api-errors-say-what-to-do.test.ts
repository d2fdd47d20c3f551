import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { prefersYaml } from '../../src/api/yaml-answers.js';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { startTestPlane } from '../helpers/control-plane.js';
import { measureLoopDelay } from '../helpers/loop-delay.js';

/** API errors that say what to do, and YAML both ways. */
describe('API errors that say what to do', () => {
  let cp: ControlPlane;
  const call = (method: string, url: string, body?: string, headers: Record<string, string> = {}) =>
    cp.app.inject({ method: method as 'GET', url, payload: body, headers });

  beforeAll(async () => {
    cp = await startTestPlane();
  });
  afterAll(async () => {
    await cp.close();
  });

  it('a path one typo or plural away from a collection is a 404 that names the path meant', async () => {
    const cases: Array<[string, string | undefined]> = [
      ['/mesh', '/meshes'],
      ['/meshes/default/dataplane', '/meshes/default/dataplanes'],
      ['/meshes/default/dataplane/web-1', '/meshes/default/dataplanes/web-1'],
      ['/meshes/default/trafic-permissions', '/meshes/default/traffic-permissions'],
      ['/zone', '/zones'],
      ['/confg', '/config'],
      ['/no/such/path', undefined],
      ['/meshes/default/nothing-like-it', undefined],
    ];
    for (const [url, meant] of cases) {
      const res = await call('GET', `${url}?size=5`);
      expect(res.statusCode, url).toBe(404);
      expect(res.json(), url).toEqual({
        title: 'Not found',
        details: `no such endpoint: GET ${url}` + (meant === undefined ? '' : `; did you mean ${meant}?`),
      });
    }
  });

  it('an unknown path segment of 16 KB is a plain 404, looked up without holding the loop', async () => {
    for (const url of [`/${'x'.repeat(16_000)}`, `/meshes/default/${'x'.repeat(16_000)}`]) {
      const { result: res, maxMs } = await measureLoopDelay(() => call('GET', url));
      expect(res.statusCode).toBe(404);
      expect(res.json().details).not.toContain('did you mean');
      expect(maxMs).toBeLessThan(100);
    }
  });

  it('a method a path does not support is 405 with Allow and {title, details}; an unknown path stays 404', async () => {
    const cases: Array<[string, string, string]> = [
      ['POST', '/meshes/default', 'GET, HEAD, PUT, DELETE'],
      ['PATCH', '/meshes', 'GET, HEAD'],
      ['DELETE', '/config', 'GET, HEAD'],
      ['POST', '/meshes/default/traffic-permissions/allow-all-default', 'GET, HEAD, PUT, DELETE'],
      // A trailing slash names the same resource or collection (the router ignores it).
      ['POST', '/meshes/', 'GET, HEAD'],
      ['PUT', '/meshes/', 'GET, HEAD'],
      ['DELETE', '/zones/', 'GET, HEAD'],
      ['POST', '/meshes/default/traffic-permissions/', 'GET, HEAD'],
      ['DELETE', '/meshes/default/traffic-permissions/', 'GET, HEAD'],
      ['POST', '/meshes/default/', 'GET, HEAD, PUT, DELETE'],
      ['POST', '/meshes/default/traffic-permissions/allow-all-default/', 'GET, HEAD, PUT, DELETE'],
    ];
    for (const [method, url, allow] of cases) {
      const res = await call(method, url);
      expect(res.statusCode, `${method} ${url}`).toBe(405);
      expect(res.headers.allow).toBe(allow);
      expect(res.json()).toEqual({
        title: 'Method not allowed',
        details: `${method} is not supported on ${url}; it supports ${allow}`,
      });
    }
    // A derived kind: its own reason, and Allow says what works.
    const derived = await call('PUT', '/meshes/default/dataplanes+insights/x', '{}', {
      'content-type': 'application/json',
    });
    expect(derived.statusCode).toBe(405);
    expect(derived.headers.allow).toBe('GET, HEAD');
    const missing = await call('GET', '/meshes/default/no-such-kind/x');
    expect(missing.statusCode).toBe(404);
    expect(missing.headers.allow).toBeUndefined();
    expect(missing.json().details).toBe('no such endpoint: GET /meshes/default/no-such-kind/x');
  });

  it('invalid JSON gives the line and column; an empty or poisoned body is still refused', async () => {
    const put = (body: string) => call('PUT', '/meshes/m', body, { 'content-type': 'application/json' });
    expect((await put('{"type": "Mesh",\n  "name": "m",, }')).json()).toEqual({
      title: 'Invalid request body',
      details: 'invalid JSON at line 2, column 15: Expected double-quoted property name',
    });
    expect((await put('{"type": "Mesh"\n')).json().details).toMatch(
      /^invalid JSON at line \d+, column \d+: /,
    );
    expect((await put('')).json().details).toBe('request body is empty');
    const poisoned = await put('{"type": "Mesh", "name": "m", "__proto__": {"x": 1}}');
    expect(poisoned.statusCode).toBe(400);
    expect(poisoned.json().details).toBe('invalid JSON: Object contains forbidden prototype property');
  });

  it('several YAML documents in one body: said in our words, with where the second starts', async () => {
    const res = await call('PUT', '/meshes/m', 'type: Mesh\nname: m\n---\ntype: Mesh\nname: n\n', {
      'content-type': 'application/yaml',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().details).toBe(
      'the body holds several YAML documents ("---" at line 3, column 1): the API takes one resource per request; send each document in its own PUT, or all of them as one change set (POST /_changes)',
    );
  });

  it('text/yaml is accepted like application/yaml', async () => {
    const res = await call('PUT', '/meshes/from-text-yaml', 'type: Mesh\nname: from-text-yaml\n', {
      'content-type': 'text/yaml',
    });
    expect(res.statusCode).toBe(201);
  });

  it('Accept: application/yaml answers YAML (resources, lists, errors); JSON stays the default', async () => {
    const yamlGet = await call('GET', '/meshes/default', undefined, { accept: 'application/yaml' });
    expect(yamlGet.headers['content-type']).toBe('application/yaml; charset=utf-8');
    expect(yamlGet.headers.vary).toContain('Accept');
    const json = await call('GET', '/meshes/default');
    expect(json.headers['content-type']).toMatch(/^application\/json/);
    expect(parse(yamlGet.body)).toEqual(json.json());
    // What was read as YAML goes back as it is: the PUT changes nothing but the modification time.
    const back = await call('PUT', '/meshes/default', yamlGet.body, { 'content-type': 'application/yaml' });
    expect(back.statusCode).toBe(200);
    const list = await call('GET', '/meshes', undefined, { accept: 'text/yaml' });
    expect(parse(list.body)).toEqual((await call('GET', '/meshes')).json());
    const error = await call('GET', '/meshes/nope', undefined, { accept: 'application/yaml' });
    expect(error.statusCode).toBe(404);
    expect(parse(error.body)).toEqual({ title: 'Not found', details: 'Mesh "nope" not found' });
  });

  it('a revision past the end names the real head', async () => {
    const head = cp.views.revision();
    const read = await call('GET', `/meshes/default?revision=${head + 1}`);
    expect(read.json().causes).toEqual([
      { field: 'revision', message: `must not be above the head revision ${head}` },
    ]);
    const audit = await call('GET', `/_events?fromRevision=${head + 2}`);
    expect(audit.json().causes).toEqual([
      {
        field: 'fromRevision',
        message: `must not be above ${head + 1}, the next revision (the head revision is ${head})`,
      },
    ]);
    expect((await call('GET', `/_events?fromRevision=${head + 1}`)).statusCode).toBe(200);
  });

  it('counts read as English: a mesh with one data plane proxy', async () => {
    const json = { 'content-type': 'application/json' };
    expect(
      (await call('PUT', '/meshes/one', JSON.stringify({ type: 'Mesh', name: 'one' }), json)).statusCode,
    ).toBe(201);
    const dp = {
      type: 'Dataplane',
      mesh: 'one',
      name: 'dp-1',
      networking: { address: '10.0.0.1', inbound: [{ port: 80, tags: { 'mesh.io/service': 'a' } }] },
    };
    expect((await call('PUT', '/meshes/one/dataplanes/dp-1', JSON.stringify(dp), json)).statusCode).toBe(201);
    const refused = await call('DELETE', '/meshes/one');
    expect(refused.json().details).toContain('still has 1 data plane proxy: delete it first');
  });

  it('reads the preference of an Accept header by q', () => {
    expect(prefersYaml('application/yaml')).toBe(true);
    expect(prefersYaml('application/json, application/yaml;q=0.5')).toBe(false);
    expect(prefersYaml('application/json;q=0.4, text/yaml')).toBe(true);
    expect(prefersYaml('*/*')).toBe(false);
    expect(prefersYaml(undefined)).toBe(false);
  });
});
