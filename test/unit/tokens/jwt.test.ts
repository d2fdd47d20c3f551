import { describe, expect, it } from 'vitest';
import { signToken, verifyToken } from '../../../src/tokens/jwt.js';
import { generateSigningKey, parseSigningKey } from '../../../src/tokens/signing-key.js';

const T0 = new Date('2026-01-01T00:00:00.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);

describe('signToken / verifyToken (real RSA keys, jose)', async () => {
  const one = parseSigningKey(await generateSigningKey());
  const two = parseSigningKey(await generateSigningKey());
  if (!one || !two) throw new Error('generated keys must parse');
  const keys = new Map([
    [1, one.publicKey],
    [2, two.publicKey],
  ]);
  const lookup = (serial: number) => keys.get(serial) ?? { missing: `no key ${serial}` };

  it('signs RS256 with kid, jti, iat, nbf and exp, and verifies by kid', async () => {
    const signed = await signToken({
      claims: { name: 'a' },
      privateKey: two.privateKey,
      serial: 2,
      now: T0,
      validForMs: 90_000,
    });
    expect(signed.expiresAt).toEqual(at(90_000));
    const verified = await verifyToken(signed.token, lookup, at(1000));
    expect(verified).toEqual({
      id: signed.id,
      serial: 2,
      claims: {
        name: 'a',
        jti: signed.id,
        iat: T0.getTime() / 1000,
        nbf: T0.getTime() / 1000,
        exp: T0.getTime() / 1000 + 90,
      },
    });
  });

  it('refuses a token at and after exp, and before nbf', async () => {
    const { token } = await signToken({
      claims: {},
      privateKey: one.privateKey,
      serial: 1,
      now: T0,
      validForMs: 60_000,
    });
    await expect(verifyToken(token, lookup, at(59_999))).resolves.toBeDefined();
    await expect(verifyToken(token, lookup, at(60_000))).rejects.toThrow(
      'the token expired at 2026-01-01T00:01:00.000Z',
    );
    await expect(verifyToken(token, lookup, at(-1000))).rejects.toThrow(
      'the token is not valid before 2026-01-01T00:00:00.000Z',
    );
  });

  it('makes tokens without validFor that do not expire', async () => {
    const { token, expiresAt } = await signToken({
      claims: {},
      privateKey: one.privateKey,
      serial: 1,
      now: T0,
    });
    expect(expiresAt).toBeUndefined();
    await expect(verifyToken(token, lookup, at(10 * 365 * 24 * 3600 * 1000))).resolves.toBeDefined();
  });

  it('refuses a token whose kid names another key, or a key that is gone', async () => {
    const { token } = await signToken({
      claims: {},
      privateKey: one.privateKey,
      serial: 2,
      now: T0,
      validForMs: 1000,
    });
    await expect(verifyToken(token, lookup, T0)).rejects.toThrow(
      "the token's signature does not match signing key 2",
    );
    const { token: three } = await signToken({
      claims: {},
      privateKey: one.privateKey,
      serial: 3,
      now: T0,
      validForMs: 1000,
    });
    await expect(verifyToken(three, lookup, T0)).rejects.toThrow('no key 3');
  });

  it('refuses a token whose payload was changed after signing', async () => {
    const { token } = await signToken({
      claims: { groups: ['dev'] },
      privateKey: one.privateKey,
      serial: 1,
      now: T0,
      validForMs: 1000,
    });
    const [h, p, s] = token.split('.');
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString());
    payload.groups = ['mesh-system:admin'];
    const tampered = [h, Buffer.from(JSON.stringify(payload)).toString('base64url'), s].join('.');
    await expect(verifyToken(tampered, lookup, T0)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
  });

  it('reads only RSA private keys from secret data', () => {
    expect(parseSigningKey(Buffer.from('garbage').toString('base64'))).toBeUndefined();
    expect(parseSigningKey('')).toBeUndefined();
  });
});
