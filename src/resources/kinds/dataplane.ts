import { z } from 'zod';
import { defineResource } from '../descriptor.js';
import { everyViolation, integer, ipAddress, isRecord, port, SERVICE_TAG } from '../fragments.js';
import {
  MISSING_SERVICE_TAG,
  overlapsLoopback,
  proxyAddress,
  proxyTags,
  isIpOrDnsName,
} from '../proxy-fields.js';
import { prometheusConf } from './mesh.js';

// A duration as Go parses it: `0` or numbers with units (`300ms`, `1.5s`, `1h30m`).
const GO_DURATION = /^(0|(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+)$/;

/** A duration of a health check, more than zero. */
const positiveDuration = z.string().superRefine((v, ctx) => {
  if (!GO_DURATION.test(v))
    ctx.addIssue({ code: 'custom', message: 'must be a duration such as 300ms, 5s, 1.5s, 10m, 1h30m' });
  else if (!/[1-9]/.test(v)) ctx.addIssue({ code: 'custom', message: 'must be positive' });
});

/** A count of probes, more than zero. */
const threshold = integer.min(1, { message: 'must be positive' }).max(4294967295);

// Kuma's serviceProbe: the TCP health check of an inbound's application.
const serviceProbe = z.strictObject({
  interval: positiveDuration.optional(),
  timeout: positiveDuration.optional(),
  unhealthyThreshold: threshold.optional(),
  healthyThreshold: threshold.optional(),
  tcp: z.strictObject({}).optional(),
});

const inbound = z
  .strictObject({
    port,
    servicePort: port.optional(),
    address: ipAddress.optional(),
    serviceAddress: ipAddress.optional(),
    tags: proxyTags({ service: 'key', protocol: 'known' }).optional(),
    // decisions §2: clients read `health.ready`.
    health: z.strictObject({ ready: z.boolean() }).optional(),
    serviceProbe: serviceProbe.optional(),
  })
  .superRefine((ib: Record<string, unknown>, ctx) => {
    // Absent tags lack the service tag too: the cause is where the tags' own check puts it.
    if (ib.tags === undefined)
      ctx.addIssue({ code: 'custom', path: ['tags', SERVICE_TAG], message: 'tag has to exist' });
  }, everyViolation);

/** Whether a value is a non-empty plain object. */
const hasKeys = (v: unknown): boolean => isRecord(v) && Object.keys(v).length > 0;

// Spec 2.4: an outbound names its service by `tags` or, in the older form, by `service`. Tags, when
// there are some, are used and must hold the service tag; without them `service` is required.
const outbound = z
  .strictObject({
    port,
    address: ipAddress.optional(),
    tags: proxyTags().optional(),
    service: z.string().min(1).optional(),
  })
  .superRefine((o: Record<string, unknown>, ctx) => {
    const tags = o.tags;
    const missing = hasKeys(tags)
      ? isRecord(tags) && tags[SERVICE_TAG] === undefined
      : o.service === undefined;
    if (missing) ctx.addIssue({ code: 'custom', path: ['tags'], message: MISSING_SERVICE_TAG });
  }, everyViolation);

// A URL path as Go's url.ParseRequestURI takes it: absolute, or a full URL.
const urlPath = z.string().refine((v) => v.startsWith('/') || /^[a-zA-Z][a-zA-Z0-9+.-]*:\S/.test(v), {
  message: 'must be a URL path starting with /',
});

// Kuma's virtual probes: the proxy serves the application's HTTP health checks on `port`.
const probes = z.strictObject({
  port,
  endpoints: z.array(z.strictObject({ inboundPort: port, inboundPath: urlPath, path: urlPath })).optional(),
});

// A proxy's own Prometheus settings, over the mesh's enabled backend.
const metrics = z.strictObject({
  name: z.string().optional(),
  type: z.literal('prometheus'),
  conf: prometheusConf.optional(),
});

type Inbound = { port?: unknown; servicePort?: unknown; address?: unknown; serviceAddress?: unknown };

/** The inbounds of a networking object that are objects (invalid ones still get their own causes). */
function inboundsOf(n: Record<string, unknown>): Inbound[] {
  return Array.isArray(n.inbound) ? n.inbound.filter(isRecord) : [];
}

/**
 * Which proxy a networking object describes and what that allows: a sidecar has inbounds; a
 * delegated gateway (no `type` is DELEGATED, Kuma's enum default) has none; a builtin gateway has
 * neither inbounds nor outbounds.
 */
function checkProxyKind(n: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const inbounds = Array.isArray(n.inbound) ? n.inbound : [];
  const outbounds = Array.isArray(n.outbound) ? n.outbound : [];
  if (n.gateway === undefined) {
    if (inbounds.length === 0)
      ctx.addIssue({
        code: 'custom',
        path: [],
        message: 'has to contain at least one inbound interface or gateway',
      });
    return;
  }
  const builtin = isRecord(n.gateway) && n.gateway.type === 'BUILTIN';
  const kind = builtin ? 'builtin' : 'delegated';
  if (inbounds.length > 0)
    ctx.addIssue({
      code: 'custom',
      path: ['inbound'],
      message: `inbound cannot be defined for ${kind} gateways`,
    });
  if (builtin && outbounds.length > 0)
    ctx.addIssue({
      code: 'custom',
      path: ['outbound'],
      message: 'outbound cannot be defined for builtin gateways',
    });
}

/** An inbound's (address, port) is unique; its application's address and port differ from its own. */
function checkInboundAddresses(n: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const seen = new Map<string, number>();
  inboundsOf(n).forEach((ib, i) => {
    if (typeof ib.port !== 'number') return;
    const key = `${String(ib.address ?? n.address)}:${ib.port}`;
    const first = seen.get(key);
    if (first === undefined) seen.set(key, i);
    else {
      // Our own rule: two inbounds cannot listen on one address and port.
      ctx.addIssue({
        code: 'custom',
        path: ['inbound', i, 'port'],
        message: `port and address already used by inbound[${first}]`,
      });
    }
    const sameAddress =
      ib.serviceAddress !== undefined &&
      (ib.serviceAddress === n.address || (ib.address !== undefined && ib.address === ib.serviceAddress));
    if (sameAddress && (ib.servicePort === undefined || ib.servicePort === ib.port)) {
      ctx.addIssue({
        code: 'custom',
        path: ['inbound', i, 'serviceAddress'],
        message: 'serviceAddress and servicePort have to differ from address and port',
      });
    }
  });
}

/** The admin port is not a port an inbound or outbound listens on at 127.0.0.1 (or every address). */
function checkAdminPort(n: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const admin = isRecord(n.admin) ? n.admin.port : undefined;
  if (typeof admin !== 'number') return;
  const onLoopback = (address: unknown): boolean => typeof address === 'string' && overlapsLoopback(address);
  const inboundClash = inboundsOf(n).some((ib) => {
    const own = ib.address ?? n.address;
    const workload = ib.serviceAddress ?? own;
    return (
      (admin === ib.port && onLoopback(own)) ||
      (admin === (ib.servicePort ?? ib.port) && onLoopback(workload))
    );
  });
  if (inboundClash)
    ctx.addIssue({ code: 'custom', path: ['admin', 'port'], message: 'must differ from inbound' });
  const outbounds = Array.isArray(n.outbound) ? n.outbound.filter(isRecord) : [];
  if (outbounds.some((ob) => admin === ob.port && onLoopback(ob.address ?? '127.0.0.1')))
    ctx.addIssue({ code: 'custom', path: ['admin', 'port'], message: 'must differ from outbound' });
}

/** Kuma's Dataplane checks across the fields of `networking`. */
function checkNetworking(n: Record<string, unknown>, ctx: z.RefinementCtx): void {
  checkProxyKind(n, ctx);
  checkInboundAddresses(n, ctx);
  checkAdminPort(n, ctx);
}

/** A builtin gateway serves no application, so it has no probes to serve. */
function checkSpec(spec: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const n = spec.networking;
  const builtin = isRecord(n) && isRecord(n.gateway) && n.gateway.type === 'BUILTIN';
  if (builtin && spec.probes !== undefined)
    ctx.addIssue({
      code: 'custom',
      path: ['probes'],
      message: 'probes cannot be defined for builtin gateways',
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
  spec: z
    .strictObject({
      networking: z
        .strictObject({
          address: proxyAddress,
          advertisedAddress: z
            .string()
            .refine(isIpOrDnsName, { message: 'must be a valid IP address or domain name' })
            .optional(),
          admin: z.strictObject({ port }).optional(),
          inbound: z.array(inbound).optional(),
          outbound: z.array(outbound).optional(),
          // decisions §2: a gateway proxy has `gateway` instead of inbounds; its tags name its service.
          gateway: z
            .strictObject({
              tags: proxyTags({ service: 'map', protocol: 'tcp' }),
              type: z.enum(['BUILTIN', 'DELEGATED']).optional(),
            })
            .optional(),
          transparentProxying: z
            .strictObject({
              redirectPortInbound: port.optional(),
              redirectPortInboundV6: port.optional(),
              redirectPortOutbound: port.optional(),
              directAccessServices: z.array(z.string().min(1)).optional(),
              reachableServices: z.array(z.string().min(1)).optional(),
            })
            .optional(),
        })
        .superRefine(checkNetworking, everyViolation),
      metrics: metrics.optional(),
      probes: probes.optional(),
    })
    .superRefine(checkSpec, everyViolation),
  sync: 'up',
  zoneOwned: true,
  crossMeshList: true,
});
