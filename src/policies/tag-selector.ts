/** The wildcard value of a selector: any value of the key matches (spec 2.1). */
export const MATCH_ALL = '*';

/** A selector's rank (decisions §10): more tags wins, then more exact values. */
export interface Rank {
  exact: number;
  wildcard: number;
}

/** The rank of no selector: below every selector with a tag. */
export const NO_RANK: Rank = { exact: 0, wildcard: 0 };

/** True when every key of `selector` is one of `tags`' own, with an equal value or the selector's value `*`. */
export function tagSelectorMatches(
  selector: Readonly<Record<string, string>>,
  tags: Readonly<Record<string, string>>,
): boolean {
  for (const key in selector) {
    const have = tags[key];
    // Tag values are strings: anything else (undefined, or what every object inherits, such as
    // `constructor`) is a tag the set does not have.
    if (typeof have !== 'string') return false;
    const want = selector[key];
    if (want !== MATCH_ALL && want !== have) return false;
  }
  return true;
}

/** The rank of one selector: its exact and wildcard values counted. */
export function rankOf(selector: Readonly<Record<string, string>>): Rank {
  let exact = 0;
  let wildcard = 0;
  for (const key in selector) {
    if (selector[key] === MATCH_ALL) wildcard++;
    else exact++;
  }
  return { exact, wildcard };
}

/** Positive when `a` ranks above `b`: by number of tags, then by number of exact values. */
export function compareRanks(a: Rank, b: Rank): number {
  const total = a.exact + a.wildcard - (b.exact + b.wildcard);
  return total !== 0 ? total : a.exact - b.exact;
}

/** The rank of a source+destination pair: the sum of both (decisions §10). */
export function combineRanks(a: Rank, b: Rank): Rank {
  return { exact: a.exact + b.exact, wildcard: a.wildcard + b.wildcard };
}
