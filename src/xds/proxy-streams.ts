/**
 * The stream bookkeeping that feeds proxy insights (architecture: src/xds/): which ADS streams are
 * open for each proxy, newest first, and the DataplaneInsight subscription of each (online while a
 * stream is open). The ADS server's `connect`, `update` and `disconnect` events drive it; the
 * runtime wires them and logs.
 */
import { nodeIdentity, type DataplaneLookup } from './node-identity.js';
import type {
  CounterReader,
  CountersByKind,
  ProxyInsights,
  ProxySubscriptionHandle,
  StreamCounters,
} from './proxy-insights.js';
import type { StreamInfo } from './stream-info.js';
import { SHORT_TYPE } from './type-urls.js';

/**
 * An open stream's insight bookkeeping; it is the reader of the stream's counters (called when the
 * insight is published).
 */
class OpenStream implements CounterReader {
  constructor(
    readonly info: StreamInfo,
    readonly handle: ProxySubscriptionHandle,
    /** Its proxy. */
    readonly mesh: string,
    readonly name: string,
    /** The proxy's stream opened before this one, while it is open. */
    public older: OpenStream | undefined,
  ) {}

  counters(): StreamCounters {
    // A type's status carries its three counters itself: read as they are, not copied.
    const byKind: CountersByKind = {};
    for (const [url, status] of this.info.types) {
      const kind = SHORT_TYPE[url];
      if (kind) byKind[kind] = status;
    }
    return { byKind, lastUpdateTime: this.info.lastUpdateMs ?? this.info.lastUpdateTime };
  }
}

/** The open streams of each proxy and their insight subscriptions. */
export interface ProxyStreams {
  /** A stream opened: its proxy's subscription opens. Returns the proxy, undefined when the stream names none. */
  connected(info: StreamInfo): { mesh: string; name: string } | undefined;
  /** A stream's counters changed. */
  updated(info: StreamInfo): void;
  /** A stream ended: its subscription closes. */
  disconnected(info: StreamInfo): void;
  /** The ids of a proxy's open streams, newest first (several may be open for one proxy). */
  openIds(mesh: string, name: string): Iterable<string>;
  /** Closes the subscription of every stream still open (the server has closed them). */
  close(): void;
}

/** Creates the bookkeeping; `lookup` names the Dataplane of a stream whose source did not. */
export function createProxyStreams(deps: {
  insights: ProxyInsights;
  lookup: DataplaneLookup;
  instanceId: string;
}): ProxyStreams {
  /** Insight bookkeeping per open stream, by stream id. */
  const open = new Map<string, OpenStream>();
  /** The newest open stream of each proxy, by mesh then name; older ones follow its `older` links. */
  const newest = new Map<string, Map<string, OpenStream>>();
  const newestOf = (mesh: string, name: string): OpenStream | undefined => newest.get(mesh)?.get(name);
  const setNewest = (mesh: string, name: string, entry: OpenStream | undefined): void => {
    let byName = newest.get(mesh);
    if (entry) {
      if (!byName) newest.set(mesh, (byName = new Map()));
      byName.set(name, entry);
    } else if (byName?.delete(name) && byName.size === 0) newest.delete(mesh);
  };
  /** The Dataplane of a stream: as the source named it when it opened, else read from the node. */
  const proxyOf = (info: StreamInfo): { mesh: string; name: string } | undefined => {
    if (info.proxy) return info.proxy;
    const who = nodeIdentity(info.node, deps.lookup);
    return who.ok ? who : undefined;
  };
  return {
    connected(info) {
      const who = proxyOf(info);
      if (!who) return undefined;
      const handle = deps.insights.open(who.mesh, who.name, {
        id: info.id,
        controlPlaneInstanceId: deps.instanceId,
        userAgent: info.userAgent,
      });
      const entry = new OpenStream(info, handle, who.mesh, who.name, newestOf(who.mesh, who.name));
      open.set(info.id, entry);
      setNewest(who.mesh, who.name, entry);
      return who;
    },
    updated(info) {
      const entry = open.get(info.id);
      entry?.handle.update(entry);
    },
    disconnected(info) {
      const entry = open.get(info.id);
      open.delete(info.id);
      if (!entry) return;
      // Unlinked from its proxy's list, so that a proxy's list holds its open streams only.
      let at = newestOf(entry.mesh, entry.name);
      if (at === entry) setNewest(entry.mesh, entry.name, entry.older);
      else {
        while (at && at.older !== entry) at = at.older;
        if (at) at.older = entry.older;
      }
      entry.handle.close();
    },
    *openIds(mesh, name) {
      for (let at = newestOf(mesh, name); at; at = at.older) yield at.info.id;
    },
    close() {
      for (const entry of open.values()) entry.handle.close();
      open.clear();
      newest.clear();
    },
  };
}
