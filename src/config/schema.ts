import { isIP } from 'node:net';
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

// The leaf schemas below are built once and shared: each field only adds its default. A zod
// schema is immutable, and every `.int()`, `.min()`, … makes a new one, so building them per field
// was most of the ~20 ms the config schema took at every start.

const PORT = z
  .number({ error: PORT_MESSAGE })
  .int({ error: PORT_MESSAGE })
  .min(0, { error: PORT_MESSAGE })
  .max(65535, { error: PORT_MESSAGE });

/** A listening port; 0 picks a free one (decisions §1). */
function port(value: number) {
  return PORT.default(value);
}

const INTEGERS = new Map<number, z.ZodNumber>();

function integer(value: number, min: number) {
  let base = INTEGERS.get(min);
  if (!base) {
    const message = min === 0 ? 'must be a non-negative integer' : `must be an integer of at least ${min}`;
    base = z
      .number({ error: message })
      .int({ error: message })
      .min(min, { error: message })
      .max(Number.MAX_SAFE_INTEGER, { error: message });
    INTEGERS.set(min, base);
  }
  return base.default(value);
}

const BOOLEAN = z.boolean({ error: BOOLEAN_MESSAGE });
const STRING = z.string({ error: STRING_MESSAGE });
const NON_EMPTY_STRING = STRING.min(1, { error: 'must not be empty' });

function bool(value: boolean) {
  return BOOLEAN.default(value);
}

function string(value: string) {
  return STRING.default(value);
}

function nonEmptyString(value: string) {
  return NON_EMPTY_STRING.default(value);
}

// Every config duration ends up in a node timer, which takes at most 2^31-1 ms and turns a longer
// one into 1 ms (a heartbeat of 1000h would fire every millisecond).
const MAX_DURATION = '596h';
const MAX_DURATION_MS = parseDuration(MAX_DURATION);

const DURATION_STRING = STRING.regex(DURATION, {
  error: 'must be a duration such as 300ms, 5s, 1.5s, 10m, 1h30m',
}).refine((v) => !(parseDuration(v) > MAX_DURATION_MS), {
  error: `must be at most ${MAX_DURATION} (the longest timer Node.js can set)`,
});

function duration(value: string) {
  return DURATION_STRING.default(value);
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

/**
 * Marks a key that the server accepts, validates and shows in `GET /config` (spec 2.19: clients
 * read it) but does not act on: `mesh-cp config-keys` and docs/config.md say so, and a value other
 * than the default logs a warning at start.
 */
function inert<T extends z.ZodType>(schema: T, meaning: string): T {
  return schema.meta({ description: meaning, inert: true });
}

/** The TLS files of a listener that may serve its own certificate (`what`: the listener). */
function tlsFiles(what: string) {
  return {
    tlsCertFile: string('').describe(`PEM certificate (chain) file of ${what}; set with tlsKeyFile`),
    tlsKeyFile: string('').describe(`PEM private key file of ${what}; set with tlsCertFile`),
  };
}

/** The inert TLS files of a listener that does not exist here. */
function inertTlsFiles(what: string) {
  return {
    tlsCertFile: inert(string(''), `PEM certificate file of ${what}`),
    tlsKeyFile: inert(string(''), `PEM private key file of ${what}`),
  };
}

/** A public listener for an admin-like API (spec 2.19: adminServer.public, dataplaneTokenServer.public); none here. */
function publicListener(defaultPort: number, server: string) {
  const what = `the public listener of Kuma's ${server}`;
  return section({
    enabled: inert(bool(false), `whether ${what} listens`),
    interface: inert(string(''), `interface ${what} binds`),
    port: inert(port(defaultPort), `port of ${what}`),
    clientCertsDir: inert(string(''), `CA directory for client certificates of ${what}`),
    ...inertTlsFiles(what),
  });
}

/** The address a listener binds: an IP address of this machine, `0.0.0.0` or `::` for all. */
function bindAddress(listener: string) {
  return z
    .string({ error: STRING_MESSAGE })
    .refine((address) => isIP(address) !== 0, {
      error: 'must be an IP address such as 0.0.0.0 (all IPv4 addresses), :: (all) or 127.0.0.1',
    })
    .default('0.0.0.0')
    .describe(
      `address ${listener} listens on: 0.0.0.0 (every IPv4 one), :: (every one) or one IP of this machine`,
    );
}

/** A host name or an IP address (IPv6 without brackets too), without a port; or empty. */
function isHostOrEmpty(text: string): boolean {
  return text === '' || isIP(text) !== 0 || HOST_NAME.test(text);
}

const baseSchema = z.strictObject({
  mode: oneOf(['standalone', 'global', 'zone'], 'standalone').describe(
    'standalone (one control plane), global (zones sync to it, no xDS) or zone (syncs with a Global)',
  ),
  environment: oneOf(['universal', 'kubernetes'], 'universal').describe(
    'universal, or kubernetes (the API is read-only: every PUT and DELETE answers 405)',
  ),
  apiServer: section({
    port: port(5681).describe('port of the HTTP API'),
    bindAddress: bindAddress('the HTTP API'),
    readOnly: bool(false).describe('refuse every write of the API (405)'),
    corsAllowedDomains: z
      .array(
        z.string({ error: STRING_MESSAGE }).refine(isRegExp, { error: 'must be a valid regular expression' }),
        { error: 'must be a list of regular expressions' },
      )
      // Safe by default: no cross-origin caller unless the operator lists one (the reference defaults to '.*').
      .default(() => [])
      .describe('regular expressions of the browser origins allowed by CORS; none by default'),
    // Names that the Host header may carry for loopback callers to be admin (decisions §7).
    allowedHosts: z
      .array(
        z
          .string({ error: STRING_MESSAGE })
          .regex(HOST_NAME, { error: 'must be a host name, or .domain for its subdomains' }),
        { error: 'must be a list of host names' },
      )
      .default(() => [])
      .describe('extra Host header names under which a loopback caller is admin (.domain: its subdomains)'),
    // The base of absolute links (`next`); empty: the request's checked Host.
    externalUrl: z
      .string({ error: STRING_MESSAGE })
      .refine(isBaseUrl, { error: 'must be an http(s) URL without query or fragment, or empty' })
      .default('')
      .describe("base URL of absolute links such as next; empty: the request's Host"),
    https: section({
      enabled: bool(true).describe(
        'serve the API over HTTPS too (a self-signed certificate unless files are given)',
      ),
      port: port(5682).describe('port of the HTTPS API'),
      bindAddress: bindAddress('the HTTPS API'),
      ...tlsFiles('the HTTPS API'),
    }),
    // Kuma's name: a verified client certificate from a CA in this directory makes the caller admin.
    auth: section({
      clientCertsDir: string('').describe(
        'directory of CA certificates: an HTTPS client certificate signed by one makes the caller admin',
      ),
    }),
    authn: section({
      localhostIsAdmin: bool(true).describe('a caller from a loopback address without a token is admin'),
      anonymousWrite: bool(false).describe('a caller without a token gets the writer role'),
    }),
    authz: section({
      anonymous: oneOf(['reader', 'none'], 'reader').describe(
        'role of a caller without a token: reader or none',
      ),
      groups: groupGrants().describe(
        'JSON map of user token group to {role, meshes}, merged over the mesh-system:* groups',
      ),
    }),
    bodyLimit: integer(1048576, 1).describe('largest request body in bytes (413 above)'),
    maxHeaderSize: integer(16384, 1).describe('largest request header block in bytes (431 above)'),
    timeouts: section({
      headers: duration('10s').describe(
        'time a client has to send the request headers, and to finish a TLS handshake on the HTTPS port; these timeouts hold on the diagnostics port too',
      ),
      request: duration('30s').describe('time a client has to send a whole request (0s: no limit)'),
      idle: duration('2m').describe('how long an idle keep-alive connection stays open'),
    }),
    // `/_events` watch streams: heartbeat comment interval ('0s': none), and the bytes a
    // client may leave unread in its socket buffer before it is cut off.
    gui: section({
      enabled: bool(true).describe(
        'serve the web GUI at /gui on the API ports (it calls the API as its user, with the same rights)',
      ),
    }),
    watch: section({
      heartbeatInterval: duration('15s').describe(
        'interval of heartbeat comments on /_events streams (0s: none)',
      ),
      bufferLimit: integer(4194304, 1).describe(
        'bytes a /_events client may leave unread before it is cut off',
      ),
    }),
  }),
  adminServer: section({
    apis: section({
      dataplaneToken: section({
        enabled: inert(bool(true), "Kuma's admin server token API (tokens are issued by /tokens/* here)"),
      }),
    }),
    local: section({ port: inert(port(5679), "port of Kuma's local admin server (no such server here)") }),
    public: publicListener(5682, 'admin server'),
  }),
  bootstrapServer: section({
    port: inert(port(5682), "port of Kuma's bootstrap server (the bootstrap is served by the API here)"),
    params: section({
      adminAccessLogPath: inert(
        string('/dev/null'),
        'Envoy admin access log path (proxyless: no Envoy admin)',
      ),
      adminAddress: inert(string('127.0.0.1'), 'Envoy admin address (proxyless: no Envoy admin)'),
      adminPort: inert(port(0), 'Envoy admin port (proxyless: no Envoy admin)'),
      xdsConnectTimeout: inert(duration('1s'), 'Envoy xDS cluster connect timeout (not in a gRPC bootstrap)'),
      xdsHost: z
        .string({ error: STRING_MESSAGE })
        .refine(isHostOrEmpty, { error: 'must be a host name or an IP address (no port), or empty' })
        .default('')
        .describe(
          'xDS host in data plane bootstraps; empty: the host of xdsServer.advertisedAddress, else general.advertisedHostname',
        ),
      xdsPort: port(0).describe(
        'xDS port in data plane bootstraps; 0: the port of xdsServer.advertisedAddress, else xdsServer.grpcPort',
      ),
    }),
  }),
  dataplaneTokenServer: section({
    enabled: inert(bool(true), "Kuma's data plane token server (tokens are issued by /tokens/* here)"),
    local: section({ port: inert(port(5679), "port of Kuma's local data plane token server") }),
    public: publicListener(0, 'data plane token server'),
  }),
  defaults: section({
    skipMeshCreation: bool(false).describe('do not create the default mesh at first start'),
    skipDefaultPolicies: bool(false).describe('do not create the default policies of a new mesh'),
    mesh: string('').describe(
      'the default mesh made at first start, a Mesh as YAML or JSON (type, name optional); empty: no settings',
    ),
  }),
  diagnostics: section({
    port: port(5680).describe('port of the diagnostics server (/healthy, /ready)'),
    bindAddress: bindAddress('the diagnostics server'),
  }),
  discovery: section({
    universal: section({
      pollingInterval: inert(
        duration('1s'),
        'store polling interval (changes are pushed from the event log here)',
      ),
    }),
  }),
  general: section({
    advertisedHostname: nonEmptyString('localhost').describe(
      'host name of this control plane: in the self-signed HTTPS certificate and the data plane bootstrap',
    ),
  }),
  monitoringAssignmentServer: section({
    assignmentRefreshInterval: inert(
      duration('1s'),
      'Prometheus monitoring assignment refresh (no such server here)',
    ),
    grpcPort: inert(port(5676), 'port of the monitoring assignment server (no such server here)'),
  }),
  reports: section({ enabled: inert(bool(false), 'anonymous usage reports (never sent here)') }),
  runtime: section({
    kubernetes: section({
      admissionServer: section({
        address: inert(string(''), 'Kubernetes admission webhook address (no Kubernetes runtime here)'),
        certDir: inert(string(''), 'Kubernetes admission webhook certificate directory'),
        port: inert(port(5443), 'Kubernetes admission webhook port'),
      }),
    }),
  }),
  sdsServer: section({
    grpcPort: inert(port(5677), 'port of the secret discovery server (no SDS server here)'),
    ...inertTlsFiles('the SDS server'),
  }),
  store: section({
    type: oneOf(['level', 'memory', 'postgres'], 'level').describe(
      'level (LevelDB at store.level.path), postgres (store.postgres.*) or memory (nothing kept)',
    ),
    level: section({ path: nonEmptyString('./data').describe('directory of the LevelDB event log') }),
    // A snapshot of the projections every N log entries, or every R when the last one held
    // R > N resources (0: none written or read).
    snapshot: section({
      every: integer(10000, 0).describe('write a snapshot of the views every N log entries (0: none)'),
    }),
    kubernetes: section({
      systemNamespace: inert(
        string('mesh-system'),
        'Kubernetes namespace of the control plane (no Kubernetes store here)',
      ),
    }),
    // The event log in PostgreSQL (one writing instance for now, see docs/postgres.md).
    postgres: section({
      connectionTimeout: integer(5, 0).describe('PostgreSQL connect timeout in seconds (0: none)'),
      dbName: nonEmptyString('mesh').describe('PostgreSQL database of the event log (must exist)'),
      host: nonEmptyString('127.0.0.1').describe('PostgreSQL host name, IP address or Unix socket directory'),
      password: string('').describe('PostgreSQL password (empty: none), masked in /config'),
      port: port(5432).describe('PostgreSQL port'),
      user: nonEmptyString('mesh').describe('PostgreSQL user'),
      maxOpenConnections: integer(10, 5).describe(
        'most connections to PostgreSQL per instance: the writer, the listener, the leader lock and the cluster status take one each, the others (at least one) serve reads',
      ),
      tls: section({
        mode: oneOf(['disable', 'verifyNone', 'verifyCa', 'verifyFull'], 'disable').describe(
          'TLS to PostgreSQL: disable, verifyNone (encrypt, no check), verifyCa (check the CA) or verifyFull (CA and host name)',
        ),
        caPath: string('').describe('PEM CA file that verifyCa and verifyFull check the server against'),
      }),
    }),
  }),
  xdsServer: section({
    dataplaneConfigurationRefreshInterval: inert(
      duration('1s'),
      'periodic config regeneration (config is pushed on every change here)',
    ),
    dataplaneStatusFlushInterval: duration('250ms').describe(
      "how often a proxy's DataplaneInsight counters are published (connects and disconnects: at once)",
    ),
    diagnosticsPort: inert(port(5680), 'xDS diagnostics port (diagnostics.port is the one that listens)'),
    grpcPort: port(5678).describe('port of the xDS (ADS) server for data planes; not on Global'),
    bindAddress: bindAddress('the xDS server'),
    // The xDS address the bootstrap names; empty: general.advertisedHostname:grpcPort.
    advertisedAddress: z
      .string({ error: STRING_MESSAGE })
      .refine(isHostPort, { error: 'must be host:port (an IPv6 address in brackets), or empty' })
      .default('')
      .describe(
        'host:port of the xDS server in bootstraps (bootstrapServer.params.xdsHost/xdsPort win part by part); empty: general.advertisedHostname and grpcPort',
      ),
  }),
  // How the xDS server checks a proxy (decisions §11); `none` lets every proxy in.
  dpServer: section({
    authn: section({
      type: oneOf(['dpToken', 'none'], 'dpToken').describe(
        'how the xDS server checks a proxy: dpToken (a data plane token) or none (every proxy in)',
      ),
    }),
  }),
  multizone: section({
    global: section({
      kds: section({
        grpcPort: port(5685).describe('port of the Global sync server that zones dial (global mode)'),
        bindAddress: bindAddress('the Global sync server'),
        ...tlsFiles('the Global sync server (empty: the HTTPS API certificate)'),
      }),
    }),
    zone: section({
      name: string('').describe('name of this zone (zone mode; required there)'),
      globalAddress: string('').describe('grpcs://host:port of the Global sync server (zone mode)'),
      kds: section({
        token: string('').describe('zone token issued by Global (masked in /config)'),
        rootCaFile: string('').describe("CA file to verify Global's certificate (empty: the system CAs)"),
        tlsSkipVerify: bool(false).describe("do not verify Global's certificate (tests only)"),
      }),
    }),
  }),
  log: section({
    level: oneOf(LOG_LEVELS, 'info').describe(`log level: ${LOG_LEVELS.join(', ')}`),
    format: oneOf(['json', 'text'], 'json').describe(
      'json (one object a line) or text (for people, pino-pretty)',
    ),
  }),
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
