import { z } from 'zod';
import { parseDuration } from '../util/duration.js';

const PORT_MESSAGE = 'must be an integer between 0 and 65535';
const BOOLEAN_MESSAGE = 'must be true or false';
const STRING_MESSAGE = 'must be a string';
const SECTION_MESSAGE = 'must be a mapping of keys to values';

// A local copy of the duration rule in `resources/fragments.ts` (decisions §2): config may import util only.
const DURATION = /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/;
// A zone's name is the name of its Zone resource and the prefix of what it syncs (decisions §2).
const ZONE_NAME = /^[0-9a-z][0-9a-z._-]{0,252}$/;

/** The pino log levels `log.level` accepts. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** What a section may hold: only keys that have a default, so that `{}` is a whole section. */
type DefaultedShape = Record<string, z.ZodDefault<z.ZodType> | z.ZodPrefault<z.ZodType>>;

/** A config section: a strict object whose absent keys all take their defaults. */
function section<Shape extends DefaultedShape>(shape: Shape) {
  const object = z.strictObject(shape, {
    error: (issue) => (issue.code === 'invalid_type' ? SECTION_MESSAGE : undefined),
  });
  // Every key has a default (DefaultedShape), which TypeScript cannot see through the generic.
  return object.prefault({} as z.input<typeof object>);
}

/** A listening port; 0 picks a free one (decisions §1). */
function port(value: number) {
  return z
    .number({ error: PORT_MESSAGE })
    .int({ error: PORT_MESSAGE })
    .min(0, { error: PORT_MESSAGE })
    .max(65535, { error: PORT_MESSAGE })
    .default(value);
}

function integer(value: number, min: number) {
  const message = min === 0 ? 'must be a non-negative integer' : `must be an integer of at least ${min}`;
  return z
    .number({ error: message })
    .int({ error: message })
    .min(min, { error: message })
    .max(Number.MAX_SAFE_INTEGER, { error: message })
    .default(value);
}

function bool(value: boolean) {
  return z.boolean({ error: BOOLEAN_MESSAGE }).default(value);
}

function string(value: string) {
  return z.string({ error: STRING_MESSAGE }).default(value);
}

function nonEmptyString(value: string) {
  return z.string({ error: STRING_MESSAGE }).min(1, { error: 'must not be empty' }).default(value);
}

// Every config duration ends up in a node timer, which takes at most 2^31-1 ms and turns a longer
// one into 1 ms (a heartbeat of 1000h would fire every millisecond).
const MAX_DURATION = '596h';
const MAX_DURATION_MS = parseDuration(MAX_DURATION);

function duration(value: string) {
  return z
    .string({ error: STRING_MESSAGE })
    .regex(DURATION, { error: 'must be a duration such as 300ms, 5s, 1.5s, 10m, 1h30m' })
    .refine((v) => !(parseDuration(v) > MAX_DURATION_MS), {
      error: `must be at most ${MAX_DURATION} (the longest timer Node.js can set)`,
    })
    .default(value);
}

function oneOf<const Values extends readonly [string, ...string[]]>(values: Values, value: Values[number]) {
  return z.enum(values, { error: `must be one of ${values.join(', ')}` }).default(value);
}

/** The roles a group of a user token may map to (`none` takes a default mapping away). */
export const ROLES = ['admin', 'writer', 'reader', 'none'] as const;

/** The groups every control plane knows; `apiServer.authz.groups` adds to them and may remap them. */
export const DEFAULT_GROUP_GRANTS: Readonly<Record<string, { role: (typeof ROLES)[number] }>> = {
  'mesh-system:admin': { role: 'admin' },
  'mesh-system:writer': { role: 'writer' },
  'mesh-system:reader': { role: 'reader' },
};

const MESH_NAME = /^[0-9a-z][0-9a-z._-]{0,252}$/;

/** `apiServer.authz.groups`: group of a user token → role, optionally limited to some meshes; merged over the defaults. */
function groupGrants() {
  const grant = z.strictObject({
    role: z.enum(ROLES, { error: `must be one of ${ROLES.join(', ')}` }),
    meshes: z
      .array(z.string({ error: STRING_MESSAGE }).regex(MESH_NAME, { error: 'must be a mesh name' }), {
        error: 'must be a list of mesh names',
      })
      .min(1, { error: 'must name at least one mesh (leave it out for every mesh)' })
      .optional(),
  });
  return z
    .record(z.string().min(1, { error: 'group names must not be empty' }), grant, {
      error: 'must be a mapping of group names to {role, meshes}',
    })
    .transform((groups) => ({ ...structuredClone(DEFAULT_GROUP_GRANTS), ...groups }))
    .default(() => structuredClone(DEFAULT_GROUP_GRANTS));
}

// A host name (letters, digits, '-', '.'), or one with a leading '.' that allows its subdomains.
const HOST_NAME =
  /^\.?[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*$/;

function isBaseUrl(text: string): boolean {
  if (text === '') return true;
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.search === '' && url.hash === '';
  } catch {
    return false;
  }
}

// A host name or IPv4 address, or an IPv6 address in brackets, then a port (a gRPC target).
const HOST_PORT = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?):(\d{1,5})$/;

function isHostPort(text: string): boolean {
  if (text === '') return true;
  const match = HOST_PORT.exec(text);
  return match !== null && Number(match[1]) >= 1 && Number(match[1]) <= 65535;
}

function isRegExp(source: string): boolean {
  try {
    new RegExp(source);
    return true;
  } catch {
    return false;
  }
}

/** The TLS files of a listener that may serve its own certificate. */
const tlsFiles = { tlsCertFile: string(''), tlsKeyFile: string('') };

/** A public listener for an admin-like API (spec 2.19: adminServer.public, dataplaneTokenServer.public). */
function publicListener(defaultPort: number) {
  return section({
    enabled: bool(false),
    interface: string(''),
    port: port(defaultPort),
    clientCertsDir: string(''),
    ...tlsFiles,
  });
}

const baseSchema = z.strictObject({
  mode: oneOf(['standalone', 'global', 'zone'], 'standalone'),
  environment: oneOf(['universal', 'kubernetes'], 'universal'),
  apiServer: section({
    port: port(5681),
    readOnly: bool(false),
    corsAllowedDomains: z
      .array(
        z.string({ error: STRING_MESSAGE }).refine(isRegExp, { error: 'must be a valid regular expression' }),
        { error: 'must be a list of regular expressions' },
      )
      // Issue 15: no cross-origin caller unless the operator lists one (the reference defaults to '.*').
      .default(() => []),
    // Issue 15: names that the Host header may carry for loopback callers to be admin (decisions §7).
    allowedHosts: z
      .array(
        z
          .string({ error: STRING_MESSAGE })
          .regex(HOST_NAME, { error: 'must be a host name, or .domain for its subdomains' }),
        { error: 'must be a list of host names' },
      )
      .default(() => []),
    // Issue 15: the base of absolute links (`next`); empty: the request's checked Host.
    externalUrl: z
      .string({ error: STRING_MESSAGE })
      .refine(isBaseUrl, { error: 'must be an http(s) URL without query or fragment, or empty' })
      .default(''),
    https: section({ enabled: bool(true), port: port(5682), ...tlsFiles }),
    // Kuma's name: a verified client certificate from a CA in this directory makes the caller admin.
    auth: section({ clientCertsDir: string('') }),
    authn: section({ localhostIsAdmin: bool(true), anonymousWrite: bool(false) }),
    authz: section({
      anonymous: oneOf(['reader', 'none'], 'reader'),
      groups: groupGrants(),
    }),
    bodyLimit: integer(1048576, 1),
    maxHeaderSize: integer(16384, 1),
    timeouts: section({ headers: duration('10s'), request: duration('30s'), idle: duration('2m') }),
    // Issue 6: `/_events` watch streams: heartbeat comment interval ('0s': none), and the bytes a
    // client may leave unread in its socket buffer before it is cut off.
    watch: section({ heartbeatInterval: duration('15s'), bufferLimit: integer(4194304, 1) }),
  }),
  adminServer: section({
    apis: section({ dataplaneToken: section({ enabled: bool(true) }) }),
    local: section({ port: port(5679) }),
    public: publicListener(5682),
  }),
  bootstrapServer: section({
    port: port(5682),
    params: section({
      adminAccessLogPath: string('/dev/null'),
      adminAddress: string('127.0.0.1'),
      adminPort: port(0),
      xdsConnectTimeout: duration('1s'),
      xdsHost: string(''),
      xdsPort: port(0),
    }),
  }),
  dataplaneTokenServer: section({
    enabled: bool(true),
    local: section({ port: port(5679) }),
    public: publicListener(0),
  }),
  defaults: section({
    skipMeshCreation: bool(false),
    skipDefaultPolicies: bool(false),
    mesh: string(''),
  }),
  diagnostics: section({ port: port(5680) }),
  discovery: section({ universal: section({ pollingInterval: duration('1s') }) }),
  general: section({ advertisedHostname: nonEmptyString('localhost') }),
  guiServer: section({}),
  monitoringAssignmentServer: section({ assignmentRefreshInterval: duration('1s'), grpcPort: port(5676) }),
  reports: section({ enabled: bool(false) }),
  runtime: section({
    kubernetes: section({
      admissionServer: section({ address: string(''), certDir: string(''), port: port(5443) }),
    }),
  }),
  sdsServer: section({ grpcPort: port(5677), ...tlsFiles }),
  store: section({
    type: oneOf(['level', 'memory', 'postgres'], 'level'),
    level: section({ path: nonEmptyString('./data') }),
    // Issue 6: a snapshot of the projections every N log entries, or every R when the last one held
    // R > N resources (0: none written or read).
    snapshot: section({ every: integer(10000, 0) }),
    kubernetes: section({ systemNamespace: string('mesh-system') }),
    postgres: section({
      connectionTimeout: integer(5, 0),
      dbName: string('mesh'),
      host: string('127.0.0.1'),
      password: string(''),
      port: port(5432),
      user: string('mesh'),
    }),
  }),
  xdsServer: section({
    dataplaneConfigurationRefreshInterval: duration('1s'),
    dataplaneStatusFlushInterval: duration('10s'),
    diagnosticsPort: port(5680),
    grpcPort: port(5678),
    // Issue 17: the xDS address the bootstrap names; empty: general.advertisedHostname:grpcPort.
    advertisedAddress: z
      .string({ error: STRING_MESSAGE })
      .refine(isHostPort, { error: 'must be host:port (an IPv6 address in brackets), or empty' })
      .default(''),
  }),
  // Issue 17 (decisions §11): how the xDS server checks a proxy; `none` lets every proxy in.
  dpServer: section({ authn: section({ type: oneOf(['dpToken', 'none'], 'dpToken') }) }),
  multizone: section({
    global: section({ kds: section({ grpcPort: port(5685), ...tlsFiles }) }),
    zone: section({
      name: string(''),
      globalAddress: string(''),
      kds: section({ token: string(''), rootCaFile: string(''), tlsSkipVerify: bool(false) }),
    }),
  }),
  log: section({ level: oneOf(LOG_LEVELS, 'info'), format: oneOf(['json', 'text'], 'json') }),
});

/** Why `address` is not a Global sync address, or undefined when it is one (`grpcs://host:port`). */
function globalAddressProblem(address: string): string | undefined {
  if (!address.startsWith('grpcs://')) {
    return 'must start with grpcs:// (Global serves its sync port over TLS only)';
  }
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    return 'must be a URL such as grpcs://global.example:5685';
  }
  if (url.hostname === '') return 'must name a host, such as grpcs://global.example:5685';
  if ((url.pathname !== '' && url.pathname !== '/') || url.search !== '' || url.hash !== '') {
    return 'must be only a scheme, a host and a port, such as grpcs://global.example:5685';
  }
  return undefined;
}

function field(value: unknown, ...path: string[]): unknown {
  let current = value;
  for (const key of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

/** The listeners whose TLS files must be given as a pair. */
const TLS_PAIRS: string[][] = [
  ['apiServer', 'https'],
  ['adminServer', 'public'],
  ['dataplaneTokenServer', 'public'],
  ['sdsServer'],
  ['multizone', 'global', 'kds'],
];

/** The effective config of mesh-cp (decisions §1): `configSchema.parse({})` gives every default. */
export const configSchema = baseSchema.superRefine(
  (config, ctx) => {
    // Runs even when other keys are invalid so that one start-up lists every problem: read defensively.
    const mode = field(config, 'mode');
    const zoneName = field(config, 'multizone', 'zone', 'name');
    const globalAddress = field(config, 'multizone', 'zone', 'globalAddress');
    if (mode === 'zone' && zoneName === '') {
      ctx.addIssue({
        code: 'custom',
        path: ['multizone', 'zone', 'name'],
        message: 'must be set when mode is zone',
      });
    }
    if (typeof zoneName === 'string' && zoneName !== '' && !ZONE_NAME.test(zoneName)) {
      ctx.addIssue({
        code: 'custom',
        path: ['multizone', 'zone', 'name'],
        message: 'must be 1 to 253 characters of [0-9a-z._-], starting with a letter or digit',
      });
    }
    if (mode === 'zone' && globalAddress === '') {
      ctx.addIssue({
        code: 'custom',
        path: ['multizone', 'zone', 'globalAddress'],
        message:
          'must be set when mode is zone (the Global sync address, such as grpcs://global.example:5685)',
      });
    }
    if (typeof globalAddress === 'string' && globalAddress !== '') {
      const problem = globalAddressProblem(globalAddress);
      if (problem !== undefined) {
        ctx.addIssue({ code: 'custom', path: ['multizone', 'zone', 'globalAddress'], message: problem });
      }
    }
    if (field(config, 'store', 'type') === 'postgres') {
      ctx.addIssue({
        code: 'custom',
        path: ['store', 'type'],
        message: 'postgres is not supported yet; use level or memory',
      });
    }
    const headersTimeout = field(config, 'apiServer', 'timeouts', 'headers');
    const requestTimeout = field(config, 'apiServer', 'timeouts', 'request');
    if (typeof headersTimeout === 'string' && typeof requestTimeout === 'string') {
      const headersMs = parseDuration(headersTimeout);
      const requestMs = parseDuration(requestTimeout);
      // node's http server refuses a header deadline later than the whole-request deadline.
      if (requestMs > 0 && headersMs > requestMs) {
        ctx.addIssue({
          code: 'custom',
          path: ['apiServer', 'timeouts', 'headers'],
          message: `must not be longer than apiServer.timeouts.request (${requestTimeout})`,
        });
      }
    }
    for (const listener of TLS_PAIRS) {
      const cert = field(config, ...listener, 'tlsCertFile');
      const key = field(config, ...listener, 'tlsKeyFile');
      if (typeof cert === 'string' && typeof key === 'string' && (cert === '') !== (key === '')) {
        const missing = cert === '' ? 'tlsCertFile' : 'tlsKeyFile';
        const given = cert === '' ? 'tlsKeyFile' : 'tlsCertFile';
        ctx.addIssue({
          code: 'custom',
          path: [...listener, missing],
          message: `must be set together with ${given}`,
        });
      }
    }
  },
  { when: () => true },
);

/** The effective config: every key present, defaults filled in. */
export type Config = z.infer<typeof configSchema>;
