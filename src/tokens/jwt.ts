import type { KeyObject } from 'node:crypto';
import { randomUUID } from 'node:crypto';
import type * as Jose from 'jose';
import type { JWTPayload } from 'jose';

/** jose loads on first use (it costs ~170 ms of start-up; most starts never touch a token). */
const jose = (): Promise<typeof Jose> => import('jose');
import { AppError } from '../util/errors.js';

/** What signing needs: the claims of the token type, the private key and its serial (the `kid`). */
export interface SignInput {
  claims: Record<string, unknown>;
  privateKey: KeyObject;
  serial: number;
  now: Date;
  /** Absent: the token does not expire (data plane tokens without `validFor`). */
  validForMs?: number;
}

/** A signed token and its id (`jti`, what a revocation list names). */
export interface SignedToken {
  token: string;
  id: string;
  expiresAt?: Date;
}

/** A verified token: its id, the serial of the key that signed it and its claims. */
export interface VerifiedToken {
  id: string;
  serial: number;
  claims: JWTPayload;
}

/** Finds the public key of a serial: the key, or why there is none (the 401 says it). */
export type KeyLookup = (serial: number, claims: JWTPayload) => KeyObject | { missing: string };

const unauthorized = (details: string): AppError => new AppError('UNAUTHENTICATED', 'Unauthorized', details);

const seconds = (ms: number): number => Math.floor(ms / 1000);

const isoOf = (numericDate: unknown): string =>
  typeof numericDate === 'number' ? new Date(numericDate * 1000).toISOString() : 'an unknown time';

/** Signs an RS256 JWT with `kid` = the key serial, a fresh `jti`, `iat` and `nbf` = now, `exp` = now + validFor. */
export async function signToken(input: SignInput): Promise<SignedToken> {
  const id = randomUUID();
  const nowMs = input.now.getTime();
  const { SignJWT } = await jose();
  const jwt = new SignJWT(input.claims)
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: String(input.serial) })
    .setJti(id)
    .setIssuedAt(seconds(nowMs))
    .setNotBefore(seconds(nowMs));
  let expiresAt: Date | undefined;
  if (input.validForMs !== undefined) {
    const exp = seconds(nowMs + input.validForMs);
    jwt.setExpirationTime(exp);
    expiresAt = new Date(exp * 1000);
  }
  return { token: await jwt.sign(input.privateKey), id, expiresAt };
}

/** The claims of a token before its signature is checked: only to find its key (data plane tokens name their mesh). */
export async function unverifiedClaims(token: string): Promise<JWTPayload> {
  const { decodeJwt } = await jose();
  try {
    return decodeJwt(token);
  } catch {
    throw unauthorized('the token is not a valid JWT');
  }
}

/** Verifies signature (RS256, key by `kid`), `exp` and `nbf` at `now`; throws 401 naming the reason. */
export async function verifyToken(token: string, keyFor: KeyLookup, now: Date): Promise<VerifiedToken> {
  const { decodeProtectedHeader, errors, jwtVerify } = await jose();
  let kid: string | undefined;
  let alg: string | undefined;
  try {
    ({ kid, alg } = decodeProtectedHeader(token));
  } catch {
    throw unauthorized('the token is not a valid JWT');
  }
  if (alg !== 'RS256') throw unauthorized(`the token is signed with ${String(alg)}; only RS256 is accepted`);
  if (kid === undefined || !/^[1-9]\d{0,8}$/.test(kid)) {
    throw unauthorized('the token has no key id (kid) naming a signing key serial');
  }
  const serial = Number(kid);
  const key = keyFor(serial, await unverifiedClaims(token));
  if ('missing' in key) throw unauthorized(key.missing);
  try {
    const { payload } = await jwtVerify(token, key, {
      algorithms: ['RS256'],
      currentDate: now,
      requiredClaims: ['jti', 'iat'],
    });
    return { id: String(payload.jti), serial, claims: payload };
  } catch (err) {
    if (err instanceof errors.JWTExpired)
      throw unauthorized(`the token expired at ${isoOf(err.payload.exp)}`);
    if (err instanceof errors.JWTClaimValidationFailed) {
      if (err.claim === 'nbf') throw unauthorized(`the token is not valid before ${isoOf(err.payload.nbf)}`);
      throw unauthorized(`the token's "${err.claim}" claim is invalid`);
    }
    if (err instanceof errors.JWSSignatureVerificationFailed) {
      throw unauthorized(`the token's signature does not match signing key ${serial}`);
    }
    if (err instanceof errors.JOSEError) throw unauthorized('the token is not a valid JWT');
    throw err;
  }
}
