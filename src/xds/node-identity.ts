import type { Networking } from '../policies/proxy-interfaces.js';
import { RESOURCE_NAME } from '../resources/fragments.js';
import { nodeIdSplits } from '../resources/keys.js';
import { printable } from '../util/printable.js';
import type { Refusal } from './refusal.js';
import { refusal } from './refusal.js';

/** The node of an xDS request as the identity reads it: `metadata` is its protobuf Struct as plain JSON. */
export interface XdsNode {
  id?: string;
  metadata?: Record<string, unknown> | null;
}

/** A Dataplane resource as stored (spec 2.4): what identity and token checks read of it. */
export interface DataplaneResource {
  mesh: string;
  name: string;
  networking: Networking;
}

/** Finds the Dataplane `name` in mesh `mesh`, or undefined when there is none (or no such mesh). */
export type DataplaneLookup = (mesh: string, name: string) => DataplaneResource | undefined;

/** A mesh and a Dataplane name. */
export interface ProxyRef {
  mesh: string;
  name: string;
}

/** The proxy a node is: its Dataplane, and the other Dataplanes its `node.id` also names (usually none). */
export interface ProxyIdentity extends ProxyRef {
  ok: true;
  dataplane: DataplaneResource;
  /** Other (mesh, name) splits of `node.id` that name existing Dataplanes; not chosen (see {@link nodeIdentity}). */
  alsoNamed: ProxyRef[];
}

/** The node metadata keys of decisions §11. */
export const NODE_METADATA = {
  mesh: 'dataplane.mesh',
  name: 'dataplane.name',
  token: 'dataplane.token',
} as const;

const FIX_HINT = `set node.id to <mesh>.<name> of the proxy's Dataplane, or node.metadata "${NODE_METADATA.mesh}" and "${NODE_METADATA.name}"`;

/** `Dataplane "n" in mesh "m"`, as the messages name a proxy. */
const named = (ref: ProxyRef): string => `Dataplane "${ref.name}" in mesh "${ref.mesh}"`;

const createHint = (ref: ProxyRef): string =>
  `create it first (PUT /meshes/${ref.mesh}/dataplanes/${ref.name})`;

/** The longest node id that can name a Dataplane: a mesh name, a dot, a Dataplane name. */
export const NODE_ID_MAX_LENGTH = 253 + 1 + 253;

/** A value as a message quotes it: JSON-quoted, control and bidi characters escaped, cut at 64 characters. */
const quote = (value: string): string =>
  printable(JSON.stringify(value.length > 64 ? `${value.slice(0, 63)}…` : value));

/** Why `id` cannot be a node id (too long, or characters no name has), or undefined. */
function unusableId(id: string): Refusal | undefined {
  if (id.length > NODE_ID_MAX_LENGTH) {
    return refusal(
      'INVALID_ARGUMENT',
      `node.id is ${id.length} characters long; at most ${NODE_ID_MAX_LENGTH} (<mesh>.<name>, each at most 253 characters): fix node.id`,
    );
  }
  if (!/^[0-9a-z._-]+$/.test(id)) {
    return refusal(
      'INVALID_ARGUMENT',
      `node.id ${quote(id)} has characters no mesh or Dataplane name has (names are [0-9a-z._-]): ${FIX_HINT}`,
    );
  }
  return undefined;
}

/** `stored` (a stored resource's string) when it equals `read`, else `read`. */
const stored = (kept: unknown, read: string): string => (kept === read ? (kept as string) : read);

/** The metadata (mesh, name) pair when the node names one; a refusal when it names half of one; undefined when neither. */
function metadataRef(metadata: Record<string, unknown>): ProxyRef | Refusal | undefined {
  const mesh = metadata[NODE_METADATA.mesh];
  const name = metadata[NODE_METADATA.name];
  if (mesh === undefined && name === undefined) return undefined;
  for (const [key, value] of [
    [NODE_METADATA.mesh, mesh],
    [NODE_METADATA.name, name],
  ] as const) {
    if (value === undefined) {
      const other = key === NODE_METADATA.mesh ? NODE_METADATA.name : NODE_METADATA.mesh;
      return refusal(
        'INVALID_ARGUMENT',
        `node.metadata has "${other}" but not "${key}": set both, or neither and use node.id`,
      );
    }
    if (typeof value !== 'string' || value === '') {
      return refusal('INVALID_ARGUMENT', `node.metadata "${key}" must be a non-empty string`);
    }
    if (!RESOURCE_NAME.test(value)) {
      return refusal(
        'INVALID_ARGUMENT',
        `node.metadata "${key}" is ${quote(value)}, which is not a name: 1 to 253 characters of [0-9a-z._-], starting with a letter or digit`,
      );
    }
  }
  return { mesh: mesh as string, name: name as string };
}

/**
 * The proxy an xDS node is (decisions §11): node.metadata `dataplane.mesh` and `dataplane.name` when
 * present (they win over the id), else `node.id` = `<mesh>.<name>`. Mesh names may contain dots, so
 * the id is tried at each dot and the reading that names an existing Dataplane is the proxy. When
 * several do (mesh "a" with Dataplane "b.c" and mesh "a.b" with Dataplane "c"), the split at the
 * first dot wins, which is the reference's only reading (Kuma's `ParseProxyIdFromString`), so a
 * proxy keeps its identity when a look-alike appears; the others are returned in `alsoNamed` for the
 * caller to log, and a bootstrap with the metadata keys is never ambiguous.
 */
export function nodeIdentity(node: XdsNode, lookup: DataplaneLookup): ProxyIdentity | Refusal {
  const metadata = node.metadata ?? {};
  const fromMetadata = metadataRef(metadata);
  if (fromMetadata !== undefined && 'code' in fromMetadata) return fromMetadata;
  if (fromMetadata !== undefined) {
    const dataplane = lookup(fromMetadata.mesh, fromMetadata.name);
    if (dataplane === undefined) {
      return refusal(
        'NOT_FOUND',
        `${named(fromMetadata)} (named by node.metadata) not found: ${createHint(fromMetadata)}, or fix node.metadata`,
      );
    }
    return { ok: true, ...fromMetadata, dataplane, alsoNamed: [] };
  }

  const id = node.id ?? '';
  if (id === '') return refusal('INVALID_ARGUMENT', `the node has no id: ${FIX_HINT}`);
  const unusable = unusableId(id);
  if (unusable) return unusable;
  const splits = nodeIdSplits(id);
  if (splits.length === 0) {
    return refusal('INVALID_ARGUMENT', `node.id "${id}" is not <mesh>.<name>: ${FIX_HINT}`);
  }
  const found = splits.flatMap((ref) => {
    const dataplane = lookup(ref.mesh, ref.name);
    return dataplane === undefined ? [] : [{ ...ref, dataplane }];
  });
  if (found.length === 0) {
    // The id is named once: listing every reading of an id with many dots repeats it as many times.
    const what =
      splits.length === 1
        ? `${named(splits[0])} not found`
        : splits.length === 2
          ? `none of ${splits.map(named).join(', ')} exists`
          : `none of its ${splits.length} readings as <mesh>.<name> (one at each dot) names an existing Dataplane`;
    const hint =
      splits.length === 1 ? `${createHint(splits[0])}, or fix node.id` : 'create it first, or fix node.id';
    return refusal('NOT_FOUND', `node.id "${id}" names no Dataplane: ${what}; ${hint}`);
  }
  const [chosen, ...others] = found;
  return {
    ok: true,
    // The Dataplane's own strings, equal to the id's parts: a stream that keeps them keeps no copy.
    mesh: stored(chosen.dataplane.mesh, chosen.mesh),
    name: stored(chosen.dataplane.name, chosen.name),
    dataplane: chosen.dataplane,
    alsoNamed: others.map(({ mesh, name }) => ({ mesh, name })),
  };
}

/**
 * The proxy's data plane token (decisions §11): node.metadata `dataplane.token`, or the `authorization`
 * call metadata `Bearer <token>` (`@grpc/grpc-js-xds` cannot send call metadata; other clients may).
 * Undefined when neither is given (the token check decides what that means); a refusal when either
 * is malformed or the two disagree.
 */
export function proxyToken(
  node: XdsNode,
  authorization: readonly string[] = [],
): { ok: true; token: string | undefined } | Refusal {
  const inMetadata = (node.metadata ?? {})[NODE_METADATA.token];
  if (inMetadata !== undefined && (typeof inMetadata !== 'string' || inMetadata.trim() === '')) {
    return refusal(
      'UNAUTHENTICATED',
      `node.metadata "${NODE_METADATA.token}" must be a data plane token (a non-empty string)`,
    );
  }
  if (authorization.length > 1) {
    return refusal(
      'UNAUTHENTICATED',
      `the call carries ${authorization.length} authorization values; send exactly one`,
    );
  }
  let inHeader: string | undefined;
  if (authorization.length === 1) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization[0]);
    if (match === null) {
      return refusal(
        'UNAUTHENTICATED',
        'the authorization call metadata must be "Bearer <data plane token>"',
      );
    }
    inHeader = match[1];
  }
  const fromNode = typeof inMetadata === 'string' ? inMetadata.trim() : undefined;
  if (fromNode !== undefined && inHeader !== undefined && fromNode !== inHeader) {
    return refusal(
      'UNAUTHENTICATED',
      `node.metadata "${NODE_METADATA.token}" and the authorization call metadata carry different tokens; send one`,
    );
  }
  return { ok: true, token: fromNode ?? inHeader };
}

/** The read of stored resources a lookup needs (the resource views' `get`, structurally). */
export interface StoredResources {
  get(kind: string, mesh: string | undefined, name: string): { resource: object } | undefined;
}

/** A {@link DataplaneLookup} over the stored resources: the Dataplane as written (validated on write, spec 2.4). */
export function dataplaneLookup(store: StoredResources): DataplaneLookup {
  return (mesh, name) => store.get('Dataplane', mesh, name)?.resource as DataplaneResource | undefined;
}
