import { z } from 'zod';
import { defineResource } from '../descriptor.js';
import { sourcesDestinations } from '../fragments.js';

/** TrafficLog (spec 2.6): access logs to a logging backend of the mesh (the default one when unset). */
export const trafficLog = defineResource({
  kind: 'TrafficLog',
  scope: 'mesh',
  path: 'traffic-logs',
  spec: z.strictObject({
    ...sourcesDestinations,
    conf: z.strictObject({ backend: z.string().min(1).optional() }).optional(),
  }),
  catalogue: { displayName: 'Traffic Logs', singularDisplayName: 'Traffic Log' },
  isPolicy: true,
  sync: 'down',
  crossMeshList: true,
});
