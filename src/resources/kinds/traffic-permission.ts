import { z } from 'zod';
import { defineResource } from '../descriptor.js';
import { sourcesDestinations } from '../fragments.js';

/** TrafficPermission (spec 2.6): sources and destinations only. */
export const trafficPermission = defineResource({
  kind: 'TrafficPermission',
  scope: 'mesh',
  path: 'traffic-permissions',
  aliases: ['trafficpermissions'],
  spec: z.strictObject({ ...sourcesDestinations() }),
  catalogue: { displayName: 'Traffic Permissions', singularDisplayName: 'Traffic Permission' },
  isPolicy: true,
  sync: 'down',
  crossMeshList: true,
});
