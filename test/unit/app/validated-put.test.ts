import { describe, expect, expectTypeOf, it } from 'vitest';
import type { PutRequest } from '../../../src/app/commands.js';
import type { Actor } from '../../../src/events/types.js';
import type { SpecOf } from '../../../src/resources/descriptor.js';
import { globalSecret, secret } from '../../../src/resources/kinds/secret.js';
import { zone } from '../../../src/resources/kinds/zone.js';
import { validateBody, validSpec, type ValidatedSpec } from '../../../src/resources/validate.js';
import { AppError } from '../../../src/util/errors.js';

// The type assertions and the @ts-expect-error lines are checked by tsc (`npm run lint`).

const actor: Actor = { name: 'alice', groups: ['ops'], address: '127.0.0.1' };

/** The PUT of Zone `zone-1` with `spec`, as a caller of `commands.put` writes it. */
const zonePut = (spec: PutRequest['spec']): PutRequest => ({ kind: 'Zone', name: 'zone-1', spec, actor });

describe('the write path takes only validated specs', () => {
  it('a spec that did not go through validation is not a PutRequest spec', () => {
    // @ts-expect-error a plain object has not been validated: commands.put refuses it at compile time
    const unvalidated = zonePut({ enabled: true });
    expect(unvalidated.spec).toEqual({ enabled: true });
    const checked = validateBody(zone, { type: 'Zone', name: 'zone-1', enabled: true }, { name: 'zone-1' });
    if (!checked.ok) throw new Error(JSON.stringify(checked.causes));
    expect(zonePut(checked.spec).spec).toEqual({ enabled: true });
  });

  it("what validateBody yields is typed by the kind's schema", () => {
    const checked = validateBody(zone, { type: 'Zone', name: 'zone-1', enabled: false }, { name: 'zone-1' });
    if (!checked.ok) throw new Error(JSON.stringify(checked.causes));
    expectTypeOf(checked.spec).toEqualTypeOf<ValidatedSpec<SpecOf<typeof zone>>>();
    expectTypeOf(checked.spec.enabled).toEqualTypeOf<boolean | undefined>();
    expect(checked.spec.enabled).toBe(false);
  });

  it('validSpec checks a spec the program writes itself as the PUT of that resource', () => {
    const spec = validSpec(secret, { mesh: 'default', name: 'key-1' }, { data: 'a2V5' });
    expectTypeOf(spec).toEqualTypeOf<ValidatedSpec<SpecOf<typeof secret>>>();
    expect(spec).toEqual({ data: 'a2V5' });
    expect(zonePut(validSpec(zone, { name: 'zone-1' }, { enabled: true })).spec).toEqual({ enabled: true });
  });

  it('validSpec refuses an invalid spec with INVALID_BODY and the causes, as a PUT would', () => {
    let thrown: unknown;
    try {
      validSpec(globalSecret, { name: 'user-token-signing-key-1' }, { data: 'not base64!' });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(AppError);
    expect(thrown).toMatchObject({
      code: 'INVALID_BODY',
      title: 'Resource is not valid',
      message: 'the Secret "user-token-signing-key-1" written by mesh-cp itself is not valid',
      causes: [{ field: 'data', message: 'must be valid base64' }],
    });
    expect(() => validSpec(secret, { mesh: 'default', name: 'Bad Name' }, { data: 'a2V5' })).toThrow(
      'the Secret "Bad Name" written by mesh-cp itself is not valid',
    );
  });
});
