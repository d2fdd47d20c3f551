import { z } from 'zod';
import { defineResource } from '../descriptor.js';
import { DATA_SOURCE_TEXT_KEYS, dataSource, everyViolation, isRecord, port, uint } from '../fragments.js';
import { gatewayHostname, gatewayTagMap, serviceSelectorList } from '../gateway-fragments.js';

const tls = z.strictObject({
  mode: z.enum(['TERMINATE', 'PASSTHROUGH']).optional(),
  certificates: z.array(dataSource).max(2).optional(),
  options: z.strictObject({}).optional(),
});

/** A cause at `path` of the listener. */
function violation(ctx: z.RefinementCtx, path: PropertyKey[], message: string): void {
  ctx.addIssue({ code: 'custom', path, message });
}

/**
 * Kuma 2.0's `tls` rules: a cross-mesh listener has no TLS of its own (an empty `tls` is allowed);
 * any other needs a mode, and TERMINATE needs 1 or 2 certificates where PASSTHROUGH takes none.
 */
function checkTls(l: Record<string, unknown>, ctx: z.RefinementCtx): void {
  if (!isRecord(l.tls)) return;
  const certs = Array.isArray(l.tls.certificates) ? l.tls.certificates : [];
  if (l.crossMesh === true) {
    if (l.tls.mode !== undefined || certs.length > 0) violation(ctx, ['tls'], 'must be empty with crossMesh');
  } else if (l.tls.mode === undefined) {
    violation(ctx, ['tls', 'mode'], 'cannot be empty');
  } else if (l.tls.mode === 'TERMINATE' && certs.length === 0) {
    violation(ctx, ['tls', 'certificates'], 'has to have 1 or 2 certificates in TERMINATE mode');
  } else if (l.tls.mode === 'PASSTHROUGH' && certs.length > 0) {
    violation(ctx, ['tls', 'certificates'], 'must be empty in PASSTHROUGH mode');
  }
}

/** HTTPS listeners need `tls`, and cannot be cross-mesh (Kuma 2.0). */
function checkListener(l: Record<string, unknown>, ctx: z.RefinementCtx): void {
  if (l.protocol === 'HTTPS') {
    if (l.crossMesh === true) violation(ctx, ['protocol'], 'HTTPS is not supported with crossMesh');
    else if (l.tls === undefined) violation(ctx, ['tls'], 'cannot be empty for HTTPS listeners');
  }
  checkTls(l, ctx);
}

const listener = z
  .strictObject({
    hostname: gatewayHostname.optional(),
    port,
    // Kuma 2.0 builds no UDP or TLS listener and refuses them.
    protocol: z.enum(['TCP', 'HTTP', 'HTTPS']),
    tags: gatewayTagMap.optional(),
    crossMesh: z.boolean().optional(),
    resources: z.strictObject({ connectionLimit: uint.optional() }).optional(),
    tls: tls.optional(),
  })
  .superRefine(checkListener, everyViolation);

/** The indexes of `items` grouped by `key`, in order. */
function groupBy<T>(items: readonly T[], indexes: readonly number[], key: (item: T) => string): number[][] {
  const groups = new Map<string, number[]>();
  for (const i of indexes) groups.set(key(items[i]), [...(groups.get(key(items[i])) ?? []), i]);
  return [...groups.values()];
}

/** The connection limit a listener sets; 0 sets none (Kuma 2.0). */
const limitOf = (l: Record<string, unknown>): unknown =>
  isRecord(l.resources) && l.resources.connectionLimit !== 0 ? l.resources.connectionLimit : undefined;

/**
 * Listeners on one port collapse into one Envoy listener (Kuma 2.0): they must share a protocol,
 * differ in hostname (none is `*`) and agree on the connection limit they set. Each listener in a
 * conflict has a cause.
 */
function checkCollapsible(conf: Record<string, unknown>, ctx: z.RefinementCtx): void {
  if (!Array.isArray(conf.listeners)) return;
  const listeners = conf.listeners.map((l: unknown) => (isRecord(l) ? l : {}));
  const all = listeners.map((_, i) => i);
  for (const onPort of groupBy(listeners, all, (l) => String(l.port))) {
    if (groupBy(listeners, onPort, (l) => String(l.protocol)).length > 1) {
      for (const i of onPort) {
        violation(ctx, ['listeners', i], 'protocol conflicts with other listeners on this port');
      }
    }
    for (const sameHost of groupBy(listeners, onPort, (l) => (l.hostname ? String(l.hostname) : '*'))) {
      if (sameHost.length < 2) continue;
      for (const i of sameHost)
        violation(ctx, ['listeners', i], 'multiple listeners for hostname on this port');
    }
    const limited = onPort.filter((i) => limitOf(listeners[i]) !== undefined);
    if (new Set(limited.map((i) => limitOf(listeners[i]))).size < 2) continue;
    for (const i of limited) {
      violation(ctx, ['listeners', i, 'resources', 'connectionLimit'], 'conflicting values for this port');
    }
  }
}

/** At most one selector when a listener is cross-mesh (Kuma 2.0): a cause on each extra one. */
function checkCrossMeshSelectors(spec: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const listeners = isRecord(spec.conf) && Array.isArray(spec.conf.listeners) ? spec.conf.listeners : [];
  if (!listeners.some((l) => isRecord(l) && l.crossMesh === true)) return;
  if (!Array.isArray(spec.selectors)) return;
  for (let i = 1; i < spec.selectors.length; i++) {
    violation(ctx, ['selectors', i], 'there can be at most one selector with a crossMesh listener');
  }
}

/** MeshGateway (extra-policies.md, Kuma 2.0 `gateway_validator.go`): the listeners of builtin gateway proxies. */
export const meshGateway = defineResource({
  kind: 'MeshGateway',
  scope: 'mesh',
  path: 'meshgateways',
  spec: z
    .strictObject({
      // The selectors bind the gateway to its proxies: each names the gateway's service.
      selectors: serviceSelectorList,
      tags: gatewayTagMap.optional(),
      conf: z
        .strictObject({ listeners: z.array(listener).min(1) })
        .superRefine(checkCollapsible, everyViolation),
    })
    .superRefine(checkCrossMeshSelectors, everyViolation),
  catalogue: { displayName: 'Mesh Gateways', singularDisplayName: 'Mesh Gateway' },
  isPolicy: true,
  selectsProxies: true,
  sync: 'down',
  crossMeshList: true,
  multiLineKeys: new Set(DATA_SOURCE_TEXT_KEYS),
});
