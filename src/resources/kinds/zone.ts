import { z } from 'zod';
import { defineResource } from '../descriptor.js';

/** Zone (spec 2.11): a zone of a multi-zone deployment, known to Global. */
export const zone = defineResource({
  kind: 'Zone',
  scope: 'global',
  path: 'zones',
  spec: z.strictObject({ enabled: z.boolean().optional() }),
  globalInsightsKey: 'Zone',
});
