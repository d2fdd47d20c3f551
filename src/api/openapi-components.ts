import { z } from 'zod';
import { configSchema } from '../config/schema.js';
import type { ResourceDescriptor } from '../resources/descriptor.js';
import { resourceName } from '../resources/fragments.js';
import type { Registry } from '../resources/registry.js';
import { GATEWAY_VALUES, STATUS_VALUES } from './list-query.js';

/** A JSON Schema (2020-12, the dialect of OpenAPI 3.1) or any other part of the document. */
export type Json = Record<string, unknown>;

/** A `$ref` to a component of the document. */
export const ref = (section: string, name: string): Json => ({ $ref: `#/components/${section}/${name}` });

/** The metadata keys zod copies into a JSON Schema that are keywords of JSON Schema or OpenAPI. */
const STANDARD_META = new Set([
  'id',
  'title',
  'description',
  'examples',
  'deprecated',
  'readOnly',
  'writeOnly',
]);

/**
 * The JSON Schema of a zod schema as a request carries it (defaults make fields optional), or as
 * parsed (`output`). Metadata of our own (`.meta({ inert: true })`) is not a keyword of either
 * dialect: it goes out as an `x-` extension (`x-inert`), which validators and linters accept.
 */
export function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output' = 'input'): Json {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    // Refinements (IP addresses, cross-field rules) have no JSON Schema: the server checks them.
    unrepresentable: 'any',
    override: ({ zodSchema, jsonSchema }) => {
      const js = jsonSchema as Json;
      for (const key of Object.keys(z.globalRegistry.get(zodSchema) ?? {})) {
        if (STANDARD_META.has(key) || !(key in js)) continue;
        js[`x-${key}`] = js[key];
        delete js[key];
      }
    },
  });
  return rest;
}

/** Every JSON answer is also served as YAML to a caller whose `Accept` prefers it. */
export function jsonOrYaml(schema: Json): Json {
  return { 'application/json': { schema }, 'application/yaml': { schema } };
}

const REASONS: Record<number, [name: string, description: string]> = {
  400: ['BadRequest', 'Bad request: invalid JSON or YAML, invalid fields, or a bad query parameter'],
  401: ['Unauthorized', 'The bearer token is not valid (expired, revoked, badly signed)'],
  403: ['Forbidden', 'The caller may not do this (role, mesh, anonymous write, CORS origin)'],
  404: ['NotFound', 'No such resource, mesh or endpoint'],
  405: ['MethodNotAllowed', 'Writes refused here (read-only flag, environment, mode, derived kind)'],
  408: ['RequestTimeout', 'The request did not arrive in time'],
  409: ['Conflict', 'A concurrent write changed the resource first'],
  412: ['PreconditionFailed', '`If-Match` or `If-None-Match` did not hold: nothing was written'],
  413: ['PayloadTooLarge', 'The body is larger than `apiServer.bodyLimit`'],
  414: ['UriTooLong', 'A segment of the path is too long'],
  415: ['UnsupportedMediaType', 'The body is neither JSON nor YAML'],
  431: ['HeadersTooLarge', 'The headers are larger than `apiServer.maxHeaderSize`'],
  500: ['InternalError', 'A bug: logged with the request id of the `x-request-id` header'],
  503: ['Unavailable', 'The control plane cannot answer now (for example, a zone not connected)'],
  504: ['OutcomeUnknown', 'The reply to the commit was lost: the write may be stored or not; read it'],
};

// RFC 6750 and RFC 9110 15.5.6: what a 401 and a 405 say besides the body.
const ERROR_HEADERS: Record<number, Json> = {
  401: {
    'WWW-Authenticate': { description: '`Bearer realm="mesh-cp"`', schema: { type: 'string' } },
  },
  405: { Allow: { description: 'The methods the path supports', schema: { type: 'string' } } },
};

/** The name of the error response of an HTTP status in `components.responses`. */
export function errorResponseName(status: number): string {
  const reason = REASONS[status];
  if (!reason) throw new Error(`no error response for status ${status}`);
  return reason[0];
}

const name = jsonSchemaOf(resourceName);
const time = { type: 'string', format: 'date-time', readOnly: true };

/** The name of a kind's schema in `components.schemas`. */
export const schemaName = (d: ResourceDescriptor): string => d.kind;

/** The schema of a kind: its envelope (`type`, `mesh`, `name`, times) and its spec fields, flat. */
function resourceSchema(d: ResourceDescriptor): Json {
  const type =
    d.acceptedTypes.length === 1
      ? { type: 'string', const: d.wireType }
      : {
          type: 'string',
          enum: [...d.acceptedTypes],
          description: `Answers say \`${d.wireType}\`; a PUT may say any of these`,
        };
  const envelope: Json = { type, ...(d.scope === 'mesh' ? { mesh: name } : {}) };
  if (d.derived) {
    // Computed by projections (spec §2): the fields are the spec's, not a zod schema of ours.
    return {
      type: 'object',
      description: `${d.kind}: computed by the control plane, read only${d.derived.source ? ` (from ${d.derived.source})` : ''}`,
      properties: {
        ...envelope,
        ...(d.singleton ? {} : { name: { type: 'string' } }),
        creationTime: time,
        modificationTime: time,
      },
      required: d.singleton ? ['type'] : ['type', 'name'],
      additionalProperties: true,
    };
  }
  const spec = jsonSchemaOf(d.spec) as { properties?: Json; required?: string[] };
  const meta = ['type', ...(d.scope === 'mesh' ? ['mesh'] : []), 'name'];
  return {
    type: 'object',
    description: `${d.kind}${d.catalogue ? ` (${d.catalogue.singularDisplayName})` : ''}. Times are set by the server and ignored in a PUT body; unknown fields are refused.`,
    properties: { ...envelope, name, creationTime: time, modificationTime: time, ...spec.properties },
    required: [...meta, ...(spec.required ?? [])],
    additionalProperties: false,
  };
}

/** A page of a list: `{total, items, next}`. */
export const page = (items: Json, what: string): Json => ({
  type: 'object',
  description: `A page of ${what}`,
  properties: {
    total: { type: 'integer', minimum: 0, description: 'Items that pass the filters, on every page' },
    items: { type: 'array', items },
    next: {
      type: ['string', 'null'],
      format: 'uri',
      description: 'The absolute URL of the next page (same query, `offset` advanced), null on the last',
    },
  },
  required: ['total', 'items', 'next'],
});

const strings = { type: 'string' };

const change = {
  revision: { type: 'integer', minimum: 1, description: 'The log revision of the change' },
  time: { type: 'string', format: 'date-time' },
  operation: { type: 'string', enum: ['create', 'update', 'delete'] },
  actor: {
    type: 'object',
    properties: {
      name: { type: 'string' },
      groups: { type: 'array', items: { type: 'string' } },
      address: { type: 'string' },
    },
  },
  changeSet: {
    type: 'string',
    description:
      'The id of the change set the change was part of (`POST /_changes`); absent for a single write',
  },
};

/**
 * A kind's resource as history and the audit log show it: a secret kind's `data` is the digest
 * of its bytes unless the caller asked for the data (`includeSecretData=true`).
 */
const loggedResourceRef = (d: ResourceDescriptor): Json =>
  ref('schemas', d.secret ? `${schemaName(d)}InLog` : schemaName(d));

/** {@link loggedResourceRef}'s schema of a secret kind: its own with `data` a string or a digest. */
function secretInLog(d: ResourceDescriptor): Json {
  const own = resourceSchema(d) as { properties: Record<string, Json> };
  return {
    ...own,
    description: `A ${d.kind} as history and the audit log show it: \`data\` is \`{sha256}\` unless \`includeSecretData=true\``,
    properties: {
      ...own.properties,
      data: { oneOf: [own.properties.data, ref('schemas', 'RedactedSecretData')] },
    },
  };
}

/** One change of a stored kind: its resource typed by the kind's schema (`_history` items). */
const changeOf = (d: ResourceDescriptor): Json => ({
  type: 'object',
  description: `A change of a ${d.kind}; \`resource\` is the state after it, for a delete the state before it`,
  properties: { ...change, resource: loggedResourceRef(d) },
  required: ['revision', 'time', 'operation', 'actor', 'resource'],
});

/** One audit log entry of a stored kind: a change that names its kind, mesh and name (`/_events` items). */
const eventOf = (d: ResourceDescriptor): Json => ({
  type: 'object',
  description: `A change of a ${d.kind} in the audit log; \`resource\` is the state after it, for a delete the state before it`,
  properties: {
    ...change,
    kind: { type: 'string', const: d.kind },
    ...(d.scope === 'mesh' ? { mesh: strings } : {}),
    name: strings,
    resource: loggedResourceRef(d),
  },
  required: [
    'revision',
    'time',
    'operation',
    'actor',
    'kind',
    ...(d.scope === 'mesh' ? ['mesh'] : []),
    'name',
    'resource',
  ],
});

/** The name of a stored kind's change schema in `components.schemas` (`_history` items). */
export const changeSchemaName = (d: ResourceDescriptor): string => `${schemaName(d)}Change`;

/** What the `default` (any other) error answer of an operation stands for. */
const OTHER_ERRORS =
  '408 (request too slow), 414 (a path segment too long), 431 (headers too large), 500 (a bug: see `x-request-id`), 503 (the event log or a zone unavailable), 504 (a write whose outcome is unknown: read the resource), and the statuses an operation lists';

/** Each kind's schema and page, and each stored kind's change, change page, event and log form. */
function kindSchemas(registry: Registry): Json {
  const schemas: Json = {};
  for (const d of registry.all) {
    schemas[schemaName(d)] = resourceSchema(d);
    if (!d.singleton)
      schemas[`${schemaName(d)}List`] = page(ref('schemas', schemaName(d)), `${d.kind} items`);
  }
  for (const d of registry.stored) {
    schemas[changeSchemaName(d)] = changeOf(d);
    schemas[`${changeSchemaName(d)}List`] = page(
      ref('schemas', changeSchemaName(d)),
      `changes of one ${d.kind}, oldest first`,
    );
    schemas[`${schemaName(d)}Event`] = eventOf(d);
    if (d.secret) schemas[`${schemaName(d)}InLog`] = secretInLog(d);
  }
  schemas.RedactedSecretData = {
    type: 'object',
    description: "A secret's data in history and the audit log: the SHA-256 of its decoded bytes",
    properties: { sha256: { type: 'string', pattern: '^[0-9a-f]{64}$' } },
    required: ['sha256'],
    additionalProperties: false,
  };
  return schemas;
}

/** The shape of every error answer. */
function errorSchemas(): Json {
  return {
    Error: {
      type: 'object',
      description: 'Every error answer (decisions §4)',
      properties: {
        title: { type: 'string', description: 'What went wrong, short' },
        details: { type: 'string', description: 'What went wrong and what to do, in a sentence' },
        causes: {
          type: 'array',
          description: 'One per violation, when there are some',
          items: {
            type: 'object',
            properties: {
              field: {
                type: 'string',
                description:
                  'The field path (`networking.inbound[0].tags["mesh.io/service"]`), or a query parameter',
              },
              message: { type: 'string' },
            },
            required: ['field', 'message'],
          },
        },
        item: {
          ...ref('schemas', 'ChangeSetItemRef'),
          description: 'The item of a change set that was refused (nothing of the set was written)',
        },
      },
      required: ['title', 'details'],
    },
  };
}

/** A change set, its items and its answer. */
function changeSetSchemas(): Json {
  return {
    ChangeSetItemRef: {
      type: 'object',
      description: 'An item of a change set: its index (from 0) and the resource it names',
      properties: {
        index: { type: 'integer', minimum: 0 },
        kind: { type: 'string', description: 'The registry kind (`GlobalSecret` for a Secret without mesh)' },
        mesh: strings,
        name: { type: 'string' },
      },
      required: ['index', 'kind', 'name'],
    },
    ChangeSet: {
      type: 'object',
      description:
        'A change set: upserts and deletes decided in order, each on the state the items before it left, and written all together or not at all',
      properties: {
        items: {
          type: 'array',
          minItems: 1,
          maxItems: 1000,
          items: ref('schemas', 'ChangeSetItem'),
        },
      },
      required: ['items'],
    },
    ChangeSetItem: {
      description:
        'A resource (with `type`, `name` and, for mesh kinds, `mesh`) to create or update; the same as `{"upsert": resource}`, which may add `ifMatch`/`ifNoneMatch`; or `{"delete": {type, mesh, name}}`. `ifMatch` is a revision (a number) or an entity tag list as in the `If-Match` header (`"12"`, `*`): the item is refused (412, and the whole set) unless the resource is at that revision when the item is decided.',
      oneOf: [
        {
          type: 'object',
          title: 'upsert',
          properties: {
            upsert: { type: 'object', additionalProperties: true },
            ifMatch: { type: ['string', 'integer'] },
            ifNoneMatch: { type: ['string', 'integer'] },
          },
          required: ['upsert'],
        },
        {
          type: 'object',
          title: 'delete',
          properties: {
            delete: {
              type: 'object',
              properties: { type: strings, mesh: strings, name: strings },
              required: ['type', 'name'],
            },
            ifMatch: { type: ['string', 'integer'] },
          },
          required: ['delete'],
        },
        {
          type: 'object',
          title: 'resource',
          properties: { type: strings, mesh: strings, name: strings },
          required: ['type', 'name'],
          additionalProperties: true,
        },
      ],
    },
    ChangeSetResult: {
      type: 'object',
      properties: {
        changeSet: {
          type: ['string', 'null'],
          description:
            'The id every entry of the set carries; null when nothing was written (a dry run, or no item changed anything)',
        },
        dryRun: { type: 'boolean' },
        revision: {
          type: 'integer',
          minimum: 0,
          description: 'The revision of the last entry of the set (the head when nothing was written)',
        },
        items: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              index: { type: 'integer', minimum: 0 },
              kind: strings,
              mesh: strings,
              name: strings,
              operation: { type: 'string', enum: ['create', 'update', 'delete', 'unchanged'] },
              revision: {
                type: ['integer', 'null'],
                description:
                  "The resource's revision after the set (its ETag); null in a dry run for what the set changes",
              },
            },
            required: ['index', 'kind', 'name', 'operation', 'revision'],
          },
        },
        impact: { $ref: '#/components/schemas/Impact' },
      },
      required: ['changeSet', 'dryRun', 'revision', 'items'],
    },
  };
}

/** The answers of the routes of no kind: `{}`, the audit log, the caller, the control plane's own. */
function fixedSchemas(registry: Registry): Json {
  return {
    Empty: { type: 'object', maxProperties: 0, description: 'An empty object, `{}`: the answer of a DELETE' },
    Event: {
      description: 'An audit log entry: a change of one resource, of the kind `kind` names',
      oneOf: registry.stored.map((d) => ref('schemas', `${schemaName(d)}Event`)),
      discriminator: {
        propertyName: 'kind',
        mapping: Object.fromEntries(
          registry.stored.map((d) => [d.kind, `#/components/schemas/${schemaName(d)}Event`]),
        ),
      },
    },
    EventList: page(ref('schemas', 'Event'), 'audit log entries, oldest first'),
    Caller: {
      type: 'object',
      description: 'Who the caller is to this API (`GET /_identity`), and the roles it holds',
      properties: {
        name: strings,
        groups: { type: 'array', items: strings },
        via: { type: 'string', enum: ['token', 'client-certificate', 'loopback', 'anonymous'] },
        expiresAt: { type: 'string', format: 'date-time', description: 'When the user token expires' },
        grants: {
          type: 'array',
          description: 'Each role the caller holds, for every mesh or only the meshes named',
          items: {
            type: 'object',
            properties: {
              role: { type: 'string', enum: ['admin', 'writer', 'reader', 'none'] },
              meshes: { type: 'array', items: strings },
            },
            required: ['role'],
          },
        },
      },
      required: ['name', 'groups', 'via', 'grants'],
    },
    Info: {
      type: 'object',
      properties: {
        hostname: strings,
        tagline: strings,
        version: strings,
        instanceId: strings,
        clusterId: { type: 'string', format: 'uuid' },
        mode: { type: 'string', enum: ['standalone', 'global', 'zone'] },
      },
      required: ['hostname', 'tagline', 'version', 'instanceId', 'clusterId', 'mode'],
    },
    PolicyCatalogue: {
      type: 'object',
      properties: {
        policies: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              name: strings,
              readOnly: { type: 'boolean' },
              path: strings,
              displayName: strings,
              singularDisplayName: strings,
              pluralDisplayName: strings,
              isExperimental: { type: 'boolean' },
            },
            required: ['name', 'readOnly', 'path', 'displayName'],
          },
        },
      },
      required: ['policies'],
    },
    Config: {
      ...jsonSchemaOf(configSchema, 'output'),
      description: 'The effective configuration (spec 2.19); passwords, keys and tokens are `*****`',
    },
    Versions: {
      type: 'object',
      properties: {
        meshDp: {
          type: 'object',
          description: 'Data plane version -> the proxy versions it supports',
          additionalProperties: { type: 'object', properties: { proxy: strings }, required: ['proxy'] },
        },
      },
      required: ['meshDp'],
    },
    ZoneStatus: {
      type: 'object',
      properties: { name: strings, url: strings, active: { type: 'boolean' } },
      required: ['name', 'url', 'active'],
    },
  };
}

/** A response per error status the operations name, and `Error`, the `default` of every operation. */
function errorResponses(statuses: ReadonlySet<number>): Json {
  const responses: Json = {};
  for (const status of statuses) {
    const [key, description] = REASONS[status];
    responses[key] = {
      description,
      ...(ERROR_HEADERS[status] ? { headers: ERROR_HEADERS[status] } : {}),
      content: jsonOrYaml(ref('schemas', 'Error')),
    };
  }
  responses.Error = {
    description: `Any other error, in the same shape: ${OTHER_ERRORS}`,
    content: jsonOrYaml(ref('schemas', 'Error')),
  };
  return responses;
}

const HEADERS: Json = {
  ETag: {
    description: 'The revision of the last change to the resource, quoted: `"42"`',
    schema: strings,
  },
  Revision: {
    description: 'The log revision the answer reflects (`x-mesh-revision`)',
    schema: { type: 'integer' },
  },
};

const SECURITY_SCHEMES: Json = {
  bearerAuth: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description:
      'A user token from `POST /tokens/user`. Without one, a caller on loopback is admin (`apiServer.authn.localhostIsAdmin`) and others are anonymous readers.',
  },
};

/**
 * The schemas, responses, parameters, headers and security scheme the paths refer to; `statuses`:
 * the error statuses operations name (each one a response), besides `Error`, the `default` of all.
 */
export function buildComponents(registry: Registry, statuses: ReadonlySet<number>): Json {
  return {
    schemas: {
      ...kindSchemas(registry),
      ...errorSchemas(),
      ...changeSetSchemas(),
      ...fixedSchemas(registry),
    },
    responses: errorResponses(statuses),
    parameters: buildParameters(registry),
    headers: HEADERS,
    securitySchemes: SECURITY_SCHEMES,
  };
}

const query = (n: string, description: string, schema: Json = strings, extra: Json = {}): Json => ({
  name: n,
  in: 'query',
  description,
  schema,
  ...extra,
});

/** The parameters shared by operations, by the name `components.parameters` gives them. */
function buildParameters(registry: Registry): Json {
  return {
    mesh: { name: 'mesh', in: 'path', required: true, description: 'The mesh', schema: name },
    name: { name: 'name', in: 'path', required: true, description: 'The resource name', schema: strings },
    id: { name: 'id', in: 'path', required: true, description: 'The change set id', schema: strings },
    size: query('size', 'Page size', { type: 'integer', minimum: 1, maximum: 1000, default: 100 }),
    offset: query('offset', 'Index of the first item of the page in the sorted list', {
      type: 'integer',
      minimum: 0,
      default: 0,
    }),
    nameFilter: query('name', 'Only items whose name contains this'),
    tag: query(
      'tag',
      '`key:value` (repeatable): every one must match one inbound (or the gateway); `*` matches any value',
      { type: 'array', items: { type: 'string', pattern: '^[^:]+:.+$' } },
      { style: 'form', explode: true },
    ),
    gateway: query('gateway', 'Only gateway proxies (or builtin/delegated ones), or only sidecars', {
      type: 'string',
      enum: [...GATEWAY_VALUES],
    }),
    status: query('status', 'Only proxies in this state', { type: 'string', enum: [...STATUS_VALUES] }),
    revision: query('revision', 'Answer as of this log revision (point in time); above the head is 400', {
      type: 'integer',
      minimum: 1,
    }),
    from: query('from', 'Only items at or after this time (RFC 3339)', {
      type: 'string',
      format: 'date-time',
    }),
    to: query('to', 'Only items at or before this time (RFC 3339)', { type: 'string', format: 'date-time' }),
    at: query(
      'at',
      'Answer as of this time (RFC 3339): the last revision at or before it, named by `x-mesh-revision`; not with `revision`',
      { type: 'string', format: 'date-time' },
    ),
    dryRun: query('dryRun', 'Validate and answer as the write would, writing nothing', {
      type: 'boolean',
      default: false,
    }),
    impact: query(
      'impact',
      "Add `impact`: the proxies whose matched policies or served xDS config the write changes (would change, in a dry run), paged by `size` and `offset`; `diff` adds each changed xDS resource's diff",
      { type: 'string', enum: ['true', 'diff', 'false'], default: 'false' },
    ),
    ifMatch: {
      name: 'If-Match',
      in: 'header',
      description: 'Write only if the resource is at this revision (its ETag, `"42"`); else 412',
      schema: strings,
    },
    ifNoneMatch: {
      name: 'If-None-Match',
      in: 'header',
      description: '`*`: create only; 412 if the resource exists',
      schema: { type: 'string', enum: ['*'] },
    },
    toRevision: query(
      'toRevision',
      'The revision whose state of the resource to write back (absent then: delete it)',
      { type: 'integer', minimum: 1 },
      { required: true },
    ),
    fromRevision: query(
      'fromRevision',
      'The first revision to list or stream (default: 1 for lists, the next revision for streams)',
      { type: 'integer', minimum: 1 },
    ),
    eventKind: query('kind', 'Only entries of this stored kind', {
      type: 'string',
      enum: registry.stored.map((d) => d.kind),
    }),
    eventMesh: query('mesh', 'Only entries of this mesh'),
    eventName: query('name', 'Only entries of resources of this name'),
    eventActor: query('actor', 'Only entries written by this actor name'),
    eventChangeSet: query('changeSet', 'Only entries of this change set (its id)'),
    includeSecretData: query(
      'includeSecretData',
      "Show secrets' data instead of its digest (needs the right to read those secrets: 403 otherwise)",
      { type: 'boolean', default: false },
    ),
    lastEventId: {
      name: 'Last-Event-ID',
      in: 'header',
      description: 'Streams only: resume after this revision (the `id` of the last event received)',
      schema: { type: 'integer', minimum: 0 },
    },
  };
}

/** `zone-ingress` -> `ZoneIngress`; `dataplanes+insights` -> `DataplanesInsights`. */
export function pascal(s: string): string {
  return s
    .split(/[^A-Za-z0-9]+/)
    .filter((w) => w !== '')
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('');
}
