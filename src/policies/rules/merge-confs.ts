/**
 * How the `default` confs of the items that cover a subset combine (Kuma 2.0 `merge`): each conf
 * goes through its Go struct (`goShape`), then they fold as JSON merge patches (RFC 7386), in
 * order: objects merge key by key, a later scalar or list replaces the earlier one (lists are
 * never appended), and a `null` removes the key.
 *
 * The Go struct matters because it decides what a missing field means. A list field without
 * `omitempty` (MeshAccessLog `backends`, MeshTrace `backends` and `tags`) marshals as `null` when
 * unset, so a later item without it clears the earlier value; a struct field (MeshTrace
 * `sampling`, an access-log backend's `format`) marshals as `{}` and merges field by field. The
 * merged result is read back into the struct, so those fields show as `null` and `{}`, as in the
 * reference's answers. Other kinds pass through unchanged.
 */
import { policyKind } from '../kind-sets.js';
import type { GoShape } from '../policy-kind.js';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const isObject = (v: unknown): v is Record<string, Json> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** RFC 7386: `patch` applied to `target`. */
export function mergePatch(target: Json | undefined, patch: Json): Json {
  if (!isObject(patch)) return patch;
  const out: Record<string, Json> = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

function shaped(value: Json, shape: GoShape): Json {
  if (!isObject(value)) return value;
  const out: Record<string, Json> = { ...value };
  for (const [k, how] of Object.entries(shape.always ?? {})) {
    if (out[k] === undefined) out[k] = how === 'list' ? null : {};
  }
  for (const [k, inner] of Object.entries(shape.nested ?? {})) {
    if (out[k] !== undefined) out[k] = shaped(out[k], inner);
  }
  for (const [k, inner] of Object.entries(shape.each ?? {})) {
    const list = out[k];
    if (Array.isArray(list)) out[k] = list.map((v) => shaped(v, inner));
  }
  return out;
}

/** A conf as Kuma's Go struct of `policyType` marshals it (see the module comment). */
export const goShape = (policyType: string, conf: unknown): unknown => {
  const shape = policyKind(policyType)?.rules?.goShape;
  return shape ? shaped(conf as Json, shape) : conf;
};

/** The confs merged in order, or undefined for none; each conf is read as `policyType`'s struct. */
export function mergeConfs(policyType: string, confs: readonly unknown[]): unknown {
  if (confs.length === 0) return undefined;
  let result = goShape(policyType, confs[0]) as Json;
  for (const conf of confs.slice(1)) result = mergePatch(result, goShape(policyType, conf) as Json);
  return goShape(policyType, structuredClone(result));
}
