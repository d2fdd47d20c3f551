import type { ResourceDescriptor } from './descriptor.js';
import { circuitBreaker } from './kinds/circuit-breaker.js';
import {
  dataplaneOverview,
  globalInsights,
  meshInsight,
  serviceInsight,
  zoneEgressOverview,
  zoneIngressOverview,
  zoneOverview,
} from './kinds/derived.js';
import { dataplane } from './kinds/dataplane.js';
import { externalService } from './kinds/external-service.js';
import { faultInjection } from './kinds/fault-injection.js';
import { healthCheck } from './kinds/health-check.js';
import { meshAccessLog } from './kinds/mesh-access-log.js';
import { meshGatewayRoute } from './kinds/mesh-gateway-route.js';
import { meshGateway } from './kinds/mesh-gateway.js';
import { meshTrace } from './kinds/mesh-trace.js';
import { meshTrafficPermission } from './kinds/mesh-traffic-permission.js';
import { mesh } from './kinds/mesh.js';
import { proxyTemplate } from './kinds/proxy-template.js';
import { rateLimit } from './kinds/rate-limit.js';
import { retry } from './kinds/retry.js';
import { globalSecret, secret } from './kinds/secret.js';
import { timeout } from './kinds/timeout.js';
import { trafficLog } from './kinds/traffic-log.js';
import { trafficPermission } from './kinds/traffic-permission.js';
import { trafficRoute } from './kinds/traffic-route.js';
import { trafficTrace } from './kinds/traffic-trace.js';
import { virtualOutbound } from './kinds/virtual-outbound.js';
import { zoneEgress } from './kinds/zone-egress.js';
import { zoneIngress } from './kinds/zone-ingress.js';
import { zone } from './kinds/zone.js';

/** Every kind of the spec, each declared once. Adding a kind is one file and one line here. */
export const ALL_KINDS: readonly ResourceDescriptor[] = [
  mesh,
  dataplane,
  healthCheck,
  trafficPermission,
  trafficLog,
  trafficRoute,
  trafficTrace,
  faultInjection,
  retry,
  timeout,
  proxyTemplate,
  circuitBreaker,
  rateLimit,
  meshGateway,
  meshGatewayRoute,
  virtualOutbound,
  meshTrafficPermission,
  meshAccessLog,
  meshTrace,
  externalService,
  secret,
  globalSecret,
  zone,
  zoneIngress,
  zoneEgress,
  dataplaneOverview,
  meshInsight,
  serviceInsight,
  globalInsights,
  zoneOverview,
  zoneIngressOverview,
  zoneEgressOverview,
];

/** Read access to the kinds, with the look-ups every layer needs. */
export interface Registry {
  readonly all: readonly ResourceDescriptor[];
  /** Kinds that are stored in the log (not derived). */
  readonly stored: readonly ResourceDescriptor[];
  /** Derived, read-only kinds computed by projections. */
  readonly derived: readonly ResourceDescriptor[];
  /** Catalogue kinds sorted by name (spec 2.18). */
  readonly catalogue: readonly ResourceDescriptor[];
  get(kind: string): ResourceDescriptor;
  find(kind: string): ResourceDescriptor | undefined;
}

/** Builds a registry over a list of descriptors, checking that names and paths are unique. */
export function createRegistry(kinds: readonly ResourceDescriptor[] = ALL_KINDS): Registry {
  const byKind = new Map<string, ResourceDescriptor>();
  const paths = new Set<string>();
  for (const d of kinds) {
    if (byKind.has(d.kind)) throw new Error(`duplicate kind ${d.kind}`);
    byKind.set(d.kind, d);
    for (const p of [d.path, ...d.aliases]) {
      const key = `${d.scope}:${p}`;
      if (paths.has(key)) throw new Error(`duplicate path ${key}`);
      paths.add(key);
    }
  }
  return {
    all: kinds,
    stored: kinds.filter((d) => !d.derived),
    derived: kinds.filter((d) => d.derived),
    catalogue: kinds
      .filter((d) => d.catalogue)
      .sort((a, b) => (a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : 0)),
    get(kind) {
      const d = byKind.get(kind);
      if (!d) throw new Error(`unknown kind ${kind}`);
      return d;
    },
    find: (kind) => byKind.get(kind),
  };
}

/** The registry of this build. */
export const registry: Registry = createRegistry();
