/**
 * The rules view of one proxy (spec 2.20; Kuma 2.0 `MatchedPolicies` and `BuildRulesAttachments`):
 * for each policy type, the rules its `from`, `to` and single items make for this proxy.
 *
 * - `from` (clients): per listener, the policies that select that listener, in
 *   `compareByTargetRef` order, give their `from` items to `buildRules`; each rule is a
 *   `clientSubset` item named after the listener. Listeners are the inbounds and, for a built-in
 *   gateway, its MeshGateway's listeners (`targetRefListeners`; the reference fails on those).
 * - `to` (destinations): the policies that select any listener give their `to` items; each
 *   outbound gets the rule that `computeRule` finds for its tags, as a `destinationSubset` item
 *   named `<address or 127.0.0.1>:<port>`.
 * - single item (MeshTrace `default`): one `singleItem` item named `dataplane`, the first rule.
 *
 * Items are in a total order: name, type, policyType, then the order the rules came in (the
 * reference sorts by name and type only, stably, after walking a Go map of policy types: its ties
 * between policy types move between calls, so ours go by policyType; within one listener or
 * outbound and policy type both keep the rules' order, most positive tags first).
 */
import { SERVICE_TAG } from '../../resources/fragments.js';
import { policyKind, TARGET_REF_POLICY_KINDS } from '../kind-sets.js';
import { proxyInterfaces, type Networking } from '../proxy-interfaces.js';
import {
  compareByTargetRef,
  targetRefListeners,
  type GatewayListeners,
  type TargetRef,
  type TargetRefPolicy,
} from '../target-ref-match.js';
import { buildRules, computeRule, type PolicyItem, type Rule } from './build-rules.js';
import { subsetFromTags } from './subset.js';

/** One item of the /rules answer (spec 2.20). */
export interface RuleItem {
  type: 'clientSubset' | 'destinationSubset' | 'singleItem';
  name: string;
  service: string;
  policyType: string;
  /** A negated tag shows as `!value`; of several negated values of one key, the last (greatest) shows, as in the reference. */
  subset: Record<string, string>;
  conf: unknown;
  origins: Array<{ mesh: string; name: string }>;
}

const MESH: TargetRef = { kind: 'Mesh' };

/** The `from` or `to` entries of a policy as items. */
function listItems(policy: TargetRefPolicy, list: 'from' | 'to'): PolicyItem[] {
  const origin = { type: policy.type, mesh: policy.mesh ?? '', name: policy.name };
  return (policy.spec[list] ?? []).map((entry) => {
    const e = entry as { targetRef: TargetRef; default?: unknown };
    return { targetRef: e.targetRef, conf: e.default ?? {}, origin };
  });
}

function toItem(
  type: RuleItem['type'],
  name: string,
  service: string,
  policyType: string,
  rule: Rule,
): RuleItem {
  const subset: Record<string, string> = {};
  for (const t of rule.subset) subset[t.key] = t.not ? `!${t.value}` : t.value;
  return {
    type,
    name,
    service,
    policyType,
    subset,
    conf: rule.conf,
    origins: rule.origins.map(({ mesh, name: n }) => ({ mesh, name: n })),
  };
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The rules view of a proxy; `gateway` is the MeshGateway serving a built-in gateway proxy, if any;
 * `dialled`, the services a proxyless client dials (outbounds named by the service, tagged with it).
 */
export function proxyRules(
  networking: Networking,
  policies: readonly TargetRefPolicy[],
  gateway?: GatewayListeners,
  dialled?: readonly string[],
): RuleItem[] {
  const out: Array<RuleItem & { seq: number }> = [];
  const push = (item: RuleItem): void => {
    out.push({ ...item, seq: out.length });
  };
  const declared = networking.outbound ?? [];
  const outboundNames = proxyInterfaces(networking, dialled).outbounds;
  const outbounds = outboundNames.map(
    (o, i) => declared[i] ?? { port: 0, tags: { [SERVICE_TAG]: o.service } },
  );

  for (const policyType of TARGET_REF_POLICY_KINDS) {
    const parts = policyKind(policyType)?.rules;
    if (!parts) continue;
    // Which listeners each policy of this type selects; policies selecting none are left out.
    const selected = policies
      .filter((p) => p.type === policyType)
      .map((policy) => ({
        policy,
        listeners: targetRefListeners(policy.spec.targetRef, networking, gateway),
      }))
      .filter((s) => s.listeners.length > 0)
      .sort((a, b) => compareByTargetRef(a.policy, b.policy));
    if (selected.length === 0) continue;

    if (parts.from) {
      const byListener = new Map<string, { service: string; items: PolicyItem[] }>();
      for (const { policy, listeners } of selected) {
        for (const l of listeners) {
          const entry = byListener.get(l.name) ?? { service: l.service, items: [] };
          entry.items.push(...listItems(policy, 'from'));
          byListener.set(l.name, entry);
        }
      }
      for (const [name, { service, items }] of byListener) {
        for (const rule of buildRules(items)) push(toItem('clientSubset', name, service, policyType, rule));
      }
    }
    if (parts.to) {
      const rules = buildRules(selected.flatMap(({ policy }) => listItems(policy, 'to')));
      outbounds.forEach((ob, i) => {
        const tags = ob.tags ?? { [SERVICE_TAG]: ob.service ?? '' };
        const rule = computeRule(rules, subsetFromTags(tags));
        if (!rule) return;
        push(toItem('destinationSubset', outboundNames[i].name, tags[SERVICE_TAG] ?? '', policyType, rule));
      });
    }
    if (parts.single) {
      const items = selected.map(({ policy }) => ({
        targetRef: MESH, // Kuma's single item targets the whole mesh: the proxy is already selected
        conf: policy.spec.default ?? {},
        origin: { type: policy.type, mesh: policy.mesh ?? '', name: policy.name },
      }));
      const [first] = buildRules(items);
      if (first) push(toItem('singleItem', 'dataplane', '', policyType, first));
    }
  }
  out.sort(
    (a, b) => cmp(a.name, b.name) || cmp(a.type, b.type) || cmp(a.policyType, b.policyType) || a.seq - b.seq,
  );
  return out.map(({ seq: _seq, ...item }) => item);
}
