import { z } from 'zod';
import { defineResource } from '../descriptor.js';
import { PROXY_TARGET_REF_KINDS, TARGET_REF_KINDS, targetRef } from '../target-ref.js';

const from = z.strictObject({
  targetRef: targetRef(PROXY_TARGET_REF_KINDS),
  default: z.strictObject({ action: z.enum(['ALLOW', 'DENY', 'ALLOW_WITH_SHADOW_DENY']) }),
});

/** MeshTrafficPermission (extra-policies.md, Kuma 2.0): which clients may reach the proxies of `targetRef`. */
export const meshTrafficPermission = defineResource({
  kind: 'MeshTrafficPermission',
  scope: 'mesh',
  path: 'meshtrafficpermissions',
  spec: z.strictObject({
    spec: z.strictObject({ targetRef: targetRef(TARGET_REF_KINDS), from: z.array(from).min(1) }),
  }),
  catalogue: { displayName: 'Mesh Traffic Permissions', singularDisplayName: 'Mesh Traffic Permission' },
  isPolicy: true,
  sync: 'down',
  crossMeshList: true,
});
