import { isIP } from 'node:net';
import { z } from 'zod';
import { defineResource } from '../descriptor.js';
import { atMostOneOf, everyViolation, exactlyOneOf, hostOrIp, isRecord } from '../fragments.js';
import { TARGET_REF_KINDS, targetRef } from '../target-ref.js';

/** Kuma 2.0 builds the JSON format as `{"<key>": "<value>"}` text: the pair must read back as JSON. */
function checkJsonPairs(format: Record<string, unknown>, ctx: z.RefinementCtx): void {
  if (!Array.isArray(format.json)) return;
  format.json.forEach((pair: unknown, i) => {
    if (!isRecord(pair) || typeof pair.key !== 'string' || typeof pair.value !== 'string') return;
    try {
      JSON.parse(`{"${pair.key}": "${pair.value}"}`);
    } catch {
      ctx.addIssue({
        code: 'custom',
        path: ['json', i],
        message: 'key and value must form a valid JSON object {"<key>": "<value>"}',
      });
    }
  });
}

const format = z
  .strictObject({
    plain: z.string().min(1).optional(),
    json: z
      .array(z.strictObject({ key: z.string().min(1), value: z.string().min(1) }))
      .min(1)
      .optional(),
  })
  // Kuma 2.0 takes a format of neither kind (the default format then).
  .superRefine(atMostOneOf(['plain', 'json']), everyViolation)
  .superRefine(checkJsonPairs, everyViolation);

// Kuma 2.0 takes what govalidator calls a file path: absolute, Unix or Windows.
const filePath = z.string().refine((p) => /^\/[^\0]*$/.test(p) || /^[a-zA-Z]:\\/.test(p), {
  message: 'must be an absolute file path',
});

const ADDRESS = /^(?:[A-Za-z][A-Za-z0-9+.-]*:\/\/)?(\[[^\]]*\]|[^:/?#[\]]+)(?::(\d{1,5}))?(?:[/?#].*)?$/;

/** What Kuma 2.0 takes as a TCP log address (govalidator's URL): host, host:port or a URL. */
function isLogAddress(address: string): boolean {
  const m = ADDRESS.exec(address);
  if (!m) return false;
  const [, host, port] = m;
  const hostOk = host.startsWith('[') ? isIP(host.slice(1, -1)) === 6 : hostOrIp.safeParse(host).success;
  return hostOk && (port === undefined || (Number(port) >= 1 && Number(port) <= 65535));
}

const logAddress = z
  .string()
  .refine(isLogAddress, { message: 'must be an address: host, host:port or a URL' });

const backend = z
  .strictObject({
    tcp: z.strictObject({ address: logAddress, format: format.optional() }).optional(),
    file: z.strictObject({ path: filePath, format: format.optional() }).optional(),
  })
  .superRefine(exactlyOneOf(['tcp', 'file']), everyViolation);

const item = (kinds: Parameters<typeof targetRef>[0]) =>
  z.strictObject({ targetRef: targetRef(kinds), default: z.strictObject({ backends: z.array(backend) }) });

const hasItems = (list: unknown): boolean => Array.isArray(list) && list.length > 0;

/** At least one of `to` and `from` has items; a gateway route has no outbound, so no `to` (Kuma 2.0). */
function checkDirections(spec: Record<string, unknown>, ctx: z.RefinementCtx): void {
  if (!hasItems(spec.to) && !hasItems(spec.from)) {
    ctx.addIssue({ code: 'custom', path: [], message: 'requires at least one of "to", "from"' });
  }
  const top = isRecord(spec.targetRef) ? spec.targetRef.kind : undefined;
  if (top === 'MeshGatewayRoute' && hasItems(spec.to)) {
    ctx.addIssue({
      code: 'custom',
      path: ['to'],
      message: 'cannot be set when targetRef.kind is MeshGatewayRoute: a gateway route has no outbound',
    });
  }
}

/** MeshAccessLog (extra-policies.md, Kuma 2.0): access logs of the traffic to and from the proxies of `targetRef`. */
export const meshAccessLog = defineResource({
  kind: 'MeshAccessLog',
  scope: 'mesh',
  path: 'meshaccesslogs',
  spec: z.strictObject({
    spec: z
      .strictObject({
        targetRef: targetRef(TARGET_REF_KINDS),
        // Kuma 2.0 allows only these kinds in `to` and `from`.
        to: z.array(item(['Mesh', 'MeshService'])).optional(),
        from: z.array(item(['Mesh'])).optional(),
      })
      .superRefine(checkDirections, everyViolation),
  }),
  catalogue: { displayName: 'Mesh Access Logs', singularDisplayName: 'Mesh Access Log' },
  isPolicy: true,
  sync: 'down',
  crossMeshList: true,
  // Kuma's access log formats end with a newline.
  multiLineKeys: new Set(['plain']),
});
