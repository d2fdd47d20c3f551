import { z } from 'zod';
import { defineResource } from '../descriptor.js';
import {
  DATA_SOURCE_TEXT_KEYS,
  dataSource,
  everyViolation,
  isRecord,
  port,
  selectorList,
  serviceTagMap,
  tagMap,
  uint,
  wildcardHostname,
} from '../fragments.js';

const tls = z.strictObject({
  mode: z.enum(['TERMINATE', 'PASSTHROUGH']).optional(),
  certificates: z.array(dataSource).max(2).optional(),
  options: z.strictObject({}).optional(),
});

/** HTTPS and TLS listeners need `tls`; TERMINATE (the default mode) needs 1–2 certificates, PASSTHROUGH none. */
function checkListener(l: Record<string, unknown>, ctx: z.RefinementCtx): void {
  if ((l.protocol === 'HTTPS' || l.protocol === 'TLS') && l.tls === undefined) {
    ctx.addIssue({ code: 'custom', path: ['tls'], message: `has to be set for ${l.protocol} listeners` });
  }
  if (!isRecord(l.tls)) return;
  const certs = Array.isArray(l.tls.certificates) ? l.tls.certificates : [];
  if ((l.tls.mode ?? 'TERMINATE') === 'TERMINATE' && certs.length === 0) {
    ctx.addIssue({
      code: 'custom',
      path: ['tls', 'certificates'],
      message: 'has to have 1 or 2 certificates in TERMINATE mode',
    });
  } else if (l.tls.mode === 'PASSTHROUGH' && certs.length > 0) {
    ctx.addIssue({
      code: 'custom',
      path: ['tls', 'certificates'],
      message: 'must be empty in PASSTHROUGH mode',
    });
  }
}

const listener = z
  .strictObject({
    hostname: wildcardHostname.optional(),
    port,
    protocol: z.enum(['TCP', 'UDP', 'TLS', 'HTTP', 'HTTPS']),
    tags: tagMap.optional(),
    crossMesh: z.boolean().optional(),
    resources: z.strictObject({ connectionLimit: uint.optional() }).optional(),
    tls: tls.optional(),
  })
  .superRefine(checkListener, everyViolation);

/** MeshGateway (extra-policies.md): the listeners of builtin gateway proxies. */
export const meshGateway = defineResource({
  kind: 'MeshGateway',
  scope: 'mesh',
  path: 'meshgateways',
  spec: z.strictObject({
    selectors: selectorList,
    // extra-policies.md: non-empty, and the gateway's own service tag lives here.
    tags: serviceTagMap,
    conf: z.strictObject({ listeners: z.array(listener).min(1) }),
  }),
  catalogue: { displayName: 'Mesh Gateways', singularDisplayName: 'Mesh Gateway' },
  isPolicy: true,
  sync: 'down',
  crossMeshList: true,
  multiLineKeys: new Set(DATA_SOURCE_TEXT_KEYS),
});
