/**
 * Every composite key and location the control plane joins from parts and reads back: nothing else
 * joins or splits them. In resources/ because every layer that makes one (events, projections,
 * status, policies, app, api, zones, xds, runtime) may import resources/, while util/ knows nothing
 * of meshes. The LevelDB encoding (revision, history index, snapshot and meta keys) is storage, not
 * this: it stays in events/keys.ts.
 *
 * In-memory keys separate their parts with characters below every character a name, kind or tag
 * may hold, so keys sort as their parts do ((mesh, name) order in the views). Keys that are stored
 * or sent (status rows, policy names in answers, zone names, node ids) keep their spelling byte for
 * byte. Reads in hot paths take no object: a split returns a tuple or one part.
 */
import { RESOURCE_NAME } from './fragments.js';

/** Between the parts of an in-memory key: sorts below every legal name character. */
const SEP = '\u0000';
/** The character just above {@link SEP}: the end of a range of keys that start with a given part. */
const PAST_SEP = '\u0001';
/** After the kind in a resource key: neither a kind nor a mesh holds it. */
const KIND_SEP = '\u0001';

/** Two parts joined by {@link SEP}. */
const joined = (a: string, b: string): string => `${a}${SEP}${b}`;

/** The two sides of `key` around its first `sep`. */
function splitAt(key: string, sep: string): [string, string] {
  const at = key.indexOf(sep);
  return [key.slice(0, at), key.slice(at + 1)];
}

/** The key of a resource in its kind's view (and of a proxy anywhere): mesh (empty for global kinds), then name. */
export function meshNameKey(mesh: string | undefined, name: string): string {
  return joined(mesh ?? '', name);
}

/** The mesh (empty for a global kind) and the name of a {@link meshNameKey} key. */
export function splitMeshNameKey(key: string): [mesh: string, name: string] {
  return splitAt(key, SEP);
}

/** Key range [from, to) holding every {@link meshNameKey} key of one mesh. */
export function meshRange(mesh: string): { from: string; to: string } {
  return { from: `${mesh}${SEP}`, to: `${mesh}${PAST_SEP}` };
}

/** The key of one resource of any kind: kind, mesh (empty for global kinds), name. */
export function resourceKey(kind: string, mesh: string | undefined, name: string): string {
  return `${kind}${KIND_SEP}${mesh ?? ''}${SEP}${name}`;
}

/** The kind of a {@link resourceKey} key. */
export function kindOfResourceKey(key: string): string {
  return key.slice(0, key.indexOf(KIND_SEP));
}

/** The key of one tag (`key` = `value`) in a tag index; a `*` selector is indexed by the tag key alone. */
export function tagIndexKey(key: string, value: string): string {
  return joined(key, value);
}

/** The key of a matched-policies item (inbound, outbound, service, dataplane) by its type and name. */
export function itemKey(type: string, name: string): string {
  return joined(type, name);
}

/** The key of a served xDS resource: its type (`Listener`, `Cluster`, …), then its name; sorts by type, then name. */
export function servedKey(type: string, name: string): string {
  return joined(type, name);
}

/** The type and name of a {@link servedKey} key. */
export function splitServedKey(key: string): [type: string, name: string] {
  return splitAt(key, SEP);
}

/** A policy as answers name it (`Kind/name`): the match view's policy keys, the policies shaping a config. */
export function policyKey(kind: string, name: string): string {
  return `${kind}/${name}`;
}

/** The kind of a {@link policyKey} key. */
export function kindOfPolicyKey(key: string): string {
  return key.slice(0, key.indexOf('/'));
}

/** The name of a {@link policyKey} key. */
export function nameOfPolicyKey(key: string): string {
  return key.slice(key.indexOf('/') + 1);
}

/** How Global names a zone's resource: `<zone>.<name>` (names may hold dots too). */
export function zonedName(zone: string, name: string): string {
  return `${zone}.${name}`;
}

/** The name `zone` gives a resource Global stores as `zoned`, or undefined when `zoned` is not that zone's. */
export function nameInZone(zone: string, zoned: string): string | undefined {
  return zoned.startsWith(`${zone}.`) ? zoned.slice(zone.length + 1) : undefined;
}

/** A proxy's xDS node id: `<mesh>.<name>`. */
export function nodeId(mesh: string, name: string): string {
  return `${mesh}.${name}`;
}

/**
 * Every (mesh, name) reading of a node id: a split at each dot whose two sides are both a valid
 * name (so an id has at most a few hundred, whatever its dots), first dot first.
 */
export function nodeIdSplits(id: string): Array<{ mesh: string; name: string }> {
  const splits: Array<{ mesh: string; name: string }> = [];
  // Both sides are at most 253 characters: only the dots in the middle of a long id can split it.
  const from = Math.max(0, id.length - 254);
  for (let at = id.indexOf('.', from); at !== -1 && at <= 253; at = id.indexOf('.', at + 1)) {
    const ref = { mesh: id.slice(0, at), name: id.slice(at + 1) };
    if (RESOURCE_NAME.test(ref.mesh) && RESOURCE_NAME.test(ref.name)) splits.push(ref);
  }
  return splits;
}

/** A proxy's key in the status store and its shared rows (`<mesh>/<name>`, stored: never respelled). */
export function dataplaneStatusKey(mesh: string, name: string): string {
  return `${mesh}/${name}`;
}

/** The mesh and name of a {@link dataplaneStatusKey} key. */
export function splitDataplaneStatusKey(key: string): [mesh: string, name: string] {
  return splitAt(key, '/');
}

/** The key of a shared status row in memory: its status kind (`dataplane`, `zone`), then its key. */
export function statusRowKey(kind: string, key: string): string {
  return joined(kind, key);
}

/**
 * Where a policy attaches on a sidecar, as the first letter of a location: `i` an inbound, `o` an
 * outbound, `d` the proxy, `s` a service.
 */
export type LocationPlace = 'i' | 'o' | 'd' | 's';

/** The location of a proxy's inbound `index`. */
export function inboundLocation(index: number): string {
  return `i${index}`;
}

/** The location of a proxy's outbound `index`. */
export function outboundLocation(index: number): string {
  return `o${index}`;
}

/** The location of a proxy's `service` item (`service` names it). */
export function serviceLocation(service: string): string {
  return `s${service}`;
}

/** The location of the proxy itself. */
export const PROXY_LOCATION = 'd';

/** The place of a location, or undefined when it names none. */
export function locationPlace(location: string): LocationPlace | undefined {
  const at = location[0];
  if (at === 'd') return location.length === 1 ? at : undefined;
  return at === 'i' || at === 'o' || at === 's' ? at : undefined;
}

/** The index of an inbound or outbound location, or undefined when it is not a whole number from 0. */
export function locationIndex(location: string): number | undefined {
  const index = Number(location.slice(1));
  return Number.isInteger(index) && index >= 0 ? index : undefined;
}

/** The service of a service location. */
export function locationService(location: string): string {
  return location.slice(1);
}
