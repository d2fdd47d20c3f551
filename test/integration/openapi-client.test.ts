import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { startListeningPlane, tempDir } from '../helpers/control-plane.js';
import { goldenPuts } from '../helpers/golden.js';
import { eventually, startGlobal, startZone, zoneToken } from '../helpers/multizone.js';
import { REPO_ROOT } from '../helpers/process.js';
import { rawAdsClient, rawNode, type RawAdsClient } from '../helpers/xds.js';
import { CLUSTER, LISTENER } from '../../src/xds/type-urls.js';

const run = promisify(execFile);

type Operation = {
  responses: Record<string, { content?: Record<string, unknown> }>;
  requestBody?: { content: Record<string, unknown> };
};
type Doc = {
  paths: Record<string, Partial<Record<'get' | 'put' | 'post' | 'delete', Operation>>>;
  components: Record<string, unknown>;
};

/** A real request and its answer, to be written as a constant typed by the generated client. */
interface Sample {
  path: string;
  method: 'get' | 'put' | 'post';
  url: string;
  /** `request`: the body sent, typed as the request body; else the answer's body. */
  part: 'request' | 'response';
  status: number;
  contentType: 'application/json' | 'text/plain' | 'text/html';
  value: unknown;
}

/** The TypeScript type of a sample in the generated `paths` (openapi-typescript's layout). */
const typeOf = (s: Sample): string => {
  const op = `paths[${JSON.stringify(s.path)}][${JSON.stringify(s.method)}]`;
  return s.part === 'request'
    ? `NonNullable<${op}['requestBody']>['content'][${JSON.stringify(s.contentType)}]`
    : `${op}['responses'][${s.status}]['content'][${JSON.stringify(s.contentType)}]`;
};

/**
 * GETs every documented GET path on `plane`, lists first (their items' names join `names`), then
 * each item path on every name known; every 200 answer becomes a sample. Returns the paths that
 * never answered 200.
 */
async function getEvery(
  plane: ControlPlane,
  doc: Doc,
  names: Set<string>,
  samples: Sample[],
): Promise<string[]> {
  // A GET whose only answer is a stream of server-sent events (`/_status/events`) has no answer to sample.
  const streamOnly = (op: Operation): boolean => {
    const types = Object.keys(op.responses[200]?.content ?? {});
    return types.length === 1 && types[0] === 'text/event-stream';
  };
  const gets = Object.entries(doc.paths)
    .filter(([, item]) => item.get && !streamOnly(item.get))
    .map(([path]) => path);
  const neverOk: string[] = [];
  for (const path of [
    ...gets.filter((p) => !p.includes('{name}')),
    ...gets.filter((p) => p.includes('{name}')),
  ]) {
    const urls = path.includes('{name}')
      ? [...names].map((n) => path.replace('{mesh}', 'default').replace('{name}', n))
      : [path.replace('{mesh}', 'default')];
    let ok = 0;
    for (const url of urls) {
      const answer = await plane.app.inject({ method: 'GET', url });
      if (answer.statusCode !== 200) continue;
      ok += 1;
      const json = answer.headers['content-type']?.toString().startsWith('application/json');
      const value: unknown = json ? answer.json() : answer.body;
      const items = (value as { items?: Array<{ name?: unknown }> }).items;
      if (Array.isArray(items))
        for (const i of items) if (typeof i?.name === 'string' && i.name !== '') names.add(i.name);
      samples.push({
        path,
        method: 'get',
        url,
        part: 'response',
        status: 200,
        contentType: json
          ? 'application/json'
          : answer.headers['content-type']?.toString().startsWith('text/html')
            ? 'text/html'
            : 'text/plain',
        value,
      });
    }
    if (ok === 0) neverOk.push(`GET ${path}`);
  }
  return neverOk;
}

/** The TypeScript compiler's diagnostics of `file`, one line each: `line:col message`. */
function typeCheck(file: string): string[] {
  const program = ts.createProgram([file], {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    types: [],
    // The client's types and JSON values need no DOM: without it, ~0.7 s less of parsing lib files.
    lib: ['lib.es2022.d.ts'],
    skipLibCheck: true,
  });
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : undefined;
    const text = ts.flattenDiagnosticMessageText(d.messageText, '\n').split('\n').slice(0, 3).join(' / ');
    return `${where ? `${where.line + 1}:${where.character + 1}` : '?'} ${text}`;
  });
}

/**
 * A client generated from `GET /openapi.json` by `openapi-typescript` (as docs/api.md says to) is
 * usable: the real answers of every documented GET, of every kind and endpoint family (on a
 * standalone control plane, and on a Global with a zone connected), and the real bodies of every
 * PUT and token request, compile against its types with no error, and validate against their schemas.
 */
describe('a client generated from /openapi.json', () => {
  let cp: ControlPlane;
  let global: ControlPlane;
  let zone: ControlPlane | undefined;
  let ads: RawAdsClient | undefined;
  let dir: ReturnType<typeof tempDir>;
  let globalDir: ReturnType<typeof tempDir>;
  let doc: Doc;

  beforeAll(async () => {
    cp = await startListeningPlane();
    dir = tempDir('mesh-cp-openapi-client-');
    globalDir = tempDir('mesh-cp-openapi-global-');
    global = await startGlobal(globalDir.path);
  });
  afterAll(async () => {
    ads?.close();
    await zone?.close();
    await global?.close();
    await cp?.close();
    dir?.cleanup();
    globalDir?.cleanup();
  });

  const call = (method: string, url: string, payload?: unknown) =>
    cp.app.inject({ method: method as 'GET', url, payload: payload as string });

  it('compiles real answers of every endpoint family against its types, each valid for its schema', async () => {
    const res = await call('GET', '/openapi.json');
    expect(res.statusCode).toBe(200);
    const docFile = join(dir.path, 'openapi.json');
    writeFileSync(docFile, res.body);
    doc = res.json();

    const samples: Sample[] = [];
    const documentedPut = (url: string): string | undefined => {
      const parts = url.split('?')[0].split('/');
      const pattern = [...parts.slice(0, -1), '{name}']
        .join('/')
        .replace(/^\/meshes\/[^/]+\//, '/meshes/{mesh}/');
      return doc.paths[pattern]?.put ? pattern : undefined;
    };

    // A resource of every kind (the golden files' PUTs: sidecars and a gateway proxy, every policy).
    // And a client with an outbound to a service that has an endpoint: its `/xds` dump is not empty.
    const proxy = (name: string, inbound: unknown[], outbound: unknown[] = []) => ({
      url: `/meshes/default/dataplanes/${name}`,
      body: {
        type: 'Dataplane',
        mesh: 'default',
        name,
        networking: { address: '10.0.0.1', inbound, outbound },
      },
    });
    const puts = [
      ...goldenPuts().filter((p) => !p.url.includes('dryRun')),
      proxy('greeter-1', [{ port: 50051, address: '10.0.1.1', tags: { 'mesh.io/service': 'greeter' } }]),
      proxy(
        'client-1',
        [{ port: 9000, tags: { 'mesh.io/service': 'client' } }],
        [{ port: 10001, tags: { 'mesh.io/service': 'greeter' } }],
      ),
    ];
    puts.sort(
      (a, b) =>
        Number(b.url.startsWith('/meshes/') && b.url.split('/').length === 3) -
        Number(a.url.startsWith('/meshes/') && a.url.split('/').length === 3),
    );
    for (const { url, body } of puts) {
      const written = await call('PUT', url, body);
      expect([200, 201], `${url}: ${written.body}`).toContain(written.statusCode);
      const path = documentedPut(url);
      expect(path, `PUT ${url} is documented`).toBeDefined();
      const contentType = 'application/json';
      samples.push({
        path: path as string,
        method: 'put',
        url,
        part: 'request',
        status: 0,
        contentType,
        value: body,
      });
      samples.push({
        path: path as string,
        method: 'put',
        url,
        part: 'response',
        status: written.statusCode,
        contentType,
        value: written.json(),
      });
    }
    // Every history entry shape: an update and a delete too.
    const update = puts.find((p) => p.url.includes('/circuit-breakers/'));
    expect((await call('PUT', update?.url as string, update?.body)).statusCode).toBe(200);
    expect(
      (
        await call('PUT', '/meshes/default/secrets/gone', {
          type: 'Secret',
          mesh: 'default',
          name: 'gone',
          data: 'YQ==',
        })
      ).statusCode,
    ).toBe(201);
    expect((await call('DELETE', '/meshes/default/secrets/gone')).statusCode).toBe(200);

    // Tokens, as a client sends them.
    const tokenBodies: Record<string, unknown> = {
      user: { name: 'alice', groups: ['team-a'], validFor: '1h' },
      dataplane: { mesh: 'default', name: 'web-1', tags: { 'kuma.io/service': ['web'] } },
      zone: { zone: 'zone-1', scope: ['cp'], validFor: '1h' },
      'zone-ingress': { zone: 'zone-1', validFor: '1h' },
    };
    for (const [type, body] of Object.entries(tokenBodies)) {
      const path = `/tokens/${type}`;
      const token = await call('POST', path, body);
      expect(token.statusCode, `${path}: ${token.body}`).toBe(200);
      samples.push({
        path,
        method: 'post',
        url: path,
        part: 'request',
        status: 0,
        contentType: 'application/json',
        value: body,
      });
      samples.push({
        path,
        method: 'post',
        url: path,
        part: 'response',
        status: 200,
        contentType: 'text/plain',
        value: token.body,
      });
    }

    // client-1 connected over xDS: its listener ACKed, its cluster NACKed. Its dump then says when
    // each was sent (`last_updated`) and what the client refused (`error_state`).
    const issued = await call('POST', '/tokens/dataplane', { mesh: 'default', name: 'client-1' });
    type Dump = { configs: Array<{ dynamic_active_clusters?: Array<{ cluster: { name: string } }> }> };
    const before = (await call('GET', '/meshes/default/dataplanes/client-1/xds')).json() as Dump;
    const clusters = (before.configs[3].dynamic_active_clusters ?? []).map((c) => c.cluster.name);
    expect(clusters.length).toBeGreaterThan(0);
    ads = rawAdsClient(cp.ports.xds);
    ads.send({
      type_url: LISTENER,
      resource_names: ['greeter'],
      node: rawNode('default.client-1', { 'dataplane.token': issued.body }),
    });
    const lds = await ads.next();
    ads.send({
      type_url: LISTENER,
      resource_names: ['greeter'],
      response_nonce: lds.nonce,
      version_info: lds.version_info,
    });
    ads.send({ type_url: CLUSTER, resource_names: clusters });
    const cds = await ads.next();
    ads.send({
      type_url: CLUSTER,
      resource_names: clusters,
      response_nonce: cds.nonce,
      version_info: '',
      error_detail: { code: 3, message: 'cluster greeter: unsupported lb_policy' },
    });
    await eventually(
      async () =>
        (await call('GET', '/meshes/default/dataplanes/client-1/xds')).body.includes('"error_state"'),
      5000,
      'the NACK in the dump',
    );

    // Every documented GET: each answers 200 at least once.
    const candidates = new Set<string>(['default']);
    for (const p of puts) candidates.add(p.url.split('?')[0].split('/').at(-1) as string);
    const neverOk = await getEvery(cp, doc, candidates, samples);

    // And as a Global with a zone connected: its zone statuses, a zone's proxy synced, and its
    // views answered by the zone over the sync session.
    const token = await zoneToken(global, 'zone-1');
    zone = await startZone(global, globalDir.path, 'zone-1', token);
    const zoneProxy = proxy('zone-web-1', [{ port: 8080, tags: { 'mesh.io/service': 'zone-web' } }]);
    // The zone takes the proxy once mesh `default` has come from Global.
    const zonePlane = zone;
    await eventually(
      async () =>
        (await zonePlane.app.inject({ method: 'PUT', url: zoneProxy.url, payload: zoneProxy.body }))
          .statusCode === 201,
      15_000,
      'zone-web-1 written in the zone',
    );
    await eventually(
      async () => {
        const zones = (await global.app.inject({ method: 'GET', url: '/status/zones' })).json() as Array<{
          active: boolean;
        }>;
        const proxies = (
          await global.app.inject({ method: 'GET', url: '/meshes/default/dataplanes' })
        ).json() as { total: number };
        return zones[0]?.active && proxies.total > 0;
      },
      15_000,
      'zone-1 connected and its proxy synced',
    );
    await getEvery(global, doc, new Set(['default', 'zone-1']), samples);
    expect.soft(neverOk, 'documented GETs that never answer 200').toEqual([]);

    // The families the issue names are all among them.
    const got = (re: RegExp) => samples.filter((s) => s.part === 'response' && re.test(s.path)).length;
    for (const family of [
      /^\/$/,
      /^\/config$/,
      /^\/versions$/,
      /^\/policies$/,
      /^\/status\/zones$/,
      /^\/zones\+insights\/\{name\}$/,
      /^\/tokens\//,
      /^\/_events$/,
      /\/_history$/,
      /^\/meshes\/\{mesh\}\/dataplanes\/\{name\}\/policies$/,
      /^\/meshes\/\{mesh\}\/dataplanes\/\{name\}\/rules$/,
      /^\/meshes\/\{mesh\}\/meshgateways\/\{name\}\/dataplanes$/,
      /^\/meshes\/\{mesh\}\/traffic-permissions\/\{name\}\/dataplanes$/,
      /\/xds$/,
      /^\/meshes\/\{mesh\}\/dataplanes\+insights\/\{name\}$/,
      /^\/mesh-insights$/,
      /^\/global-insights$/,
      /^\/dataplanes$/,
    ]) {
      expect(got(family), String(family)).toBeGreaterThan(0);
    }

    // Both shapes of the inspect answers, and a dump with resources in it.
    const text = (re: RegExp) =>
      JSON.stringify(samples.filter((s) => s.part === 'response' && re.test(s.path)).map((s) => s.value));
    for (const re of [/\/dataplanes\/\{name\}\/policies$/, /\/traffic-logs\/\{name\}\/dataplanes$/]) {
      expect(text(re)).toContain('"kind":"SidecarDataplane"');
      expect(text(re)).toContain('"kind":"MeshGatewayDataplane"');
    }
    expect(text(/\/xds$/)).toContain('"@type":"type.googleapis.com/envoy.config.cluster.v3.Cluster"');
    expect(text(/\/xds$/)).toContain('"@type":"type.googleapis.com/envoy.config.listener.v3.Listener"');
    expect(text(/\/xds$/)).toContain('"last_updated"');
    expect(text(/\/xds$/)).toContain('"failed_configuration"');
    expect(text(/^\/_events$/)).toContain('"operation":"delete"');
    expect(text(/^\/status\/zones$/)).toContain('"active":true');
    expect(text(/\/dataplanes\/\{name\}\/xds$/)).toContain('"id":"default.zone-web-1"');

    // Every JSON sample also validates against its schema as JSON Schema (formats, enums, bounds).
    // Each component is compiled once and called by reference, not inlined into each of the ~130
    // schemas that use it (half the time here; the same validation).
    const ajv = new Ajv2020({ strict: false, allErrors: true, inlineRefs: false });
    addFormats.default(ajv);
    ajv.addSchema({ $id: 'openapi', components: doc.components });
    const invalid: string[] = [];
    const validators = new Map<string, ValidateFunction>();
    for (const s of samples) {
      if (s.contentType !== 'application/json') continue;
      const op = doc.paths[s.path][s.method] as Operation;
      const content = s.part === 'request' ? op.requestBody?.content : op.responses[String(s.status)].content;
      const schema = (content?.['application/json'] as { schema: unknown }).schema;
      const key = JSON.stringify(schema).replaceAll('"#/components/', '"openapi#/components/');
      const validate = validators.get(key) ?? ajv.compile(JSON.parse(key));
      validators.set(key, validate);
      if (!validate(s.value))
        invalid.push(`${s.method} ${s.url} (${s.part}): ${JSON.stringify(validate.errors?.slice(0, 3))}`);
    }
    expect(invalid.slice(0, 10), `${invalid.length} invalid`).toEqual([]);

    // The generated client, as docs/api.md makes it.
    const typesFile = join(dir.path, 'mesh-cp.ts');
    await run(join(REPO_ROOT, 'node_modules', '.bin', 'openapi-typescript'), [docFile, '-o', typesFile], {
      cwd: dir.path,
    });
    expect(readFileSync(typesFile, 'utf8')).toContain('export interface paths');

    const lines = [`import type { paths } from './mesh-cp.js';`, ''];
    samples.forEach((s, i) => {
      lines.push(`// ${s.method.toUpperCase()} ${s.url} (${s.part})`);
      lines.push(`export const s${i}: ${typeOf(s)} = ${JSON.stringify(s.value, null, 1)};`);
    });
    const answersFile = join(dir.path, 'answers.ts');
    writeFileSync(answersFile, `${lines.join('\n')}\n`);

    const diagnostics = typeCheck(answersFile);
    expect(diagnostics.slice(0, 20), `${diagnostics.length} errors in ${answersFile}`).toEqual([]);
    expect(samples.length).toBeGreaterThan(150);
  }, 120_000);
});
