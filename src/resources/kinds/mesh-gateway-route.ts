import { z } from 'zod';
import { defineResource } from '../descriptor.js';
import {
  everyViolation,
  exactlyOneOf,
  hostOrIp,
  integer,
  isRecord,
  nonEmptyTagMap,
  percentage,
  selectorList,
  uint,
  wildcardHostname,
  withServiceTag,
} from '../fragments.js';

const backend = z.strictObject({ weight: uint, destination: withServiceTag(nonEmptyTagMap) });
const nameValue = z.strictObject({ name: z.string().min(1), value: z.string() });
const valueMatch = z.strictObject({
  match: z.enum(['EXACT', 'REGEX']).optional(),
  name: z.string().min(1),
  value: z.string(),
});

const match = z.strictObject({
  path: z
    .strictObject({ match: z.enum(['EXACT', 'PREFIX', 'REGEX']).optional(), value: z.string().min(1) })
    .optional(),
  method: z.enum(['CONNECT', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'TRACE']).optional(),
  headers: z.array(valueMatch).optional(),
  queryParameters: z.array(valueMatch).optional(),
});

const filter = z
  .strictObject({
    requestHeader: z
      .strictObject({
        set: z.array(nameValue).optional(),
        add: z.array(nameValue).optional(),
        remove: z.array(z.string().min(1)).optional(),
      })
      .optional(),
    mirror: z.strictObject({ backend, percentage: percentage.optional() }).optional(),
    redirect: z
      .strictObject({
        scheme: z.enum(['http', 'https']).optional(),
        hostname: hostOrIp.optional(),
        port: integer.min(1).max(65534).optional(),
        statusCode: integer.min(300).max(308).optional(),
      })
      .optional(),
    rewrite: z
      .strictObject({
        replaceFull: z.string().min(1).optional(),
        replacePrefixMatch: z.string().min(1).optional(),
      })
      .superRefine(exactlyOneOf(['replaceFull', 'replacePrefixMatch']), everyViolation)
      .optional(),
  })
  .superRefine(exactlyOneOf(['requestHeader', 'mirror', 'redirect', 'rewrite']), everyViolation);

/** A redirect must be the only filter and has no backends; any other rule needs backends. */
function checkRule(rule: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const filters = Array.isArray(rule.filters) ? rule.filters : [];
  const backends = Array.isArray(rule.backends) ? rule.backends : [];
  if (filters.some((f) => isRecord(f) && f.redirect !== undefined)) {
    if (filters.length > 1)
      ctx.addIssue({
        code: 'custom',
        path: ['filters'],
        message: 'a redirect filter must be the only filter',
      });
    if (backends.length > 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['backends'],
        message: 'must be empty when a redirect filter is given',
      });
    }
  } else if (backends.length === 0) {
    ctx.addIssue({ code: 'custom', path: ['backends'], message: 'cannot be empty' });
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
    tcp: z
      .strictObject({ rules: z.array(z.strictObject({ backends: z.array(backend).min(1) })).min(1) })
      .optional(),
    http: z
      .strictObject({ hostnames: z.array(wildcardHostname).optional(), rules: z.array(httpRule).min(1) })
      .optional(),
  })
  .superRefine(exactlyOneOf(['tcp', 'http']), everyViolation);

/** MeshGatewayRoute (extra-policies.md): TCP or HTTP routes of builtin gateways. */
export const meshGatewayRoute = defineResource({
  kind: 'MeshGatewayRoute',
  scope: 'mesh',
  path: 'meshgatewayroutes',
  spec: z.strictObject({ selectors: selectorList, conf }),
  catalogue: { displayName: 'Mesh Gateway Routes', singularDisplayName: 'Mesh Gateway Route' },
  isPolicy: true,
  sync: 'down',
  crossMeshList: true,
});
