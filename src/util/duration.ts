const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

const WHOLE = /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/;
const PART = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g;

/** Milliseconds of a duration as users write it (decisions §2: `300ms`, `1.5s`, `1h30m`); NaN when it is not one. */
export function parseDuration(text: string): number {
  if (!WHOLE.test(text)) return Number.NaN;
  let ms = 0;
  for (const [, amount, unit] of text.matchAll(PART)) ms += Number(amount) * UNIT_MS[unit];
  return ms;
}
