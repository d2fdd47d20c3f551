import { z } from 'zod';
import { defineResource } from '../descriptor.js';
import { everyViolation, ipAddress, isRecord, port, serviceTagMap } from '../fragments.js';
import { prometheusConf } from './mesh.js';

const inbound = z.strictObject({
  port,
  servicePort: port.optional(),
  address: ipAddress.optional(),
  serviceAddress: ipAddress.optional(),
  tags: serviceTagMap,
  // decisions §2: clients read `health.ready`.
  health: z.strictObject({ ready: z.boolean() }).optional(),
});

// Spec 2.4: an outbound names its service by `tags` or, in the older form, by `service`; exactly one.
const outbound = z
  .strictObject({
    port,
    address: ipAddress.optional(),
    tags: serviceTagMap.optional(),
    service: z.string().min(1).optional(),
  })
  .superRefine((o: Record<string, unknown>, ctx) => {
    if (o.tags === undefined && o.service === undefined) {
      ctx.addIssue({ code: 'custom', path: [], message: 'either tags or service has to be set' });
    } else if (o.tags !== undefined && o.service !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['service'], message: 'cannot be set together with tags' });
    }
  }, everyViolation);

/** A proxy is a sidecar (inbounds) or a gateway, never both; an inbound's (address, port) is unique. */
function checkNetworking(n: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const inbounds = Array.isArray(n.inbound) ? n.inbound : [];
  if (inbounds.length === 0 && n.gateway === undefined) {
    ctx.addIssue({ code: 'custom', path: [], message: 'has to contain at least one inbound or a gateway' });
  } else if (inbounds.length > 0 && n.gateway !== undefined) {
    ctx.addIssue({ code: 'custom', path: [], message: 'inbound cannot be defined together with gateway' });
  }
  const seen = new Map<string, number>();
  inbounds.forEach((ib, i) => {
    if (!isRecord(ib) || typeof ib.port !== 'number') return;
    const key = `${String(ib.address ?? n.address)}:${ib.port}`;
    const first = seen.get(key);
    if (first === undefined) seen.set(key, i);
    else {
      ctx.addIssue({
        code: 'custom',
        path: ['inbound', i, 'port'],
        message: `port and address already used by inbound[${first}]`,
      });
    }
  });
}

/** Dataplane (spec 2.4): a proxy's networking; written in zones and synced up. */
export const dataplane = defineResource({
  kind: 'Dataplane',
  scope: 'mesh',
  path: 'dataplanes',
  // decisions §5: a tag filter matches one inbound, or the gateway's tags.
  tagSets: (r) => {
    const n = (r.networking ?? {}) as {
      inbound?: Array<{ tags?: Record<string, string> }>;
      gateway?: { tags?: Record<string, string> };
    };
    const sets: Array<Record<string, string>> = [];
    for (const i of n.inbound ?? []) if (i.tags) sets.push(i.tags);
    if (n.gateway?.tags) sets.push(n.gateway.tags);
    return sets;
  },
  spec: z.strictObject({
    networking: z
      .strictObject({
        address: ipAddress,
        advertisedAddress: ipAddress.optional(),
        admin: z.strictObject({ port }).optional(),
        inbound: z.array(inbound).optional(),
        outbound: z.array(outbound).optional(),
        // decisions §2: a gateway proxy has `gateway` instead of inbounds.
        gateway: z
          .strictObject({ tags: serviceTagMap, type: z.enum(['BUILTIN', 'DELEGATED']).optional() })
          .optional(),
        transparentProxying: z
          .strictObject({ redirectPortInbound: port.optional(), redirectPortOutbound: port.optional() })
          .optional(),
      })
      .superRefine(checkNetworking, everyViolation),
    // Kuma 2.0: overrides the mesh's enabled Prometheus backend for this proxy (port, path, tags).
    metrics: z
      .strictObject({
        name: z.string().optional(),
        type: z.literal('prometheus'),
        conf: prometheusConf.optional(),
      })
      .optional(),
  }),
  sync: 'up',
  zoneOwned: true,
  crossMeshList: true,
});
