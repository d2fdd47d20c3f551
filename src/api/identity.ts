import type { FastifyRequest } from 'fastify';
import type { TLSSocket } from 'node:tls';
import type { TokenUser } from '../app/token-service.js';
import { AppError } from '../util/errors.js';
import { printable } from '../util/printable.js';

/** Who a caller is, and how we know it (token, client certificate, loopback, or nobody). */
export interface Identity {
  name: string;
  groups: string[];
  via: 'token' | 'client-certificate' | 'loopback' | 'anonymous';
  /** The `jti` of the user token, when there is one. */
  tokenId?: string;
  /** When the user token expires, when there is one that does. */
  expiresAt?: Date;
  /**
   * An anonymous caller's loopback address or client certificate that did not count because of a
   * foreign `Origin` (decisions §7): named in a refusal so that the caller knows why.
   */
  uncounted?: { credential: 'loopback address' | 'client certificate'; origin: string };
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the authentication hook before any handler runs. */
    identity: Identity;
    /** `scheme://host[:port]` for absolute links, from a checked `Host` or `apiServer.externalUrl`. */
    baseUrl(): string;
  }
}

/** The name and groups of the loopback admin (decisions §7) and of a client-certificate admin. */
export const ADMIN_GROUPS: readonly string[] = ['mesh-system:admin'];

/** The identity of a caller that presents nothing and is not an admin by address. */
export const ANONYMOUS: Identity = { name: 'anonymous', groups: [], via: 'anonymous' };

const LOOPBACK = /^(127\.|::1$|::ffff:127\.)/;

/** True when the request comes from the loopback interface. */
export function isLoopback(address: string): boolean {
  return LOOPBACK.test(address);
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** The user token of a request's `Authorization: Bearer` header, or undefined. */
export function bearerToken(req: FastifyRequest): string | undefined {
  const header = req.headers.authorization;
  return header === undefined ? undefined : BEARER.exec(header)?.[1];
}

/** What authentication needs: the user token verifier and whether loopback callers are admin. */
export interface AuthenticatorDeps {
  verifyUser(token: string): Promise<TokenUser>;
  localhostIsAdmin: boolean;
  /** False for a request under a `Host` that does not name us (DNS rebinding, decisions §7). */
  hostAllowed(req: FastifyRequest): boolean;
  /** False for a request from a web page of another site: a foreign `Origin` (decisions §7). */
  originAllowed(req: FastifyRequest): boolean;
}

/**
 * The subject common name of a verified client certificate, or undefined when none was verified.
 * Control characters are written as `\uXXXX` (as in every message and log line): the name becomes
 * the actor of writes, shown by audit and logs, and the CA, not this API, chose it.
 */
function verifiedClientCertificate(req: FastifyRequest): string | undefined {
  const socket = req.raw.socket as Partial<TLSSocket>;
  if (socket.encrypted !== true || socket.authorized !== true || !socket.getPeerCertificate) return undefined;
  const cn = socket.getPeerCertificate().subject?.CN;
  return typeof cn === 'string' && cn !== '' ? printable(cn) : 'client-certificate';
}

/** The anonymous caller whose loopback address or certificate did not count because of its `Origin`. */
const uncounted = (credential: 'loopback address' | 'client certificate', req: FastifyRequest): Identity => ({
  ...ANONYMOUS,
  uncounted: { credential, origin: String(req.headers.origin) },
});

/**
 * Creates the authenticator (decisions §7). A bearer user token decides, even from loopback;
 * then a client certificate verified against `clientCertsDir`, with no foreign `Origin`; then
 * loopback, when the request names this control plane in `Host` and no foreign `Origin`;
 * else anonymous. A browser sends the certificate and the loopback address by itself, for any page:
 * neither counts for a page of another site.
 */
export function createAuthenticator(
  deps: AuthenticatorDeps,
): (req: FastifyRequest) => Identity | Promise<Identity> {
  // Only a token needs a promise (its verification is async); the other ways answer at once, so a
  // request without a token costs no promise and no extra turn of the event loop.
  return (req) => {
    const header = req.headers.authorization;
    if (header !== undefined) {
      const match = BEARER.exec(header);
      if (!match) {
        throw new AppError(
          'UNAUTHENTICATED',
          'Unauthorized',
          'the Authorization header must be "Bearer <user token>"',
        );
      }
      return Promise.resolve(deps.verifyUser(match[1])).then((user) => ({
        name: user.name,
        groups: user.groups,
        via: 'token' as const,
        tokenId: user.tokenId,
        expiresAt: user.expiresAt,
      }));
    }
    const cn = verifiedClientCertificate(req);
    if (cn !== undefined) {
      if (!deps.originAllowed(req)) return uncounted('client certificate', req);
      return { name: cn, groups: [...ADMIN_GROUPS], via: 'client-certificate' };
    }
    if (deps.localhostIsAdmin && isLoopback(req.ip) && deps.hostAllowed(req)) {
      if (!deps.originAllowed(req)) return uncounted('loopback address', req);
      return { name: 'admin', groups: [...ADMIN_GROUPS], via: 'loopback' };
    }
    return ANONYMOUS;
  };
}
