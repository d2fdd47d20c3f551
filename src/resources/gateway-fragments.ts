import { z } from 'zod';
import { SERVICE_TAG, everyViolation, isRecord, selectorTagMap } from './fragments.js';

/** The message of a selector or destination map without the service tag (Kuma 2.0's words). */
export const MISSING_SERVICE = `mandatory tag "${SERVICE_TAG}" is missing`;

/** A cause on the map itself when it lacks the service tag (Kuma 2.0 `RequireService`). */
function requireService(m: unknown, ctx: z.RefinementCtx): void {
  if (isRecord(m) && m[SERVICE_TAG] === undefined) {
    ctx.addIssue({ code: 'custom', path: [], message: MISSING_SERVICE });
  }
}

/**
 * A selector map of at least one tag that includes the service tag (values may be `*`): the
 * `selectors[].match` of gateways and gateway routes, and the destinations of route backends.
 */
export const serviceSelectorMap = selectorTagMap
  .refine((m) => Object.keys(m).length > 0, { message: 'must have at least one tag' })
  .superRefine(requireService, everyViolation);

/** `selectors` of MeshGateway and MeshGatewayRoute: at least one, each matching a service. */
export const serviceSelectorList = z
  .array(z.strictObject({ match: serviceSelectorMap }))
  .min(1, { message: 'must have at least one element' });

/** Tag keys that are properties of a proxy: a MeshGateway's and its listeners' tags may not use them. */
const PROXY_TAG_KEYS: ReadonlySet<string> = new Set([
  'mesh.io/external-service-name',
  'mesh.io/protocol',
  SERVICE_TAG,
  'mesh.io/zone',
]);

/** A cause on each key of `tags` that names a property of a proxy (Kuma 2.0 `SelectorKeyNotInSet`). */
function refuseProxyKeys(tags: unknown, ctx: z.RefinementCtx): void {
  if (!isRecord(tags)) return;
  for (const key of Object.keys(tags)) {
    if (PROXY_TAG_KEYS.has(key)) {
      ctx.addIssue({ code: 'custom', path: [key], message: `tag name must not be "${key}"` });
    }
  }
}

/**
 * The `tags` of a MeshGateway and of its listeners: optional, validated as selector values (Kuma
 * 2.0 lets them be `*`), without the keys the proxy itself sets (the selectors bind the gateway
 * to its proxies; the service tag lives there).
 */
export const gatewayTagMap = selectorTagMap.superRefine(refuseProxyKeys, everyViolation);

const DNS_LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DOMAIN = new RegExp(`^${DNS_LABEL}(\\.${DNS_LABEL})*$`);

/**
 * Kuma 2.0 `ValidateHostname`: `*`, `*.` and a domain, or a domain, of lowercase DNS labels. An
 * empty hostname is unset, as in Kuma 2.0: the listener serves every host.
 */
function checkHostname(hostname: string, ctx: z.RefinementCtx): void {
  if (hostname === '' || hostname === '*') return;
  if (hostname.startsWith('*.')) {
    if (!DOMAIN.test(hostname.slice(2))) {
      ctx.addIssue({
        code: 'custom',
        message: 'invalid wildcard hostname: "*." must be followed by a domain of lowercase DNS labels',
      });
    }
  } else if (!DOMAIN.test(hostname)) {
    ctx.addIssue({
      code: 'custom',
      message: 'invalid hostname: must be "*", "*.<domain>" or a domain of lowercase DNS labels',
    });
  }
}

/** A listener hostname (Kuma 2.0 `ValidateHostname`). */
export const gatewayHostname = z.string().superRefine(checkHostname);
