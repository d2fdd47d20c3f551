import { z } from 'zod';
import { defineResource } from '../descriptor.js';
import { everyViolation, exactlyOneOf, integer } from '../fragments.js';
import { TARGET_REF_KINDS, targetRef } from '../target-ref.js';

const DATADOG_URL =
  /^([A-Za-z][A-Za-z0-9+.-]*):\/\/(?:([^@/?#]*)@)?(\[[^\]/?#]*\]|[^:/?#]*)(?::([^/?#]*))?(.*)$/;

/** Datadog's agent takes `http://host:port` and nothing else (Kuma 2.0): one cause per violation. */
function checkDatadogUrl(url: string, ctx: z.RefinementCtx): void {
  const m = DATADOG_URL.exec(url);
  if (!m || m[3] === '') {
    ctx.addIssue({ code: 'custom', message: 'must be a valid URL' });
    return;
  }
  const [, scheme, user, , port, rest] = m;
  if (scheme !== 'http') ctx.addIssue({ code: 'custom', message: 'scheme must be http' });
  if (port === undefined || port === '') ctx.addIssue({ code: 'custom', message: 'port must be set' });
  else if (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535) {
    ctx.addIssue({ code: 'custom', message: 'port must be in the range 1-65535' });
  }
  if (user !== undefined || rest !== '') {
    ctx.addIssue({ code: 'custom', message: 'must not have a user, path, query or fragment' });
  }
}

const backend = z
  .strictObject({
    zipkin: z
      .strictObject({
        url: z.url({ protocol: /^https?$/ }),
        traceId128bit: z.boolean().optional(),
        apiVersion: z.enum(['httpJson', 'httpProto']).optional(),
        sharedSpanContext: z.boolean().optional(),
      })
      .optional(),
    datadog: z
      .strictObject({ url: z.string().superRefine(checkDatadogUrl), splitService: z.boolean().optional() })
      .optional(),
  })
  .superRefine(exactlyOneOf(['zipkin', 'datadog']), everyViolation);

// Kuma 2.0 samples whole percents (uint32).
const percent = integer
  .min(0, { message: 'must be in the range 0-100' })
  .max(100, { message: 'must be in the range 0-100' });

const tag = z
  .strictObject({
    name: z.string().min(1),
    literal: z.string().min(1).optional(),
    header: z.strictObject({ name: z.string().min(1), default: z.string().optional() }).optional(),
  })
  .superRefine(exactlyOneOf(['literal', 'header']), everyViolation);

/** MeshTrace (extra-policies.md, Kuma 2.0): tracing of the proxies of `targetRef` to at most one backend. */
export const meshTrace = defineResource({
  kind: 'MeshTrace',
  scope: 'mesh',
  path: 'meshtraces',
  spec: z.strictObject({
    spec: z.strictObject({
      // Kuma 2.0 takes every kind here, MeshGatewayRoute too.
      targetRef: targetRef(TARGET_REF_KINDS),
      default: z.strictObject({
        // Envoy takes one tracing backend; Kuma 2.0 keeps a list for later (MADR 009).
        backends: z.array(backend).max(1),
        sampling: z
          .strictObject({
            overall: percent.optional(),
            client: percent.optional(),
            random: percent.optional(),
          })
          .optional(),
        tags: z.array(tag).optional(),
      }),
    }),
  }),
  catalogue: { displayName: 'Mesh Traces', singularDisplayName: 'Mesh Trace' },
  isPolicy: true,
  sync: 'down',
  crossMeshList: true,
});
