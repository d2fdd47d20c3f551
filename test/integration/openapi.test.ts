import { Validator } from '@seriousme/openapi-schema-validator';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registeredRoutes } from '../../src/api/allowed-methods.js';
import { registry } from '../../src/resources/registry.js';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { startTestPlane, tempDir } from '../helpers/control-plane.js';
import { samplesBySegment } from '../helpers/golden.js';
import { REPO_ROOT } from '../helpers/process.js';

type Json = Record<string, unknown>;
type Operation = { requestBody?: { content: Record<string, { schema: Json }> }; responses: Json };

const METHODS = ['get', 'put', 'post', 'delete'] as const;
const PROBE = { mesh: 'default', name: 'openapi-probe' };

/** A documented path with its parameters filled in: `/meshes/{mesh}/x/{name}` -> `/meshes/default/x/openapi-probe`. */
const concrete = (path: string): string =>
  path.replace(/\{(\w+)\}/g, (_m, p: string) => PROBE[p as keyof typeof PROBE] ?? `unknown-${p}`);

/** `GET /openapi.json` describes the API the server really serves. */
describe('GET /openapi.json', () => {
  let cp: ControlPlane;
  let doc: { openapi: string; paths: Record<string, Partial<Record<string, Operation>>>; components: Json };
  let ajv: Ajv2020;

  const call = (method: string, url: string, payload?: unknown, headers: Record<string, string> = {}) =>
    cp.app.inject({ method: method as 'GET', url, payload: payload as string, headers });

  /**
   * Whether a request reached a route that serves it: not "no such endpoint", not a 405, and not
   * the proxies of a kind that is no policy (`…/dataplanes/{name}/dataplanes`: always 404).
   */
  const served = async (method: string, url: string): Promise<boolean> => {
    const body = method === 'PUT' || method === 'POST' ? {} : undefined;
    const res = await call(method, url, body);
    if (res.statusCode === 405) return false;
    if (res.statusCode !== 404) return true;
    const details = String(res.json().details);
    return !details.startsWith('no such endpoint') && !details.includes('is not inspectable');
  };

  /** The validator of a schema of the document (its `$ref`s point into the document's components). */
  const validators = new Map<string, ValidateFunction>();
  const validatorOf = (schema: Json): ValidateFunction => {
    const key = JSON.stringify(schema).replaceAll('"#/components/', '"openapi#/components/');
    let validate = validators.get(key);
    if (!validate) validators.set(key, (validate = ajv.compile(JSON.parse(key))));
    return validate;
  };

  const responseSchema = (op: Operation, status: number): Json => {
    type Response = { $ref?: string; content: Record<string, { schema: Json }> };
    let response = op.responses[String(status)] as Response;
    // Error answers are shared: `#/components/responses/<Name>`.
    if (response.$ref)
      response = (doc.components.responses as Json)[response.$ref.split('/').at(-1) as string] as Response;
    return response.content['application/json'].schema;
  };

  beforeAll(async () => {
    cp = await startTestPlane();
    const res = await call('GET', '/openapi.json');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    doc = res.json();
    ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema({ $id: 'openapi', components: doc.components });
  });
  afterAll(async () => {
    await cp.close();
  });

  it('is a valid OpenAPI 3.1 document, and the same text on every request', async () => {
    const result = await new Validator().validate(doc as unknown as Parameters<Validator['validate']>[0]);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(doc.openapi).toBe('3.1.0');
    const again = await call('GET', '/openapi.json');
    expect(again.body).toBe(JSON.stringify(doc));
    // Same auth as other reads: an anonymous caller (not loopback) reads it too.
    const remote = await cp.app.inject({ method: 'GET', url: '/openapi.json', remoteAddress: '192.0.2.7' });
    expect(remote.statusCode).toBe(200);
  });

  it('is clean for `redocly lint` (the recommended rules), run as a process with no network', async () => {
    const dir = tempDir('mesh-cp-redocly-');
    try {
      const file = join(dir.path, 'openapi.json');
      writeFileSync(file, JSON.stringify(doc));
      // From the repository: its redocly.yaml, if any, is the configuration. Telemetry and the
      // update notice off: the lint needs (and makes) no network request.
      const { stdout } = await promisify(execFile)(
        join(REPO_ROOT, 'node_modules', '.bin', 'redocly'),
        ['lint', file, '--format=json'],
        {
          cwd: REPO_ROOT,
          env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
        },
      ).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? String(err) }));
      const report = JSON.parse(stdout) as {
        totals: { errors: number; warnings: number };
        problems: Array<{ ruleId: string; message: string; location: Array<{ pointer: string }> }>;
      };
      const problems = report.problems.map((p) => `${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`);
      expect(problems.slice(0, 20), `${problems.length} problems`).toEqual([]);
      expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    } finally {
      dir.cleanup();
    }
  }, 60_000);

  it('names its servers, and keywords of its own only as `x-` extensions (`x-inert`)', () => {
    const servers = (doc as unknown as { servers: Array<{ url: string; variables: Json }> }).servers;
    expect(servers[0].url).toBe('{scheme}://{host}:{port}');
    expect(servers[0].variables).toMatchObject({ port: { default: '5681' } });
    const text = JSON.stringify(doc);
    expect(text).toContain('"x-inert":true');
    expect(text).not.toContain('"inert":');
  });

  it('documents every route the server registers, and no route it does not serve', async () => {
    const documented = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const method of METHODS) if (item[method]) documented.add(`${method.toUpperCase()} ${path}`);
    }
    // Every documented operation reaches a route that serves it.
    const notServed: string[] = [];
    for (const op of documented) {
      const [method, path] = op.split(' ');
      if (!(await served(method, concrete(path)))) notServed.push(op);
    }
    expect(notServed).toEqual([]);

    // Every registered route, its `:seg` tried with every segment the registry names (and one it
    // does not), is documented wherever it serves a request.
    const segments = new Set(['no-such-segment']);
    for (const d of registry.all) for (const s of [d.path, ...d.aliases, ...d.itemAliases]) segments.add(s);
    const routes = registeredRoutes(cp.app).filter(
      (r) => r.method !== 'HEAD' && r.method !== 'OPTIONS' && !r.url.includes('*'),
    );
    expect(routes.length).toBeGreaterThan(20);
    const missing: string[] = [];
    let expanded = 0;
    for (const { method, url } of routes) {
      for (const seg of url.includes(':seg') ? segments : [undefined]) {
        const pattern = seg === undefined ? url : url.replace(':seg', seg);
        const path = pattern.replace(/:(\w+)/g, '{$1}');
        if (!(await served(method, concrete(path)))) continue;
        expanded += 1;
        if (!documented.has(`${method} ${path}`)) missing.push(`${method} ${path}`);
      }
    }
    expect(missing).toEqual([]);
    // Each documented operation was found from a registered route (nothing documented beyond them).
    expect(expanded).toBeGreaterThanOrEqual(documented.size);
  });

  /**
   * PUTs a valid body of every writable kind (the golden files' PUT requests) to each documented
   * PUT of its collection, checking body and answer against the document; returns the items written.
   */
  const writeSamples = async (): Promise<Array<{ path: string; url: string }>> => {
    const samples = samplesBySegment();
    const written: Array<{ path: string; url: string }> = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      const put = item.put;
      const seg = path.split('/').at(-2) as string;
      if (!put?.requestBody || !path.endsWith('/{name}') || !samples.has(seg)) continue;
      const sample = structuredClone(samples.get(seg) as Json);
      const url = path
        .replace('{mesh}', String(sample.mesh ?? 'default'))
        .replace('{name}', String(sample.name));
      const validate = validatorOf(put.requestBody.content['application/json'].schema);
      expect(validate(sample), `${path}: ${JSON.stringify(validate.errors)}`).toBe(true);
      const res = await call('PUT', url, sample);
      expect([200, 201], `${url}: ${res.body}`).toContain(res.statusCode);
      const answer = validatorOf(responseSchema(put, res.statusCode));
      expect(answer(res.json()), `${url}: ${JSON.stringify(answer.errors)}`).toBe(true);
      written.push({ path, url });
    }
    return written;
  };

  it('holds in every mode: a Global and a zone control plane register the same routes', async () => {
    const routesOf = (plane: ControlPlane) =>
      registeredRoutes(plane.app)
        .map((r) => `${r.method} ${r.url}`)
        .sort();
    const standalone = routesOf(cp);
    const modes: Array<Record<string, string>> = [
      { MESH_MODE: 'global' },
      {
        MESH_MODE: 'zone',
        MESH_MULTIZONE_ZONE_NAME: 'zone-1',
        MESH_MULTIZONE_ZONE_GLOBAL_ADDRESS: 'grpcs://127.0.0.1:1',
      },
    ];
    for (const env of modes) {
      const other = await startTestPlane(env);
      try {
        expect(routesOf(other), env.MESH_MODE).toEqual(standalone);
      } finally {
        await other.close();
      }
    }
  });

  it('a valid body of every writable kind validates against its documented schema, is accepted, and reads back as documented', async () => {
    const written = await writeSamples();
    // Every stored kind has a sample in the golden files (TrafficPermission twice: its alias).
    expect(new Set(written.map((w) => w.path.split('/').at(-2))).size).toBeGreaterThanOrEqual(
      registry.stored.length,
    );
    for (const { path, url } of written) {
      const res = await call('GET', url);
      expect(res.statusCode, url).toBe(200);
      const validate = validatorOf(responseSchema(doc.paths[path]?.get as Operation, 200));
      expect(validate(res.json()), `${url}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }

    // An unknown field: refused by the schema and by the server alike.
    const mesh = doc.paths['/meshes/{name}']?.put as Operation;
    const validate = validatorOf(mesh.requestBody?.content['application/json'].schema as Json);
    const bad = { type: 'Mesh', name: 'typo', mtlss: {} };
    expect(validate(bad)).toBe(false);
    const res = await call('PUT', '/meshes/typo?dryRun=true', bad);
    expect(res.statusCode).toBe(400);
    expect(res.json().causes).toEqual([{ field: 'mtlss', message: 'unknown field' }]);
    expect(validatorOf(responseSchema(mesh, 400))(res.json())).toBe(true);
  });

  it('a change set, its answer, its refusal and the audit entries it writes validate against their schemas', async () => {
    const op = doc.paths['/_changes'].post as Operation & {
      requestBody: { content: Record<string, { schema: Json }> };
    };
    const body: { items: Array<Record<string, unknown>> } = {
      items: [
        { type: 'Mesh', name: 'openapi-set' },
        { upsert: { type: 'Mesh', name: 'openapi-set-2' }, ifMatch: '*' },
        { delete: { type: 'Mesh', name: 'openapi-set-2' } },
      ],
    };
    const request = validatorOf(op.requestBody.content['application/json'].schema);
    expect(request(body), JSON.stringify(request.errors)).toBe(true);
    const json = { 'content-type': 'application/json' };
    const refused = await call('POST', '/_changes', JSON.stringify(body), json);
    expect(refused.statusCode).toBe(412);
    const error = validatorOf(responseSchema(op, 412));
    expect(error(refused.json()), JSON.stringify(error.errors)).toBe(true);
    expect(refused.json().item).toMatchObject({ index: 1, kind: 'Mesh', name: 'openapi-set-2' });
    body.items[1] = { upsert: { type: 'Mesh', name: 'openapi-set-2' } };
    const res = await call('POST', '/_changes', JSON.stringify(body), json);
    expect(res.statusCode, res.body).toBe(200);
    const answer = validatorOf(responseSchema(op, 200));
    expect(answer(res.json()), JSON.stringify(answer.errors)).toBe(true);
    const events = await call('GET', `/_events?changeSet=${res.json().changeSet as string}`);
    const list = validatorOf(responseSchema(doc.paths['/_events'].get as Operation, 200));
    expect(events.json().total).toBeGreaterThan(2);
    expect(list(events.json()), JSON.stringify(list.errors)).toBe(true);
  });

  it('the answers of the lists and control-plane reads validate against their documented schemas', async () => {
    await writeSamples();
    let checked = 0;
    for (const [path, item] of Object.entries(doc.paths)) {
      const get = item.get;
      // The GUI's page is HTML (test/integration/gui-serving.test.ts reads it).
      // `/_status/events` is a stream only (test/integration/status-watch.test.ts reads it).
      if (!get || path.includes('{name}') || ['/openapi.json', '/gui', '/_status/events'].includes(path))
        continue;
      const res = await call('GET', concrete(path));
      expect(res.statusCode, path).toBe(200);
      const validate = validatorOf(responseSchema(get, 200));
      expect(validate(res.json()), `${path}: ${JSON.stringify(validate.errors)}`).toBe(true);
      checked += 1;
    }
    expect(checked).toBeGreaterThan(30);
  });
});
