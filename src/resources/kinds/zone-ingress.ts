import { z } from 'zod';
import { defineResource } from '../descriptor.js';
import { everyViolation, isRecord, port, resourceName, uint } from '../fragments.js';
import { overlapsLoopback, proxyAddress, proxyTags } from '../proxy-fields.js';

// Computed by the control plane from the zone's proxies (what a user writes is replaced); Kuma
// checks only the tags of one.
const availableService = z.strictObject({
  tags: proxyTags({ service: 'map' }),
  instances: uint.optional(),
  mesh: resourceName.optional(),
  externalService: z.boolean().optional(),
});

/**
 * Kuma's ZoneIngress checks across `networking`: the advertised address and port come together,
 * and the admin port is not the port the ingress listens on at 127.0.0.1 (or every address).
 */
function checkNetworking(n: Record<string, unknown>, ctx: z.RefinementCtx): void {
  if (n.advertisedAddress === undefined && n.advertisedPort !== undefined)
    ctx.addIssue({
      code: 'custom',
      path: ['advertisedAddress'],
      message: 'has to be defined with advertisedPort',
    });
  if (n.advertisedPort === undefined && n.advertisedAddress !== undefined)
    ctx.addIssue({
      code: 'custom',
      path: ['advertisedPort'],
      message: 'has to be defined with advertisedAddress',
    });
  const admin = isRecord(n.admin) ? n.admin.port : undefined;
  if (typeof admin !== 'number') return;
  const clash = (address: unknown, p: unknown): boolean =>
    admin === p && typeof address === 'string' && overlapsLoopback(address);
  if (clash(n.address, n.port) || clash(n.advertisedAddress, n.advertisedPort))
    ctx.addIssue({ code: 'custom', path: ['admin', 'port'], message: 'must differ from port' });
}

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
    networking: z
      .strictObject({
        address: proxyAddress.optional(),
        advertisedAddress: proxyAddress.optional(),
        port,
        advertisedPort: port.optional(),
        admin: z.strictObject({ port }).optional(),
      })
      .superRefine(checkNetworking, everyViolation),
    availableServices: z.array(availableService).optional(),
  }),
  sync: 'up',
  zoneOwned: true,
  // Global sends each zone's ingresses, with their available services, to the other zones.
  crossZone: true,
  globalInsightsKey: 'ZoneIngress',
});
