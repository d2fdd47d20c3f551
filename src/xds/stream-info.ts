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

/** A stream's types by URL, in the order first asked: a Map, or {@link SmallTypeTable}. */
export interface TypeTable extends Iterable<[string, TypeStatus]> {
  readonly size: number;
  get(url: string): TypeStatus | undefined;
  has(url: string): boolean;
  set(url: string, status: TypeStatus): void;
}

const NO_ENTRIES: ReadonlyArray<string | TypeStatus> = Object.freeze([]);

/**
 * A {@link TypeTable} of the few types a stream asks for (four at most in practice), as one flat
 * list of URL and status pairs: a Map's hash table is about twice its size, for 10,000 streams.
 */
export class SmallTypeTable implements TypeTable {
  /** URL, status, URL, status… (replaced, never grown in place). */
  private entries: ReadonlyArray<string | TypeStatus> = NO_ENTRIES;

  get size(): number {
    return this.entries.length / 2;
  }

  get(url: string): TypeStatus | undefined {
    const e = this.entries;
    for (let i = 0; i < e.length; i += 2) if (e[i] === url) return e[i + 1] as TypeStatus;
    return undefined;
  }

  has(url: string): boolean {
    return this.get(url) !== undefined;
  }

  set(url: string, status: TypeStatus): void {
    const e = this.entries;
    for (let i = 0; i < e.length; i += 2) {
      if (e[i] === url) {
        this.entries = e.map((x, j) => (j === i + 1 ? status : x));
        return;
      }
    }
    this.entries = e.concat([url, status]);
  }

  *[Symbol.iterator](): IterableIterator<[string, TypeStatus]> {
    const e = this.entries;
    for (let i = 0; i < e.length; i += 2) yield [e[i] as string, e[i + 1] as TypeStatus];
  }
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
  types: TypeTable;
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

/** The origin of {@link streamTime}: when this module was loaded. */
const TIME_BASE = Date.now();

/**
 * A time as a stream keeps it: milliseconds since the process started mesh-cp's xDS code. For 24
 * days these are small integers, which V8 keeps in the object's field itself; an epoch time in
 * milliseconds is a boxed number, 16 bytes more per field, with thousands of streams of several
 * types each. Exact either way ({@link epochTime} gives the time back).
 */
export const streamTime = (epochMs: number): number => epochMs - TIME_BASE;

/** The epoch milliseconds of a {@link streamTime}. */
export const epochTime = (t: number): number => t + TIME_BASE;
