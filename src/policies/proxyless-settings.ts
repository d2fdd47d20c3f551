/**
 * What a proxyless gRPC client can be given, as settings a policy kind contributes: the part of a
 * kind's `conf` that the client config is rendered from. A kind's unit (`kinds/<kind>.ts`) says which
 * setting its policies fill and reads it from its typed spec; the xDS renderer turns settings into
 * resources and never asks which kind gave one.
 */

type Tags = Readonly<Record<string, string>>;

/** Kuma's StringMatcher (a route's `match`). */
export type StringMatcher = { prefix?: string; exact?: string; regex?: string };

/** Where a route sends calls: one destination or a weighted split. */
export interface RouteTarget {
  destination?: Tags;
  split?: ReadonlyArray<{ weight: number; destination: Tags }>;
}

/** One `conf.http[]` entry of a route: tried in order before the route's own target. */
export interface HttpRoute extends RouteTarget {
  match: { method?: StringMatcher; path?: StringMatcher; headers?: Readonly<Record<string, StringMatcher>> };
  modify?: Record<string, unknown>;
}

/** How a cluster's endpoints are picked. */
export type LoadBalancer = Partial<
  Record<'roundRobin' | 'leastRequest' | 'ringHash' | 'random' | 'maglev', object>
>;

/** Where a dialled service's calls go, and how endpoints are picked. */
export type RouteSetting = RouteTarget & { http?: readonly HttpRoute[]; loadBalancer?: LoadBalancer };

/** The timeouts of a dialled service's calls. */
export interface TimeoutSetting {
  http?: { requestTimeout?: string };
  grpc?: { maxStreamDuration?: string };
}

/** The retries of a dialled service's calls. */
export interface RetrySetting {
  grpc?: {
    numRetries?: number;
    perTryTimeout?: string;
    backOff?: { baseInterval: string; maxInterval?: string };
    retryOn?: readonly string[];
  };
}

/** Outlier detection and thresholds of a destination's clusters. */
export interface CircuitBreakerSetting {
  interval?: string;
  baseEjectionTime?: string;
  maxEjectionPercent?: number;
  detectors?: {
    totalErrors?: { consecutive?: number };
    gatewayErrors?: { consecutive?: number };
    localErrors?: { consecutive?: number };
    standardDeviation?: { requestVolume?: number; minimumHosts?: number; factor?: number };
    failure?: { requestVolume?: number; minimumHosts?: number; threshold?: number };
  };
  thresholds?: {
    maxConnections?: number;
    maxPendingRequests?: number;
    maxRetries?: number;
    maxRequests?: number;
  };
}

/** A fault the client injects into calls sent to an endpoint. */
export interface FaultSetting {
  delay?: { percentage: number; value: string };
  abort?: { percentage: number; httpStatus: number };
  responseBandwidth?: { percentage: number; limit: string };
}

/**
 * Every setting by name, and the item of the client's matched policies it is read from:
 * - `route`, `timeout`: the dialled service's outbound;
 * - `retry`: the dialled service's service item;
 * - `circuitBreaker`: the service item of each destination its calls go to (per cluster);
 * - `fault`: the inbound of each endpoint called (the client applies what that server would).
 */
export interface ProxylessSettings {
  route: RouteSetting;
  timeout: TimeoutSetting;
  retry: RetrySetting;
  circuitBreaker: CircuitBreakerSetting;
  fault: FaultSetting;
}
