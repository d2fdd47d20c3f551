import { describe, expect, it } from 'vitest';
import type { DataplaneTokenClaims } from '../../../src/app/token-service.js';
import { proxyTagSet, tokenCoverage } from '../../../src/xds/proxy-token.js';
import { gatewayProxy, sidecar } from '../../helpers/xds.js';

const SVC = 'mesh.io/service';
const claims = (over: Partial<DataplaneTokenClaims> = {}): DataplaneTokenClaims => ({
  tokenId: 't-1',
  mesh: 'default',
  tags: {},
  type: 'dataplane',
  ...over,
});

describe('proxyTagSet (Kuma Dataplane.TagSet)', () => {
  it('collects every value of every key over the inbounds, or the gateway', () => {
    const dp = sidecar(
      'default',
      'web-1',
      { [SVC]: 'web', version: 'v1' },
      { [SVC]: 'web-api', version: 'v1' },
    );
    expect(proxyTagSet(dp)).toEqual(
      new Map([
        [SVC, new Set(['web', 'web-api'])],
        ['version', new Set(['v1'])],
      ]),
    );
    expect(proxyTagSet(gatewayProxy('default', 'edge', { [SVC]: 'edge' }))).toEqual(
      new Map([[SVC, new Set(['edge'])]]),
    );
  });
});

describe('tokenCoverage (Kuma 2.0 pkg/xds/auth/universal/authenticator.go)', () => {
  const dp = sidecar('default', 'web-1', { [SVC]: 'web', version: 'v1' }, { [SVC]: 'web-api' });

  it('covers a proxy with a mesh-wide token, a named one, and tags that allow every carried value', () => {
    expect(tokenCoverage(claims(), dp)).toBeUndefined();
    expect(tokenCoverage(claims({ name: 'web-1' }), dp)).toBeUndefined();
    expect(
      tokenCoverage(claims({ tags: { [SVC]: ['web-api', 'web'], version: ['v1', 'v2'] } }), dp),
    ).toBeUndefined();
  });

  it('names the first difference: mesh, then name, then type, then tags by key order', () => {
    expect(tokenCoverage(claims({ mesh: 'other', name: 'x' }), dp)).toBe(
      'the token is for mesh "other", the proxy is in mesh "default"',
    );
    expect(tokenCoverage(claims({ name: 'x', type: 'egress' }), dp)).toBe(
      'the token is for Dataplane "x", the proxy is Dataplane "web-1"',
    );
    expect(tokenCoverage(claims({ type: 'egress' }), dp)).toBe(
      'the token is for a proxy of type egress, the proxy is a Dataplane',
    );
    expect(tokenCoverage(claims({ tags: { zzz: ['a'], version: ['v2'] } }), dp)).toBe(
      'the proxy has tag "version" with value "v1", which the token does not allow (it allows "v2")',
    );
    expect(tokenCoverage(claims({ tags: { [SVC]: ['web'] } }), dp)).toBe(
      'the proxy has tag "mesh.io/service" with value "web-api", which the token does not allow (it allows "web")',
    );
    expect(tokenCoverage(claims({ tags: { team: ['a'] } }), dp)).toBe(
      'the proxy has no tag "team", which the token requires',
    );
  });
});
