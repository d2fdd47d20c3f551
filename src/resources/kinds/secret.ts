import { z } from 'zod';
import { defineResource } from '../descriptor.js';
import { base64 } from '../fragments.js';

const spec = z.strictObject({ data: base64.min(1) });

/** Secret (spec 2.10): base64 data owned by one mesh; may be written before its mesh (decisions §3). */
export const secret = defineResource({
  kind: 'Secret',
  scope: 'mesh',
  path: 'secrets',
  spec,
  secret: true,
  sync: 'down',
  crossMeshList: true,
});

/** GlobalSecret (spec 2.10, decisions §2): `type` is `Secret` on the wire; PUT accepts either name. */
export const globalSecret = defineResource({
  kind: 'GlobalSecret',
  wireType: 'Secret',
  acceptedTypes: ['Secret', 'GlobalSecret'],
  scope: 'global',
  path: 'global-secrets',
  spec,
  secret: true,
  sync: 'down',
  // A zone must not be able to mint zone or user tokens that Global accepts: those keys stay on Global.
  keepOnGlobal: /^(zone|user)-token-signing-key-\d+$/,
  globalInsightsKey: 'GlobalSecret',
});
