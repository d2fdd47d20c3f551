/**
 * The kinds by what they do, derived from their units (`kinds/`): the engine, inspect and the
 * renderers read these and never name a kind. Lists are sorted by kind name, the order in which an
 * item lists its matched policies (as the reference's JSON does: Go writes map keys sorted).
 */
import type { ResourceDescriptor, ResourceOf } from '../resources/descriptor.js';
import type { GatewayRole, PolicyKind, SidecarAttachment } from './policy-kind.js';
import type { PolicyResource } from './policy-resource.js';
import type { ProxylessSettings } from './proxyless-settings.js';
import { POLICY_KINDS } from './kinds/index.js';

export { POLICY_KINDS };

const BY_NAME = new Map<string, PolicyKind>(POLICY_KINDS.map((u) => [u.descriptor.kind, u]));

/** The unit of a policy kind; undefined for a kind that is not a policy. */
export const policyKind = (kind: string): PolicyKind | undefined => BY_NAME.get(kind);

const namesWhere = (keep: (unit: PolicyKind) => boolean): readonly string[] =>
  POLICY_KINDS.filter(keep)
    .map((u) => u.descriptor.kind)
    .sort();

const attaches = (at: SidecarAttachment['at'], pick?: string, services?: string) => (u: PolicyKind) =>
  u.sidecar.some(
    (a) =>
      a.at === at &&
      (pick === undefined || a.pick === pick) &&
      (services === undefined || ('services' in a && a.services === services)),
  );

/** The single kind of a role (the engine has one router, one gateway kind, one route kind). */
function single(what: string, keep: (unit: PolicyKind) => boolean): string {
  const found = namesWhere(keep);
  if (found.length !== 1)
    throw new Error(`exactly one policy kind must be ${what}, found ${found.join(', ')}`);
  return found[0] as string;
}

const gatewayRole = (role: GatewayRole) => (u: PolicyKind) => u.gateway === role;

/** Kinds by sidecar attachment (see `SidecarAttachment`). */
export const INBOUND_BEST_KINDS = namesWhere(attaches('inbound', 'best'));
export const INBOUND_ALL_KINDS = namesWhere(attaches('inbound', 'all'));
export const OUTBOUND_KINDS = namesWhere(attaches('outbound'));
export const SERVICE_KINDS = namesWhere(attaches('service'));
/** Service kinds placed on the services the outbounds' routes reach. */
export const ROUTED_KINDS = namesWhere(attaches('service', 'best', 'routed'));
/** Service kinds placed on the outbounds' own services and `pass_through`. */
export const LOGGED_KINDS = namesWhere(attaches('service', 'best', 'logged'));
export const DATAPLANE_BEST_KINDS = namesWhere(attaches('dataplane', 'best'));
export const DATAPLANE_ALL_KINDS = namesWhere(attaches('dataplane', 'all'));
/** Kinds matched by a top-level `targetRef` (Kuma 2.0's new policies), listed on the `dataplane` item. */
export const TARGET_REF_POLICY_KINDS = namesWhere(attaches('dataplane', 'targetRef'));
/** Inbound kinds a proxyless client applies itself, also listed on the outbounds it dials. */
export const DIALLED_KINDS = namesWhere((u) => u.dialled === true);
/** The kind whose best policy on an outbound decides where its calls go. */
export const ROUTE_KIND = single('a router', (u) => u.routes === true);
/** Every kind that attaches to sidecars. */
export const SIDECAR_ATTACHED_KINDS = namesWhere((u) => u.sidecar.length > 0);

/** The kind whose best policy serves a built-in gateway proxy (its listeners). */
export const GATEWAY_KIND = single('the gateway', gatewayRole('gateway'));
/** The kind of a gateway's routes. */
export const GATEWAY_ROUTE_KIND = single('the gateway route', gatewayRole('route'));
/** Kinds matched per gateway route destination (Kuma's ConnectionPolicyTypes). */
export const GATEWAY_DESTINATION_KINDS = namesWhere(gatewayRole('destination'));
/** Kinds that configure a gateway as a whole. */
export const WHOLE_GATEWAY_KINDS = namesWhere(gatewayRole('whole'));

/** The kinds an `XdsServer`'s permissions come from, by what they give. */
export const SERVER_PERMISSION_KINDS = namesWhere((u) => u.xdsServer === 'inbound-permissions');
export const SERVER_TARGET_REF_KINDS = namesWhere((u) => u.xdsServer === 'target-ref-permissions');

/** The units that give a proxyless client something (a setting or a note). */
export const PROXYLESS_KINDS: readonly PolicyKind[] = POLICY_KINDS.filter((u) => u.proxyless !== undefined);

/** The kind whose policies give each setting of a proxyless client (at most one per setting). */
export const SETTING_KINDS: Readonly<Partial<Record<keyof ProxylessSettings, string>>> = Object.fromEntries(
  PROXYLESS_KINDS.flatMap((u) =>
    u.proxyless && 'setting' in u.proxyless ? [[u.proxyless.setting, u.descriptor.kind]] : [],
  ),
);

/**
 * The value of `setting` that a client takes from `policy`, read by the policy's unit from its
 * typed spec; undefined when the policy's kind gives another setting or none.
 */
export function proxylessSetting<K extends keyof ProxylessSettings>(
  setting: K,
  policy: PolicyResource,
): ProxylessSettings[K] | undefined {
  const unit = BY_NAME.get(policy.type);
  const part = unit?.proxyless;
  if (!unit || !part || !('setting' in part) || part.setting !== setting) return undefined;
  // The part of this kind reads a stored policy of this kind (checked above by its type): the
  // engine hands back the stored resources, which the write path validated against the schema.
  return part.read(policy as unknown as ResourceOf<ResourceDescriptor>) as ProxylessSettings[K] | undefined;
}

/** The notes of the kinds listed on a client's `from` item that cannot apply to a proxyless client. */
export function proxylessNotes(from: 'outbound' | 'service', listedKinds: Iterable<string>): string[] {
  const notes: string[] = [];
  for (const kind of listedKinds) {
    const part = BY_NAME.get(kind)?.proxyless;
    if (part && 'note' in part && part.from === from) notes.push(part.note);
  }
  return notes;
}
