import type { Node } from './ads-protocol.js';

/** Counters of one resource type on one stream (DataplaneInsight `status.lds` etc., decisions §11). */
export interface TypeCounters {
  responsesSent: number;
  responsesAcknowledged: number;
  responsesRejected: number;
}

/** What a stream served of one type and how the proxy judged it. */
export interface TypeStatus extends TypeCounters {
  /** The resource names of the last request that was not stale. */
  names: string[];
  /** `version_info` and nonce of the last response, absent before the first one. */
  version?: number;
  nonce?: string;
  /** When the last response was sent. */
  sentAt?: Date;
  /** Version of the last response the proxy acknowledged. */
  ackedVersion?: number;
  /** The last NACK: the client's error text and when it came. */
  lastNack?: { message: string; version?: number; time: Date };
}

/** The kept state of one ADS stream: what the caller needs for insights, `/xds` and `/stats`. */
export interface StreamInfo {
  /** Unique per stream (a DataplaneInsight subscription `id`). */
  id: string;
  node: Node;
  /** The Dataplane behind the stream, as the config source named it (absent: it named none). */
  proxy?: { readonly mesh: string; readonly name: string };
  /** `host:port` of the proxy as gRPC sees it. */
  peer: string;
  connectTime: Date;
  disconnectTime?: Date;
  /** When a counter last changed. */
  lastUpdateTime: Date;
  /** The same in epoch milliseconds, when the stream keeps it so (read without making a Date). */
  readonly lastUpdateMs?: number;
  /** The node's user agent (`user_agent_name`, `user_agent_version`). */
  userAgent: { name: string; version: string };
  /** Per resource type URL. */
  types: Map<string, TypeStatus>;
}

/** Counters summed over every type, and per short type name (`lds`, `rds`, `cds`, `eds`). */
export function countersOf(
  info: StreamInfo,
  short: Readonly<Record<string, string>>,
): Record<string, TypeCounters> {
  const zero = (): TypeCounters => ({ responsesSent: 0, responsesAcknowledged: 0, responsesRejected: 0 });
  const out: Record<string, TypeCounters> = {
    total: zero(),
    lds: zero(),
    rds: zero(),
    cds: zero(),
    eds: zero(),
  };
  for (const [url, status] of info.types) {
    for (const key of ['total', short[url]]) {
      const c = key ? out[key] : undefined;
      if (!c) continue;
      c.responsesSent += status.responsesSent;
      c.responsesAcknowledged += status.responsesAcknowledged;
      c.responsesRejected += status.responsesRejected;
    }
  }
  return out;
}
