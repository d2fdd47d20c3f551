import { z } from 'zod';
import { defineResource } from '../descriptor.js';
import { everyViolation, exactlyOneOf, policySelectors, tagMap } from '../fragments.js';

const name = z.string().min(1).optional();
const origin = z.string().min(1).optional();
const value = z.string().min(1).optional();
const basicOps = z.enum(['add', 'remove', 'patch']);
// Filters are placed relative to others, so Kuma has positional adds instead of `add`.
const filterOps = z.enum(['addFirst', 'addLast', 'addBefore', 'addAfter', 'remove', 'patch']);
const filterMatch = z
  .strictObject({ name, origin, listenerName: name, listenerTags: tagMap.optional() })
  .optional();

// Not in spec 2.7 (Kuma's `conf.modifications`): one of the five targets per entry.
const modification = z
  .strictObject({
    cluster: z
      .strictObject({ operation: basicOps, match: z.strictObject({ name, origin }).optional(), value })
      .optional(),
    listener: z
      .strictObject({
        operation: basicOps,
        match: z.strictObject({ name, origin, tags: tagMap.optional() }).optional(),
        value,
      })
      .optional(),
    networkFilter: z.strictObject({ operation: filterOps, match: filterMatch, value }).optional(),
    httpFilter: z.strictObject({ operation: filterOps, match: filterMatch, value }).optional(),
    virtualHost: z
      .strictObject({
        operation: basicOps,
        match: z.strictObject({ name, origin, routeConfigurationName: name }).optional(),
        value,
      })
      .optional(),
  })
  .superRefine(
    exactlyOneOf(['cluster', 'listener', 'networkFilter', 'httpFilter', 'virtualHost']),
    everyViolation,
  );

const conf = z.strictObject({
  imports: z.array(z.string().min(1)).optional(),
  resources: z
    .array(z.strictObject({ name: z.string().min(1), version: z.string(), resource: z.string().min(1) }))
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
