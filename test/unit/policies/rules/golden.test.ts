/**
 * Kuma 2.0's golden cases of `BuildRules` (pkg/core/xds/testdata/rules, `kuma.io/service` renamed
 * `mesh.io/service`), one test each: the `from` items of one policy (01-05) or the single items of
 * several MeshTraces (06-07). The golden files are the reference's, untouched but for the rename;
 * our rules are written in the reference's YAML shape to compare, origins without the zero times
 * that Go's test policies carried.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { buildRules, type PolicyItem, type Rule } from '../../../../src/policies/rules/index.js';
import type { TargetRefPolicy } from '../../../../src/policies/target-ref-match.js';

const dir = new URL('./testdata/', import.meta.url);
const load = (file: string): unknown[] =>
  parseAllDocuments(readFileSync(new URL(file, dir), 'utf8')).map((d) => d.toJS() as unknown);

const originOf = (p: TargetRefPolicy) => ({ type: p.type, mesh: p.mesh ?? '', name: p.name });

/** Kuma's `GetFromList` of one policy. */
const fromItems = (p: TargetRefPolicy): PolicyItem[] =>
  (p.spec.from as Array<{ targetRef: PolicyItem['targetRef']; default: unknown }>).map((f) => ({
    targetRef: f.targetRef,
    conf: f.default,
    origin: originOf(p),
  }));

/** Kuma's `GetPolicyItem` of a MeshTrace: the whole mesh, its `default`. */
const singleItem = (p: TargetRefPolicy): PolicyItem => ({
  targetRef: { kind: 'Mesh' },
  conf: p.spec.default,
  origin: originOf(p),
});

const goShape = (rules: Rule[]) =>
  rules.map((r) => ({
    Conf: r.conf,
    Origin: r.origins.map((o) => ({ mesh: o.mesh, name: o.name, type: o.type })),
    Subset: r.subset.map((t) => ({ Key: t.key, Not: t.not, Value: t.value })),
  }));

const expected = (n: string) =>
  (load(`${n}.golden.yaml`)[0] as Array<{ Origin: Array<Record<string, unknown>> }>).map((r) => ({
    ...r,
    Origin: r.Origin.map(({ creationTime: _c, modificationTime: _m, ...o }) => o),
  }));

describe('buildRules: Kuma 2.0 golden cases', () => {
  const fromCases = [
    ['01', "MeshTrafficPermission with 2 'env' tags that have different values"],
    ['02', 'MeshTrafficPermission with 3 different tags'],
    ['03', 'MeshTrafficPermission with MeshService targets'],
    ['04', 'MeshAccessLog with overriding empty backend list'],
    ['05', 'MeshAccessLog with overriding list of different backend type'],
  ];
  for (const [n, title] of fromCases) {
    it(`${n}. ${title}`, () => {
      const [policy] = load(`${n}.policy.yaml`) as TargetRefPolicy[];
      expect(goShape(buildRules(fromItems(policy)))).toStrictEqual(expected(n));
    });
  }
  for (const [n, title] of [
    ['06', 'MeshTrace'],
    ['07', 'MeshTrace list'],
  ]) {
    it(`${n}. ${title}`, () => {
      const policies = load(`${n}.policy.yaml`) as TargetRefPolicy[];
      expect(goShape(buildRules(policies.map(singleItem)))).toStrictEqual(expected(n));
    });
  }
});
