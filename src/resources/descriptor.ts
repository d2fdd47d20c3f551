import type { z } from 'zod';
import { NO_MULTI_LINE_KEYS } from './control-characters.js';

/** Where a kind lives: inside a mesh, or at the top level. */
export type Scope = 'mesh' | 'global';

/** Which way a kind flows between Global and zones (architecture: multi-zone sync). */
export type SyncDirection = 'down' | 'up' | 'none';

/** The policy catalogue entry of a kind (spec 2.18, decisions §9). */
export interface CatalogueEntry {
  displayName: string;
  singularDisplayName: string;
}

/** How a derived (read-only) kind is served: which projection computes it. */
export interface DerivedInfo {
  /** The projection that computes the kind; the runtime binds it to a reader. */
  projection:
    | 'dataplaneOverview'
    | 'meshInsight'
    | 'serviceInsight'
    | 'zoneOverview'
    | 'zoneIngressOverview'
    | 'zoneEgressOverview'
    | 'globalInsights';
  /** The stored kind it is derived from, if any. */
  source?: string;
}

/** Everything the rest of the program needs to know about one kind, declared once. */
export interface ResourceDescriptor {
  /** Registry name, unique (e.g. `GlobalSecret`). */
  kind: string;
  /** The `type` written on the wire (spec 2.10: a global secret is `Secret`). */
  wireType: string;
  /** `type` values accepted in a PUT body. */
  acceptedTypes: readonly string[];
  scope: Scope;
  /** The collection segment of the URL (`traffic-permissions`). */
  path: string;
  /** Other collection segments that mean the same (decisions §5). */
  aliases: readonly string[];
  /** Segments accepted only for single-item reads (spec 4.7: `/zone-ingress/{name}`). */
  itemAliases: readonly string[];
  /** zod schema of the spec fields (everything except type, mesh, name and times); strict. */
  spec: z.ZodType<Record<string, unknown>>;
  /** Derived kinds are computed by projections and never written. */
  derived?: DerivedInfo;
  /** Present when the kind is in the policy catalogue (`/policies`). */
  catalogue?: CatalogueEntry;
  /** True for policy kinds: the catalogue minus ExternalService. */
  isPolicy: boolean;
  /** True for kinds MeshInsight counts under `policies`; defaults to `isPolicy`. */
  countedInMeshInsight: boolean;
  /** True for kinds whose content is secret (auth and masking rules). */
  secret: boolean;
  sync: SyncDirection;
  /** Key in `GlobalInsights.resources`, when the kind is counted there. */
  globalInsightsKey?: string;
  /** Whether `GET /<path>` lists this mesh-scoped kind across all meshes (spec 4.5). */
  crossMeshList: boolean;
  /** Zone-owned kinds are written in zones and synced up (Dataplane, ZoneIngress, ZoneEgress). */
  zoneOwned: boolean;
  /** A zone-owned kind that Global also sends down to the other zones (issue 5: zone ingresses). */
  crossZone?: boolean;
  /** Names of a kind that flows down which never leave Global (keys that mint tokens Global trusts). */
  keepOnGlobal?: RegExp;
  /** A single object at `/<path>` rather than a collection (GlobalInsights). */
  singleton: boolean;
  /**
   * The tag sets a `tag=key:value` list filter matches against (decisions §5: all filters must
   * match one set, e.g. one inbound). Kinds that have it are indexed by tag.
   */
  tagSets?: (resource: Record<string, unknown>) => Array<Record<string, string>>;
  /**
   * Keys whose strings may span lines (tab, LF and CR allowed): raw proxy configuration, PEM text.
   * Every other string of a body is one line, and no string holds other control characters.
   */
  multiLineKeys: ReadonlySet<string>;
}

/** Input of `defineResource`: the required fields plus any overrides of the defaults. */
export type ResourceDefinition = Pick<ResourceDescriptor, 'kind' | 'scope' | 'path' | 'spec'> &
  Partial<Omit<ResourceDescriptor, 'kind' | 'scope' | 'path' | 'spec'>>;

/** Declares a kind; fills in the defaults so descriptors are complete plain data. */
export function defineResource(def: ResourceDefinition): ResourceDescriptor {
  return {
    wireType: def.wireType ?? def.kind,
    acceptedTypes: def.acceptedTypes ?? [def.wireType ?? def.kind],
    aliases: def.aliases ?? [],
    itemAliases: def.itemAliases ?? [],
    isPolicy: def.isPolicy ?? false,
    countedInMeshInsight: def.countedInMeshInsight ?? def.isPolicy ?? false,
    secret: def.secret ?? false,
    sync: def.sync ?? 'none',
    crossMeshList: def.crossMeshList ?? false,
    zoneOwned: def.zoneOwned ?? false,
    singleton: def.singleton ?? false,
    multiLineKeys: def.multiLineKeys ?? NO_MULTI_LINE_KEYS,
    ...def,
  };
}
