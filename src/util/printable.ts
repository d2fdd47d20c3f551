// DEL, C1 controls, the line and paragraph separators, and the bidi embeddings, overrides and
// isolates (U+202A-U+202E, U+2066-U+2069) that reorder how text shows; with the C0 controls below.
const BEYOND_C0 = '\\u007f-\\u009f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069';
const REFUSED = `\\u0000-\\u001f${BEYOND_C0}`;

/** A character that no one-line string may hold (names, hosts, paths, tags). */
export const NOT_IN_LINE = new RegExp(`[${REFUSED}]`);

/** A character that no multi-line text may hold: as `NOT_IN_LINE`, but tab, LF and CR are allowed. */
export const NOT_IN_TEXT = new RegExp(`[\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f${BEYOND_C0}]`);

const ALL_REFUSED = new RegExp(`[${REFUSED}]`, 'g');

/** `U+202E`: how a message names a character. */
export const codePointOf = (c: string): string =>
  `U+${(c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;

/** `s` with every character of `NOT_IN_LINE` written as `\uXXXX`, safe to put in a message or a log line. */
export function printable(s: string): string {
  return NOT_IN_LINE.test(s)
    ? s.replace(ALL_REFUSED, (c) => `\\u${(c.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`)
    : s;
}
