import type { PolicyResource, Selector } from '../../src/policies/policy-resource.js';
import type { TargetRef, TargetRefPolicy } from '../../src/policies/target-ref-match.js';

/** `mesh.io/service` (the reference's `kuma.io/service`). */
export const SVC = 'mesh.io/service';

/** A list of `{match}` selectors from tag maps. */
export const sel = (...matches: Array<Record<string, string>>): Selector[] =>
  matches.map((match) => ({ match }));

/** Seconds since the epoch as a creation time, as the reference's tests write `time.Unix(s, 0)`. */
export const at = (seconds: number): string => new Date(seconds * 1000).toISOString();

/** A policy resource of `type` for the matcher tests; created at the epoch unless told. */
export function policy(
  type: string,
  name: string,
  fields: {
    sources?: Selector[];
    destinations?: Selector[];
    selectors?: Selector[];
    creationTime?: string;
    conf?: unknown;
  },
): PolicyResource & { conf?: unknown } {
  return { type, name, creationTime: at(0), ...fields };
}

/** A `targetRef` policy as stored (`{type, mesh, name, spec}`), in mesh `default` unless told. */
export function targetRefPolicy(
  type: string,
  name: string,
  spec: TargetRefPolicy['spec'],
  mesh = 'default',
): TargetRefPolicy {
  return { type, mesh, name, spec };
}

/** A `from`/`to` entry: `{targetRef, default}`. */
export const entry = (targetRef: TargetRef, conf: unknown) => ({ targetRef, default: conf });
