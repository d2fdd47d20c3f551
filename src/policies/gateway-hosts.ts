/**
 * The listeners and virtual hosts of a built-in gateway proxy, and the MeshGatewayRoutes each host
 * serves (Kuma 2.0 `MakeGatewayListener`, `RedistributeWildcardRoutes`, `GenerateEnvoyRouteEntries`):
 *
 * - A listener's tags are the proxy's gateway tags, then the MeshGateway's, then the listener's
 *   (later wins). A route attaches to a listener when one of its `selectors` matches those tags and
 *   its kind fits the protocol: `http` routes on HTTP and HTTPS, `tcp` routes on TCP, none on TLS
 *   or UDP.
 * - Listeners that share a port are one listener (the protocol of the first); each gives the host
 *   of its `hostname` (`*` when absent or empty); two listeners with one port and hostname: the later wins.
 * - The `*` host keeps only routes without `conf.http.hostnames` (or listing `*`); a route with
 *   hostnames moves to the host of each name, creating it with the `*` listener's tags when no
 *   listener declares it, and a `*.domain` name also joins every other host one label below it.
 * - A declared named host serves its own listener's routes whose hostnames cover it (or that have
 *   none): a name covers a host when equal, when either has `*` as first label and the rest is
 *   equal, or when it is `*`.
 *
 * Beyond the reference, which hands wildcard routes on in store order so that a `*.example.com`
 * route reaches `foo.example.com` only if another route created that host first: every host is
 * created before any route is handed on, so the answer does not depend on the order of routes.
 */
import type { Selector } from './policy-resource.js';
import { MATCH_ALL, tagSelectorMatches } from './tag-selector.js';

type Tags = Readonly<Record<string, string>>;

/** The parts of a MeshGateway listener that matching reads (extra-policies.md). */
export interface GatewayListenerSpec {
  port: number;
  protocol: string;
  hostname?: string;
  tags?: Tags;
}

/** The parts of a MeshGateway that matching reads. */
export interface GatewaySpec {
  tags?: Tags;
  conf: { listeners: readonly GatewayListenerSpec[] };
}

/** One backend (`{weight, destination}`) of a MeshGatewayRoute rule. */
interface Backend {
  destination: Tags;
}

/** The parts of a MeshGatewayRoute that matching reads (extra-policies.md). */
export interface GatewayRouteSpec {
  name: string;
  selectors?: readonly Selector[];
  conf: {
    tcp?: { rules?: ReadonlyArray<{ backends: readonly Backend[] }> };
    http?: {
      hostnames?: readonly string[];
      rules: ReadonlyArray<{
        backends?: readonly Backend[];
        filters?: ReadonlyArray<{ mirror?: { backend: Backend } }>;
      }>;
    };
  };
}

/** One virtual host: its name, the tags its connection policies match against, its routes by name. */
export interface GatewayHost<R extends GatewayRouteSpec> {
  hostName: string;
  tags: Tags;
  routes: R[];
}

/** One listener (port) of the proxy with its hosts, sorted by name (`*` and `*.` names first). */
export interface GatewayListenerHosts<R extends GatewayRouteSpec> {
  port: number;
  protocol: string;
  hosts: GatewayHost<R>[];
}

/** The wildcard hostname: a listener without `hostname` serves every host. */
export const WILDCARD_HOST = '*';

/** Listeners sorted by port, each with its hosts and their routes. */
export function gatewayListeners<R extends GatewayRouteSpec>(
  proxyGatewayTags: Tags,
  gateway: GatewaySpec,
  routes: readonly R[],
): GatewayListenerHosts<R>[] {
  const byPort = new Map<number, GatewayListenerSpec[]>();
  for (const l of gateway.conf.listeners) byPort.set(l.port, [...(byPort.get(l.port) ?? []), l]);
  const listeners: GatewayListenerHosts<R>[] = [];
  for (const [port, group] of byPort) {
    const protocol = group[0]!.protocol;
    const declared = new Map<string, { tags: Tags; routes: R[] }>();
    for (const l of group) {
      const tags = { ...proxyGatewayTags, ...gateway.tags, ...l.tags };
      const attached = routes.filter((r) => fitsProtocol(r, protocol) && selects(r, tags));
      // An empty hostname is unset, as in Kuma 2.0.
      declared.set(l.hostname || WILDCARD_HOST, { tags, routes: attached });
    }
    listeners.push({ port, protocol, hosts: hostsOf(declared) });
  }
  return listeners.sort((a, b) => a.port - b.port);
}

/** The hosts of one port: declared ones, plus those the `*` host's routes name. */
function hostsOf<R extends GatewayRouteSpec>(
  declared: ReadonlyMap<string, { tags: Tags; routes: R[] }>,
): GatewayHost<R>[] {
  const wild = declared.get(WILDCARD_HOST);
  const hosts = new Map<string, { tags: Tags; routes: Set<R> }>();
  for (const [hostName, h] of declared) hosts.set(hostName, { tags: h.tags, routes: new Set() });
  // First every host, then the routes (see the file comment).
  const named = (wild?.routes ?? []).filter((r) => !servesEveryHost(r));
  for (const r of named)
    for (const n of hostnamesOf(r)) if (!hosts.has(n)) hosts.set(n, { tags: wild!.tags, routes: new Set() });
  for (const [hostName, h] of hosts) {
    const own = declared.get(hostName)?.routes ?? [];
    if (hostName === WILDCARD_HOST) {
      for (const r of own) if (servesEveryHost(r)) h.routes.add(r);
      continue;
    }
    for (const r of own) if (covers(r, hostName)) h.routes.add(r);
    for (const r of named) if (joins(r, hostName)) h.routes.add(r);
  }
  return [...hosts]
    .map(([hostName, h]) => ({
      hostName,
      tags: h.tags,
      routes: [...h.routes].sort((a, b) => compareStrings(a.name, b.name)),
    }))
    .sort((a, b) => compareStrings(a.hostName, b.hostName));
}

/** True when one of the route's selectors matches the listener's merged tags. */
function selects(route: GatewayRouteSpec, listenerTags: Tags): boolean {
  return (route.selectors ?? []).some(({ match }) => tagSelectorMatches(match, listenerTags));
}

function fitsProtocol(route: GatewayRouteSpec, protocol: string): boolean {
  if (route.conf.http) return protocol === 'HTTP' || protocol === 'HTTPS';
  if (route.conf.tcp) return protocol === 'TCP';
  return false;
}

const hostnamesOf = (route: GatewayRouteSpec): readonly string[] => route.conf.http?.hostnames ?? [];

/** A route without hostnames, or naming `*`, stays on the `*` host (and covers every host). */
function servesEveryHost(route: GatewayRouteSpec): boolean {
  const names = hostnamesOf(route);
  return names.length === 0 || names.includes(WILDCARD_HOST);
}

/** True when the route serves `hostName` by its hostnames (Kuma's match.Hostnames). */
function covers(route: GatewayRouteSpec, hostName: string): boolean {
  if (servesEveryHost(route)) return true;
  return hostnamesOf(route).some((n) => hostnameMatches(hostName, n));
}

/**
 * True when a route handed on by the `*` host joins `hostName`: a hostname names it, or a
 * `*.domain` hostname covers it (Kuma adds it to hosts ending in the domain, then keeps it where
 * `match.Hostnames` agrees). Unlike `covers`, a `*.domain` host does not take a route of a name.
 */
function joins(route: GatewayRouteSpec, hostName: string): boolean {
  return hostnamesOf(route).some(
    (n) => n === hostName || (n.startsWith('*.') && hostnameMatches(hostName, n)),
  );
}

/** Equal, or either has `*` as its first label and the rest is equal (one label only). */
export function hostnameMatches(host: string, name: string): boolean {
  if (host === name || name === MATCH_ALL) return true;
  const [hHead, hDomain] = splitFirstLabel(host);
  const [nHead, nDomain] = splitFirstLabel(name);
  return (hHead === MATCH_ALL || nHead === MATCH_ALL) && hDomain === nDomain;
}

function splitFirstLabel(name: string): [string, string] {
  const dot = name.indexOf('.');
  return dot < 0 ? [name, ''] : [name.slice(0, dot), name.slice(dot + 1)];
}

const compareStrings = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
