import { z } from 'zod';
import { duration, resourceName, tagKey } from '../resources/fragments.js';
import { controlCharacterCauses, mergeCauses } from '../resources/control-characters.js';
import { issuesToCauses, messageMap } from '../resources/validate.js';
import { AppError } from '../util/errors.js';
import { parseDuration } from '../util/duration.js';
import type { TokenType } from './token-types.js';

/** The longest `validFor` a token may have: 10 years (the spec sets none; beyond it `exp` stops being a usable date). */
export const MAX_VALID_FOR = '87600h';
const MAX_VALID_FOR_MS = parseDuration(MAX_VALID_FOR);

/** The shortest `validFor`: a token's `exp` is in whole seconds, so below one it is expired when issued. */
export const MIN_VALID_FOR = '1s';
const MIN_VALID_FOR_MS = parseDuration(MIN_VALID_FOR);

// NaN (not a duration) is the regex's to report: one cause per violation. Below a second is refused
// rather than rounded up: the caller asked for something else than it would get (500ms for 500m?).
const positiveDuration = duration
  .refine((v) => !(parseDuration(v) <= 0), { message: 'must be longer than 0' })
  .refine((v) => !(parseDuration(v) > 0 && parseDuration(v) < MIN_VALID_FOR_MS), {
    message: `must be at least ${MIN_VALID_FOR} (a token expires on a whole second)`,
  })
  .refine((v) => !(parseDuration(v) > MAX_VALID_FOR_MS), {
    message: `must be at most ${MAX_VALID_FOR} (10 years)`,
  });

const label = z
  .string()
  .min(1)
  .max(253)
  .regex(/^[^\s\p{C}]*$/u, { message: 'must not contain white space or control characters' });

/** The zone token scopes (what a zone token lets its bearer be: its control plane, ingress, egress). */
export const ZONE_SCOPES = ['cp', 'egress', 'ingress'] as const;

/** The request body of each token endpoint (spec 4.8 for data plane and zone ingress). */
export const TOKEN_REQUESTS = {
  user: z.strictObject({
    name: label,
    groups: z.array(label).default([]),
    validFor: positiveDuration,
  }),
  // Spec 4.8 lists no validFor for data plane tokens: without one the token does not expire.
  dataplane: z.strictObject({
    name: resourceName.optional(),
    mesh: resourceName,
    tags: z.record(tagKey, z.array(z.string().min(1))).default({}),
    type: z.enum(['dataplane', 'ingress', 'egress']).default('dataplane'),
    validFor: positiveDuration.optional(),
  }),
  zone: z.strictObject({
    zone: resourceName,
    scope: z
      .array(z.enum(ZONE_SCOPES))
      .min(1)
      .default(() => [...ZONE_SCOPES]),
    validFor: positiveDuration,
  }),
  'zone-ingress': z.strictObject({
    zone: resourceName,
    validFor: positiveDuration,
  }),
} satisfies Record<TokenType, z.ZodType>;

/** A valid request of one token type. */
export type TokenRequest<T extends TokenType> = z.infer<(typeof TOKEN_REQUESTS)[T]>;

/** Validates a token request body; throws 400 with one cause per violation (decisions §4). */
export function parseTokenRequest<T extends TokenType>(type: T, body: unknown): TokenRequest<T> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new AppError('INVALID_BODY', 'Invalid token request', 'the request body must be a JSON object', [
      { field: '', message: 'body must be a JSON object' },
    ]);
  }
  const characterCauses = controlCharacterCauses(body);
  const parsed = TOKEN_REQUESTS[type].safeParse(body, { reportInput: true, error: messageMap });
  if (!parsed.success || characterCauses.length > 0) {
    throw new AppError(
      'INVALID_BODY',
      'Invalid token request',
      `the ${type} token request has invalid fields`,
      mergeCauses(characterCauses, parsed.success ? [] : issuesToCauses(parsed.error.issues)),
    );
  }
  return parsed.data as TokenRequest<T>;
}
