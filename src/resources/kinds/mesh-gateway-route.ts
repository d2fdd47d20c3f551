import { z } from 'zod';
import { defineResource } from '../descriptor.js';
import {
  atMostOneOf,
  everyViolation,
  exactlyOneOf,
  integer,
  isRecord,
  percentage,
  uint,
} from '../fragments.js';
import { serviceSelectorList, serviceSelectorMap } from '../gateway-fragments.js';

/** A cause at `path` of the checked object. */
function violation(ctx: z.RefinementCtx, path: PropertyKey[], message: string): void {
  ctx.addIssue({ code: 'custom', path, message });
}

/** True when `v` is an array with items. */
const hasItems = (v: unknown): boolean => Array.isArray(v) && v.length > 0;

// A backend's weight may be left out: Kuma 2.0 weighs it 1 then.
const backend = z.strictObject({ weight: uint.optional(), destination: serviceSelectorMap });
const nameValue = z.strictObject({ name: z.string().min(1), value: z.string().min(1) });
const valueMatch = z.strictObject({
  match: z.enum(['EXACT', 'REGEX']).optional(),
  name: z.string().min(1),
  value: z.string().min(1),
});

/**
 * A path match (Kuma 2.0): a REGEX is non-empty; an EXACT (the default) or PREFIX value is
 * absolute, and a PREFIX other than `/` has no trailing slash.
 */
function checkPath(path: Record<string, unknown>, ctx: z.RefinementCtx): void {
  if (typeof path.value !== 'string') return;
  const value = path.value;
  if (path.match === 'REGEX') {
    if (value === '') violation(ctx, ['value'], 'cannot be empty');
    return;
  }
  if (path.match === 'PREFIX' && value === '/') return;
  if (path.match === 'PREFIX' && value.endsWith('/')) {
    violation(
      ctx,
      ['value'],
      'does not need a trailing slash: only a `/`-separated prefix or an entire path is matched',
    );
  }
  if (!value.startsWith('/')) violation(ctx, ['value'], 'must be an absolute path');
}

/** A match needs at least one condition (Kuma 2.0). */
function checkMatch(m: Record<string, unknown>, ctx: z.RefinementCtx): void {
  if (
    m.path === undefined &&
    m.method === undefined &&
    !hasItems(m.headers) &&
    !hasItems(m.queryParameters)
  ) {
    violation(ctx, [], 'cannot be empty: give a path, method, headers or queryParameters');
  }
}

const match = z
  .strictObject({
    path: z
      .strictObject({ match: z.enum(['EXACT', 'PREFIX', 'REGEX']).optional(), value: z.string() })
      .superRefine(checkPath, everyViolation)
      .optional(),
    method: z
      .enum(['CONNECT', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'TRACE'])
      .optional(),
    headers: z.array(valueMatch).optional(),
    queryParameters: z.array(valueMatch).optional(),
  })
  .superRefine(checkMatch, everyViolation);

/** A request header filter changes something: it sets, adds or removes a header (Kuma 2.0). */
function checkRequestHeader(r: Record<string, unknown>, ctx: z.RefinementCtx): void {
  if (!hasItems(r.set) && !hasItems(r.add) && !hasItems(r.remove)) {
    violation(ctx, [], 'cannot be empty: give headers to set, add or remove');
  }
}

const PORT_OR_UNSET = 'must be in the range 1-65535 (or 0: the port of the request)';
const STATUS = 'must be in the range 300-308';

const filter = z
  .strictObject({
    requestHeader: z
      .strictObject({
        set: z.array(nameValue).optional(),
        add: z.array(nameValue).optional(),
        remove: z.array(z.string().min(1)).optional(),
      })
      .superRefine(checkRequestHeader, everyViolation)
      .optional(),
    mirror: z.strictObject({ backend, percentage }).optional(),
    // Kuma 2.0 passes scheme and hostname to Envoy as they are: any non-empty text.
    redirect: z
      .strictObject({
        scheme: z.string().min(1),
        hostname: z.string().min(1),
        port: integer.min(0, { message: PORT_OR_UNSET }).max(65535, { message: PORT_OR_UNSET }).optional(),
        statusCode: integer.min(300, { message: STATUS }).max(308, { message: STATUS }),
      })
      .optional(),
    rewrite: z
      .strictObject({ replaceFull: z.string().optional(), replacePrefixMatch: z.string().optional() })
      .superRefine(atMostOneOf(['replaceFull', 'replacePrefixMatch']), everyViolation)
      .optional(),
  })
  .superRefine(atMostOneOf(['requestHeader', 'mirror', 'redirect', 'rewrite']), everyViolation);

/**
 * Kuma 2.0's rule checks: a redirect must be the only filter and has no backends; any other rule
 * needs backends; `replacePrefixMatch` needs a PREFIX path match in the rule.
 */
function checkRule(rule: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const filters = Array.isArray(rule.filters) ? rule.filters.filter(isRecord) : [];
  const matches = Array.isArray(rule.matches) ? rule.matches.filter(isRecord) : [];
  const prefixMatch = matches.some((m) => isRecord(m.path) && m.path.match === 'PREFIX');
  filters.forEach((f, i) => {
    if (isRecord(f.rewrite) && f.rewrite.replacePrefixMatch !== undefined && !prefixMatch) {
      violation(
        ctx,
        ['filters', i, 'rewrite', 'replacePrefixMatch'],
        'cannot be used without a match on a path prefix',
      );
    }
  });
  const redirect = filters.some((f) => f.redirect !== undefined);
  if (redirect && Array.isArray(rule.filters) && rule.filters.length > 1) {
    // The backends check is ambiguous then (Kuma 2.0 stops here too).
    violation(ctx, ['filters'], 'a redirect filter must be the only filter');
  } else if (redirect && hasItems(rule.backends)) {
    violation(ctx, ['backends'], 'must be empty when a redirect filter is given');
  } else if (!redirect && !hasItems(rule.backends)) {
    violation(ctx, ['backends'], 'cannot be empty');
  }
}

const httpRule = z
  .strictObject({
    matches: z.array(match).min(1),
    filters: z.array(filter).optional(),
    backends: z.array(backend).optional(),
  })
  .superRefine(checkRule, everyViolation);

const conf = z
  .strictObject({
    // Kuma 2.0 checks nothing of a TCP route; its backends are still backends here (a destination
    // names a service), since that is all a TCP route does.
    tcp: z
      .strictObject({ rules: z.array(z.strictObject({ backends: z.array(backend) })).optional() })
      .optional(),
    // Kuma 2.0 takes any hostnames here (a listener's hostname is checked).
    http: z
      .strictObject({ hostnames: z.array(z.string()).optional(), rules: z.array(httpRule).min(1) })
      .optional(),
  })
  .superRefine(exactlyOneOf(['tcp', 'http']), everyViolation);

/** MeshGatewayRoute (extra-policies.md, Kuma 2.0 `gateway_route_validator.go`): TCP or HTTP routes of builtin gateways. */
export const meshGatewayRoute = defineResource({
  kind: 'MeshGatewayRoute',
  scope: 'mesh',
  path: 'meshgatewayroutes',
  spec: z.strictObject({ selectors: serviceSelectorList, conf }),
  catalogue: { displayName: 'Mesh Gateway Routes', singularDisplayName: 'Mesh Gateway Route' },
  isPolicy: true,
  sync: 'down',
  crossMeshList: true,
});
