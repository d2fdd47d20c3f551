import { isIP } from 'node:net';
import { z } from 'zod';
import { everyViolation, isRecord, SERVICE_TAG } from './fragments.js';

/** The tag that names a service's protocol. */
export const PROTOCOL_TAG = 'mesh.io/protocol';

/** The protocols a `mesh.io/protocol` tag of a proxy or external service may name (Kuma's list). */
export const PROTOCOLS: readonly string[] = ['grpc', 'http', 'http2', 'kafka', 'tcp'];

// Kuma's character sets: a tag value, unlike a key, has no slash.
const TAG_NAME = /^[a-zA-Z0-9._:/-]+$/;
const TAG_VALUE = /^[a-zA-Z0-9._:-]*$/;

/** The rules of one proxy tag map beyond the characters of its keys and values. */
export interface ProxyTagRules {
  /**
   * Whether `mesh.io/service` must be present, and where its absence is reported: on the map
   * (`tags`), or on the missing key (`tags["mesh.io/service"]`, as Kuma does for inbounds).
   */
  service?: 'map' | 'key';
  /** What `mesh.io/protocol` may be: one of {@link PROTOCOLS}, or only `tcp` (a delegated gateway's tags). */
  protocol?: 'known' | 'tcp';
}

/** The cause of a missing service tag, as the map reports it. */
export const MISSING_SERVICE_TAG = `mandatory tag "${SERVICE_TAG}" is missing`;

/** The causes of one protocol value under `rule`, at the protocol key. */
function checkProtocol(value: string, rule: 'known' | 'tcp', ctx: z.RefinementCtx): void {
  if (rule === 'tcp' && value !== 'tcp') {
    ctx.addIssue({
      code: 'custom',
      path: [PROTOCOL_TAG],
      message: `only tcp is allowed here, got ${JSON.stringify(value)}`,
    });
  } else if (rule === 'known' && !PROTOCOLS.includes(value)) {
    ctx.addIssue({
      code: 'custom',
      path: [PROTOCOL_TAG],
      message: `tag "${PROTOCOL_TAG}" has an invalid value ${JSON.stringify(value)}; allowed values: ${PROTOCOLS.join(', ')}`,
    });
  }
}

/** Kuma's checks of concrete tags (ValidateTags): key and value characters, the service and protocol tags. */
function checkTags(rules: ProxyTagRules) {
  return (tags: Record<string, unknown>, ctx: z.RefinementCtx): void => {
    for (const [key, value] of Object.entries(tags)) {
      if (key === '') ctx.addIssue({ code: 'custom', path: [], message: 'tag name must be non-empty' });
      else if (!TAG_NAME.test(key)) {
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: 'tag name must consist of letters, digits, dots, dashes, colons, slashes and underscores',
        });
      }
      if (typeof value !== 'string') continue;
      if (value === '') ctx.addIssue({ code: 'custom', path: [key], message: 'tag value must be non-empty' });
      else if (!TAG_VALUE.test(value)) {
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: 'tag value must consist of letters, digits, dots, dashes, colons and underscores',
        });
      }
    }
    const protocol = tags[PROTOCOL_TAG];
    if (rules.protocol !== undefined && typeof protocol === 'string')
      checkProtocol(protocol, rules.protocol, ctx);
    if (tags[SERVICE_TAG] !== undefined || rules.service === undefined) return;
    if (rules.service === 'map') ctx.addIssue({ code: 'custom', path: [], message: MISSING_SERVICE_TAG });
    else ctx.addIssue({ code: 'custom', path: [SERVICE_TAG], message: 'tag has to exist' });
  };
}

/**
 * The concrete tags of a proxy, an ingress's available service or an external service, checked as
 * Kuma checks them: every violation at `tags["key"]`, a missing service tag where `rules` says.
 */
export function proxyTags(rules: ProxyTagRules = {}): z.ZodType<Record<string, string>> {
  return z.record(z.string(), z.string()).superRefine((tags: unknown, ctx) => {
    if (isRecord(tags)) checkTags(rules)(tags, ctx);
  }, everyViolation);
}

// Kuma's selector characters: a value may also have a slash, or be the wildcard.
const SELECTOR_VALUE = /^([a-zA-Z0-9._:/-]*|\*)$/;

/** The rules of one selector tag map beyond the characters of its keys and values. */
export interface SelectorTagRules {
  /** The map must have a tag (a constraint's rule; cause on the map). */
  atLeastOne?: boolean;
  /** Keys a selector may not use (cause on the key). */
  forbiddenKeys?: readonly string[];
}

/**
 * Kuma's checks of selector tags (ValidateSelector) on `tags`, with causes under `path`: key
 * characters as in concrete tags; a value may also hold a slash, or be `*`.
 */
export function checkSelectorTags(
  tags: Record<string, unknown>,
  ctx: z.RefinementCtx,
  path: PropertyKey[],
  rules: SelectorTagRules = {},
): void {
  const at = (key?: string): PropertyKey[] => (key === undefined ? path : [...path, key]);
  if (rules.atLeastOne === true && Object.keys(tags).length === 0)
    ctx.addIssue({ code: 'custom', path: at(), message: 'must have at least one tag' });
  for (const [key, value] of Object.entries(tags)) {
    if (key === '') ctx.addIssue({ code: 'custom', path: at(), message: 'tag name must be non-empty' });
    else if (!TAG_NAME.test(key)) {
      const message =
        'tag name must consist of letters, digits, dots, dashes, colons, slashes and underscores';
      ctx.addIssue({ code: 'custom', path: at(key), message });
    }
    if (rules.forbiddenKeys?.includes(key))
      ctx.addIssue({ code: 'custom', path: at(key), message: `tag name must not be ${JSON.stringify(key)}` });
    if (value === '') ctx.addIssue({ code: 'custom', path: at(key), message: 'tag value must be non-empty' });
    else if (typeof value === 'string' && !SELECTOR_VALUE.test(value)) {
      const message =
        'tag value must consist of letters, digits, dots, dashes, colons, slashes and underscores, or be "*"';
      ctx.addIssue({ code: 'custom', path: at(key), message });
    }
  }
}

/** A selector's tag map checked by {@link checkSelectorTags}. */
export function selectorTags(rules: SelectorTagRules = {}): z.ZodType<Record<string, string>> {
  return z.record(z.string(), z.string()).superRefine((tags: unknown, ctx) => {
    if (isRecord(tags)) checkSelectorTags(tags, ctx, [], rules);
  }, everyViolation);
}

// govalidator's IsDNSName, which Kuma's address checks use: labels of letters, digits, `_` and `-`.
const DNS_NAME = /^([a-zA-Z0-9_][a-zA-Z0-9_-]{0,62})(\.[a-zA-Z0-9_][a-zA-Z0-9_-]{0,62})*[._]?$/;

/** True for an IP address or a domain name as Kuma's address checks take them. */
export function isIpOrDnsName(v: string): boolean {
  return isIP(v) !== 0 || (v.replaceAll('.', '').length <= 255 && DNS_NAME.test(v));
}

/**
 * The address of a proxy, an ingress or an egress: an IP address or a domain name, not the
 * unspecified address (a proxy must be reachable at it).
 */
export const proxyAddress = z
  .string()
  .min(1)
  .superRefine((v, ctx) => {
    if (v === '') return;
    if (v === '0.0.0.0' || v === '::') ctx.addIssue({ code: 'custom', message: 'must not be 0.0.0.0 or ::' });
    else if (!isIpOrDnsName(v))
      ctx.addIssue({ code: 'custom', message: 'must be a valid IP address or domain name' });
  });

/** True when `address` is `127.0.0.1` or the unspecified address (what a listener there would share). */
export function overlapsLoopback(address: string): boolean {
  return ['127.0.0.1', '::ffff:127.0.0.1', '0.0.0.0', '::'].includes(address.toLowerCase());
}
