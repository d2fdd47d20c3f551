import { z } from 'zod';
import { defineResource } from '../descriptor.js';
import { hostOrIp, port } from '../fragments.js';

/** ZoneEgress (spec 2.15): a zone's exit point to other zones and external services; written in zones, synced up. */
export const zoneEgress = defineResource({
  kind: 'ZoneEgress',
  scope: 'global',
  path: 'zoneegresses',
  spec: z.strictObject({
    zone: z.string().min(1).optional(),
    networking: z.strictObject({ address: hostOrIp, port, admin: z.strictObject({ port }).optional() }),
  }),
  sync: 'up',
  zoneOwned: true,
  globalInsightsKey: 'ZoneEgress',
});
