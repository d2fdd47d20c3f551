/**
 * Small conversions from our stored values to the protobuf values of Envoy's xDS messages, as plain
 * objects with the protos' own field names (snake_case), ready to be verified and encoded.
 */
import { parseDuration } from '../../util/duration.js';

/** `google.protobuf.Duration` of a duration string (`300ms`, `1.5s`, `1h30m`). */
export function protoDuration(text: string): { seconds: number; nanos: number } {
  const ms = parseDuration(text);
  const seconds = Math.floor(ms / 1000);
  return { seconds, nanos: Math.round((ms - seconds * 1000) * 1e6) };
}

/**
 * `envoy.type.v3.FractionalPercent` of a percentage 0–100 with up to 4 decimals: the smallest of the
 * denominators HUNDRED, TEN_THOUSAND, MILLION that holds it exactly (the reference release turned
 * 0.5 % into 50 %: a fraction is never multiplied by 100 here).
 */
export function fractionalPercent(percentage: number): { numerator: number; denominator: string } {
  const p = Math.min(100, Math.max(0, percentage));
  for (const [denominator, scale] of [
    ['HUNDRED', 1],
    ['TEN_THOUSAND', 100],
    ['MILLION', 10_000],
  ] as const) {
    const n = p * scale;
    if (Math.abs(n - Math.round(n)) < 1e-9) return { numerator: Math.round(n), denominator };
  }
  return { numerator: Math.round(p * 10_000), denominator: 'MILLION' };
}

/** A content fingerprint (FNV-1a, 32 bits, hex) of a JSON-able value. */
export function fingerprint(value: unknown): string {
  const text = JSON.stringify(value);
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}
