import { z } from 'zod';
import { defineResource } from '../descriptor.js';
import {
  duration,
  everyViolation,
  isRecord,
  percentage,
  SERVICE_TO_SERVICE,
  sourcesDestinations,
  uint,
} from '../fragments.js';

const consecutive = z.strictObject({ consecutive: uint.optional() }).optional();

// extra-policies.md: wrapper types (UInt32Value, DoubleValue, BoolValue) may be absent, so all optional.
const DETECTORS = ['totalErrors', 'gatewayErrors', 'localErrors', 'standardDeviation', 'failure'];
const THRESHOLDS = ['maxConnections', 'maxPendingRequests', 'maxRetries', 'maxRequests'];

/** Whether `section` is an object with one of `keys` set. */
const sets = (section: unknown, keys: readonly string[]): boolean =>
  isRecord(section) && keys.some((k) => section[k] !== undefined);

/**
 * Kuma's rule: a circuit breaker detects or limits something; a `detectors` or `thresholds` given
 * empty is a cause of its own once the other one is set.
 */
function detectorsOrThresholds(c: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const hasDetectors = sets(c.detectors, DETECTORS);
  const hasThresholds = sets(c.thresholds, THRESHOLDS);
  if (!hasDetectors && !hasThresholds) {
    ctx.addIssue({ code: 'custom', path: [], message: 'requires at least one of "detectors", "thresholds"' });
    return;
  }
  if (c.detectors !== undefined && !hasDetectors) {
    ctx.addIssue({
      code: 'custom',
      path: ['detectors'],
      message: `requires at least one of ${quote(DETECTORS)}`,
    });
  }
  if (c.thresholds !== undefined && !hasThresholds) {
    ctx.addIssue({
      code: 'custom',
      path: ['thresholds'],
      message: `requires at least one of ${quote(THRESHOLDS)}`,
    });
  }
}

const quote = (keys: readonly string[]): string => keys.map((k) => `"${k}"`).join(', ');

const conf = z
  .strictObject({
    interval: duration.optional(),
    baseEjectionTime: duration.optional(),
    maxEjectionPercent: uint.max(100).optional(),
    splitExternalAndLocalErrors: z.boolean().optional(),
    detectors: z
      .strictObject({
        totalErrors: consecutive,
        gatewayErrors: consecutive,
        localErrors: consecutive,
        standardDeviation: z
          .strictObject({
            requestVolume: uint.optional(),
            minimumHosts: uint.optional(),
            factor: z.number().min(0).optional(),
          })
          .optional(),
        failure: z
          .strictObject({
            requestVolume: uint.optional(),
            minimumHosts: uint.optional(),
            threshold: percentage.int().optional(),
          })
          .optional(),
      })
      .optional(),
    thresholds: z
      .strictObject({
        maxConnections: uint.optional(),
        maxPendingRequests: uint.optional(),
        maxRetries: uint.optional(),
        maxRequests: uint.optional(),
      })
      .optional(),
  })
  .superRefine(detectorsOrThresholds, everyViolation);

/** CircuitBreaker (extra-policies.md): outlier detection and connection thresholds. */
export const circuitBreaker = defineResource({
  kind: 'CircuitBreaker',
  scope: 'mesh',
  path: 'circuit-breakers',
  spec: z.strictObject({
    ...sourcesDestinations(...SERVICE_TO_SERVICE),
    conf: z.preprocess((v) => v ?? {}, conf),
  }),
  catalogue: { displayName: 'Circuit Breakers', singularDisplayName: 'Circuit Breaker' },
  isPolicy: true,
  sync: 'down',
  crossMeshList: true,
});
