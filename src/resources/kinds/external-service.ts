import { z } from 'zod';
import { defineResource } from '../descriptor.js';
import { DATA_SOURCE_TEXT_KEYS, dataSource, hostPort, serviceTagMap } from '../fragments.js';

// Spec 2.8: `tls` may be empty; `caCert.inline` is base64 (the other data source forms are Kuma's).
const tls = z.strictObject({
  enabled: z.boolean().optional(),
  caCert: dataSource.optional(),
  clientCert: dataSource.optional(),
  clientKey: dataSource.optional(),
  allowRenegotiation: z.boolean().optional(),
  serverName: z.string().min(1).optional(),
});

/** ExternalService (spec 2.8): a service outside the mesh; in the catalogue, not a policy kind. */
export const externalService = defineResource({
  kind: 'ExternalService',
  scope: 'mesh',
  path: 'external-services',
  tagSets: (r) => (r.tags ? [r.tags as Record<string, string>] : []),
  spec: z.strictObject({
    networking: z.strictObject({ address: hostPort, tls: tls.optional() }),
    tags: serviceTagMap,
  }),
  catalogue: { displayName: 'External Services', singularDisplayName: 'External Service' },
  isPolicy: false,
  // The reference counts it in MeshInsight.policies too, and the GUI's sidebar reads it there.
  countedInMeshInsight: true,
  sync: 'down',
  crossMeshList: true,
  multiLineKeys: new Set(DATA_SOURCE_TEXT_KEYS),
});
