import type { ResourceDescriptor } from '../resources/descriptor.js';
import type { Registry } from '../resources/registry.js';
import { TOKEN_REQUESTS } from '../tokens/requests.js';
import { TOKEN_TYPES } from '../tokens/token-types.js';
import type { Json } from './openapi-components.js';
import {
  buildComponents,
  changeSchemaName,
  errorResponseName,
  jsonOrYaml,
  jsonSchemaOf,
  pascal,
  ref,
  schemaName,
} from './openapi-components.js';
import { inspectSchemas } from './openapi-inspect.js';
import type { PathScope } from './kind-paths.js';
import { kindSegments } from './kind-paths.js';
import { STATUS_FILTER_KINDS, TAG_FILTER_KINDS } from './list-query.js';

type Method = 'get' | 'put' | 'post' | 'delete';

const param = (n: string): Json => ref('parameters', n);
/** The error answers of an operation: the statuses it names, and `default` for any other. */
const errors = (...statuses: number[]): Json => ({
  ...Object.fromEntries(statuses.map((s) => [String(s), ref('responses', errorResponseName(s))])),
  default: ref('responses', 'Error'),
});

/** The error statuses the operations name (4xx and 5xx keys): each needs its response component. */
function errorStatuses(paths: Record<string, Partial<Record<Method, Json>>>): Set<number> {
  const out = new Set<number>();
  for (const item of Object.values(paths))
    for (const op of Object.values(item))
      for (const key of Object.keys(op.responses as Json)) if (Number(key) >= 400) out.add(Number(key));
  return out;
}
const READ_ERRORS = [400, 401, 403, 404];
// 409: other instances kept changing the resource; 503: the event log cannot take the write.
const WRITE_ERRORS = [400, 401, 403, 404, 405, 409, 412, 413, 415, 503, 504];
const revisionHeader = { 'x-mesh-revision': ref('headers', 'Revision') };
const etagHeaders = { ...revisionHeader, ETag: ref('headers', 'ETag') };
/** The headers of a write's answer: a dry run writes nothing and has no ETag. */
const written = {
  ...revisionHeader,
  ETag: { ...ref('headers', 'ETag'), description: 'The revision written (absent on a dry run)' },
};

const ok = (description: string, schema: Json, headers: Json = revisionHeader): Json => ({
  description,
  headers,
  content: jsonOrYaml(schema),
});
const text = (description: string): Json => ({
  description,
  headers: revisionHeader,
  content: { 'text/plain': { schema: { type: 'string' } } },
});

/** Where the collection of a segment sits: `/meshes/{mesh}/<seg>` or `/<seg>`. */
const collection = (scope: PathScope, seg: string): string =>
  scope === 'mesh' ? `/meshes/{mesh}/${seg}` : `/${seg}`;

/** A write's answer schema: its own, or with `impact` added when the write asked for it. */
const withImpact = (schema: Json): Json => ({ anyOf: [schema, ref('schemas', 'WithImpact')] });

/** The operations of the document, by path and method; adding one twice is a bug of this file. */
function createPaths() {
  const paths: Record<string, Partial<Record<Method, Json>>> = {};
  const ids = new Set<string>();
  return {
    paths,
    add(path: string, method: Method, operation: Json & { operationId: string }): void {
      const item = (paths[path] ??= {});
      if (item[method]) throw new Error(`${method.toUpperCase()} ${path} is documented twice`);
      if (ids.has(operation.operationId))
        throw new Error(`operationId ${operation.operationId} is used twice`);
      ids.add(operation.operationId);
      const params = [...path.matchAll(/\{(\w+)\}/g)].map((m) => param(m[1]));
      const own = (operation.parameters as Json[] | undefined) ?? [];
      item[method] = { ...operation, parameters: [...params, ...own] };
    },
  };
}

/** The label of a kind in summaries: its catalogue name or its kind. */
const label = (d: ResourceDescriptor): string => d.catalogue?.singularDisplayName ?? d.kind;

type Add = ReturnType<typeof createPaths>['add'];

/** One kind under one of its URL segments, as each resource operation names and links it. */
interface KindAt {
  d: ResourceDescriptor;
  scope: PathScope;
  seg: string;
  /** `ViaX` in the operation ids of an alias segment, else empty. */
  alias: string;
  /** What the summaries of an alias segment add (`x` is an alias of `y`), else empty. */
  aliasNote: string;
  tags: string[];
  kindRef: Json;
  /** The item path: `<collection>/{name}`. */
  item: string;
}

function kindAt(d: ResourceDescriptor, scope: PathScope, seg: string): KindAt {
  const viaAlias = seg !== d.path;
  return {
    d,
    scope,
    seg,
    alias: viaAlias ? `Via${pascal(seg)}` : '',
    aliasNote: viaAlias ? ` (\`${seg}\` is an alias of \`${d.path}\`)` : '',
    tags: [d.kind],
    kindRef: ref('schemas', schemaName(d)),
    item: `${collection(scope, seg)}/{name}`,
  };
}

/** `GET /<seg>` of a singleton kind: the one item of this control plane. */
function addSingletonRead(add: Add, k: KindAt): void {
  add(`/${k.seg}`, 'get', {
    operationId: `get${k.d.kind}`,
    tags: k.tags,
    summary: `The ${k.d.kind} of this control plane`,
    parameters: [param('revision'), param('at')],
    responses: { 200: ok(k.d.kind, k.kindRef), ...errors(...READ_ERRORS) },
  });
}

/** `GET <collection>`: a page of the kind's items (of every mesh at the top level for a mesh kind). */
function addList(add: Add, { d, scope, seg, alias, aliasNote, tags }: KindAt): void {
  const allMeshes = scope === 'root' && d.scope === 'mesh';
  add(collection(scope, seg), 'get', {
    operationId: `list${d.kind}${allMeshes ? 'AllMeshes' : ''}${alias}`,
    tags,
    summary: `List ${label(d)} items${allMeshes ? ' of every mesh' : ''}${aliasNote}`,
    description: 'Sorted by mesh, then name. Paginated with `size` and `offset`; `next` links the next page.',
    parameters: [
      param('size'),
      param('offset'),
      param('nameFilter'),
      ...(TAG_FILTER_KINDS.has(d.kind) ? [param('tag')] : []),
      ...(STATUS_FILTER_KINDS.has(d.kind) ? [param('gateway'), param('status')] : []),
      param('revision'),
      param('at'),
    ],
    responses: {
      200: ok(`A page of ${d.kind} items`, ref('schemas', `${schemaName(d)}List`)),
      ...errors(...READ_ERRORS),
    },
  });
}

/** `GET <item>`: one item. */
function addItemRead(add: Add, { d, alias, aliasNote, tags, kindRef, item }: KindAt): void {
  add(item, 'get', {
    operationId: `get${d.kind}${alias}`,
    tags,
    summary: `Get one ${label(d)}${aliasNote}`,
    parameters: [param('revision'), param('at')],
    responses: {
      200: ok(d.kind, kindRef, d.derived ? revisionHeader : etagHeaders),
      ...errors(...READ_ERRORS),
    },
  });
}

/** `PUT` and `DELETE <item>` of a stored kind (a derived kind's are 405, not documented operations). */
function addItemWrites(add: Add, { d, alias, aliasNote, tags, kindRef, item }: KindAt): void {
  add(item, 'put', {
    operationId: `put${d.kind}${alias}`,
    tags,
    summary: `Create or replace a ${label(d)}${aliasNote}`,
    description:
      'An upsert: the body replaces the whole resource. `type`, `name` (and `mesh`) must equal the URL.',
    parameters: [
      param('dryRun'),
      param('ifMatch'),
      param('ifNoneMatch'),
      param('impact'),
      param('size'),
      param('offset'),
    ],
    requestBody: { required: true, content: jsonOrYaml(kindRef) },
    responses: {
      200: ok('Updated: the stored resource (with `impact` when asked)', withImpact(kindRef), written),
      201: ok('Created: the stored resource (with `impact` when asked)', withImpact(kindRef), written),
      ...errors(...WRITE_ERRORS),
    },
  });
  add(item, 'delete', {
    operationId: `delete${d.kind}${alias}`,
    tags,
    summary: `Delete a ${label(d)}${aliasNote}`,
    parameters: [param('dryRun'), param('ifMatch'), param('impact'), param('size'), param('offset')],
    responses: {
      200: ok('Deleted: `{}` (with `impact` when asked)', withImpact(ref('schemas', 'Empty')), written),
      ...errors(...WRITE_ERRORS),
    },
  });
}

/** `<item>/_history` and `<item>/_revert` of a stored kind. */
function addItemHistory(add: Add, { d, alias, aliasNote, tags, kindRef, item }: KindAt): void {
  add(`${item}/_history`, 'get', {
    operationId: `history${d.kind}${alias}`,
    tags: [...tags, 'History'],
    summary: `The changes of one ${label(d)}, oldest first (deleted ones too)${aliasNote}`,
    parameters: [param('size'), param('offset'), param('includeSecretData')],
    responses: {
      200: ok('A page of changes', ref('schemas', `${changeSchemaName(d)}List`)),
      ...errors(...READ_ERRORS),
    },
  });
  add(`${item}/_revert`, 'post', {
    operationId: `revert${d.kind}${alias}`,
    tags: [...tags, 'History'],
    summary: `Write back the state a ${label(d)} had at a revision${aliasNote}`,
    description:
      'A write like a PUT (or a DELETE when the resource did not exist at `toRevision`). Send ' +
      '`Content-Type: application/json` (or a YAML type) with an empty body: a POST without it is ' +
      '415, so that a web page cannot make a browser send one.',
    parameters: [param('toRevision'), param('dryRun'), param('ifMatch')],
    requestBody: { required: false, content: jsonOrYaml(ref('schemas', 'Empty')) },
    responses: {
      200: ok(
        'Reverted: the stored resource, or `{}` when deleted',
        { anyOf: [kindRef, ref('schemas', 'Empty')] },
        written,
      ),
      201: ok('Re-created: the stored resource', kindRef, written),
      ...errors(...WRITE_ERRORS),
    },
  });
}

/**
 * `<item>/dataplanes`: the proxies a policy affects (spec 4.9). A gateway lists those it selects
 * instead (addFixedPaths); other kinds (Dataplane, Secret, ExternalService) are 404 there.
 */
function addAffectedProxies(add: Add, { d, alias, tags, item }: KindAt): void {
  add(`${item}/dataplanes`, 'get', {
    operationId: `inspect${d.kind}Dataplanes${alias}`,
    tags: [...tags, 'Inspect'],
    summary: `The proxies this ${label(d)} applies to (spec 4.9)`,
    parameters: [param('size'), param('offset'), param('revision'), param('at')],
    responses: {
      200: ok('A page of proxies', ref('schemas', 'AffectedDataplaneList')),
      ...errors(...READ_ERRORS),
    },
  });
}

/**
 * The operations of the resource routes, generated from the same segment table the routes look
 * kinds up in (kind-paths.ts): lists, items, writes, history, revert and the proxies a policy affects.
 */
function addResourcePaths(registry: Registry, add: Add): void {
  for (const { use, scope, seg, desc } of kindSegments(registry)) {
    const k = kindAt(desc, scope, seg);
    if (use === 'list' && desc.singleton) addSingletonRead(add, k);
    else if (use === 'list') addList(add, k);
    else if (use === 'itemRead') addItemRead(add, k);
    else if (use === 'item' && !desc.derived) addItemWrites(add, k);
    else if (use === 'stored') {
      addItemHistory(add, k);
      if (scope === 'mesh' && desc.isPolicy && !desc.selectsProxies) addAffectedProxies(add, k);
    }
  }
}

/** A `GET` of no kind: its answer, the read errors, and the parameters given. */
function reader(add: Add) {
  return (
    path: string,
    operationId: string,
    tag: string,
    summary: string,
    response: Json,
    parameters: Json[] = [],
  ): void =>
    add(path, 'get', {
      operationId,
      tags: [tag],
      summary,
      parameters,
      responses: { 200: response, ...errors(...READ_ERRORS) },
    });
}

/** The control plane's own routes: who it is, config, versions, catalogue, zones, GUI, this document. */
function addControlPlanePaths(add: Add): void {
  const read = reader(add);
  const cp = 'Control plane';
  read('/', 'getInfo', cp, 'Who this control plane is', ok('Info', ref('schemas', 'Info')));
  read(
    '/config',
    'getConfig',
    cp,
    'The effective configuration, secrets masked',
    ok('Config', ref('schemas', 'Config')),
  );
  read(
    '/versions',
    'getVersions',
    cp,
    'Data plane and proxy versions this build supports',
    ok('Versions', ref('schemas', 'Versions')),
  );
  read(
    '/policies',
    'getPolicies',
    cp,
    'The policy catalogue',
    ok('Catalogue', ref('schemas', 'PolicyCatalogue')),
  );
  read(
    '/status/zones',
    'getZoneStatuses',
    cp,
    'The zones of a Global control plane and whether they are connected',
    ok('Zones', { type: 'array', items: ref('schemas', 'ZoneStatus') }),
  );
  read(
    '/_identity',
    'getIdentity',
    cp,
    'Who the caller is and the roles it holds (open to every caller: it tells only about the caller)',
    { description: 'The caller', content: jsonOrYaml(ref('schemas', 'Caller')) },
  );
  add('/_status/events', 'get', {
    operationId: 'watchProxyStatus',
    tags: ['Proxies'],
    summary: 'Data plane proxies going online and offline, as server-sent events',
    description:
      'One `event: status` with `{mesh, name, online}` when a proxy connects or its last stream ends (runtime status, never in the audit log); counter updates are not sent, and nothing is replayed: read the current state first. A comment heartbeat as `/_events` has. HEAD is not served.',
    responses: {
      200: {
        description: 'A stream of status changes',
        content: { 'text/event-stream': { schema: { type: 'string', description: 'Server-sent events' } } },
      },
      ...errors(...READ_ERRORS),
    },
  });
  add('/gui', 'get', {
    operationId: 'getGui',
    tags: [cp],
    summary: 'The web GUI (an HTML page; its files are under /gui/assets/, its views under /gui/…)',
    description:
      'Served when `apiServer.gui.enabled` is true (the default), to every caller: the page and its files hold no data. The GUI calls this API as its user does.',
    security: [{}],
    responses: {
      200: { description: 'The GUI page', content: { 'text/html': { schema: { type: 'string' } } } },
      // 400: a Host header that is not host[:port]; 503: the GUI's files were not built.
      ...errors(400, 503),
    },
  });
  read('/openapi.json', 'getOpenApi', cp, 'This document', {
    description: 'OpenAPI 3.1',
    headers: revisionHeader,
    content: jsonOrYaml({ type: 'object', additionalProperties: true }),
  });
}

/** The audit log (`/_events`) and change sets (`/_changes`, their revert). */
function addAuditAndChangeSetPaths(add: Add): void {
  add('/_events', 'get', {
    operationId: 'listEvents',
    tags: ['History'],
    summary: 'The audit log: every change, oldest first; with `Accept: text/event-stream`, a live stream',
    description:
      'As a list: paginated like other lists. As a stream: the backlog from `fromRevision`, then live changes, one SSE event per log entry (`id:` its revision, `data:` the entry as JSON), a comment heartbeat every 15 s. Callers see only entries of what they may read. HEAD is not served.',
    parameters: [
      param('fromRevision'),
      param('eventKind'),
      param('eventMesh'),
      param('eventName'),
      param('eventActor'),
      param('eventChangeSet'),
      param('includeSecretData'),
      param('size'),
      param('offset'),
      param('lastEventId'),
    ],
    responses: {
      200: {
        description: 'A page of entries, or a stream of them',
        headers: revisionHeader,
        content: {
          ...jsonOrYaml(ref('schemas', 'EventList')),
          'text/event-stream': { schema: { type: 'string', description: 'Server-sent events' } },
        },
      },
      ...errors(...READ_ERRORS),
    },
  });
  const setAnswer = ok(
    'The set, decided (and written, unless a dry run)',
    ref('schemas', 'ChangeSetResult'),
    revisionHeader,
  );
  add('/_changes', 'post', {
    operationId: 'applyChangeSet',
    tags: ['History'],
    summary:
      'A change set: several upserts and deletes, decided in order and written all together or not at all',
    description:
      'Each item is decided as its own PUT or DELETE would be (mode, role, validation, If-Match), on the state the items before it left (a new mesh, then what goes in it). The entries are appended as one group: consecutive revisions, one actor, one `changeSet` id that history, `/_events`, watch streams and audit show. The first item refused refuses the set (nothing is written); the error names it (`item`: index, kind, mesh, name) and its `causes` fields start with `items[i]`. A YAML body may be several documents, one item each. At most 1,000 items.',
    parameters: [param('dryRun'), param('impact'), param('size'), param('offset')],
    requestBody: { required: true, content: jsonOrYaml(ref('schemas', 'ChangeSet')) },
    responses: { 200: setAnswer, ...errors(...WRITE_ERRORS) },
  });
  add('/_changes/{id}/_revert', 'post', {
    operationId: 'revertChangeSet',
    tags: ['History'],
    summary: 'Undo a change set, as one new change set',
    description:
      'Puts every resource the set touched back to its state just before the set (deleting what did not exist then), in reverse order, as one new change set. Each item expects the state the set left (If-Match on its revision): a resource changed since makes the revert 412, naming it. Send `Content-Type: application/json` with an empty body.',
    parameters: [param('dryRun'), param('impact'), param('size'), param('offset')],
    requestBody: { required: false, content: jsonOrYaml(ref('schemas', 'Empty')) },
    responses: { 200: setAnswer, ...errors(...WRITE_ERRORS) },
  });
}

/**
 * A proxy's views of no kind: its policies and rules, its config timeline and bootstrap, the proxies
 * of a gateway, and what each proxy is served.
 */
function addProxyViewPaths(registry: Registry, add: Add): void {
  const read = reader(add);
  const proxy = '/meshes/{mesh}/dataplanes/{name}';
  read(
    `${proxy}/policies`,
    'inspectDataplanePolicies',
    'Inspect',
    'The policies that apply to a proxy (spec 4.9)',
    ok('Matched policies', ref('schemas', 'DataplanePolicies')),
    [param('revision'), param('at')],
  );
  read(
    `${proxy}/rules`,
    'inspectDataplaneRules',
    'Inspect',
    'The targetRef rules of a proxy (spec 4.9)',
    ok('Rules', ref('schemas', 'Rules')),
    [param('revision'), param('at')],
  );
  read(
    `${proxy}/xds/_history`,
    'getDataplaneConfigTimeline',
    'History',
    "A proxy's config timeline: the revisions at which the config it would be served changed, each with the write that changed it (not on Global)",
    ok('A page of config changes', ref('schemas', 'ConfigTimelineList')),
    [param('size'), param('offset'), param('from'), param('to')],
  );
  read(
    `${proxy}/bootstrap`,
    'getDataplaneBootstrap',
    'Proxies',
    'A proxyless gRPC bootstrap file for a proxy (no token)',
    ok('Bootstrap', ref('schemas', 'DataplaneBootstrap')),
  );
  for (const d of registry.all.filter((k) => k.selectsProxies)) {
    read(
      `/meshes/{mesh}/${d.path}/{name}/dataplanes`,
      `inspect${d.kind}Dataplanes`,
      'Inspect',
      `The built-in gateway proxies a ${d.catalogue?.singularDisplayName.toLowerCase() ?? d.kind} configures (spec 4.9)`,
      ok('A page of proxies', ref('schemas', 'GatewayDataplaneList')),
      [param('size'), param('offset'), param('revision'), param('at')],
    );
  }
  for (const [base, kind] of [
    [proxy, 'Dataplane'],
    ['/zoneingresses/{name}', 'ZoneIngress'],
    ['/zoneegresses/{name}', 'ZoneEgress'],
  ] as const) {
    read(
      `${base}/xds`,
      `get${kind}Xds`,
      'Proxies',
      `What a ${kind} is served over xDS; as of a revision (\`revision\`, \`at\`), what it would have been served then, with \`pointInTime\` naming the runtime parts left out`,
      ok('Config dump', ref('schemas', 'ConfigDump')),
      [param('revision'), param('at')],
    );
    read(
      `${base}/stats`,
      `get${kind}Stats`,
      'Proxies',
      `The xDS stream counters of a ${kind}`,
      text('Counters'),
    );
    read(
      `${base}/clusters`,
      `get${kind}Clusters`,
      'Proxies',
      `The clusters a ${kind} is served, with endpoints`,
      text('Clusters'),
    );
  }
}

/** `POST` and `PUT /tokens/<type>`: issuing a token of each type. */
function addTokenPaths(add: Add): void {
  for (const type of TOKEN_TYPES) {
    const operation = {
      tags: ['Tokens'],
      summary: `Issue a ${type} token (admin only)`,
      // Inline, not a component: generators (openapi-typescript) make a field with a default
      // required in a component schema, but optional in a request body's own.
      requestBody: { required: true, content: jsonOrYaml(jsonSchemaOf(TOKEN_REQUESTS[type])) },
      responses: {
        200: { description: 'The token (a JWT)', content: { 'text/plain': { schema: { type: 'string' } } } },
        ...errors(400, 401, 403, 415),
      },
    };
    add(`/tokens/${type}`, 'post', { operationId: `issue${pascal(type)}Token`, ...operation });
    add(`/tokens/${type}`, 'put', {
      operationId: `issue${pascal(type)}TokenPut`,
      ...operation,
      description: 'The same as POST (spec 4.8 writes PUT).',
    });
  }
}

/** The routes of no kind: the control plane, the audit log, proxies' views and tokens. */
function addFixedPaths(registry: Registry, add: Add): void {
  addControlPlanePaths(add);
  addAuditAndChangeSetPaths(add);
  addProxyViewPaths(registry, add);
  addTokenPaths(add);
}

/**
 * The OpenAPI 3.1 document of the HTTP API, generated from the registry (every kind's routes and
 * zod schemas) and the few routes of no kind. Built once per process, on the first request of it.
 */
export function buildOpenApiDocument(registry: Registry, version: string): Json {
  const { paths, add } = createPaths();
  addFixedPaths(registry, add);
  addResourcePaths(registry, add);
  const components = buildComponents(registry, errorStatuses(paths));
  Object.assign(components.schemas as Json, inspectSchemas(registry));
  return {
    openapi: '3.1.0',
    info: {
      title: 'mesh-cp HTTP API',
      version,
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      description:
        'The HTTP API of mesh-cp (docs/api.md). Every GET also answers HEAD (headers only), except `/_events`. Every JSON answer is YAML when `Accept` prefers `application/yaml`. Errors are `{title, details, causes?}`.',
    },
    // The listeners' defaults (apiServer.port, apiServer.https.port); paths have no prefix.
    servers: [
      {
        url: '{scheme}://{host}:{port}',
        description: 'A mesh-cp control plane (HTTP on 5681, HTTPS on 5682 by default)',
        variables: {
          scheme: { enum: ['http', 'https'], default: 'http' },
          host: { default: 'localhost', description: 'Its host name or address' },
          port: { default: '5681', description: '`apiServer.port` (HTTP) or `apiServer.https.port` (HTTPS)' },
        },
      },
    ],
    security: [{ bearerAuth: [] }, {}],
    tags: [
      ...registry.all.map((d) => ({ name: d.kind, description: tagDescription(d) })),
      { name: 'Control plane', description: 'Who this control plane is, its configuration and catalogue' },
      { name: 'History', description: 'History, point-in-time reads, revert and the audit log' },
      { name: 'Inspect', description: 'What applies to a proxy, and which proxies a policy affects' },
      { name: 'Proxies', description: 'What a proxy is served' },
      { name: 'Tokens', description: 'Tokens for users, data planes and zones' },
    ],
    paths,
    components,
  };
}

/** The description of a kind's tag: what it is and where it lives. */
function tagDescription(d: ResourceDescriptor): string {
  const what = d.catalogue?.displayName ?? d.kind;
  const where = d.scope === 'mesh' ? 'in a mesh' : 'of no mesh';
  return `${what}: ${d.derived ? 'computed, read only' : d.isPolicy ? 'a policy' : 'a resource'}, ${where} (\`${d.path}\`)`;
}
