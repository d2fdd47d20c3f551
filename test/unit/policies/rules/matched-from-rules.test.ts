/**
 * Kuma 2.0's `MatchedPolicies` cases that produce rules (pkg/plugins/policies/matchers/testdata/
 * match: fromrules, meshgateways; `kuma.io/service` renamed), run through `proxyRules`: the
 * reference's `FromRules` per listener become our `clientSubset` items. The `dataplanepolicies`
 * cases list selected policies, not rules: `targetRefListeners` and `compareByTargetRef` cover them.
 * The golden files list listeners by name and each listener's rules in the reference's order, the
 * order of the /rules items.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import type { Networking } from '../../../../src/policies/proxy-interfaces.js';
import { proxyRules, type RuleItem } from '../../../../src/policies/rules/index.js';
import type { GatewayListeners, TargetRefPolicy } from '../../../../src/policies/target-ref-match.js';

const dir = new URL('./testdata/match/', import.meta.url);
const load = (file: string): Array<Record<string, unknown>> =>
  parseAllDocuments(readFileSync(new URL(file, dir), 'utf8'))
    .map((d) => d.toJS() as Record<string, unknown> | null)
    .filter((d): d is Record<string, unknown> => d !== null);

interface GoRule {
  Conf: unknown;
  Origin: Array<{ mesh: string; name: string }>;
  Subset: Array<{ Key: string; Not: boolean; Value: string }>;
}

/** The golden `FromRules` as our items: one per rule, named after its listener. */
function expectedItems(n: string, services: Record<string, string>): RuleItem[] {
  const golden = load(`${n}.golden.yaml`)[0] as { Rules: Record<string, GoRule[]> };
  return Object.entries(golden.Rules).flatMap(([name, rules]) =>
    rules.map((r) => ({
      type: 'clientSubset' as const,
      name,
      service: services[name],
      policyType: 'MeshTrafficPermission',
      subset: Object.fromEntries(r.Subset.map((t) => [t.Key, t.Not ? `!${t.Value}` : t.Value])),
      conf: r.Conf,
      origins: r.Origin.map((o) => ({ mesh: o.mesh, name: o.name })),
    })),
  );
}

function run(n: string): RuleItem[] {
  const dp = load(`${n}.dataplane.yaml`)[0] as { networking: Networking };
  const docs = load(`${n}.policies.yaml`);
  const gateway = docs.find((d) => d.type === 'MeshGateway') as GatewayListeners | undefined;
  const policies = docs.filter((d) => d.type !== 'MeshGateway') as unknown as TargetRefPolicy[];
  return proxyRules(dp.networking, policies, gateway);
}

describe('proxyRules: Kuma 2.0 MatchedPolicies cases', () => {
  const web = { '1.1.1.1:8080': 'web', '1.1.1.1:8081': 'web' };
  it('fromrules 01: MeshServiceSubset and Mesh policies, per inbound', () => {
    expect(run('fromrules-01')).toStrictEqual(expectedItems('fromrules-01', web));
  });
  it('fromrules 02: DENY for us-east except backend v2, per inbound', () => {
    expect(run('fromrules-02')).toStrictEqual(expectedItems('fromrules-02', web));
  });
  it('meshgateways 01: a built-in gateway, rules per listener by listener tags', () => {
    const services = { '127.0.0.1:8080': 'edge-gateway', '127.0.0.1:8081': 'edge-gateway' };
    expect(run('meshgateways-01')).toStrictEqual(expectedItems('meshgateways-01', services));
  });
});
