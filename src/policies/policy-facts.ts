/**
 * What matching reads of one policy version, derived once per version instead of at every proxy
 * and place it is matched against: its selectors as arrays of keys and values with their ranks as
 * numbers, and its creation time parsed. Stored policies are immutable (a write brings a new
 * object), so the facts are kept per object and dropped with it.
 *
 * The matching here is `tagSelectorMatches` and `bestSelectorRank` (tag-selector.ts,
 * select-policies.ts) without their allocations; ranks are numbers, tags × 2^16 + exact values, so
 * a higher number is a higher rank (decisions §10: more tags, then more exact values) and a
 * source + destination pair ranks by the sum.
 */
import { SERVICE_TAG } from '../resources/fragments.js';
import type { PolicyResource, Selector } from './policy-resource.js';
import { MATCH_ALL, rankOf, type Rank } from './tag-selector.js';

type Tags = Readonly<Record<string, string>>;

/** One `match` of a selector list: its keys and wanted values (`*`: any) in order, and its rank. */
export interface CompiledSelector {
  keys: readonly string[];
  values: readonly string[];
  rank: number;
}

/** A policy version placed at some rank: what the engine's cells hold (never changed once made). */
export interface Placed {
  policy: PolicyResource;
  rank: number;
  /** The policy's creation time (`PolicyFacts.time`), what breaks a tie of ranks. */
  time: number;
}

/**
 * A list of selectors (`sources`, `destinations`, `selectors`) compiled. A long one is also indexed
 * by the service it requires (`mesh.io/service` with a value other than `*`), so that matching a
 * tag set reads only the selectors of its service and those that require none.
 */
export interface SelectorList {
  list: readonly CompiledSelector[];
  byService?: ReadonlyMap<string, readonly CompiledSelector[]>;
  /** With `byService`: the selectors that require no service. */
  anyService?: readonly CompiledSelector[];
}

/** Lists longer than this are indexed by service. */
const INDEXED = 8;

/** What matching reads of one policy version. */
export interface PolicyFacts {
  sources: SelectorList;
  destinations: SelectorList;
  selectors: SelectorList;
  /** `Date.parse` of its creation time (NaN when absent or unparseable). */
  time: number;
  /** The highest rank among its sources, 0 without any: the order of inbound kinds that list every match. */
  sourceOrder: number;
  /** Its placements by rank, made once and shared by every place where it ranks the same. */
  placed: Map<number, Placed>;
}

/** No selector matches: below every rank (the rank of an empty selector is 0). */
export const NO_MATCH = -1;

const TAGS = 1 << 16;

/** A rank as a number: tags × 2^16 + exact values. */
export const rankNumber = (r: Rank): number => (r.exact + r.wildcard) * TAGS + r.exact;

const facts = new WeakMap<PolicyResource, PolicyFacts>();

/** The facts of one policy version (computed on first use, kept while the object lives). */
export function policyFacts(policy: PolicyResource): PolicyFacts {
  let f = facts.get(policy);
  if (f === undefined) {
    const sources = compile(policy.sources);
    let sourceOrder = 0;
    for (const s of sources.list) if (s.rank > sourceOrder) sourceOrder = s.rank;
    f = {
      sources,
      destinations: compile(policy.destinations),
      selectors: compile(policy.selectors),
      time: Date.parse(policy.creationTime),
      sourceOrder,
      placed: new Map(),
    };
    facts.set(policy, f);
  }
  return f;
}

/**
 * The policy placed at `rank`, its facts at hand: one object per policy version and rank (a policy
 * ranks the same at most places).
 */
export function placedIn(facts: PolicyFacts, policy: PolicyResource, rank: number): Placed {
  let p = facts.placed.get(rank);
  if (p === undefined) facts.placed.set(rank, (p = { policy, rank, time: facts.time }));
  return p;
}

const compiled = new WeakMap<object, CompiledSelector>();
const EMPTY_SELECTOR: CompiledSelector = { keys: [], values: [], rank: 0 };

/** One `match` compiled, once per object (an absent one is empty: it matches every tag set). */
export function compileSelector(match: Readonly<Record<string, string>> | undefined): CompiledSelector {
  if (match === undefined || match === null) return EMPTY_SELECTOR;
  let c = compiled.get(match);
  if (c === undefined) {
    c = { keys: Object.keys(match), values: Object.values(match), rank: rankNumber(rankOf(match)) };
    compiled.set(match, c);
  }
  return c;
}

function compile(selectors: readonly Selector[] | undefined): SelectorList {
  const list = (selectors ?? []).map(({ match }) => compileSelector(match));
  if (list.length <= INDEXED) return { list };
  const byService = new Map<string, CompiledSelector[]>();
  const anyService: CompiledSelector[] = [];
  for (const s of list) {
    const service = s.values[s.keys.indexOf(SERVICE_TAG)];
    if (service === undefined || service === MATCH_ALL) anyService.push(s);
    else if (byService.has(service)) byService.get(service)?.push(s);
    else byService.set(service, [s]);
  }
  return { list, byService, anyService };
}

/** True when `tags` has every key of `s` with its wanted value (or any value for `*`): `tagSelectorMatches`. */
export function matches(s: CompiledSelector, tags: Tags): boolean {
  const { keys, values } = s;
  for (let i = 0; i < keys.length; i++) {
    const have = tags[keys[i]];
    if (typeof have !== 'string') return false; // absent, or inherited by every object (`constructor`)
    const want = values[i];
    if (want !== MATCH_ALL && want !== have) return false;
  }
  return true;
}

/** The higher of `best` and the highest rank among `selectors` that match `tags`. */
function bestOf(selectors: readonly CompiledSelector[], tags: Tags, best: number): number {
  for (const s of selectors) if (s.rank > best && matches(s, tags)) best = s.rank;
  return best;
}

/** The highest rank among the selectors of `selectors` that match `tags`, or `NO_MATCH`. */
export function rankFor(selectors: SelectorList, tags: Tags): number {
  const { byService, anyService } = selectors;
  if (byService === undefined || anyService === undefined) return bestOf(selectors.list, tags, NO_MATCH);
  const service = tags[SERVICE_TAG];
  const own = service === undefined ? undefined : byService.get(service);
  return bestOf(anyService, tags, own ? bestOf(own, tags, NO_MATCH) : NO_MATCH);
}

/** The highest rank among the selectors of `selectors` that match one of `tagSets`, or `NO_MATCH`. */
export function bestRank(selectors: SelectorList, tagSets: readonly Tags[]): number {
  let best = NO_MATCH;
  for (const tags of tagSets) {
    const r = rankFor(selectors, tags);
    if (r > best) best = r;
  }
  return best;
}

/** The higher of `best` and the highest rank among `selectors` that match `{mesh.io/service: service}`. */
function bestForService(selectors: readonly CompiledSelector[], service: string, best: number): number {
  for (const s of selectors) {
    if (s.rank <= best) continue;
    const { keys, values } = s;
    let ok = true;
    for (let i = 0; i < keys.length && ok; i++) {
      const have = keys[i] === SERVICE_TAG ? service : undefined; // the one tag of that set
      ok = have !== undefined && (values[i] === MATCH_ALL || values[i] === have);
    }
    if (ok) best = s.rank;
  }
  return best;
}

/**
 * `rankFor` against the one tag set `{mesh.io/service: service}` (what the destinations of outbound
 * and service kinds match), without building it.
 */
export function serviceRank(selectors: SelectorList, service: string): number {
  const { byService, anyService } = selectors;
  if (byService === undefined || anyService === undefined)
    return bestForService(selectors.list, service, NO_MATCH);
  const own = byService.get(service);
  return bestForService(anyService, service, own ? bestForService(own, service, NO_MATCH) : NO_MATCH);
}
