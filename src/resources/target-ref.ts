import { z } from 'zod';
import { everyViolation, resourceName, tagMap } from './fragments.js';

/** The kinds a `targetRef` may name, in their sort order (extra-policies.md; Kuma 2.0 `order`). */
export const TARGET_REF_KINDS = [
  'Mesh',
  'MeshSubset',
  'MeshService',
  'MeshServiceSubset',
  'MeshGatewayRoute',
] as const;

/** One kind a `targetRef` may name. */
export type TargetRefKind = (typeof TARGET_REF_KINDS)[number];

/** Every kind but `MeshGatewayRoute`, which only a policy's top-level `targetRef` may name. */
export const PROXY_TARGET_REF_KINDS = TARGET_REF_KINDS.filter((k) => k !== 'MeshGatewayRoute');

const SERVICE_NAME = /^[a-zA-Z0-9._:/-]+$/;

/** Which of `name` and `tags` a kind needs or refuses (Kuma 2.0 `ValidateTargetRef`); `mesh` is refused by all. */
const FIELDS: Record<TargetRefKind, { name: 'required' | 'refused'; tags: 'allowed' | 'refused' }> = {
  Mesh: { name: 'refused', tags: 'refused' },
  MeshSubset: { name: 'refused', tags: 'allowed' },
  MeshService: { name: 'required', tags: 'refused' },
  MeshServiceSubset: { name: 'required', tags: 'allowed' },
  MeshGatewayRoute: { name: 'required', tags: 'allowed' },
};

/** The fields of a `targetRef` its kind does not allow, or that it lacks; each a cause on the field. */
function checkFields(kinds: readonly string[], ref: Record<string, unknown>, ctx: z.RefinementCtx): void {
  // A kind that is not allowed here has one cause, on `kind` (Kuma 2.0 checks nothing else then).
  if (typeof ref.kind !== 'string' || !kinds.includes(ref.kind)) return;
  const kind = ref.kind as TargetRefKind;
  const rules = FIELDS[kind];
  if (rules.name === 'required' && ref.name === undefined) {
    ctx.addIssue({ code: 'custom', path: ['name'], message: `must be set with kind ${kind}` });
  } else if (rules.name === 'refused' && ref.name !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['name'], message: `cannot be set with kind ${kind}` });
  } else if (typeof ref.name === 'string') {
    // A service name is the value of a service tag; a gateway route is named like any resource.
    const ok =
      kind === 'MeshGatewayRoute' ? resourceName.safeParse(ref.name).success : SERVICE_NAME.test(ref.name);
    if (!ok) {
      ctx.addIssue({
        code: 'custom',
        path: ['name'],
        message:
          kind === 'MeshGatewayRoute'
            ? 'must be 1 to 253 characters of [0-9a-z._-], starting with a letter or digit'
            : 'must be a service name: non-empty and of [a-zA-Z0-9._:/-]',
      });
    }
  }
  // Kuma 2.0 treats empty tags as unset: `{}` is accepted with every kind.
  const tags = ref.tags;
  if (rules.tags === 'refused' && typeof tags === 'object' && tags !== null && Object.keys(tags).length > 0) {
    ctx.addIssue({ code: 'custom', path: ['tags'], message: `cannot be set with kind ${kind}` });
  }
  if (ref.mesh !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['mesh'], message: `cannot be set with kind ${kind}` });
  }
}

/**
 * A `targetRef` (`{kind, name?, tags?, mesh?}`) whose kind is one of `kinds`; `name` and `tags`
 * as the kind needs them, `mesh` reserved (Kuma 2.0 refuses it with every kind).
 */
export function targetRef(kinds: readonly TargetRefKind[]) {
  return z
    .strictObject({
      kind: z.enum(kinds as [TargetRefKind, ...TargetRefKind[]]),
      name: z.string().optional(),
      tags: tagMap.optional(),
      mesh: z.string().optional(),
    })
    .superRefine((ref, ctx) => checkFields(kinds, ref, ctx), everyViolation);
}
