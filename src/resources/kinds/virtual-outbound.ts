import { z } from 'zod';
import { defineResource } from '../descriptor.js';
import { everyViolation, isRecord, policySelectors, tagKey, uniqueNames } from '../fragments.js';

const PARAM = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Parameter names are unique; Kuma's templates refer to parameters as `{{.name}}`: each must be declared in `parameters`. */
function checkTemplates(conf: Record<string, unknown>, ctx: z.RefinementCtx): void {
  uniqueNames(conf.parameters, ctx, ['parameters'], 'parameter');
  const params = Array.isArray(conf.parameters) ? conf.parameters : [];
  const declared = new Set(params.map((p) => (isRecord(p) ? p.name : undefined)));
  for (const field of ['host', 'port'] as const) {
    const template = conf[field];
    if (typeof template !== 'string') continue;
    for (const m of template.matchAll(/\{\{\s*\.([A-Za-z0-9_]+)\s*\}\}/g)) {
      if (!declared.has(m[1])) {
        ctx.addIssue({
          code: 'custom',
          path: [field],
          message: `template uses "${m[1]}" which is not in parameters`,
        });
      }
    }
  }
}

const conf = z
  .strictObject({
    host: z.string().min(1),
    port: z.string().min(1),
    parameters: z
      .array(
        z.strictObject({
          name: z
            .string()
            .regex(PARAM, { message: 'must be a name of [A-Za-z0-9_], not starting with a digit' }),
          tagKey: tagKey.optional(),
        }),
      )
      .min(1),
  })
  .superRefine(checkTemplates, everyViolation);

/** VirtualOutbound (extra-policies.md): hostnames and ports generated from tags by templates. */
export const virtualOutbound = defineResource({
  kind: 'VirtualOutbound',
  scope: 'mesh',
  path: 'virtual-outbounds',
  spec: z.strictObject({ selectors: policySelectors(), conf }),
  catalogue: { displayName: 'Virtual Outbounds', singularDisplayName: 'Virtual Outbound' },
  isPolicy: true,
  sync: 'down',
  crossMeshList: true,
});
