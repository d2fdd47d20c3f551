/** One `{match}` entry of `sources`, `destinations` or `selectors`. */
export interface Selector {
  match: Record<string, string>;
}

/** A `targetRef` as stored (extra-policies.md). */
export interface TargetRef {
  kind: string;
  name?: string;
  tags?: Readonly<Record<string, string>>;
}

/**
 * The fields of a stored policy that matching reads; the engine hands back the caller's own
 * objects, so any richer resource type (the wire form) passes through unchanged.
 */
export interface PolicyResource {
  type: string;
  name: string;
  creationTime: string;
  sources?: readonly Selector[];
  destinations?: readonly Selector[];
  selectors?: readonly Selector[];
  /** The spec of a targetRef kind (Kuma 2.0's new policies): its top-level `targetRef` selects proxies. */
  spec?: { targetRef?: TargetRef };
}

/** A policy whose top-level `targetRef` is set. */
export type TargetRefSelecting = PolicyResource & { spec: { targetRef: TargetRef } };

/** True when the policy selects proxies by a top-level `targetRef`. */
export const selectsByTargetRef = <P extends PolicyResource>(p: P): p is P & TargetRefSelecting =>
  p.spec?.targetRef !== undefined;
