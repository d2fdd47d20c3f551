/**
 * Every policy kind's unit. The order is the order in which a new mesh's default policies are
 * written (those kinds first); everything else derived from this list orders kinds by name.
 */
import type { PolicyKind } from '../policy-kind.js';
import { circuitBreakerKind } from './circuit-breaker.js';
import { faultInjectionKind } from './fault-injection.js';
import { healthCheckKind } from './health-check.js';
import { meshAccessLogKind } from './mesh-access-log.js';
import { meshGatewayRouteKind } from './mesh-gateway-route.js';
import { meshGatewayKind } from './mesh-gateway.js';
import { meshTraceKind } from './mesh-trace.js';
import { meshTrafficPermissionKind } from './mesh-traffic-permission.js';
import { proxyTemplateKind } from './proxy-template.js';
import { rateLimitKind } from './rate-limit.js';
import { retryKind } from './retry.js';
import { timeoutKind } from './timeout.js';
import { trafficLogKind } from './traffic-log.js';
import { trafficPermissionKind } from './traffic-permission.js';
import { trafficRouteKind } from './traffic-route.js';
import { trafficTraceKind } from './traffic-trace.js';
import { virtualOutboundKind } from './virtual-outbound.js';

export const POLICY_KINDS: readonly PolicyKind[] = [
  trafficPermissionKind,
  trafficRouteKind,
  timeoutKind,
  circuitBreakerKind,
  retryKind,
  faultInjectionKind,
  rateLimitKind,
  healthCheckKind,
  trafficLogKind,
  trafficTraceKind,
  proxyTemplateKind,
  virtualOutboundKind,
  meshTrafficPermissionKind,
  meshAccessLogKind,
  meshTraceKind,
  meshGatewayKind,
  meshGatewayRouteKind,
];

/** The unit that serves built-in gateway proxies (the `gateway` role: exactly one kind has it), typed by its schema. */
export const GATEWAY_UNIT = meshGatewayKind;
