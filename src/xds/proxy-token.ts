import type { DataplaneTokenClaims, TokenService } from '../app/token-service.js';
import { AppError } from '../util/errors.js';
import type { DataplaneResource } from './node-identity.js';
import type { Refusal } from './refusal.js';
import { refusal } from './refusal.js';

/** How the xDS server checks a proxy (config `dpServer.authn.type`, decisions §11). */
export type DataplaneAuthnType = 'dpToken' | 'none';

/** A proxy let in: the id of the token that did it and when that expires (absent with `none`). */
export interface ProxyAdmitted {
  ok: true;
  tokenId?: string;
  expiresAt?: Date;
}

/** Checks a proxy's token against its Dataplane: admitted, or a refusal naming what is wrong. */
export type ProxyTokenCheck = (
  dataplane: DataplaneResource,
  token: string | undefined,
) => Promise<ProxyAdmitted | Refusal>;

/** The warning the server logs at start when proxies are not authenticated, or undefined when they are. */
export function authnWarning(type: DataplaneAuthnType): string | undefined {
  return type === 'none'
    ? 'dpServer.authn.type is none: every proxy that names an existing Dataplane is served without a data plane token; set it to dpToken outside of tests'
    : undefined;
}

/** Every tag value a proxy carries, per key: its inbounds' tags and its gateway's (Kuma's `Dataplane.TagSet`). */
export function proxyTagSet(dataplane: DataplaneResource): Map<string, Set<string>> {
  const set = new Map<string, Set<string>>();
  const add = (tags: Record<string, string>) => {
    for (const [key, value] of Object.entries(tags)) {
      let values = set.get(key);
      if (values === undefined) set.set(key, (values = new Set()));
      values.add(value);
    }
  };
  for (const inbound of dataplane.networking.inbound ?? []) add(inbound.tags);
  if (dataplane.networking.gateway) add(dataplane.networking.gateway.tags);
  return set;
}

const quoted = (values: Iterable<string>): string => [...values].map((v) => `"${v}"`).join(', ');

/**
 * Why a verified token does not cover this proxy, or undefined when it does. Kuma 2.0's rule
 * (`pkg/xds/auth/universal/authenticator.go`): a token's name and mesh, when set, equal the proxy's;
 * for each tag key of the token the proxy carries that key (on some inbound or its gateway) and
 * every value it carries for it is one the token allows. Kuma does not check the token's proxy type;
 * here an ingress or egress token does not cover a Dataplane (those kinds have their own tokens).
 */
export function tokenCoverage(
  claims: DataplaneTokenClaims,
  dataplane: DataplaneResource,
): string | undefined {
  if (claims.mesh !== dataplane.mesh) {
    return `the token is for mesh "${claims.mesh}", the proxy is in mesh "${dataplane.mesh}"`;
  }
  if (claims.name !== undefined && claims.name !== dataplane.name) {
    return `the token is for Dataplane "${claims.name}", the proxy is Dataplane "${dataplane.name}"`;
  }
  if (claims.type !== 'dataplane') {
    return `the token is for a proxy of type ${claims.type}, the proxy is a Dataplane`;
  }
  const carried = proxyTagSet(dataplane);
  for (const [key, allowed] of Object.entries(claims.tags).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const values = carried.get(key);
    if (values === undefined) return `the proxy has no tag "${key}", which the token requires`;
    const outside = [...values].filter((value) => !allowed.includes(value)).sort();
    if (outside.length > 0) {
      return `the proxy has tag "${key}" with ${outside.length === 1 ? 'value' : 'values'} ${quoted(outside)}, which the token does not allow (it allows ${quoted(allowed)})`;
    }
  }
  return undefined;
}

/**
 * The token check of the xDS server (decisions §11). With `dpToken` a proxy needs a data plane token
 * the token service verifies (signature, expiry, revocation: UNAUTHENTICATED otherwise) and whose
 * claims cover its Dataplane ({@link tokenCoverage}: PERMISSION_DENIED otherwise); with `none` every
 * proxy is admitted, with or without a token, as the reference's no-op authenticator does.
 */
export function createProxyTokenCheck(deps: {
  tokens: Pick<TokenService, 'verifyDataplane'>;
  authnType: DataplaneAuthnType;
}): ProxyTokenCheck {
  if (deps.authnType === 'none') return async () => ({ ok: true });
  return async (dataplane, token) => {
    if (token === undefined) {
      return refusal(
        'UNAUTHENTICATED',
        `no data plane token: issue one (POST /tokens/dataplane with mesh "${dataplane.mesh}" and name "${dataplane.name}") and put it in the bootstrap's node.metadata "dataplane.token"`,
      );
    }
    let claims: DataplaneTokenClaims;
    try {
      claims = await deps.tokens.verifyDataplane(token);
    } catch (err) {
      if (err instanceof AppError && err.code === 'UNAUTHENTICATED') {
        return refusal('UNAUTHENTICATED', `the data plane token is not valid: ${err.message}`);
      }
      throw err;
    }
    const problem = tokenCoverage(claims, dataplane);
    if (problem !== undefined) {
      return refusal(
        'PERMISSION_DENIED',
        `the data plane token ${claims.tokenId} does not cover Dataplane "${dataplane.name}" in mesh "${dataplane.mesh}": ${problem}`,
      );
    }
    return { ok: true, tokenId: claims.tokenId, expiresAt: claims.expiresAt };
  };
}
