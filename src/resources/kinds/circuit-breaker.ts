import { z } from 'zod';
import { defineResource } from '../descriptor.js';
import { duration, percentage, SERVICE_TO_SERVICE, sourcesDestinations, uint } from '../fragments.js';

const consecutive = z.strictObject({ consecutive: uint.optional() }).optional();

// extra-policies.md: wrapper types (UInt32Value, DoubleValue, BoolValue) may be absent, so all optional.
const conf = z.strictObject({
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
});

/** CircuitBreaker (extra-policies.md): outlier detection and connection thresholds. */
export const circuitBreaker = defineResource({
  kind: 'CircuitBreaker',
  scope: 'mesh',
  path: 'circuit-breakers',
  spec: z.strictObject({ ...sourcesDestinations(...SERVICE_TO_SERVICE), conf }),
  catalogue: { displayName: 'Circuit Breakers', singularDisplayName: 'Circuit Breaker' },
  isPolicy: true,
  sync: 'down',
  crossMeshList: true,
});
