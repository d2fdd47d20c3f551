import { z } from 'zod';
import { defineResource } from '../descriptor.js';
import { everyViolation, exactlyOneOf, isRecord, policySelectors, tagMap } from '../fragments.js';

const name = z.string().min(1).optional();
const origin = z.string().min(1).optional();
const value = z.string().optional();
const basicOps = z.enum(['add', 'remove', 'patch']);
// Filters are placed relative to others, so Kuma has positional adds instead of `add`.
const filterOps = z.enum(['addFirst', 'addLast', 'addBefore', 'addAfter', 'remove', 'patch']);
const filterMatch = z
  .strictObject({ name, origin, listenerName: name, listenerTags: tagMap.optional() })
  .optional();

/**
 * Whether `text` has the shape of raw proxy configuration to add or patch with: a YAML mapping (its
 * first line a `key:`, no line indented by a tab, which YAML refuses) or a `{...}` map. Kuma also
 * decodes it as the Envoy message and checks Envoy's field rules; the proxy checks those here (NACK).
 */
function isConfigObject(text: unknown): boolean {
  if (typeof text !== 'string') return false;
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== '' && !l.trimStart().startsWith('#'));
  if (lines.length === 0 || lines.some((l) => l.startsWith('\t'))) return false;
  const body = lines.join('\n').trim();
  if (body.startsWith('{')) return body.endsWith('}');
  return /^("[^"]*"|'[^']*'|[^\s#:{}[\],&*!|>'"%@`-][^:]*):(\s|$)/.test(lines[0]);
}

const NOT_CONFIG = 'native Envoy resource is not valid: must be a YAML or JSON object';

/** Kuma's rules for one modification: what each operation needs of `match` and `value`. */
function checkOperation(kind: 'basic' | 'filter' | 'virtualHost') {
  return (m: Record<string, unknown>, ctx: z.RefinementCtx): void => {
    const op = m.operation;
    const known: readonly unknown[] = kind === 'filter' ? filterOps.options : basicOps.options;
    const match = isRecord(m.match) ? m.match : undefined;
    // Nothing more to check of a remove, or of an operation that is not one (its own cause).
    if (typeof op !== 'string' || op === 'remove' || !known.includes(op)) return;
    if (op === 'add' && kind === 'basic' && m.match !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['match'], message: 'cannot be set when adding' });
    }
    if (op === 'add' && kind === 'virtualHost' && match?.name !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['match', 'name'], message: 'cannot be set when adding' });
    }
    if (kind === 'filter' && ['addBefore', 'addAfter', 'patch'].includes(op) && match?.name === undefined) {
      const where = op === 'addBefore' ? 'before' : op === 'addAfter' ? 'after' : undefined;
      ctx.addIssue({
        code: 'custom',
        path: ['match', 'name'],
        message:
          where === undefined
            ? 'cannot be empty'
            : `cannot be empty: name the filter ${where} which this one is added`,
      });
    }
    // A patch may be any part of the message; an add is the whole of it: both are objects.
    if (!isConfigObject(m.value)) ctx.addIssue({ code: 'custom', path: ['value'], message: NOT_CONFIG });
  };
}

// Not in spec 2.7 (Kuma's `conf.modifications`): one of the five targets per entry.
const modification = z
  .strictObject({
    cluster: z
      .strictObject({ operation: basicOps, match: z.strictObject({ name, origin }).optional(), value })
      .superRefine(checkOperation('basic'), everyViolation)
      .optional(),
    listener: z
      .strictObject({
        operation: basicOps,
        match: z.strictObject({ name, origin, tags: tagMap.optional() }).optional(),
        value,
      })
      .superRefine(checkOperation('basic'), everyViolation)
      .optional(),
    networkFilter: z
      .strictObject({ operation: filterOps, match: filterMatch, value })
      .superRefine(checkOperation('filter'), everyViolation)
      .optional(),
    httpFilter: z
      .strictObject({ operation: filterOps, match: filterMatch, value })
      .superRefine(checkOperation('filter'), everyViolation)
      .optional(),
    virtualHost: z
      .strictObject({
        operation: basicOps,
        match: z.strictObject({ name, origin, routeConfigurationName: name }).optional(),
        value,
      })
      .superRefine(checkOperation('virtualHost'), everyViolation)
      .optional(),
  })
  .superRefine(
    exactlyOneOf(['cluster', 'listener', 'networkFilter', 'httpFilter', 'virtualHost']),
    everyViolation,
  );

/** The profiles a ProxyTemplate may import (Kuma's). */
export const PROXY_PROFILES = ['default-proxy', 'egress-proxy', 'ingress-proxy'] as const;

const profile = z
  .string()
  .min(1, { abort: true })
  .refine((p) => (PROXY_PROFILES as readonly string[]).includes(p), {
    message: `profile not found. Available profiles: ${PROXY_PROFILES.join(', ')}`,
  });

// YAML's `name:` without a value is null: an empty field, as Kuma reads it.
const required = z.preprocess((v) => v ?? '', z.string().min(1));

const conf = z.strictObject({
  imports: z.array(profile).optional(),
  resources: z
    .array(
      z.strictObject({
        name: required,
        version: required,
        resource: z.preprocess(
          (v) => v ?? '',
          z.string().min(1).refine(isConfigObject, { message: NOT_CONFIG }),
        ),
      }),
    )
    .optional(),
  modifications: z.array(modification).optional(),
});

/** ProxyTemplate (spec 2.7): raw proxy configuration imported, added or patched for selected proxies. */
export const proxyTemplate = defineResource({
  kind: 'ProxyTemplate',
  scope: 'mesh',
  path: 'proxytemplates',
  spec: z.strictObject({
    selectors: policySelectors({ service: 'required', allowEmpty: true }),
    conf: conf.optional(),
  }),
  catalogue: { displayName: 'Proxy Templates', singularDisplayName: 'Proxy Template' },
  isPolicy: true,
  sync: 'down',
  crossMeshList: true,
  // Raw proxy configuration (YAML or JSON) in `resources[].resource` and `modifications[].*.value`.
  multiLineKeys: new Set(['resource', 'value']),
});
