import { z } from 'zod';
import { defineResource } from '../descriptor.js';
import { checkSelectorTags } from '../proxy-fields.js';
import {
  DATA_SOURCE_TEXT_KEYS,
  dataSource,
  duration,
  everyViolation,
  hostPort,
  isRecord,
  port,
  tagMap,
  uniqueNames,
  uint,
} from '../fragments.js';

const backendName = z.string().min(1);

// Kuma's durations of certificate lifetimes: `0`, or a whole number with one unit, days to years
// included (`2y`, `4w`, `30d`, `24h`, `90m`, `60s`, `500ms`).
const lifetime = z.string().regex(/^(0|\d+(y|w|d|h|m|s|ms))$/, {
  message: 'must be a duration such as 1y, 4w, 30d, 24h, 90m, 60s or 500ms',
});

const dpCert = z.strictObject({
  rotation: z.strictObject({ expiration: lifetime }).optional(),
  requestTimeout: duration.optional(),
});

// Fields every mTLS backend may have, whatever its type.
const mtlsCommon = {
  name: backendName,
  dpCert: dpCert.optional(),
  mode: z.enum(['STRICT', 'PERMISSIVE']).optional(),
  rootChain: z.strictObject({ requestTimeout: duration.optional() }).optional(),
};

// Spec 2.2: `provided` backends name their CA in `conf.cert` / `conf.key` (Kuma data sources).
const mtlsBackend = z.discriminatedUnion('type', [
  z.strictObject({
    ...mtlsCommon,
    type: z.literal('builtin'),
    conf: z
      .strictObject({
        caCert: z.strictObject({ RSAbits: uint.optional(), expiration: duration.optional() }).optional(),
      })
      .optional(),
  }),
  z.strictObject({
    ...mtlsCommon,
    type: z.literal('provided'),
    conf: z.strictObject({ cert: dataSource, key: dataSource }),
  }),
]);

/** Kuma's zipkin URL: absolute, with an explicit port. */
const zipkinUrl = z
  .string()
  .min(1)
  .superRefine((v, ctx) => {
    if (v === '') return;
    if (!URL.canParse(v) || !/^https?:$/.test(new URL(v).protocol))
      ctx.addIssue({ code: 'custom', message: 'must be a valid http or https URL' });
    else if (!/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*:\d+(?:[/?#]|$)/i.test(v))
      ctx.addIssue({ code: 'custom', message: 'port has to be explicitly specified' });
  });

const sampling = z
  .number()
  .min(0, { message: 'has to be in the range 0.0-100.0' })
  .max(100, { message: 'has to be in the range 0.0-100.0' });

const tracingBackend = z.discriminatedUnion('type', [
  z.strictObject({
    name: backendName,
    type: z.literal('zipkin'),
    sampling: sampling.optional(),
    conf: z.strictObject({
      url: zipkinUrl,
      traceId128bit: z.boolean().optional(),
      apiVersion: z.enum(['httpJsonV1', 'httpJson', 'httpProto']).optional(),
      sharedSpanContext: z.boolean().optional(),
    }),
  }),
  z.strictObject({
    name: backendName,
    type: z.literal('datadog'),
    sampling: sampling.optional(),
    conf: z.strictObject({
      address: z.string().min(1),
      port,
      splitService: z.boolean().optional(),
    }),
  }),
]);

// Envoy's access log command operators as Kuma parses them: `%NAME%`, `%NAME(args)%`, `%NAME(args):N%`.
const COMMAND = /^%([A-Z_0-9]+)(?:\(([^)]*)\))?(?::([0-9]+))?%/;
const HEADER_COMMANDS = new Set(['REQ', 'RESP', 'TRAILER']);

/** What is wrong with one command operator, or undefined when it is right. */
function commandError(token: string, command: string, args: string | undefined): string | undefined {
  const bare = args === undefined && token.slice(1, -1).split(':')[0] === command;
  if (HEADER_COMMANDS.has(command)) {
    if (bare || args === '')
      return `command "${command}" requires a header name as its argument, got ${JSON.stringify(token)}`;
    const names = (args ?? '').split('?');
    if (names.length > 2) return `more than 1 alternative header in ${JSON.stringify(token)}`;
    return undefined;
  }
  if (command === 'DYNAMIC_METADATA' || command === 'FILTER_STATE') {
    if (bare || args === '') return `command "${command}" requires an argument, got ${JSON.stringify(token)}`;
    return undefined;
  }
  if (command === 'START_TIME') {
    return /%[-_0^#]*[1-9]*n/.test(args ?? '')
      ? `start time format contains a newline in ${JSON.stringify(token)}`
      : undefined;
  }
  if (token !== `%${command}%`)
    return `command "${command}" takes no arguments or length limit, got ${JSON.stringify(token)}`;
  return undefined;
}

/** Kuma's access log format check (its ValidateFormat): text, and `%` only to start a command operator. */
const accessLogFormat = z.string().superRefine((format, ctx) => {
  for (let pos = 0; pos < format.length; pos++) {
    if (format[pos] !== '%') continue;
    const tail = format.slice(pos);
    const match = COMMAND.exec(tail);
    const error = match
      ? commandError(match[0], match[1], match[2])
      : `expected a command operator to start at position ${pos + 1}, instead got: ${JSON.stringify(tail)}`;
    if (error !== undefined || match === null) {
      ctx.addIssue({ code: 'custom', message: `format string is not valid: ${error ?? ''}` });
      return;
    }
    pos += match[0].length - 1;
  }
});

/** A TCP log collector's address: `host:port`. */
const collectorAddress = z.string().superRefine((v, ctx) => {
  if (v === '') ctx.addIssue({ code: 'custom', message: 'cannot be empty' });
  else if (!hostPort.safeParse(v).success)
    ctx.addIssue({ code: 'custom', message: 'must be host:port with a port in the range 1-65535' });
});

const loggingBackend = z.discriminatedUnion('type', [
  z.strictObject({
    name: backendName,
    format: accessLogFormat.optional(),
    type: z.literal('file'),
    conf: z.strictObject({ path: z.string().min(1) }),
  }),
  z.strictObject({
    name: backendName,
    format: accessLogFormat.optional(),
    type: z.literal('tcp'),
    conf: z.strictObject({ address: collectorAddress }),
  }),
]);

// Kuma's constraints on the proxies that may join: each rule is a selector of their tags.
const constraintRule = z
  .strictObject({ tags: z.record(z.string(), z.string()).optional() })
  .superRefine((rule: Record<string, unknown>, ctx) => {
    checkSelectorTags(isRecord(rule.tags) ? rule.tags : {}, ctx, ['tags'], { atLeastOne: true });
  }, everyViolation);

const constraints = z.strictObject({
  dataplaneProxy: z
    .strictObject({
      requirements: z.array(constraintRule).optional(),
      restrictions: z.array(constraintRule).optional(),
    })
    .optional(),
});

/** Names of Prometheus aggregate entries are unique: cause on the duplicate's `name`. */
function uniqueAggregateNames(conf: Record<string, unknown>, ctx: z.RefinementCtx): void {
  if (!Array.isArray(conf.aggregate)) return;
  const seen = new Set<unknown>();
  conf.aggregate.forEach((entry, i) => {
    const name = isRecord(entry) ? entry.name : undefined;
    if (typeof name !== 'string') return;
    if (seen.has(name)) {
      ctx.addIssue({
        code: 'custom',
        path: ['aggregate', i, 'name'],
        message: `duplicate entry: ${name}, values have to be unique`,
      });
    }
    seen.add(name);
  });
}

/** A regular expression that compiles (Envoy's stats filter). */
const regex = z.string().refine(
  (v) => {
    try {
      new RegExp(v);
      return true;
    } catch {
      return false;
    }
  },
  { message: 'must be a valid regular expression' },
);

/**
 * Kuma's PrometheusMetricsBackendConfig: the `conf` of a mesh's Prometheus backend, and of a
 * Dataplane's own `metrics`, which overrides it for one proxy.
 */
export const prometheusConf = z
  .strictObject({
    port: port.optional(),
    path: z.string().optional(),
    skipMTLS: z.boolean().optional(),
    tags: tagMap.optional(),
    aggregate: z
      .array(
        z.strictObject({
          name: z.string(),
          port: port.optional(),
          path: z.string().optional(),
          enabled: z.boolean().optional(),
        }),
      )
      .optional(),
    envoy: z.strictObject({ filterRegex: regex.optional(), usedOnly: z.boolean().optional() }).optional(),
  })
  .superRefine(uniqueAggregateNames, everyViolation);

const metricsBackend = z.strictObject({
  name: backendName,
  type: z.literal('prometheus'),
  conf: prometheusConf.optional(),
});

/**
 * Checks of a mesh section: backend names are unique, and `enabledBackend` / `defaultBackend` names
 * one of them (an empty string means none, as in Kuma).
 */
function pointsAtBackend(pointer: 'enabledBackend' | 'defaultBackend') {
  return (value: Record<string, unknown>, ctx: z.RefinementCtx): void => {
    uniqueNames(value.backends, ctx, ['backends'], 'backend');
    const chosen = value[pointer];
    if (typeof chosen !== 'string' || chosen === '') return;
    const backends = Array.isArray(value.backends) ? value.backends : [];
    if (!backends.some((b) => isRecord(b) && b.name === chosen)) {
      ctx.addIssue({
        code: 'custom',
        path: [pointer],
        message: 'has to be set to one of the backends in the mesh',
      });
    }
  };
}

/** A mesh has at most one mTLS backend (Kuma's limit). */
function atMostOneMtlsBackend(mtls: Record<string, unknown>, ctx: z.RefinementCtx): void {
  if (Array.isArray(mtls.backends) && mtls.backends.length > 1)
    ctx.addIssue({ code: 'custom', path: ['backends'], message: 'must have at most one backend' });
}

/** Traffic through zone egresses is identified by mTLS: `routing.zoneEgress` needs an enabled backend. */
function zoneEgressNeedsMtls(spec: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const routing = spec.routing;
  if (!isRecord(routing) || routing.zoneEgress !== true) return;
  const mtls = spec.mtls;
  const enabled = isRecord(mtls) ? mtls.enabledBackend : undefined;
  if (typeof enabled !== 'string' || enabled === '')
    ctx.addIssue({ code: 'custom', path: ['mtls'], message: 'has to be set when zoneEgress is enabled' });
}

/** Mesh (spec 2.2): mTLS, tracing, logging and metrics backends; global, synced down to zones. */
export const mesh = defineResource({
  kind: 'Mesh',
  scope: 'global',
  path: 'meshes',
  spec: z
    .strictObject({
      mtls: z
        .strictObject({ enabledBackend: z.string().optional(), backends: z.array(mtlsBackend).optional() })
        .superRefine(pointsAtBackend('enabledBackend'), everyViolation)
        .superRefine(atMostOneMtlsBackend, everyViolation)
        .optional(),
      tracing: z
        .strictObject({ defaultBackend: z.string().optional(), backends: z.array(tracingBackend).optional() })
        .superRefine(pointsAtBackend('defaultBackend'), everyViolation)
        .optional(),
      logging: z
        .strictObject({ defaultBackend: z.string().optional(), backends: z.array(loggingBackend).optional() })
        .superRefine(pointsAtBackend('defaultBackend'), everyViolation)
        .optional(),
      metrics: z
        .strictObject({ enabledBackend: z.string().optional(), backends: z.array(metricsBackend).optional() })
        .superRefine(pointsAtBackend('enabledBackend'), everyViolation)
        .optional(),
      routing: z
        .strictObject({
          localityAwareLoadBalancing: z.boolean().optional(),
          zoneEgress: z.boolean().optional(),
        })
        .optional(),
      networking: z
        .strictObject({ outbound: z.strictObject({ passthrough: z.boolean().optional() }).optional() })
        .optional(),
      constraints: constraints.optional(),
    })
    .superRefine(zoneEgressNeedsMtls, everyViolation),
  sync: 'down',
  globalInsightsKey: 'Mesh',
  // Kuma's access log formats end with a newline; certificates are PEM.
  multiLineKeys: new Set(['format', ...DATA_SOURCE_TEXT_KEYS]),
});
