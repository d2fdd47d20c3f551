import { sameStrings } from '../util/deep-equal.js';
import { ADS_LIMITS, clipDetails } from './ads-limits.js';
import type { AdsCall, DiscoveryRequest } from './ads-protocol.js';
import type { ProxyHandle, ResourceSet } from './config-source.js';
import type { EncodedAny } from './encode-any.js';
import { encodedValue } from './encode-any.js';
import type { StreamInfo, TypeStatus } from './stream-info.js';
import { CLUSTER, CLUSTER_LOAD_ASSIGNMENT, LISTENER, ROUTE_CONFIGURATION } from './type-urls.js';

/** Pushes after a change go out in this order (make before break: clusters before what names them). */
const PUSH_ORDER = [CLUSTER, CLUSTER_LOAD_ASSIGNMENT, LISTENER, ROUTE_CONFIGURATION];

/** What a stream reports to its server. */
export interface StreamHooks {
  /** A counter or the subscription changed. */
  updated(info: StreamInfo): void;
  /** Computing or encoding config failed: the stream ends with INTERNAL. */
  failed(err: unknown): void;
}

interface Sent {
  names: string[];
  values: Buffer[];
  /** The source's array they were made from: the same array again means the same content. */
  from: ResourceSet['resources'];
}

/**
 * The state of the world protocol of one open stream, once the proxy is known. Per type: the
 * subscribed names, the last response's nonce and content. Choices (decisions §11, the research
 * notes of issue 17):
 * - a type is answered when first requested, then only when the encoded content for the current
 *   names differs byte for byte from what was last sent (unchanged config is never re-sent, even
 *   at a new version); when the source answers with the very array it answered last time, the
 *   content is the same without encoding or comparing it (a push to many streams skips the
 *   types it did not change at the cost of one comparison each);
 * - a request whose nonce is not the last response's is stale and ignored (before the first
 *   response of a type any nonce is accepted: the client may carry one over from an older stream);
 * - the first request carrying the last nonce judges that response: ACK without `error_detail`,
 *   NACK with it. `version_info` is not read (a NACK may already name the new version). A NACK
 *   leaves the last sent content as the reference, so the next different content is still sent;
 * - nonces are a counter per stream: unique where the protocol compares them;
 * - backpressure: once `call.write` says the buffer is full, nothing more is written until 'drain';
 *   then each owed type is computed once, at the latest state (state of the world: the versions in
 *   between are skipped, never queued).
 */
export class AdsStream {
  private readonly sent = new Map<string, Sent>();
  private readonly judged = new Map<string, string>();
  private nonces = 0;
  private pushPending = false;
  private ended = false;
  /** Types owed a response while the call's buffer is full (true: a first answer, sent even if equal). */
  private readonly owed = new Map<string, boolean>();
  private blocked = false;
  /** The subscribed type URLs in push order (types are only ever added). */
  private ordered: string[] = [];

  constructor(
    private readonly call: AdsCall,
    private readonly handle: ProxyHandle,
    readonly info: StreamInfo,
    private readonly hooks: StreamHooks,
    private readonly now: () => Date,
  ) {}

  /** Handles one request of the proxy. */
  receive(req: DiscoveryRequest): void {
    if (this.ended) return;
    const url = req.type_url;
    let status = this.info.types.get(url);
    if (status?.nonce !== undefined && req.response_nonce !== status.nonce) return;
    if (!status) {
      status = { names: [], responsesSent: 0, responsesAcknowledged: 0, responsesRejected: 0 };
      this.info.types.set(url, status);
    }
    let changed = false;
    if (status.nonce !== undefined && this.judged.get(url) !== status.nonce) {
      this.judged.set(url, status.nonce);
      this.judge(status, req);
      changed = true;
    }
    // An ACK repeats the names it had, mostly in the same order: no copy then.
    const same = sameStrings(req.resource_names, status.names);
    const names = same ? status.names : [...req.resource_names].sort();
    const namesChanged = !same && !sameStrings(names, status.names);
    status.names = names;
    if (status.nonce === undefined) this.push(url, true);
    else if (namesChanged) this.push(url, false);
    if (changed) this.touch();
  }

  /** The source says config may have changed: recompute every subscribed type once, soon. */
  changed(): void {
    if (this.pushPending || this.ended) return;
    this.pushPending = true;
    CHANGED.add(this);
    if (CHANGED.size === 1) setImmediate(pushChanged);
  }

  /** Recomputes every type already answered (called once per change, in a later turn). */
  pushNow(): void {
    this.pushPending = false;
    if (this.info.types.size !== this.ordered.length)
      this.ordered = [...this.info.types.keys()].sort((a, b) => rank(a) - rank(b));
    for (const url of this.ordered)
      if (!this.ended && this.info.types.get(url)?.nonce !== undefined) this.push(url, false);
  }

  /** What was last sent of each type, encoded (for dumps). */
  served(typeUrl: string): EncodedAny[] {
    return (this.sent.get(typeUrl)?.values ?? []).map((value) => ({ type_url: typeUrl, value }));
  }

  /** Stops answering (the call is over). */
  end(): void {
    this.ended = true;
  }

  private judge(status: TypeStatus, req: DiscoveryRequest): void {
    if (req.error_detail) {
      status.responsesRejected++;
      // Kept for `/xds`: a client's message, cut to a bound.
      const message = clipDetails(req.error_detail.message, ADS_LIMITS.nackMessage);
      status.lastNack = { message, version: status.version, time: this.now() };
    } else {
      status.responsesAcknowledged++;
      status.ackedVersion = status.version;
    }
  }

  private push(url: string, first: boolean): void {
    const status = this.info.types.get(url);
    if (!status) return;
    if (this.blocked) {
      this.owed.set(url, first || (this.owed.get(url) ?? false));
      return;
    }
    let values: Buffer[];
    let names: string[];
    let version: number;
    let set: ResourceSet;
    const last = this.sent.get(url);
    try {
      set = this.handle.resources(url, status.names);
      // A source that shares unchanged resources between revisions hands back the same array.
      if (!first && last?.from === set.resources) return;
      version = set.version;
      names = set.resources.map((r) => r.name);
      values = set.resources.map((r) => encodedValue(url, r.resource));
    } catch (err) {
      this.hooks.failed(err);
      return;
    }
    if (!first && last && sameStrings(names, last.names) && sameBuffers(values, last.values)) {
      last.from = set.resources;
      return;
    }
    const nonce = String(++this.nonces);
    const room = this.call.write({
      version_info: String(version),
      resources: values.map((value) => ({ type_url: url, value })),
      type_url: url,
      nonce,
    });
    if (room === false) this.waitForDrain();
    this.sent.set(url, { names, values, from: set.resources });
    const at = this.now();
    status.version = version;
    status.nonce = nonce;
    status.sentAt = at;
    status.responsesSent++;
    this.touch(at);
  }

  private waitForDrain(): void {
    this.blocked = true;
    this.call.once('drain', () => {
      this.blocked = false;
      const owed = [...this.owed].sort(([a], [b]) => rank(a) - rank(b));
      this.owed.clear();
      // Full again part way: push() owes the rest to the next drain.
      for (const [url, first] of owed) if (!this.ended) this.push(url, first);
    });
  }

  private touch(at = this.now()): void {
    this.info.lastUpdateTime = at;
    this.hooks.updated(this.info);
  }
}

/**
 * Streams told of a change, pushed together in one later turn (one immediate for a write that
 * touches many streams, rather than one each).
 */
const CHANGED = new Set<AdsStream>();
function pushChanged(): void {
  const streams = [...CHANGED];
  CHANGED.clear();
  for (const s of streams) s.pushNow();
}

const rank = (url: string): number => {
  const i = PUSH_ORDER.indexOf(url);
  return i < 0 ? PUSH_ORDER.length : i;
};

const sameBuffers = (a: readonly Buffer[], b: readonly Buffer[]): boolean =>
  a.length === b.length && a.every((buf, i) => buf.equals(b[i] as Buffer));
