/**
 * The ConfigSource of the ADS server over the mesh: who a stream is (the node names a Dataplane,
 * whose data plane token must cover it), and what it is served: its entry in the match view,
 * rendered (`renderProxy`), for the Listener names it asked for, at the current log revision. The
 * services a stream asks Listeners for are told to the match view (`setDialled`): they are outbounds
 * of the proxy's entry, so inspect shows what the proxy is served. After each write the match view
 * names the proxies whose config may have changed; only their streams drop their config and are
 * told, and the server re-sends a type only when its bytes changed. A write no proxy reads costs no
 * recomputation and no push.
 */
import type * as grpc from '@grpc/grpc-js';
import { sameStrings } from '../util/deep-equal.js';
import { AppError, type ErrorCode } from '../util/errors.js';
import { deadlineTimer } from '../util/deadline-timer.js';
import type { Node } from './ads-protocol.js';
import type { ConfigSource, ProxyHandle, ResourceSet, StreamFollower } from './config-source.js';
import type { NamedResource } from './encode-any.js';
import type { DumpSources } from './dump.js';
import type { Networking } from '../policies/proxy-interfaces.js';
import type { MatchView, ProxiesChange } from '../policies/match-view.js';
import { entryMesh, renderProxy } from './render-proxy.js';
import { nodeIdentity, proxyToken, type DataplaneLookup } from './node-identity.js';
import type { ProxyTokenCheck } from './proxy-token.js';
import type { ProxylessConfig } from './proxyless/config.js';
import { isServerListenerName, namesOwnInbound } from './proxyless/server-listener.js';
import type { Refusal } from './refusal.js';
import { encodedValue } from './encode-any.js';
import { CLUSTER, CLUSTER_LOAD_ASSIGNMENT, LISTENER } from './type-urls.js';

const CODE: Record<Refusal['code'], ErrorCode> = {
  INVALID_ARGUMENT: 'BAD_REQUEST',
  NOT_FOUND: 'NOT_FOUND',
  UNAUTHENTICATED: 'UNAUTHENTICATED',
  PERMISSION_DENIED: 'FORBIDDEN',
};
const refused = (r: Refusal): AppError => new AppError(CODE[r.code], 'Refused', r.message);

/** One committed write in a mesh (the token watch reads the kind and name). */
export interface MeshWrite {
  kind: string;
  name: string;
}

/** What the source reads. */
export interface MeshConfigDeps {
  lookup: DataplaneLookup;
  checkToken: ProxyTokenCheck;
  sources: DumpSources;
  /** The policy engine: what each proxy is served is its entry there. */
  matches: MatchView<unknown>;
  /** Calls `listener(mesh, write)` after each committed write in a mesh; returns the unsubscribe function. */
  onMeshChange(listener: (mesh: string, write: MeshWrite) => void): () => void;
  /**
   * Whether Secret `name` of `mesh` decides which data plane tokens hold (a signing key or the
   * revocation list): a write of one checks the tokens of the mesh's open streams again.
   * Absent: every Secret write in the mesh does.
   */
  tokenSecret?(mesh: string, name: string): boolean;
  now?: () => Date;
}

/** A function that does nothing (what stops a watch that was never started). */
const NOTHING = (): void => undefined;

/**
 * Ends a stream when its token stops holding, as watch streams end with their user token: at its
 * expiry (a timer), and when a write may have revoked it (a token Secret of the mesh, or the
 * proxy's own Dataplane, whose tags the token must cover): the token is checked again as at open.
 * Returns the stop function.
 */
function watchToken(
  deps: MeshConfigDeps,
  proxy: { mesh: string; name: string; token: string | undefined },
  admitted: { tokenId?: string; expiresAt?: Date },
  end: (err: unknown) => void,
): () => void {
  if (admitted.tokenId === undefined) return NOTHING;
  const { mesh, name } = proxy;
  const now = deps.now ?? (() => new Date());
  let stopExpiry: (() => void) | undefined;
  let stopped = false;
  const stop = (): void => {
    stopped = true;
    stopExpiry?.();
    unsubscribe();
  };
  const ended = (err: unknown): void => {
    if (stopped) return;
    stop();
    end(err);
  };
  const expiresAt = admitted.expiresAt;
  if (expiresAt) {
    const expired = new AppError(
      'UNAUTHENTICATED',
      'Token expired',
      `the data plane token ${admitted.tokenId} expired at ${expiresAt.toISOString()}: issue a new one (POST /tokens/dataplane) and reconnect`,
    );
    // Always in a later turn (soon): the stream subscribes to its end once the open has resolved.
    stopExpiry = deadlineTimer(expiresAt.getTime() - now().getTime(), () => ended(expired), true);
  }
  const unsubscribe = deps.onMeshChange((m, write) => {
    if (m !== mesh || stopped) return;
    const own = write.kind === 'Dataplane' && write.name === name;
    const secret = write.kind === 'Secret' && (deps.tokenSecret?.(mesh, write.name) ?? true);
    if (!own && !secret) return;
    const dataplane = deps.lookup(mesh, name);
    if (dataplane === undefined) return;
    deps.checkToken(dataplane, proxy.token).then(
      (result) => {
        if (!result.ok) ended(refused(result));
      },
      // Not an AppError: the ADS server logs it and ends the stream as INTERNAL, naming no detail.
      (err: unknown) => ended(err),
    );
  });
  return stop;
}

/** Streams opened by this source, for the match view's per-stream dialled services. */
let streamCount = 0;

/** The followers of one mesh: by proxy name (mostly one stream each), and those that hear every change. */
interface MeshFollowers {
  byName: Map<string, MeshProxyHandle | MeshProxyHandle[]>;
  broad: Set<MeshProxyHandle>;
}

/**
 * One subscription to the match view for all the streams, each change handed to the streams of
 * the proxies it names (every stream of the mesh when it names all), and to the streams that hear
 * every change (`setBroad`: no config cached, or answers that depend on every Dataplane). One
 * subscription per stream would make each change cost every open stream: with 10,000 streams
 * connecting at once, whose dialled services each mark their proxy, that is 10,000² calls.
 */
class NewsRouter {
  private readonly meshes = new Map<string, MeshFollowers>();
  private followers = 0;
  private unsubscribe: (() => void) | undefined;
  /** Counts routed changes: a stream told of one is marked with its number (no set built per change). */
  private routed = 0;

  constructor(private readonly matches: MatchView<unknown>) {}

  follow(f: MeshProxyHandle): void {
    if (f.following) return;
    let m = this.meshes.get(f.mesh);
    if (!m) this.meshes.set(f.mesh, (m = { byName: new Map(), broad: new Set() }));
    const own = m.byName.get(f.name);
    m.byName.set(f.name, own === undefined ? f : streamsOf(own).concat([f]));
    f.following = true;
    if (this.followers++ === 0)
      this.unsubscribe = this.matches.onProxiesChanged((mesh, change) => this.route(mesh, change));
  }

  setBroad(f: MeshProxyHandle, broad: boolean): void {
    if (!f.following || f.broad === broad) return;
    const m = this.meshes.get(f.mesh);
    if (!m) return;
    f.broad = broad;
    if (broad) m.broad.add(f);
    else m.broad.delete(f);
  }

  unfollow(f: MeshProxyHandle): void {
    if (!f.following) return;
    const m = this.meshes.get(f.mesh);
    const own = m?.byName.get(f.name);
    if (!m || own === undefined) return;
    f.following = false;
    f.broad = false;
    m.broad.delete(f);
    const rest = streamsOf(own).filter((x) => x !== f);
    if (rest.length === 0) m.byName.delete(f.name);
    else m.byName.set(f.name, rest.length === 1 ? (rest[0] as MeshProxyHandle) : rest);
    if (m.byName.size === 0) this.meshes.delete(f.mesh);
    if (--this.followers === 0) {
      this.unsubscribe?.();
      this.unsubscribe = undefined;
    }
  }

  private route(mesh: string, change: ProxiesChange): void {
    const m = this.meshes.get(mesh);
    if (!m) return;
    const n = ++this.routed;
    // Each stream told once: those that hear every change, then those of the proxies it names.
    const tell = (f: MeshProxyHandle): void => {
      if (f.told === n) return;
      f.told = n;
      f.news(change);
    };
    for (const f of m.broad) tell(f);
    if (change.all) for (const own of m.byName.values()) forEachStream(own, tell);
    else {
      for (const name of change.proxies) {
        const own = m.byName.get(name);
        if (own !== undefined) forEachStream(own, tell);
      }
    }
  }
}

function forEachStream(own: MeshProxyHandle | MeshProxyHandle[], fn: (f: MeshProxyHandle) => void): void {
  if (Array.isArray(own)) for (const f of own) fn(f);
  else fn(own);
}

const streamsOf = (own: MeshProxyHandle | MeshProxyHandle[]): readonly MeshProxyHandle[] =>
  Array.isArray(own) ? own : [own];

/** What the streams of one source share. */
interface SourceParts {
  deps: MeshConfigDeps;
  shared: ReturnType<typeof sharedConfigs>;
  news: NewsRouter;
}

/**
 * The config of one stream's proxy: the Listener names it asked for, what it was sent, and its
 * config while no write or new request may have changed it. One object with its state in fields
 * (10,000 streams, each one of these).
 */
class MeshProxyHandle implements ProxyHandle {
  /** The Listener names asked for, sorted (a list shared with other streams, never changed). */
  private services: readonly string[] = NO_NAMES;
  /** Listener names this stream was sent, sorted: they stay while asked for (see `existing`). */
  private sent: readonly string[] = NO_NAMES;
  /** The config of the names answered now; undefined when a write or a new request may change it. */
  private cached: ProxylessConfig | undefined = undefined;
  /** Its place in the news router, kept by the router: followed, hears every change, last change told. */
  following = false;
  broad = false;
  told = 0;
  /** The services last told to the match view as this stream's dialled ones. */
  private dialled: readonly string[] | undefined = undefined;
  /** Names asked but not answered (they may come to exist). */
  private waiting = false;
  /** It serves an inbound (a server Listener): its callers are every Dataplane of the mesh. */
  private server = false;
  /** True while this stream computes: the match view's news of its own dialled services is not news. */
  private computing = false;
  /**
   * Told when config may have changed; while there are some, the stream follows the news. (Lists
   * are replaced, never grown in place: an array grown by `push` or a spread reserves room for 17,
   * `concat` makes one of the exact size.)
   */
  private listeners: ReadonlyArray<() => void> = NO_LISTENERS;
  private ends: ReadonlyArray<(err: unknown) => void> = NO_ENDS;
  /** The server's stream when it follows (`follow`), told as the listeners are. */
  private follower: StreamFollower | undefined = undefined;
  private stopWatch: () => void = NOTHING;

  constructor(
    private readonly parts: SourceParts,
    readonly mesh: string,
    readonly name: string,
    /** The stream's key in the match view's dialled services. */
    private readonly stream: string,
  ) {}

  /** The Dataplane behind the stream: this handle itself names it (its `mesh` and `name`). */
  get proxy(): { readonly mesh: string; readonly name: string } {
    return this;
  }

  /** Starts the token watch (after the token was admitted). */
  watch(token: string | undefined, admitted: { tokenId?: string; expiresAt?: Date }): void {
    // Ends at most once (watchToken's own guard), never after `closed`.
    this.stopWatch = watchToken(
      this.parts.deps,
      { mesh: this.mesh, name: this.name, token },
      admitted,
      (err) => {
        this.follower?.end(err);
        for (const listener of this.ends) listener(err);
      },
    );
  }

  resources(typeUrl: string, names: readonly string[]): ResourceSet {
    if (typeUrl === LISTENER && !sameStrings(names, this.services)) {
      this.services = sortedNames(names);
      this.cached = undefined;
      this.parts.news.setBroad(this, true);
    }
    const version = this.parts.deps.sources.revision();
    const c = this.config(version);
    if (typeUrl === LISTENER) return { version, resources: pick(c.listeners, resourceName, names) };
    if (typeUrl === CLUSTER) return { version, resources: pick(c.clusters, resourceName, names) };
    if (typeUrl === CLUSTER_LOAD_ASSIGNMENT)
      return { version, resources: pick(c.assignments, assignmentName, names) };
    // Routes travel inline in the listeners.
    return { version, resources: [] };
  }

  onChange(listener: () => void): () => void {
    this.listeners = this.listeners.concat([listener]);
    this.startFollowing();
    return () => {
      const i = this.listeners.indexOf(listener);
      if (i < 0) return;
      this.listeners = this.listeners.filter((_, j) => j !== i);
      this.stopFollowing();
    };
  }

  follow(follower: StreamFollower): void {
    this.follower = follower;
    this.startFollowing();
  }

  /** Follows the news once someone listens (again: the broad mark as the cache says). */
  private startFollowing(): void {
    this.parts.news.follow(this);
    this.parts.news.setBroad(this, this.cached === undefined || this.server || this.waiting);
  }

  /** Stops following the news once no one listens. */
  private stopFollowing(): void {
    if (this.listeners.length === 0 && this.follower === undefined) this.parts.news.unfollow(this);
  }

  onEnd(listener: (err: unknown) => void): () => void {
    this.ends = this.ends.concat([listener]);
    return () => {
      const i = this.ends.indexOf(listener);
      if (i >= 0) this.ends = this.ends.filter((_, j) => j !== i);
    };
  }

  closed(): void {
    this.stopWatch();
    this.ends = NO_ENDS;
    this.parts.news.unfollow(this);
    this.listeners = NO_LISTENERS;
    this.follower = undefined;
    this.cached = undefined;
    this.dialled = undefined;
    this.parts.deps.matches.setDialled(this.mesh, this.name, this.stream, undefined);
  }

  /** The match view's news of the mesh (the router hands it the changes that may concern it). */
  news(change: ProxiesChange): void {
    if (this.computing) return;
    const touched =
      change.all ||
      change.proxies.has(this.name) ||
      // A server's callers are every Dataplane; a name not answered may come to exist.
      (change.dataplanes && (this.server || this.waiting));
    if (this.cached && !touched) return;
    this.cached = undefined;
    this.parts.news.setBroad(this, true);
    this.follower?.changed();
    for (const listener of this.listeners) listener();
  }

  private config(version: number): ProxylessConfig {
    if (this.cached !== undefined) return this.cached;
    const { deps, shared } = this.parts;
    this.computing = true;
    try {
      const networking = deps.sources.dataplane(this.mesh, this.name);
      const at = shared.of(this.mesh, version);
      const present = existing(this.services, at, networking, this.sent);
      this.sent = sameStrings(present, this.services) ? this.services : present;
      this.waiting = present.length < this.services.length;
      this.server = present.some(isServerListenerName);
      const dialled = this.server ? present.filter((n) => !isServerListenerName(n)) : this.sent;
      // Told again only when it changed (the match view compares the proxy's dialled services
      // before and after each call: a push to every stream would pay that for nothing).
      if (this.dialled === undefined || !sameStrings(dialled, this.dialled)) {
        deps.matches.setDialled(this.mesh, this.name, this.stream, dialled);
        this.dialled = dialled;
      }
      this.cached = at.compute(this.name, present, present.join('\u0000'));
    } finally {
      this.computing = false;
    }
    this.parts.news.setBroad(this, this.server || this.waiting);
    return this.cached;
  }
}

const NO_NAMES: readonly string[] = Object.freeze([]);
const NO_LISTENERS: ReadonlyArray<() => void> = Object.freeze([]);
const NO_ENDS: ReadonlyArray<(err: unknown) => void> = Object.freeze([]);

const resourceName = (r: Record<string, unknown>): string => String(r.name);
const assignmentName = (r: Record<string, unknown>): string => String(r.cluster_name);

/** `names` sorted: the list itself when it is a sorted list no one changes (a stream's shared one), else a sorted copy. */
function sortedNames(names: readonly string[]): readonly string[] {
  if (Object.isFrozen(names) && names.every((n, i) => i === 0 || (names[i - 1] as string) <= n)) return names;
  return [...names].sort();
}

/** Creates the source. */
export function createMeshConfigSource(deps: MeshConfigDeps): ConfigSource {
  const parts: SourceParts = { deps, shared: sharedConfigs(deps), news: new NewsRouter(deps.matches) };
  return {
    async open(node: Node, metadata: grpc.Metadata): Promise<ProxyHandle> {
      const who = nodeIdentity(node, deps.lookup);
      if (!who.ok) throw refused(who);
      const token = proxyToken(node, metadata.get('authorization').map(String));
      if (!token.ok) throw refused(token);
      const allowed = await deps.checkToken(who.dataplane, token.token);
      if (!allowed.ok) throw refused(allowed);
      const stream = new MeshProxyHandle(parts, who.mesh, who.name, `s${++streamCount}`);
      stream.watch(token.token, allowed);
      return stream;
    },
  };
}

/**
 * Listener names that no Dataplane serves, answered per stream: each gets a Listener whose calls
 * fail at once with UNAVAILABLE naming the service (a typo in a target is told at once, not after
 * the client's 15 s wait for a resource). Past these, made-up names get nothing until they exist:
 * a client asking thousands of them costs a few Listeners, not one built for each.
 */
export const UNKNOWN_LISTENERS_PER_STREAM = 16;

/**
 * The Listener names of `asked` that are answered: a service some Dataplane of the mesh serves (an
 * inbound with its service tag, ready or not, in any zone), a server Listener name of one of the
 * proxy's own inbounds, any name this stream was already sent, and up to
 * {@link UNKNOWN_LISTENERS_PER_STREAM} names that exist nowhere (those already sent count first).
 * A name past that is sent when it comes to exist. A Listener once sent is not withdrawn while
 * asked for: the client would keep it with its last endpoints (`ignore_resource_deletion`), or
 * without that feature drop it and then ignore it re-added identical; it stays with no endpoints,
 * and calls fail with UNAVAILABLE.
 */
function existing(
  asked: readonly string[],
  at: MeshAtRevision,
  networking: Networking | undefined,
  sentList: readonly string[],
): string[] {
  // Sent lists are short (the services a client dials); a long one is looked up through a set.
  const sentSet = sentList.length > 16 ? new Set(sentList) : undefined;
  const sent = { has: (n: string): boolean => (sentSet ? sentSet.has(n) : sentList.includes(n)) };
  const known = (n: string): boolean =>
    isServerListenerName(n) ? namesOwnInbound(networking, n) : at.exists(n);
  // Names already sent stay, and the unknown among them count first.
  let unknownLeft = UNKNOWN_LISTENERS_PER_STREAM;
  for (const n of asked) if (sent.has(n) && !known(n)) unknownLeft--;
  return asked.filter((n) => sent.has(n) || known(n) || (!isServerListenerName(n) && unknownLeft-- > 0));
}

/** Distinct name lists kept per array (proxies of one workload ask the same few). */
const PICKED_PER_ARRAY = 256;

/** Picked subsets by the array they were picked from and the names asked (see {@link pick}). */
const PICKED = new WeakMap<ReadonlyArray<Record<string, unknown>>, Map<string, NamedResource[]>>();

/**
 * The resources of `all` that `names` asks for (all of them for `[]`). Streams asking the same
 * names of the same shared array get the same answer array, which tells the stream the content did
 * not change (AdsStream) without encoding it again.
 */
function pick(
  all: ReadonlyArray<Record<string, unknown>>,
  nameOf: (r: Record<string, unknown>) => string,
  names: readonly string[],
): NamedResource[] {
  let byNames = PICKED.get(all);
  if (!byNames) {
    byNames = new Map();
    PICKED.set(all, byNames);
  }
  const key = names.join('\u0000');
  let picked = byNames.get(key);
  if (!picked) {
    // Bounded: a stream may ask any names (up to the request cap) again and again.
    if (byNames.size >= PICKED_PER_ARRAY) byNames.clear();
    const wanted = new Set(names);
    picked = all
      .filter((r) => wanted.size === 0 || wanted.has(nameOf(r)))
      .map((r) => ({ name: nameOf(r), resource: r }));
    byNames.set(key, picked);
  }
  return picked;
}

/** What one mesh's proxies share at one revision: configs by (match class, names asked). */
interface MeshAtRevision {
  /** True when a Dataplane of the mesh serves `service` (an inbound with its service tag, ready or not). */
  exists(service: string): boolean;
  /** The config of proxy `name` for `names`; `namesKey`: `names` joined by NUL (the caller keeps it). */
  compute(name: string, names: readonly string[], namesKey: string): ProxylessConfig;
}

/** Configs kept per mesh and revision; past it a config is computed for its stream alone. */
const CONFIGS_PER_REVISION = 10_000;

/** The configs of one mesh at one revision, by workload key. */
type Configs = Map<string, ProxylessConfig>;

/**
 * `fresh`, with each resource list that encodes exactly as in `before` (the same workload's config
 * at the previous revision) replaced by `before`'s array: the streams then see an unchanged type as
 * the same array and skip it (a policy change that touches only routes re-sends Listeners alone).
 */
function keepUnchanged(before: ProxylessConfig | undefined, fresh: ProxylessConfig): ProxylessConfig {
  if (!before) return fresh;
  const same = (url: string, a: ReadonlyArray<object>, b: ReadonlyArray<object>): boolean =>
    a.length === b.length &&
    a.every((r, i) => encodedValue(url, r).equals(encodedValue(url, b[i] as object)));
  return {
    ...fresh,
    listeners: same(LISTENER, before.listeners, fresh.listeners) ? before.listeners : fresh.listeners,
    clusters: same(CLUSTER, before.clusters, fresh.clusters) ? before.clusters : fresh.clusters,
    assignments: same(CLUSTER_LOAD_ASSIGNMENT, before.assignments, fresh.assignments)
      ? before.assignments
      : fresh.assignments,
  };
}

/** Proxyless servers' inbound Listeners depend on their own addresses and ports, not only their class. */
const SERVER_KEYS = new WeakMap<Networking, string>();
function serverKey(networking: Networking): string {
  let key = SERVER_KEYS.get(networking);
  if (key === undefined) SERVER_KEYS.set(networking, (key = JSON.stringify(networking)));
  return key;
}

/**
 * Proxies of one match class asking the same names get the same config: rendered once per revision
 * and shared (the same objects, so the server also encodes them once).
 */
function sharedConfigs(deps: MeshConfigDeps): { of(mesh: string, revision: number): MeshAtRevision } {
  const meshes = new Map<string, { revision: number; at: MeshAtRevision; configs: Configs }>();
  const { matches, sources } = deps;
  const build = (mesh: string, configs: Configs, before: Configs | undefined): MeshAtRevision => {
    const meshView = entryMesh(matches, mesh);
    return {
      exists: (service) => service !== '' && meshView.endpoints(service).length > 0,
      compute(name, names, namesKey) {
        const entry = matches.proxy(mesh, name);
        if (!entry) return { listeners: [], clusters: [], assignments: [], notes: {}, shapedBy: [] };
        const server = names.some(isServerListenerName);
        const who =
          entry.kind === 'SidecarDataplane' && !server ? entry.classKey : serverKey(entry.networking);
        const key = `${who}\u0000${namesKey}`;
        let hit = configs.get(key);
        if (!hit) {
          const fresh = renderProxy({ entry, names, mesh, meshView, sources, withEndpoints: true });
          hit = keepUnchanged(before?.get(key), fresh);
          // Bounded: a proxy may ask ever other subsets of the services within one revision.
          if (configs.size < CONFIGS_PER_REVISION) configs.set(key, hit);
        }
        return hit;
      },
    };
  };
  return {
    of(mesh, revision) {
      let m = meshes.get(mesh);
      if (m?.revision !== revision) {
        // Only the last revision's configs are kept, to share what did not change with them.
        const configs: Configs = new Map();
        m = { revision, at: build(mesh, configs, m?.configs), configs };
        meshes.set(mesh, m);
      }
      return m.at;
    },
  };
}
