import { POLICY_KINDS } from '../policies/kind-sets.js';

/** A default resource created with a mesh: kind, name and spec (decisions §3). */
export interface DefaultResource {
  kind: string;
  name: string;
  spec: Record<string, unknown>;
}

/**
 * The default policies of a new mesh (decisions §3), named `<kind-prefix>-<mesh>`: what each
 * kind's unit declares, in the units' order.
 */
export function defaultPolicies(mesh: string): DefaultResource[] {
  return POLICY_KINDS.flatMap((unit) =>
    (unit.defaults?.(mesh) ?? []).map((p) => ({ kind: unit.descriptor.kind, name: p.name, spec: p.spec })),
  );
}

/** Name of a mesh's data plane token signing key secret (decisions §3). */
export function dataplaneSigningKeyName(mesh: string): string {
  return `dataplane-token-signing-key-${mesh}-1`;
}

/**
 * The longest name a mesh's defaults can get: a mesh name may be 253 characters (decisions §2)
 * and its defaults add a prefix and suffix to it, as Kuma does, so a long mesh's defaults are longer.
 */
export const LONGEST_DEFAULT_NAME =
  253 + Math.max(dataplaneSigningKeyName('').length, ...defaultPolicies('').map((p) => p.name.length));

/**
 * The token types whose global signing key `<type>-token-signing-key-1` is created at start on
 * standalone and global when the type has no key (decisions §3).
 */
export const GLOBAL_SIGNING_KEY_TYPES = ['user', 'zone', 'zone-ingress'] as const;
