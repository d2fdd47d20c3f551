import { describe, expect, it } from 'vitest';
import { parseTokenRequest } from '../../../src/tokens/requests.js';
import {
  isTokenSecret,
  keyPlace,
  parseRevocations,
  revocationsName,
  signingKeyName,
  signingKeySerial,
} from '../../../src/tokens/token-types.js';
import { parseDuration } from '../../../src/util/duration.js';

describe('signing key and revocation names', () => {
  it('names the keys of each type (decisions §3) and the secrets that hold them', () => {
    expect(signingKeyName('user', 1)).toBe('user-token-signing-key-1');
    expect(signingKeyName('zone', 2)).toBe('zone-token-signing-key-2');
    expect(signingKeyName('zone-ingress', 1)).toBe('zone-ingress-token-signing-key-1');
    expect(signingKeyName('dataplane', 1, 'default')).toBe('dataplane-token-signing-key-default-1');
    expect(keyPlace('user')).toEqual({ kind: 'GlobalSecret' });
    expect(keyPlace('dataplane', 'a')).toEqual({ kind: 'Secret', mesh: 'a' });
    expect(revocationsName('user')).toBe('user-token-revocations');
    expect(revocationsName('zone')).toBe('zone-token-revocations');
    expect(revocationsName('dataplane', 'a')).toBe('dataplane-token-revocations-a');
  });

  it('reads the serial of a key name of the right type and mesh only', () => {
    expect(signingKeySerial('user', 'user-token-signing-key-12')).toBe(12);
    expect(signingKeySerial('user', 'user-token-signing-key-0')).toBeUndefined();
    expect(signingKeySerial('user', 'user-token-signing-key-1x')).toBeUndefined();
    expect(signingKeySerial('user', 'zone-token-signing-key-1')).toBeUndefined();
    expect(signingKeySerial('zone', 'zone-ingress-token-signing-key-1')).toBeUndefined();
    expect(signingKeySerial('dataplane', 'dataplane-token-signing-key-a-2', 'a')).toBe(2);
    expect(signingKeySerial('dataplane', 'dataplane-token-signing-key-a-b-2', 'a')).toBeUndefined();
  });

  it('knows the secrets that decide whether a token of a type holds: its keys and its revocations', () => {
    expect(isTokenSecret('user', 'GlobalSecret', 'user-token-signing-key-3')).toBe(true);
    expect(isTokenSecret('user', 'GlobalSecret', 'user-token-revocations')).toBe(true);
    expect(isTokenSecret('user', 'GlobalSecret', 'zone-token-revocations')).toBe(false);
    expect(isTokenSecret('user', 'GlobalSecret', 'user-token-signing-key-x')).toBe(false);
    expect(isTokenSecret('user', 'Secret', 'user-token-revocations', 'default')).toBe(false);
    expect(isTokenSecret('dataplane', 'Secret', 'dataplane-token-revocations-a', 'a')).toBe(true);
    expect(isTokenSecret('dataplane', 'Secret', 'dataplane-token-signing-key-a-1', 'a')).toBe(true);
    expect(isTokenSecret('dataplane', 'Secret', 'dataplane-token-revocations-a', 'b')).toBe(false);
  });

  it('reads revoked ids separated by commas, spaces or lines', () => {
    const data = Buffer.from(' id-1,id-2\nid-3 ,, ').toString('base64');
    expect([...parseRevocations(data)]).toEqual(['id-1', 'id-2', 'id-3']);
    expect(parseRevocations('').size).toBe(0);
  });
});

describe('token requests', () => {
  it('fills the defaults', () => {
    expect(parseTokenRequest('user', { name: 'a', validFor: '1h' })).toEqual({
      name: 'a',
      groups: [],
      validFor: '1h',
    });
    expect(parseTokenRequest('dataplane', { mesh: 'm' })).toEqual({ mesh: 'm', tags: {}, type: 'dataplane' });
    expect(parseTokenRequest('zone', { zone: 'z', validFor: '1s' })).toEqual({
      zone: 'z',
      scope: ['cp', 'egress', 'ingress'],
      validFor: '1s',
    });
  });

  it('refuses names with white space and lists every violation', () => {
    expect(() => parseTokenRequest('user', { name: 'a b', groups: [''], validFor: '-1h' })).toThrow(
      expect.objectContaining({
        code: 'INVALID_BODY',
        causes: [
          { field: 'name', message: 'must not contain white space or control characters' },
          { field: 'groups[0]', message: 'cannot be empty' },
          { field: 'validFor', message: 'must be a duration such as 300ms, 5s, 1.5s, 10m, 1h30m' },
        ],
      }),
    );
  });
});

describe('parseDuration', () => {
  it('reads the duration forms of decisions §2', () => {
    expect(parseDuration('300ms')).toBe(300);
    expect(parseDuration('1.5s')).toBe(1500);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('10m')).toBe(600_000);
    expect(parseDuration('0s')).toBe(0);
    expect(parseDuration('1500us')).toBeCloseTo(1.5);
    expect(parseDuration('5')).toBeNaN();
    expect(parseDuration('')).toBeNaN();
  });
});
