import { z } from 'zod';
import { defineResource } from '../descriptor.js';
import { hostOrIp, port, resourceName, tagMap, uint } from '../fragments.js';

const availableService = z.strictObject({
  tags: tagMap,
  instances: uint,
  mesh: resourceName,
  externalService: z.boolean().optional(),
});

/** ZoneIngress (spec 2.13): a zone's entry point for cross-zone traffic; written in zones, synced up. */
export const zoneIngress = defineResource({
  kind: 'ZoneIngress',
  scope: 'global',
  path: 'zone-ingresses',
  // Spec 4.7 writes the single-item line as `/zone-ingress/{name}`.
  itemAliases: ['zone-ingress'],
  spec: z.strictObject({
    // Spec 2.13: "optional in some entities".
    zone: z.string().min(1).optional(),
    networking: z.strictObject({
      address: hostOrIp.optional(),
      advertisedAddress: hostOrIp.optional(),
      port: port.optional(),
      advertisedPort: port.optional(),
      admin: z.strictObject({ port }).optional(),
    }),
    availableServices: z.array(availableService).optional(),
  }),
  sync: 'up',
  zoneOwned: true,
  // Issue 5: Global sends each zone's ingresses, with their available services, to the other zones.
  crossZone: true,
  globalInsightsKey: 'ZoneIngress',
});
