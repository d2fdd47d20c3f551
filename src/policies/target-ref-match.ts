/**
 * Which listeners of a proxy a `targetRef` policy selects (Kuma 2.0 `inboundsSelectedByTargetRef`).
 *
 * A top-level `targetRef` selects a proxy through its listeners: each inbound whose tags the ref's
 * tags match (`Mesh`: no tags, so every inbound; `MeshService`: `{mesh.io/service: name}`;
 * `MeshSubset` its tags; `MeshServiceSubset` both), and, for a built-in gateway proxy, each listener
 * of its MeshGateway whose merged tags (proxy gateway tags, gateway tags, listener tags) match, `*`
 * matching any value. A
 * proxy with no listener (an outbound-only sidecar, a delegated gateway) is selected by none, as in
 * the reference. `MeshGatewayRoute` refs select nothing here.
 *
 * Policies that select a proxy apply in `compareByTargetRef` order: by the ref kind's order in
 * `TARGET_REF_KINDS` (least specific first), then by name; later ones override earlier ones.
 */
import { SERVICE_TAG } from '../resources/fragments.js';
import { TARGET_REF_KINDS } from '../resources/target-ref.js';
import type { TargetRef } from './policy-resource.js';
import { isBuiltinGateway, type Networking } from './proxy-interfaces.js';
import { tagSelectorMatches } from './tag-selector.js';

type Tags = Readonly<Record<string, string>>;

export type { TargetRef };

/** A policy with a top-level `targetRef`, as stored: `{type, mesh, name, spec: {targetRef, ...}}`. */
export interface TargetRefPolicy {
  type: string;
  mesh?: string;
  name: string;
  creationTime?: string;
  spec: { targetRef: TargetRef; from?: readonly unknown[]; to?: readonly unknown[]; [k: string]: unknown };
}

/** The part of a MeshGateway that listener tags come from. */
export interface GatewayListeners {
  tags?: Tags;
  conf?: { listeners?: ReadonlyArray<{ port: number; tags?: Tags }> };
}

/** A listener a `targetRef` selected: `<address>:<port>` (Kuma's InboundListener) and its service. */
export interface SelectedListener {
  name: string;
  address: string;
  port: number;
  /** The inbound's service, or the gateway's for a gateway listener. */
  service: string;
  origin: 'inbound' | 'gateway';
}

/** The tags a ref kind requires of a listener; undefined for kinds that select no listener. */
export function targetRefTags(ref: TargetRef): Tags | undefined {
  switch (ref.kind) {
    case 'Mesh':
      return {};
    case 'MeshSubset':
      return ref.tags ?? {};
    case 'MeshService':
      return { [SERVICE_TAG]: ref.name ?? '' };
    case 'MeshServiceSubset':
      return { ...(ref.tags ?? {}), [SERVICE_TAG]: ref.name ?? '' };
    default:
      return undefined;
  }
}

const hostPort = (address: string, port: number): string =>
  address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;

/**
 * The listeners of the proxy that `ref` selects, inbounds first in declaration order, then the
 * gateway's listeners; `gateway` is the MeshGateway that serves a built-in gateway proxy, if any.
 */
export function targetRefListeners(
  ref: TargetRef,
  networking: Networking,
  gateway?: GatewayListeners,
): SelectedListener[] {
  const want = targetRefTags(ref);
  if (want === undefined) return [];
  const out: SelectedListener[] = [];
  for (const ib of networking.inbound ?? []) {
    if (!tagSelectorMatches(want, ib.tags)) continue;
    const address = ib.address ?? networking.address;
    out.push({
      name: hostPort(address, ib.port),
      address,
      port: ib.port,
      service: ib.tags[SERVICE_TAG] ?? '',
      origin: 'inbound',
    });
  }
  if (gateway && networking.gateway && isBuiltinGateway(networking)) {
    for (const listener of gateway.conf?.listeners ?? []) {
      const tags = { ...networking.gateway.tags, ...(gateway.tags ?? {}), ...(listener.tags ?? {}) };
      if (!tagSelectorMatches(want, tags)) continue;
      out.push({
        name: hostPort(networking.address, listener.port),
        address: networking.address,
        port: listener.port,
        service: tags[SERVICE_TAG] ?? '',
        origin: 'gateway',
      });
    }
  }
  return out;
}

const KIND_ORDER = new Map<string, number>(TARGET_REF_KINDS.map((k, i) => [k, i]));

/** Negative when `a` applies before `b` (Kuma's ByTargetRef): ref kind order, then name. */
export function compareByTargetRef(
  a: { name: string; spec: { targetRef: TargetRef } },
  b: { name: string; spec: { targetRef: TargetRef } },
): number {
  const ka = KIND_ORDER.get(a.spec.targetRef.kind) ?? KIND_ORDER.size;
  const kb = KIND_ORDER.get(b.spec.targetRef.kind) ?? KIND_ORDER.size;
  if (ka !== kb) return ka - kb;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}
