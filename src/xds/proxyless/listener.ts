/**
 * The Listener a proxyless client asks for when it dials `xds:///<service>`: an API listener whose
 * HttpConnectionManager holds the route configuration inline (a Listener-only change with RDS waits
 * for another update in the client), with the fault filter before the router, and a content
 * fingerprint in `stat_prefix` (the client may judge an update that only adds keys equal to the old
 * one and drop it; a changed fingerprint makes every change visible). `idle_timeout` is never set:
 * the client turns it into a call deadline.
 *
 * One route matches every call. TrafficRoute picks the clusters (one destination, or a weighted
 * split); Timeout gives `max_stream_duration`; Retry the gRPC `retry_policy`; FaultInjection the
 * per-route fault config. A service that nothing serves still gets its Listener and cluster (a
 * subscribed Listener is never deleted: the client ignores one deleted and re-added identical), with
 * no endpoints, so calls fail with UNAVAILABLE until an instance appears. Not `non_forwarding_action`:
 * grpc-js-xds 1.14.1 validates such a route but its resolver then reads `route.route` of it.
 */
import { SERVICE_TAG } from '../../resources/fragments.js';
import { clusterName } from './clusters.js';
import { fingerprint, fractionalPercent, protoDuration } from './proto-values.js';
import * as TYPE from '../type-urls.js';

/** The HTTP filter names the generated listeners use. */
const FILTER = { FAULT: 'envoy.filters.http.fault', ROUTER: 'envoy.filters.http.router' } as const;

type Tags = Readonly<Record<string, string>>;

/** The `conf` of the policies a client route reads (spec 2.6). */
export interface RouteInputs {
  route?: { destination?: Tags; split?: ReadonlyArray<{ weight: number; destination: Tags }> };
  timeout?: { http?: { requestTimeout?: string }; grpc?: { maxStreamDuration?: string } };
  retry?: {
    grpc?: {
      numRetries?: number;
      perTryTimeout?: string;
      backOff?: { baseInterval: string; maxInterval?: string };
      retryOn?: readonly string[];
    };
  };
  fault?: {
    delay?: { percentage: number; value: string };
    abort?: { percentage: number; httpStatus: number };
    responseBandwidth?: { percentage: number; limit: string };
  };
}

/** The gRPC status names a retry policy may name (gRPC A44), from ours. */
const DEFAULT_RETRY_ON = ['cancelled', 'deadline-exceeded', 'internal', 'resource-exhausted', 'unavailable'];

/** The destinations a service's traffic goes to, with weights: the route's, else the service itself. */
export function destinationsOf(
  service: string,
  route: RouteInputs['route'],
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

/** The Listener for `service` and what could not apply, in words. */
export function buildListener(
  service: string,
  inputs: RouteInputs,
  opts: { known: boolean },
): { listener: Record<string, unknown>; notes: string[] } {
  const notes: string[] = [];
  const route: Record<string, unknown> = { match: { prefix: '' } };
  if (!opts.known) notes.push(`no proxy serves ${service}: calls fail with UNAVAILABLE`);
  const targets = destinationsOf(service, inputs.route);
  const action: Record<string, unknown> =
    targets.length === 1
      ? { cluster: clusterName(targets[0].destination) }
      : {
          weighted_clusters: {
            clusters: targets.map((t) => ({
              name: clusterName(t.destination),
              weight: { value: t.weight },
            })),
          },
        };
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
  route.route = action;
  const fault = inputs.fault;
  if (fault) {
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
    if (fault.responseBandwidth)
      notes.push('fault responseBandwidth cannot apply to a proxyless gRPC client');
    if (config.delay || config.abort) route.typed_per_filter_config = { [FILTER.FAULT]: config };
  }
  const routeConfig = {
    name: service,
    virtual_hosts: [{ name: service, domains: ['*'], routes: [route] }],
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
