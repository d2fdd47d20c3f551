import { z } from 'zod';
import { defineResource } from '../descriptor.js';
import {
  DATA_SOURCE_TEXT_KEYS,
  dataSource,
  duration,
  everyViolation,
  hostPort,
  isRecord,
  percentage,
  port,
  tagMap,
  uniqueNames,
  uint,
} from '../fragments.js';

const backendName = z.string().min(1);
const dpCert = z.strictObject({ rotation: z.strictObject({ expiration: duration }).optional() });

// Spec 2.2: `provided` backends name their CA in `conf.cert` / `conf.key` (Kuma data sources).
const mtlsBackend = z.discriminatedUnion('type', [
  z.strictObject({
    name: backendName,
    type: z.literal('builtin'),
    dpCert: dpCert.optional(),
    conf: z
      .strictObject({
        caCert: z.strictObject({ RSAbits: uint.optional(), expiration: duration.optional() }).optional(),
      })
      .optional(),
  }),
  z.strictObject({
    name: backendName,
    type: z.literal('provided'),
    dpCert: dpCert.optional(),
    conf: z.strictObject({ cert: dataSource, key: dataSource }),
  }),
]);

const tracingBackend = z.strictObject({
  name: backendName,
  type: z.literal('zipkin'),
  sampling: percentage.optional(),
  conf: z.strictObject({
    url: z.url({ protocol: /^https?$/ }),
    traceId128bit: z.boolean().optional(),
    apiVersion: z.string().optional(),
  }),
});

const loggingBackend = z.discriminatedUnion('type', [
  z.strictObject({
    name: backendName,
    format: z.string().optional(),
    type: z.literal('file'),
    conf: z.strictObject({ path: z.string().min(1) }),
  }),
  z.strictObject({
    name: backendName,
    format: z.string().optional(),
    type: z.literal('tcp'),
    conf: z.strictObject({ address: hostPort }),
  }),
]);

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

/** Mesh (spec 2.2): mTLS, tracing, logging and metrics backends; global, synced down to zones. */
export const mesh = defineResource({
  kind: 'Mesh',
  scope: 'global',
  path: 'meshes',
  spec: z.strictObject({
    mtls: z
      .strictObject({ enabledBackend: z.string().optional(), backends: z.array(mtlsBackend).optional() })
      .superRefine(pointsAtBackend('enabledBackend'), everyViolation)
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
  }),
  sync: 'down',
  globalInsightsKey: 'Mesh',
  // Kuma's access log formats end with a newline; certificates are PEM.
  multiLineKeys: new Set(['format', ...DATA_SOURCE_TEXT_KEYS]),
});
