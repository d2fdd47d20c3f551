import { describe, expect, it } from 'vitest';
import {
  buildRules,
  combinations,
  computeRule,
  mergeConfs,
  type Rule,
  type Tag,
} from '../../../../src/policies/rules/index.js';

const t = (key: string, value: string, not = false): Tag => ({ key, value, not });
const show = (ss: readonly Tag[]) => ss.map((x) => `${x.key}:${x.not ? '!' : ''}${x.value}`).join(' ');

describe('combinations (Kuma 2.0 SubsetIter)', () => {
  it('yields every negation of distinct keys, in counter order, all-positive last', () => {
    expect([...combinations([t('k1', 'v1'), t('k2', 'v2'), t('k3', 'v3')])].map(show)).toEqual([
      'k1:!v1 k2:v2 k3:v3',
      'k1:v1 k2:!v2 k3:v3',
      'k1:!v1 k2:!v2 k3:v3',
      'k1:v1 k2:v2 k3:!v3',
      'k1:!v1 k2:v2 k3:!v3',
      'k1:v1 k2:!v2 k3:!v3',
      'k1:!v1 k2:!v2 k3:!v3',
      'k1:v1 k2:v2 k3:v3',
    ]);
  });
  it('yields one empty subset for no tags', () => {
    expect([...combinations([])]).toEqual([[]]);
  });
  it('drops contradictions and a negation beside a positive value of the same key', () => {
    expect([...combinations([t('zone', 'us-east'), t('env', 'dev'), t('env', 'prod')])].map(show)).toEqual([
      'zone:us-east env:prod',
      'zone:!us-east env:prod',
      'zone:us-east env:dev',
      'zone:!us-east env:dev',
      'zone:us-east env:!dev env:!prod',
      'zone:!us-east env:!dev env:!prod',
    ]);
  });
});

describe('computeRule (Kuma Rules.Compute)', () => {
  const rule = (subset: Tag[], action: string): Rule => ({ subset, conf: { action }, origins: [] });
  const action = (rules: Rule[], sub: Tag[]) =>
    (computeRule(rules, sub)?.conf as { action: string } | undefined)?.action;
  it('the Kuma 2.0 Eval cases', () => {
    expect(action([rule([t('key1', 'val1')], 'ALLOW')], [t('key1', 'val1'), t('key2', 'val2')])).toBe(
      'ALLOW',
    );
    expect(action([rule([t('key1', 'val1', true)], 'ALLOW')], [t('key1', 'val1', true)])).toBe('ALLOW');
    expect(action([rule([], 'ALLOW')], [t('key1', 'val1'), t('key2', 'val2')])).toBe('ALLOW');
    expect(action([rule([t('key1', 'val1', true)], 'ALLOW')], [t('key2', 'val2')])).toBeUndefined();
    expect(action([rule([t('key1', 'val1')], 'ALLOW')], [t('key2', 'val2')])).toBeUndefined();
    expect(action([rule([t('key1', 'val1')], 'ALLOW')], [t('key1', 'val2')])).toBeUndefined();
    expect(action([rule([t('key1', 'val1', true)], 'ALLOW')], [t('key1', 'val1')])).toBeUndefined();
    expect(action([rule([t('key1', 'val1')], 'ALLOW')], [t('key1', 'val1', true)])).toBeUndefined();
  });
  it('takes the first rule that contains the subset', () => {
    const rules = [rule([t('key1', 'val1')], 'ALLOW'), rule([t('key2', 'val2')], 'DENY'), rule([], 'SHADOW')];
    expect(action(rules, [t('key2', 'val2'), t('key3', 'val3')])).toBe('DENY');
  });
  it('a positive value other than a negated one lies inside it (Kuma 2.3; 2.0 said no)', () => {
    const rules = buildRules([
      { targetRef: { kind: 'Mesh' }, conf: { action: 'DENY' }, origin: { type: 'T', mesh: 'm', name: 'a' } },
      {
        targetRef: { kind: 'MeshService', name: 'backend' },
        conf: { action: 'ALLOW' },
        origin: { type: 'T', mesh: 'm', name: 'a' },
      },
    ]);
    expect(action(rules, [t('mesh.io/service', 'web')])).toBe('DENY');
    expect(action(rules, [t('mesh.io/service', 'backend')])).toBe('ALLOW');
  });
});

describe('mergeConfs (Kuma 2.0 merge)', () => {
  it('merges objects key by key, later values win', () => {
    expect(
      mergeConfs('X', [
        { a: 1, o: { x: 1, y: 2 } },
        { b: 2, o: { y: 3 } },
      ]),
    ).toEqual({ a: 1, b: 2, o: { x: 1, y: 3 } });
  });
  it('replaces lists, never appends', () => {
    expect(mergeConfs('X', [{ l: [1, 2] }, { l: [3] }])).toEqual({ l: [3] });
  });
  it('MeshTrace: unset tags clear earlier ones (Go writes null), sampling merges by field', () => {
    const a = {
      backends: [{ zipkin: { url: 'http://z' } }],
      tags: [{ name: 't', literal: 'x' }],
      sampling: { overall: 10 },
    };
    const b = { backends: [{ datadog: { url: 'http://d' } }], sampling: { client: 5 } };
    expect(mergeConfs('MeshTrace', [a, b])).toEqual({
      backends: [{ datadog: { url: 'http://d' } }],
      sampling: { overall: 10, client: 5 },
      tags: null,
    });
  });
  it('MeshAccessLog: an empty backends list replaces the earlier one; a backend format shows as {}', () => {
    const file = { file: { path: '/tmp/a' } };
    expect(mergeConfs('MeshAccessLog', [{ backends: [file] }, { backends: [] }])).toEqual({ backends: [] });
    expect(mergeConfs('MeshAccessLog', [{ backends: [] }, { backends: [file] }])).toEqual({
      backends: [{ file: { path: '/tmp/a', format: {} } }],
    });
  });
  it('a null removes the key (RFC 7386)', () => {
    expect(mergeConfs('X', [{ a: 1, b: 2 }, { b: null }])).toEqual({ a: 1 });
  });
  it('gives nothing for no confs', () => {
    expect(mergeConfs('X', [])).toBeUndefined();
  });
});
