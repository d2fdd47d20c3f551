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
  ...(d.tagSets ? { tagSets: d.tagSets } : {}),
}));
