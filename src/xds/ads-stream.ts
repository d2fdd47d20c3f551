import { sameStrings } from '../util/deep-equal.js';
import { ADS_LIMITS, clipDetails } from './ads-limits.js';
import type { AdsCall, DiscoveryRequest } from './ads-protocol.js';
import type { ProxyHandle, ResourceSet } from './config-source.js';
import type { EncodedAny, EncodedSet, NamedResource } from './encode-any.js';
import { encodedSet, sameEncoding } from './encode-any.js';
import { epochTime, streamTime, type StreamInfo, type TypeStatus } from './stream-info.js';
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

const NO_NAMES: readonly string[] = Object.freeze([]);

/**
 * One subscribed type of a stream: what `/xds` and the insights read ({@link TypeStatus}) and the
 * stream's own bookkeeping, in one object with every field set from the start (one shape for all).
 */
class TypeState implements TypeStatus {
  constructor(readonly url: string) {}
  names: string[] = NO_NAMES as string[];
  version: number | undefined = undefined;
  nonce: string | undefined = undefined;
  /** When the last response was sent, as a `streamTime` (a Date costs 100 bytes of every stream). */
  sentAtMs: number | undefined = undefined;
  ackedVersion: number | undefined = undefined;
  lastNack: TypeStatus['lastNack'] = undefined;
  responsesSent = 0;
  responsesAcknowledged = 0;
  responsesRejected = 0;
  /**
   * The source's list the last response was made from (its encoding is shared through it): the
   * same list again means the same content.
   */
  sent: readonly NamedResource[] | undefined = undefined;
  /** The nonce last judged (ACK or NACK): later requests carrying it again are not counted. */
  judged: string | undefined = undefined;
  /** Owed a response while the call's buffer is full (`first`: a first answer, sent even if equal). */
  owed: 'no' | 'change' | 'first' = 'no';

  get sentAt(): Date | undefined {
    return this.sentAtMs === undefined ? undefined : new Date(epochTime(this.sentAtMs));
  }
}

/**
 * The state of the world protocol of one open stream, once the proxy is known. Per type: the
 * subscribed names, the last response's nonce and content. Choices (decisions §11, and what the
 * `@grpc/grpc-js-xds` client was seen to need):
 * - a type is answered when first requested, then only when the encoded content for the current
 *   names differs byte for byte from what was last sent (unchanged config is never re-sent, even
 *   at a new version); when the source answers with the very list it answered last time, the
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
 * A stream keeps no copy of what it sent: the source's lists and their encodings are shared by
 * every stream served the same config (10,000 streams hold one encoding of a workload's config).
 */
export class AdsStream {
  private nonces = 0;
  private pushPending = false;
  private ended = false;
  private blocked = false;
  /** The subscribed types in push order (types are only ever added; the list is replaced, not grown). */
  private ordered: readonly TypeState[] = [];

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
    let state = this.info.types.get(url) as TypeState | undefined;
    if (state?.nonce !== undefined && req.response_nonce !== state.nonce) return;
    if (!state) state = this.subscribe(url);
    let changed = false;
    if (state.nonce !== undefined && state.judged !== state.nonce) {
      state.judged = state.nonce;
      this.judge(state, req);
      changed = true;
    }
    // An ACK repeats the names it had, mostly in the same order: no copy then.
    const same = sameStrings(req.resource_names, state.names);
    const names = same ? state.names : sharedNames(req.resource_names);
    const namesChanged = !same && !sameStrings(names, state.names);
    state.names = names;
    if (state.nonce === undefined) this.push(url, state, true);
    else if (namesChanged) this.push(url, state, false);
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
    for (const state of this.ordered)
      if (!this.ended && state.nonce !== undefined) this.push(state.url, state, false);
  }

  /** What was last sent of each type, encoded (for dumps). */
  served(typeUrl: string): EncodedAny[] {
    const sent = (this.info.types.get(typeUrl) as TypeState | undefined)?.sent;
    return sent ? [...encodedSet(typeUrl, sent).anys] : [];
  }

  /** Stops answering (the call is over). */
  end(): void {
    this.ended = true;
  }

  private subscribe(url: string): TypeState {
    const state = new TypeState(url);
    this.info.types.set(url, state);
    // Put in its place by push order (a few types: no sort, which allocates its own work arrays).
    const r = rank(url);
    let at = 0;
    while (at < this.ordered.length && rank((this.ordered[at] as TypeState).url) <= r) at++;
    this.ordered = this.ordered.slice(0, at).concat([state], this.ordered.slice(at));
    return state;
  }

  private judge(state: TypeState, req: DiscoveryRequest): void {
    if (req.error_detail) {
      state.responsesRejected++;
      // Kept for `/xds`: a client's message, cut to a bound.
      const message = clipDetails(req.error_detail.message, ADS_LIMITS.nackMessage);
      state.lastNack = { message, version: state.version, time: this.now() };
    } else {
      state.responsesAcknowledged++;
      state.ackedVersion = state.version;
    }
  }

  private push(url: string, state: TypeState, first: boolean): void {
    if (this.blocked) {
      if (first) state.owed = 'first';
      else if (state.owed === 'no') state.owed = 'change';
      return;
    }
    let set: ResourceSet;
    let encoded: EncodedSet;
    try {
      set = this.handle.resources(url, state.names);
      // A source that shares unchanged resources between revisions hands back the same list.
      if (!first && state.sent === set.resources) return;
      encoded = encodedSet(url, set.resources);
    } catch (err) {
      this.hooks.failed(err);
      return;
    }
    if (!first && state.sent && sameEncoding(encodedSet(url, state.sent), encoded)) {
      state.sent = set.resources;
      return;
    }
    const nonce = String(++this.nonces);
    const room = this.call.write({
      version_info: String(set.version),
      resources: encoded.anys,
      type_url: url,
      nonce,
    });
    if (room === false) this.waitForDrain();
    state.sent = set.resources;
    const at = this.now();
    state.version = set.version;
    state.nonce = nonce;
    state.sentAtMs = streamTime(at.getTime());
    state.responsesSent++;
    this.touch(at);
  }

  private waitForDrain(): void {
    this.blocked = true;
    this.call.once('drain', () => {
      this.blocked = false;
      // In push order; full again part way: push() owes the rest to the next drain.
      for (const state of this.ordered) {
        const owed = state.owed;
        if (owed === 'no') continue;
        state.owed = 'no';
        if (!this.ended) this.push(state.url, state, owed === 'first');
      }
    });
  }

  private touch(at = this.now()): void {
    this.info.lastUpdateTime = at;
    this.hooks.updated(this.info);
  }
}

/**
 * Streams told of a change, pushed together in one later turn (one immediate for a write that
 * touches many streams, rather than one each). Not in slices: what a turn writes leaves after the
 * turn, and slices would send the first responses sooner, but the proxies' ACKs read between
 * slices delay the last ones (10,000 streams: p99 0.8–1.4 s in slices of 10 ms, 0.75–1.0 s in one).
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

/** True when `names` is in the order `sort()` gives (UTF-16 code units). */
function isSorted(names: readonly string[]): boolean {
  for (let i = 1; i < names.length; i++) if ((names[i - 1] as string) > (names[i] as string)) return false;
  return true;
}

/** Distinct subscribed name lists kept for sharing; past it the table starts again. */
const SHARED_NAMES_MAX = 4096;
const SHARED_NAMES = new Map<string, string[]>();

/**
 * `names` sorted, as one array shared by every stream that subscribes to the same names (the
 * proxies of a workload ask the same few): a stream keeps no list of its own. Never changed.
 */
function sharedNames(names: readonly string[]): string[] {
  // Most lists come sorted (a client asks its few services in order): copied, not sorted again.
  const sorted = isSorted(names) ? names.slice() : [...names].sort();
  const key = sorted.join('\u0000');
  let shared = SHARED_NAMES.get(key);
  // A name holding the separator could make two lists one key: such a list is not shared.
  if (shared && !sameStrings(shared, sorted)) return sorted;
  if (!shared) {
    if (SHARED_NAMES.size >= SHARED_NAMES_MAX) SHARED_NAMES.clear();
    shared = Object.freeze(sorted) as string[];
    SHARED_NAMES.set(key, shared);
  }
  return shared;
}
