import type { JWTPayload } from 'jose';
import type { ResourceViews } from '../projections/resource-views.js';
import type { SignedToken, VerifiedToken } from '../tokens/jwt.js';
import { signToken, unverifiedClaims, verifyToken } from '../tokens/jwt.js';
import type { TokenRequest } from '../tokens/requests.js';
import { parseTokenRequest } from '../tokens/requests.js';
import type { SigningKeyPair } from '../tokens/signing-key.js';
import { parseSigningKey } from '../tokens/signing-key.js';
import type { KeyPlace, TokenType } from '../tokens/token-types.js';
import {
  keyPlace,
  parseRevocations,
  revocationsName,
  signingKeyName,
  signingKeySerial,
} from '../tokens/token-types.js';
import { parseDuration } from '../util/duration.js';
import { AppError } from '../util/errors.js';

/** A token just issued: the JWT, its id and what it was issued for (for the log line, never the JWT). */
export interface IssuedToken extends SignedToken {
  type: TokenType;
  serial: number;
  subject: string;
}

/** The user of a verified user token. */
export interface TokenUser {
  name: string;
  groups: string[];
  tokenId: string;
  /** When the token expires (its `exp`); absent: never. */
  expiresAt?: Date;
}

/** Why a token that verified once no longer does: the title and details of an error. */
export interface TokenProblem {
  title: string;
  details: string;
}

/** The claims of a verified data plane token (checked by the data plane server, a later issue). */
export interface DataplaneTokenClaims {
  tokenId: string;
  name?: string;
  mesh: string;
  tags: Record<string, string[]>;
  type: 'dataplane' | 'ingress' | 'egress';
  /** When the token expires (its `exp`); absent: never. */
  expiresAt?: Date;
}

/** The claims of a verified zone token (checked by Global's sync server, a later issue). */
export interface ZoneTokenClaims {
  tokenId: string;
  zone: string;
  scope: string[];
}

/** Issues and verifies every kind of token with the signing keys and revocation lists kept as secrets. */
export interface TokenService {
  /** Validates a token request body and signs it with the highest-serial key of its type. */
  issue(type: TokenType, body: unknown): Promise<IssuedToken>;
  verifyUser(token: string): Promise<TokenUser>;
  /** Verifies a user token again (open streams): why it no longer holds, or undefined while it does. */
  recheckUser(token: string): Promise<TokenProblem | undefined>;
  verifyDataplane(token: string): Promise<DataplaneTokenClaims>;
  verifyZone(token: string): Promise<ZoneTokenClaims>;
  verifyZoneIngress(token: string): Promise<{ tokenId: string; zone: string }>;
}

const where = (place: KeyPlace): string => (place.mesh === undefined ? '' : ` in mesh "${place.mesh}"`);
const what = (place: KeyPlace): string => (place.kind === 'Secret' ? 'secret' : 'global secret');

const isStringArray = (v: unknown): v is string[] =>
  Array.isArray(v) && v.every((item) => typeof item === 'string');

const unauthorized = (details: string): AppError => new AppError('UNAUTHENTICATED', 'Unauthorized', details);

/** The claims a token of each type carries besides the registered ones (jti, iat, nbf, exp). */
function claimsOf(type: TokenType, req: TokenRequest<TokenType>): Record<string, unknown> {
  const { validFor: _validFor, ...claims } = req as Record<string, unknown>;
  return { ...claims, tokenType: type };
}

function subjectOf(type: TokenType, req: Record<string, unknown>): string {
  switch (type) {
    case 'user':
      return String(req.name);
    case 'dataplane':
      return `${String(req.name ?? '*')} in mesh ${String(req.mesh)}`;
    default:
      return `zone ${String(req.zone)}`;
  }
}

/**
 * Creates the token service over the resource views: signing keys are the secrets `<prefix>-N`
 * (the highest N signs, any present N verifies by `kid`), revocations the secrets `*-revocations`.
 * Parsed keys and revocation lists are cached by the revision of their secret.
 */
export function createTokenService(deps: {
  views: ResourceViews;
  now: () => Date;
  /** The signing keys made at first start are written just after ready: issuing waits for them. */
  keysReady?: Promise<void>;
}): TokenService {
  const { views } = deps;
  const keys = new Map<string, { revision: number; pair: SigningKeyPair | undefined }>();
  const revoked = new Map<string, { revision: number; ids: Set<string> }>();

  const cacheKey = (place: KeyPlace, name: string): string => `${place.kind}/${place.mesh ?? ''}/${name}`;

  /** The parsed key of a secret, cached by its revision; undefined when the secret is absent. */
  const keyOf = (place: KeyPlace, name: string): { pair: SigningKeyPair | undefined } | undefined => {
    const item = views.get(place.kind, place.mesh, name);
    if (!item) return undefined;
    const ck = cacheKey(place, name);
    const cached = keys.get(ck);
    if (cached && cached.revision === item.revision) return cached;
    const entry = { revision: item.revision, pair: parseSigningKey(String(item.resource.data ?? '')) };
    keys.set(ck, entry);
    return entry;
  };

  const isRevoked = (type: TokenType, place: KeyPlace, id: string): boolean => {
    const name = revocationsName(type, place.mesh);
    const item = views.get(place.kind, place.mesh, name);
    if (!item) return false;
    const ck = cacheKey(place, name);
    let cached = revoked.get(ck);
    if (!cached || cached.revision !== item.revision) {
      cached = { revision: item.revision, ids: parseRevocations(String(item.resource.data ?? '')) };
      revoked.set(ck, cached);
    }
    return cached.ids.has(id);
  };

  /** The highest serial present of a type's signing keys. */
  const newestSerial = (type: TokenType, place: KeyPlace): number | undefined => {
    let best: number | undefined;
    views.each(place.kind, place.mesh, (item) => {
      const serial = signingKeySerial(type, item.name, place.mesh);
      if (serial !== undefined && (best === undefined || serial > best)) best = serial;
    });
    return best;
  };

  const verify = async (type: TokenType, token: string, meshOf?: (c: JWTPayload) => unknown) => {
    let place: KeyPlace | undefined;
    const verified: VerifiedToken = await verifyToken(
      token,
      (serial, claims) => {
        const mesh = meshOf?.(claims);
        if (meshOf && typeof mesh !== 'string') return { missing: 'the token names no mesh' };
        place = keyPlace(type, mesh as string | undefined);
        const name = signingKeyName(type, serial, place.mesh);
        const found = keyOf(place, name);
        if (!found) {
          return { missing: `the token was signed with ${name}, which no longer exists${where(place)}` };
        }
        if (!found.pair) return { missing: `${what(place)} ${name} is not an RSA private key` };
        return found.pair.publicKey;
      },
      deps.now(),
    );
    if (verified.claims.tokenType !== type) throw unauthorized(`the token is not a ${type} token`);
    if (place && isRevoked(type, place, verified.id)) {
      throw unauthorized(`the token ${verified.id} has been revoked`);
    }
    return verified;
  };

  const verifyUser = async (token: string): Promise<TokenUser> => {
    const { id, claims } = await verify('user', token);
    if (typeof claims.name !== 'string' || !isStringArray(claims.groups)) {
      throw unauthorized('the token has no user name and groups');
    }
    const expiresAt = typeof claims.exp === 'number' ? new Date(claims.exp * 1000) : undefined;
    return { name: claims.name, groups: claims.groups, tokenId: id, expiresAt };
  };

  return {
    async issue(type, body) {
      const req = parseTokenRequest(type, body);
      await deps.keysReady;
      const place = keyPlace(
        type,
        type === 'dataplane' ? (req as TokenRequest<'dataplane'>).mesh : undefined,
      );
      const serial = newestSerial(type, place);
      const name = signingKeyName(type, serial ?? 1, place.mesh);
      if (serial === undefined) {
        throw new AppError(
          'NOT_FOUND',
          'Signing key not found',
          `there is no signing key for ${type} tokens: ${what(place)} "${name}" not found${where(place)}`,
        );
      }
      const pair = keyOf(place, name)?.pair;
      if (!pair) {
        throw new AppError(
          'UNAVAILABLE',
          'Signing key is not valid',
          `${what(place)} "${name}"${where(place)} does not hold an RSA private key (base64 of a PEM)`,
        );
      }
      const validFor = (req as { validFor?: string }).validFor;
      const signed = await signToken({
        claims: claimsOf(type, req),
        privateKey: pair.privateKey,
        serial,
        now: deps.now(),
        validForMs: validFor === undefined ? undefined : parseDuration(validFor),
      });
      return { ...signed, type, serial, subject: subjectOf(type, req as Record<string, unknown>) };
    },

    verifyUser,

    async recheckUser(token) {
      try {
        await verifyUser(token);
        return undefined;
      } catch (err) {
        if (!(err instanceof AppError) || err.code !== 'UNAUTHENTICATED') throw err;
        const claims = await unverifiedClaims(token);
        const id = String(claims.jti);
        if (isRevoked('user', keyPlace('user'), id)) {
          return { title: 'Token revoked', details: `the token ${id} has been revoked` };
        }
        if (typeof claims.exp === 'number' && claims.exp * 1000 <= deps.now().getTime()) {
          const at = new Date(claims.exp * 1000).toISOString();
          return { title: 'Token expired', details: `the token ${id} expired at ${at}` };
        }
        return { title: 'Token no longer valid', details: err.message };
      }
    },

    async verifyDataplane(token) {
      const { id, claims } = await verify('dataplane', token, (c) => c.mesh);
      return {
        tokenId: id,
        name: typeof claims.name === 'string' ? claims.name : undefined,
        mesh: String(claims.mesh),
        tags: (claims.tags ?? {}) as Record<string, string[]>,
        type: (claims.type ?? 'dataplane') as DataplaneTokenClaims['type'],
        expiresAt: typeof claims.exp === 'number' ? new Date(claims.exp * 1000) : undefined,
      };
    },

    async verifyZone(token) {
      const { id, claims } = await verify('zone', token);
      return {
        tokenId: id,
        zone: String(claims.zone),
        scope: isStringArray(claims.scope) ? claims.scope : [],
      };
    },

    async verifyZoneIngress(token) {
      const { id, claims } = await verify('zone-ingress', token);
      return { tokenId: id, zone: String(claims.zone) };
    },
  };
}
