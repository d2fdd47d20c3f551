import { z } from 'zod';
import { defineResource } from '../descriptor.js';
import { everyViolation, isRecord, port } from '../fragments.js';
import { overlapsLoopback, proxyAddress } from '../proxy-fields.js';

/** The admin port is not the port the egress listens on at 127.0.0.1 (or every address), as in Kuma. */
function checkAdminPort(n: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const admin = isRecord(n.admin) ? n.admin.port : undefined;
  if (
    typeof admin === 'number' &&
    admin === n.port &&
    typeof n.address === 'string' &&
    overlapsLoopback(n.address)
  )
    ctx.addIssue({ code: 'custom', path: ['admin', 'port'], message: 'must differ from port' });
}

/** ZoneEgress (spec 2.15): a zone's exit point to other zones and external services; written in zones, synced up. */
export const zoneEgress = defineResource({
  kind: 'ZoneEgress',
  scope: 'global',
  path: 'zoneegresses',
  spec: z.strictObject({
    zone: z.string().min(1).optional(),
    networking: z
      .strictObject({ address: proxyAddress.optional(), port, admin: z.strictObject({ port }).optional() })
      .superRefine(checkAdminPort, everyViolation),
  }),
  sync: 'up',
  zoneOwned: true,
  globalInsightsKey: 'ZoneEgress',
});
