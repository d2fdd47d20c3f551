import { z } from 'zod';
import { defineResource } from '../descriptor.js';
import { everyViolation, isRecord, policySelectors, SERVICE_TAG, tagKey, uniqueNames } from '../fragments.js';

/** Kuma's rule: a parameter name is a template key, letters and digits only. */
const PARAM = /^[a-zA-Z0-9]+$/;

const ACTION = /\{\{(.*?)\}\}/g;
const REFERENCE = /^\s*\.([a-zA-Z0-9]+)\s*$/;

/**
 * Why `template` cannot be evaluated, or undefined. Kuma compiles it as a Go template and evaluates
 * it with a stand-in value for each parameter (`value`): every action must be a `{{.name}}` of a
 * declared parameter, and a port must come out as a number.
 */
function templateProblem(
  template: string,
  declared: ReadonlySet<unknown>,
  value: string,
): string | undefined {
  const outside = template.replace(ACTION, '');
  if (outside.includes('{{') || outside.includes('}}'))
    return 'template is not valid: an unclosed "{{" or a stray "}}"';
  for (const [action, inner] of template.matchAll(ACTION)) {
    const ref = REFERENCE.exec(inner);
    if (ref === null) return `template is not valid: ${action} is not a {{.parameter}} reference`;
    if (!declared.has(ref[1])) return `template uses "${ref[1]}" which is not in parameters`;
  }
  if (value === '1') {
    const result = template.replace(ACTION, value);
    if (!/^\d+$/.test(result))
      return `template evaluated with 1 for each parameter is not a number: "${result}"`;
  }
  return undefined;
}

/**
 * Kuma's rules across fields: parameter names unique, one parameter with `mesh.io/service` as its
 * tagKey, and the host and port templates evaluate with the declared parameters (a port to a number).
 */
function checkTemplates(conf: Record<string, unknown>, ctx: z.RefinementCtx): void {
  uniqueNames(conf.parameters, ctx, ['parameters'], 'parameter');
  const params = Array.isArray(conf.parameters) ? conf.parameters : [];
  if (!params.some((p) => isRecord(p) && p.tagKey === SERVICE_TAG)) {
    ctx.addIssue({
      code: 'custom',
      path: ['parameters'],
      message: `must contain a parameter with "${SERVICE_TAG}" as its tagKey`,
    });
  }
  const declared = new Set(params.map((p) => (isRecord(p) ? p.name : undefined)));
  for (const [field, value] of [
    ['host', 'dummy'],
    ['port', '1'],
  ] as const) {
    const template = conf[field];
    if (typeof template !== 'string' || template === '') continue;
    const problem = templateProblem(template, declared, value);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', path: [field], message: problem });
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
            .regex(PARAM, { message: 'must consist of letters and digits to be used as a template key' }),
          tagKey: tagKey.optional(),
        }),
      )
      .optional(),
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
