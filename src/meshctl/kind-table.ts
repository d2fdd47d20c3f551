import { ALL_KINDS } from '../resources/registry.js';

/** What meshctl knows of a kind: the registry's descriptor without its zod schema. */
export interface KindInfo {
  kind: string;
  wireType: string;
  acceptedTypes: readonly string[];
  scope: 'mesh' | 'global';
  path: string;
  aliases: readonly string[];
  itemAliases: readonly string[];
  derived: boolean;
  singleton: boolean;
  crossMeshList: boolean;
  /** A policy: `…/{kind}/{name}/dataplanes` lists the proxies it affects (spec 4.9). */
  isPolicy: boolean;
  /** The spec sits under a `spec` key (targetRef policies); otherwise its fields are top-level. */
  nestedSpec: boolean;
  /** The tag sets of a resource (data planes), shown in a TAGS column; absent for other kinds. */
  tagSets?: (resource: Record<string, unknown>) => Array<Record<string, string>>;
}

// scripts/build.mjs replaces this module in dist with the same table as a literal, so that the
// CLI does not load the zod schemas of every kind (see `kindTableModule` there).
/** Every kind of the registry, in registry order. */
export const KIND_TABLE: readonly KindInfo[] = ALL_KINDS.map((d) => ({
  kind: d.kind,
  wireType: d.wireType,
  acceptedTypes: d.acceptedTypes,
  scope: d.scope,
  path: d.path,
  aliases: d.aliases,
  itemAliases: d.itemAliases,
  derived: d.derived !== undefined,
  singleton: d.singleton,
  crossMeshList: d.crossMeshList,
  isPolicy: d.isPolicy,
  nestedSpec: 'shape' in d.spec && 'spec' in (d.spec as { shape: Record<string, unknown> }).shape,
  ...(d.tagSets ? { tagSets: d.tagSets } : {}),
}));
