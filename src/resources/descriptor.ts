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

/** What a kind's spec schema parses to: the spec fields, flat (everything but the meta fields). */
export type Spec = Record<string, unknown>;

/**
 * Everything the rest of the program needs to know about one kind, declared once. `Schema` is the
 * kind's own spec schema, so a kind's descriptor carries its spec type ({@link SpecOf}); a list of
 * kinds of different schemas (the registry) holds them as `ResourceDescriptor`.
 */
export interface ResourceDescriptor<Schema extends z.ZodType<Spec> = z.ZodType<Spec>> {
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
  spec: Schema;
  /** Derived kinds are computed by projections and never written. */
  derived?: DerivedInfo;
  /** Present when the kind is in the policy catalogue (`/policies`). */
  catalogue?: CatalogueEntry;
  /** True for policy kinds: the catalogue minus ExternalService. */
  isPolicy: boolean;
  /**
   * A policy that serves proxies rather than shaping them (a gateway): its `…/{name}/dataplanes`
   * lists the proxies its selectors select, not the proxies it affects.
   */
  selectsProxies: boolean;
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
  /** A zone-owned kind that Global also sends down to the other zones (zone ingresses). */
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

/** The spec type of a kind: what its schema parses to (`SpecOf<typeof faultInjection>`). */
export type SpecOf<D extends ResourceDescriptor> = z.output<D['spec']>;

/** The fields every stored resource has beside its spec fields (decisions §2). */
export interface ResourceMeta {
  type: string;
  name: string;
  mesh?: string;
  creationTime: string;
  modificationTime: string;
}

/** A stored resource of a kind in its wire form: the meta fields and the kind's spec fields, flat. */
export type ResourceOf<D extends ResourceDescriptor> = ResourceMeta & SpecOf<D>;

/**
 * A stored resource of `desc`'s kind, typed by its schema. The write path stores only specs that
 * passed the kind's schema (a `ValidatedSpec`), so what is read back has the schema's shape; a
 * resource of another kind is refused here, since no schema vouches for it.
 */
export function resourceOf<D extends ResourceDescriptor>(desc: D, stored: ResourceMeta): ResourceOf<D> {
  if (stored.type !== desc.wireType) {
    throw new Error(`a ${stored.type} read as a ${desc.wireType}`);
  }
  return stored as ResourceOf<D>;
}

/** Input of `defineResource`: the required fields plus any overrides of the defaults. */
export type ResourceDefinition<Schema extends z.ZodType<Spec> = z.ZodType<Spec>> = Pick<
  ResourceDescriptor<Schema>,
  'kind' | 'scope' | 'path' | 'spec'
> &
  Partial<Omit<ResourceDescriptor<Schema>, 'kind' | 'scope' | 'path' | 'spec'>>;

/** Declares a kind; fills in the defaults so descriptors are complete plain data, typed by the spec schema. */
export function defineResource<Schema extends z.ZodType<Spec>>(
  def: ResourceDefinition<Schema>,
): ResourceDescriptor<Schema> {
  return {
    wireType: def.wireType ?? def.kind,
    acceptedTypes: def.acceptedTypes ?? [def.wireType ?? def.kind],
    aliases: def.aliases ?? [],
    itemAliases: def.itemAliases ?? [],
    isPolicy: def.isPolicy ?? false,
    selectsProxies: def.selectsProxies ?? false,
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
