import { expect, it } from 'vitest';
import { parse } from 'yaml';
import type { ResourceDescriptor } from '../../../src/resources/descriptor.js';
import { causesOf, expectValid } from '../../unit/resources/helpers.js';

/** One violation as the reference reports it: our field path and Kuma's message. */
export type Violation = readonly [field: string, kumaMessage: string];

/**
 * Kuma's messages and the words our message at the same field must contain to say the same thing.
 * The first pattern that matches Kuma's message decides.
 */
const WORDING: ReadonlyArray<readonly [RegExp, RegExp]> = [
  // Ours only, where a case says we differ on purpose: Kuma's YAML reader drops unknown fields.
  [/^unknown field$/, /^unknown field$/],
  // Selectors (Kuma's ValidateSelectors).
  [/^must have at least one element$/, /at least one element/],
  [/^must have at least one tag$/, /at least one tag/],
  [/^tag name must be non-empty$/, /tag name must be non-empty/],
  [/^tag name must consist of/, /tag name must consist of letters, digits/],
  [/^tag value must be non-empty$/, /tag value must be non-empty/],
  [/^tag value must consist of/, /tag value must be "\*" or consist of letters, digits/],
  [/^mandatory tag "mesh.io\/service" is missing$/, /mandatory tag "mesh\.io\/service"/],
  [/^must consist of exactly one tag "mesh.io\/service"$/, /exactly one tag "mesh\.io\/service"/],
  [/^tag "(.+)" is not allowed$/, /tag ".+" is not allowed/],
  [/^protocol must be specified$/, /protocol must be specified/],
  [/^must be one of the \[(.+)\]$/, /must be one of the \[http, http2, grpc\]/],
  // Absent or empty fields.
  [/^cannot be empty$/, /cannot be empty/],
  [/^field cannot be empty$/, /cannot be empty|requires at least one of/],
  [/^has to be defined$/, /cannot be empty/],
  [/^needs to be defined$/, /cannot be empty/],
  [/^has to be defined and cannot be empty$/, /cannot be empty/],
  [/^(requests|interval|key|value) must be set$/, /cannot be empty/],
  [/^must have conf$/, /cannot be empty/],
  [/^can't be empty$/, /requires at least one of/],
  [/^cannot be defined$/, /cannot be set/],
  // Values.
  [/^has to be in \[0.0 - 100.0\] range$/, /range 0(\.0)?-100(\.0)?|less than or equal to 100/],
  [/^must be in range \[0.0 - 100.0\]$/, /range 0(\.0)?-100(\.0)?|less than or equal to 100/],
  [/^must be in range \[100, 600\)$/, /greater than or equal to 100|less than or equal to 599/],
  [/^http status code is incorrect$/, /known HTTP status/],
  [/^has to be in kbps\/mbps\/gbps units$/, /kbps, mbps or gbps/],
  [/^must have a positive value$/, /greater than 0|at least 1|greater than or equal to 1/],
  // Kuma reads an absent number as 0: where it says "greater than 0" of one, we say it is missing.
  [/^has to be greater than 0( when defined)?$/, /greater than 0|greater than or equal to 1|cannot be empty/],
  [/^must have a valid hash function$/, /must be one of "XX_HASH", "MURMUR_HASH_2"/],
  // One of several fields.
  [/^must have at least one of the faults configured$/, /requires at least one fault/],
  [
    /^must have at least one of the detector or threshold configured$/,
    /requires at least one of "detectors", "thresholds"/,
  ],
  [/^at least one timeout in section has to be defined$/, /requires at least one of/],
  [/^missing protocol \[grpc\|http\|tcp\] configuration$/, /requires at least one of "http", "grpc", "tcp"/],
  [/^requires either "destination" or "split"$/, /requires one of "split", "destination"/],
  [/^"split" cannot be defined at the same time as "destination"$/, /only one of "split", "destination"/],
  [/^either "rewritePrefix" or "regex" has to be set$/, /requires one of "rewritePrefix", "regex"/],
  [/^either "value" or "fromPath" has to be set$/, /requires one of "value", "fromPath"/],
  [
    /^must be present and contain at least one of the elements/,
    /requires at least one of "method", "path", "headers"/,
  ],
  [/^cannot be empty. Available options/, /requires one of "prefix", "exact", "regex"/],
  [/^http and tcp cannot be defined at the same time$/, /only one of "tcp", "http"/],
  [/^there must be at least one split entry with weight above 0$/, /weight above 0/],
  [/^must contain at least one element$/, /at least one element/],
  // TrafficRoute's header changes.
  [/^host header and HTTP\/2 pseudo-headers are not allowed/, /host header and HTTP\/2 pseudo-headers/],
  [/^can only be set when .http.match.path.prefix is not empty$/, /match\.path\.prefix/],
  // Retry.
  [/^retriableStatusCodes cannot be empty when this option is specified$/, /retriableStatusCodes/],
  [/^repeated value "(.+)" at indexes/, /repeated value/],
  // VirtualOutbound.
  [/^name is already used$/, /already used/],
  [/^must be a valid tag name$/, /tag key/],
  [/^must consist of alphanumeric characters to be used as a gotemplate key$/, /letters and digits/],
  [/^must contain a parameter with mesh.io\/service as a tagKey$/, /"mesh\.io\/service" as its tagKey/],
  [/^template pre evaluation failed/, /template/],
  // ProxyTemplate.
  [/^invalid operation. Available operations/, /must be one of/],
  [/^profile not found/, /profile not found/],
  [/^native Envoy resource is not valid/, /not valid/],
  [/^cannot be empty. You need to pick a filter (before|after) which/, /filter (before|after) which/],
];

/** The pattern our message must match for Kuma's `message`. */
function ourWording(message: string): RegExp {
  const found = WORDING.find(([kuma]) => kuma.test(message));
  if (found === undefined)
    throw new Error(`no wording of ours is known for Kuma's ${JSON.stringify(message)}`);
  return found[1];
}

/** The spec fields of a reference YAML (an empty document is an empty spec). */
function specOf(yaml: string): Record<string, unknown> {
  const parsed: unknown = parse(yaml);
  return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
}

/** A case of "should pass validation": the reference's YAML is accepted. */
export function accepts(desc: ResourceDescriptor, name: string, yaml: string): void {
  it(name, () => {
    expectValid(desc, specOf(yaml));
  });
}

/**
 * A refusal: the set of fields with a cause is exactly the reference's, and at each field every
 * reference message has a cause of ours saying the same thing.
 */
export function refuses(
  desc: ResourceDescriptor,
  name: string,
  yaml: string,
  violations: readonly Violation[],
): void {
  it(name, () => {
    const causes = causesOf(desc, specOf(yaml));
    const fields = (list: readonly string[]): string[] => [...new Set(list)].sort();
    expect(fields(causes.map((c) => c.field))).toEqual(fields(violations.map((v) => v[0])));
    for (const [field, kumaMessage] of violations) {
      const ours = causes.filter((c) => c.field === field).map((c) => c.message);
      expect(ours, `${field}: Kuma says ${JSON.stringify(kumaMessage)}`).toContainEqual(
        expect.stringMatching(ourWording(kumaMessage)),
      );
    }
  });
}
