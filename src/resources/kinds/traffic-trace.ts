import { z } from 'zod';
import { defineResource } from '../descriptor.js';
import { backendName, policySelectors } from '../fragments.js';

/** TrafficTrace (spec 2.7): tracing to a tracing backend of the mesh (the default one when unset). */
export const trafficTrace = defineResource({
  kind: 'TrafficTrace',
  scope: 'mesh',
  path: 'traffic-traces',
  spec: z.strictObject({
    selectors: policySelectors(),
    conf: z.strictObject({ backend: backendName }).optional(),
  }),
  catalogue: { displayName: 'Traffic Traces', singularDisplayName: 'Traffic Trace' },
  isPolicy: true,
  sync: 'down',
  crossMeshList: true,
});
