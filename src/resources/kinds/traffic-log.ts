import { z } from 'zod';
import { defineResource } from '../descriptor.js';
import { backendName, SERVICE_TO_SERVICE, sourcesDestinations } from '../fragments.js';

/** TrafficLog (spec 2.6): access logs to a logging backend of the mesh (the default one when unset). */
export const trafficLog = defineResource({
  kind: 'TrafficLog',
  scope: 'mesh',
  path: 'traffic-logs',
  spec: z.strictObject({
    ...sourcesDestinations(...SERVICE_TO_SERVICE),
    conf: z.strictObject({ backend: backendName }).optional(),
  }),
  catalogue: { displayName: 'Traffic Logs', singularDisplayName: 'Traffic Log' },
  isPolicy: true,
  sync: 'down',
  crossMeshList: true,
});
