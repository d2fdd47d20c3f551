/**
 * The Listener a proxyless client asks for when it dials `xds:///<service>`: an API listener whose
 * HttpConnectionManager holds the route configuration inline (a Listener-only change with RDS waits
 * for another update in the client), with the fault filter before the router, and a content
 * fingerprint in `stat_prefix` (the client may judge an update that only adds keys equal to the old
 * one and drop it; a changed fingerprint makes every change visible). `idle_timeout` is never set:
 * the client turns it into a call deadline.
 *
 * TrafficRoute's `conf.http[]` entries become routes tried in order (path = the gRPC method path,
 * headers = call metadata; a method matcher can only accept POST; `modify` cannot apply), then one
 * route matches every other call. TrafficRoute picks the clusters (one destination, or a weighted
 * split); Timeout gives `max_stream_duration`; Retry the gRPC `retry_policy`; FaultInjection the
 * fault config of the endpoints' inbounds (per route, or per weighted cluster when they differ). A service that nothing serves still gets its Listener and cluster (a
 * subscribed Listener is never deleted: the client ignores one deleted and re-added identical), with
 * no endpoints, so calls fail with UNAVAILABLE until an instance appears. Not `non_forwarding_action`:
 * grpc-js-xds 1.14.1 validates such a route but its resolver then reads `route.route` of it.
 */
import type {
  FaultSetting,
  HttpRoute,
  RetrySetting,
  RouteSetting,
  RouteTarget,
  StringMatcher,
  TimeoutSetting,
} from '../../policies/proxyless-settings.js';
import { SERVICE_TAG } from '../../resources/fragments.js';
import { clusterName } from './clusters.js';
import { fingerprint, fractionalPercent, protoDuration } from './proto-values.js';
import * as TYPE from '../type-urls.js';

/** The HTTP filter names the generated listeners use. */
const FILTER = { FAULT: 'envoy.filters.http.fault', ROUTER: 'envoy.filters.http.router' } as const;

type Tags = Readonly<Record<string, string>>;

export type { HttpRoute };

/** A fault a client injects (its FaultInjection's conf). */
export type FaultConf = FaultSetting;

/**
 * The clusters a destination's calls go to, each with its share (its endpoint count) and the fault
 * its endpoints' inbounds inject for this client (`undefined`: none).
 */
export type ClusterFaults = (
  destination: Tags,
) => ReadonlyArray<{ name: string; weight: number; fault: FaultConf | undefined }>;

/** The settings a client route is built from. */
export interface RouteInputs {
  route?: RouteSetting;
  timeout?: TimeoutSetting;
  retry?: RetrySetting;
}

/** The gRPC status names a retry policy may name (gRPC A44), from ours. */
const DEFAULT_RETRY_ON = ['cancelled', 'deadline-exceeded', 'internal', 'resource-exhausted', 'unavailable'];

/** The destinations a service's traffic goes to, with weights: the route's, else the service itself. */
export function destinationsOf(
  service: string,
  route: RouteTarget | undefined,
): Array<{ weight: number; destination: Tags }> {
  const resolve = (d: Tags): Tags =>
    d[SERVICE_TAG] === '*' || d[SERVICE_TAG] === undefined ? { ...d, [SERVICE_TAG]: service } : d;
  if (route?.split) {
    return route.split
      .filter((s) => s.weight > 0)
      .map((s) => ({ weight: s.weight, destination: resolve(s.destination) }));
  }
  return [{ weight: 1, destination: resolve(route?.destination ?? { [SERVICE_TAG]: service }) }];
}

/** Every destination a service's calls may go to: those of each `http` route a call can match, then the default's. */
export function allDestinationsOf(service: string, route: RouteInputs['route']): Tags[] {
  const reachable = (route?.http ?? []).filter(
    (h) => h.match.method === undefined || acceptsPost(h.match.method),
  );
  return [...reachable, route].flatMap((r) => destinationsOf(service, r).map((t) => t.destination));
}

/** One cluster a route sends to: its integer weight and its fault. */
interface RoutePart {
  name: string;
  weight: number;
  fault: FaultConf | undefined;
}

/**
 * The clusters of `targets`: each target's clusters share its weight by endpoint count (in
 * thousandths, at least 1); a destination without clusters (no faults known) is one cluster.
 */
function routeParts(
  targets: Array<{ weight: number; destination: Tags }>,
  faults: ClusterFaults | undefined,
): RoutePart[] {
  return targets.flatMap((t) => {
    const clusters = faults?.(t.destination) ?? [];
    if (clusters.length <= 1) {
      return [
        {
          name: clusters[0]?.name ?? clusterName(t.destination),
          weight: t.weight,
          fault: clusters[0]?.fault,
        },
      ];
    }
    const total = clusters.reduce((sum, c) => sum + c.weight, 0) || 1;
    return clusters.map((c) => ({
      name: c.name,
      weight: t.weight * Math.max(1, Math.round((1000 * c.weight) / total)),
      fault: c.fault,
    }));
  });
}

/**
 * The route action sending calls to `parts`, and the route's own fault: one cluster, or weighted
 * clusters; when the parts' faults differ, each weighted cluster carries its own.
 */
function clusterAction(
  parts: readonly RoutePart[],
  notes: string[],
): { action: Record<string, unknown>; fault: FaultConf | undefined } {
  // No part (every split weight 0): no cluster takes calls, as before any fault was known.
  if (parts.length === 0) return { action: { weighted_clusters: { clusters: [] } }, fault: undefined };
  const alike = parts.every((p) => p.fault === parts[0].fault);
  if (alike && parts.length === 1) return { action: { cluster: parts[0].name }, fault: parts[0].fault };
  const clusters = parts.map((p) => {
    const filter = alike ? undefined : faultFilterConfig(p.fault, notes);
    return {
      name: p.name,
      weight: { value: p.weight },
      ...(filter ? { typed_per_filter_config: { [FILTER.FAULT]: filter } } : {}),
    };
  });
  return { action: { weighted_clusters: { clusters } }, fault: alike ? parts[0].fault : undefined };
}

/** Kuma's StringMatcher as Envoy's (regexes are RE2, matched against the whole value). */
function stringMatch(m: StringMatcher): Record<string, unknown> {
  if (m.prefix !== undefined) return { prefix: m.prefix };
  if (m.regex !== undefined) return { safe_regex: { regex: m.regex } };
  return { exact: m.exact ?? '' };
}

/** Whether a method matcher accepts POST, the method of every gRPC call (JS regex stands in for RE2). */
function acceptsPost(m: StringMatcher): boolean {
  if (m.prefix !== undefined) return 'POST'.startsWith(m.prefix);
  if (m.regex !== undefined) {
    try {
      return new RegExp(`^(?:${m.regex})$`).test('POST');
    } catch {
      return false;
    }
  }
  return m.exact === 'POST';
}

/**
 * The route match of one `conf.http[]` entry, or undefined when no gRPC call can match it. The path
 * of a gRPC call is `/<package.Service>/<Method>`; headers are its metadata (lower-case names).
 */
function routeMatch(
  match: HttpRoute['match'],
  index: number,
  notes: string[],
): Record<string, unknown> | undefined {
  if (match.method && !acceptsPost(match.method)) {
    notes.push(
      `http[${index}] never matches: its method matcher does not accept POST, the method of every gRPC call`,
    );
    return undefined;
  }
  const out: Record<string, unknown> = {};
  const path = match.path;
  if (path?.prefix !== undefined) out.prefix = path.prefix;
  else if (path?.regex !== undefined) out.safe_regex = { regex: path.regex };
  else if (path?.exact !== undefined) out.path = path.exact;
  else out.prefix = '';
  const headers = Object.entries(match.headers ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (headers.length > 0) {
    out.headers = headers.map(([name, m]) => ({ name: name.toLowerCase(), string_match: stringMatch(m) }));
  }
  return out;
}

/** The Listener for `service` and what could not apply, in words. */
export function buildListener(
  service: string,
  inputs: RouteInputs,
  opts: { known: boolean; faults?: ClusterFaults },
): { listener: Record<string, unknown>; notes: string[] } {
  const notes: string[] = [];
  if (!opts.known) notes.push(`no proxy serves ${service}: calls fail with UNAVAILABLE`);
  const common = commonRouteParts(inputs, notes);
  const routes: Array<Record<string, unknown>> = [];
  const route = (
    match: Record<string, unknown>,
    target: RouteTarget | undefined,
  ): Record<string, unknown> => {
    const { action, fault } = clusterAction(routeParts(destinationsOf(service, target), opts.faults), notes);
    const filter = faultFilterConfig(fault, notes);
    return {
      match,
      route: { ...action, ...common.action },
      ...(filter ? { typed_per_filter_config: { [FILTER.FAULT]: filter } } : {}),
    };
  };
  (inputs.route?.http ?? []).forEach((http, i) => {
    const match = routeMatch(http.match, i, notes);
    if (http.modify) notes.push(`http[${i}].modify cannot apply to a proxyless gRPC client`);
    if (match === undefined) return;
    routes.push(route(match, http));
  });
  routes.push(route({ prefix: '' }, inputs.route));
  const routeConfig = {
    name: service,
    virtual_hosts: [{ name: service, domains: ['*'], routes }],
  };
  const listener = {
    name: service,
    api_listener: {
      api_listener: {
        '@type': TYPE.HTTP_CONNECTION_MANAGER,
        stat_prefix: `${service}.${fingerprint(routeConfig)}`,
        route_config: routeConfig,
        http_filters: [
          { name: FILTER.FAULT, typed_config: { '@type': TYPE.FAULT } },
          { name: FILTER.ROUTER, typed_config: { '@type': TYPE.ROUTER } },
        ],
      },
    },
  };
  return { listener, notes };
}

/** What every route of a service carries: Timeout and Retry in the action. */
function commonRouteParts(inputs: RouteInputs, notes: string[]): { action: Record<string, unknown> } {
  const action: Record<string, unknown> = {};
  const limit = inputs.timeout?.grpc?.maxStreamDuration ?? inputs.timeout?.http?.requestTimeout;
  if (limit !== undefined && limit !== '0s')
    action.max_stream_duration = { max_stream_duration: protoDuration(limit) };
  const retry = inputs.retry?.grpc;
  if (retry) {
    action.retry_policy = {
      retry_on: (retry.retryOn ?? DEFAULT_RETRY_ON).map((s) => s.replace(/_/g, '-')).join(','),
      num_retries: { value: retry.numRetries ?? 1 },
      ...(retry.backOff
        ? {
            retry_back_off: {
              base_interval: protoDuration(retry.backOff.baseInterval),
              ...(retry.backOff.maxInterval
                ? { max_interval: protoDuration(retry.backOff.maxInterval) }
                : {}),
            },
          }
        : {}),
    };
    if (retry.perTryTimeout) notes.push('retry perTryTimeout cannot apply to a proxyless gRPC client');
  }
  return { action };
}

/** The fault filter's per-route (or per-cluster) config of a FaultInjection; undefined when it has none. */
function faultFilterConfig(
  fault: FaultConf | undefined,
  notes: string[],
): Record<string, unknown> | undefined {
  if (!fault) return undefined;
  const config: Record<string, unknown> = { '@type': TYPE.FAULT };
  if (fault.delay) {
    config.delay = {
      fixed_delay: protoDuration(fault.delay.value),
      percentage: fractionalPercent(fault.delay.percentage),
    };
  }
  if (fault.abort) {
    config.abort = {
      http_status: fault.abort.httpStatus,
      percentage: fractionalPercent(fault.abort.percentage),
    };
  }
  if (fault.responseBandwidth) notes.push('fault responseBandwidth cannot apply to a proxyless gRPC client');
  return config.delay || config.abort ? config : undefined;
}
