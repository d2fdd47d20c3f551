import { z } from 'zod';
import { defineResource } from '../descriptor.js';

/** Derived kinds are never written: no spec fields. */
const none = z.strictObject({});

/** DataplaneOverview (spec 2.5): a Dataplane with its insight; spec 4.4 also writes `dataplane+insights`. */
export const dataplaneOverview = defineResource({
  kind: 'DataplaneOverview',
  scope: 'mesh',
  path: 'dataplanes+insights',
  aliases: ['dataplane+insights'],
  spec: none,
  derived: { projection: 'dataplaneOverview', source: 'Dataplane' },
  crossMeshList: true,
});

/** MeshInsight (spec 2.3): counts of one mesh, keyed by mesh name. */
export const meshInsight = defineResource({
  kind: 'MeshInsight',
  scope: 'global',
  path: 'mesh-insights',
  spec: none,
  derived: { projection: 'meshInsight' },
});

/** ServiceInsight (spec 2.9): status of one service of a mesh. */
export const serviceInsight = defineResource({
  kind: 'ServiceInsight',
  scope: 'mesh',
  path: 'service-insights',
  spec: none,
  derived: { projection: 'serviceInsight' },
  crossMeshList: true,
});

/** GlobalInsights (spec 2.16): one object counting global resources. */
export const globalInsights = defineResource({
  kind: 'GlobalInsights',
  scope: 'global',
  path: 'global-insights',
  spec: none,
  derived: { projection: 'globalInsights' },
  singleton: true,
});

/** ZoneOverview (spec 2.12): a Zone with its insight. */
export const zoneOverview = defineResource({
  kind: 'ZoneOverview',
  scope: 'global',
  path: 'zones+insights',
  spec: none,
  derived: { projection: 'zoneOverview', source: 'Zone' },
});

/** ZoneIngressOverview (spec 2.14): a ZoneIngress with its insight. */
export const zoneIngressOverview = defineResource({
  kind: 'ZoneIngressOverview',
  scope: 'global',
  path: 'zoneingresses+insights',
  spec: none,
  derived: { projection: 'zoneIngressOverview', source: 'ZoneIngress' },
});

/** ZoneEgressOverview (spec 2.15): a ZoneEgress with its insight. */
export const zoneEgressOverview = defineResource({
  kind: 'ZoneEgressOverview',
  scope: 'global',
  path: 'zoneegressoverviews',
  spec: none,
  derived: { projection: 'zoneEgressOverview', source: 'ZoneEgress' },
});
