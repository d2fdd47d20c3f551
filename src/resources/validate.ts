import type { z } from 'zod';
import { AppError } from '../util/errors.js';
import { printable } from '../util/printable.js';
import { controlCharacterCauses, mergeCauses } from './control-characters.js';
import type { ResourceDescriptor, Spec } from './descriptor.js';
import { formatPath } from './field-path.js';
import { resourceName } from './fragments.js';

/** One violation: the exact field path (decisions §4) and what is wrong. */
export interface Cause {
  field: string;
  message: string;
}

export { formatPath } from './field-path.js';

/**
 * Whether an `invalid_type` issue is about an absent value. Parses made with `reportInput` (as
 * `validateBody` does) carry the input; without it, zod's own message is the only hint.
 */
function isMissing(issue: z.core.$ZodIssueInvalidType): boolean {
  return 'input' in issue ? issue.input === undefined : issue.message.endsWith('received undefined');
}

const A_OR_AN: Record<string, string> = {
  int: 'an integer',
  object: 'an object',
  record: 'an object',
  array: 'an array',
};

const list = (values: readonly unknown[]): string => values.map((v) => JSON.stringify(v)).join(', ');

/**
 * Messages for zod's built-in issues in the words of the API (decisions §4). Used per parse, so a
 * message written on a schema still wins; `undefined` leaves zod's default.
 */
export const messageMap: z.core.$ZodErrorMap = (issue) => {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return 'cannot be empty';
      return `must be ${A_OR_AN[issue.expected] ?? `a ${issue.expected}`}`;
    case 'invalid_value':
      return issue.values.length === 1
        ? `must be ${list(issue.values)}`
        : `must be one of ${list(issue.values)}`;
    case 'too_small': {
      const min = Number(issue.minimum);
      if (issue.origin === 'string')
        return min === 1 ? 'cannot be empty' : `must be at least ${min} characters long`;
      if (issue.origin === 'array')
        return `must have at least ${min === 1 ? 'one element' : `${min} elements`}`;
      return issue.inclusive === false
        ? `must be greater than ${min}`
        : `must be greater than or equal to ${min}`;
    }
    case 'too_big': {
      const max = Number(issue.maximum);
      if (issue.origin === 'string') return `must be at most ${max} characters long`;
      if (issue.origin === 'array')
        return `must have at most ${max === 1 ? 'one element' : `${max} elements`}`;
      return issue.inclusive === false ? `must be less than ${max}` : `must be less than or equal to ${max}`;
    }
    case 'invalid_format':
      return issue.format === 'url' ? 'must be a valid URL' : undefined;
    case 'invalid_union': {
      // A discriminated union whose discriminator matches no option: the cause is on the discriminator.
      const options = (issue as { options?: unknown[] }).options;
      if (issue.note !== 'No matching discriminator' || !Array.isArray(options)) return undefined;
      const input = issue.input as Record<string, unknown> | undefined;
      const key = (issue as { discriminator?: string }).discriminator;
      if (key !== undefined && input?.[key] === undefined) return 'cannot be empty';
      return `must be one of ${list(options)}`;
    }
    default:
      return undefined;
  }
};

/** At most this many causes are listed in one answer; one more cause counts the rest (a hostile body cannot make a huge answer). */
export const MAX_CAUSES = 100;

/** Causes being collected: the first {@link MAX_CAUSES} are kept, the rest only counted. */
interface CauseList {
  causes: Cause[];
  more: number;
}

/** An empty {@link CauseList}. */
const causeList = (): CauseList => ({ causes: [], more: 0 });

/** Adds one cause to `found`, or counts it once `found` is full. */
function addCause(found: CauseList, field: string | (() => string), message: string): void {
  if (found.causes.length < MAX_CAUSES) {
    found.causes.push({ field: typeof field === 'string' ? field : field(), message });
  } else found.more += 1;
}

/** The causes of `found` as answered: the listed ones, then `{field: "", message: "and N more ..."}`. */
function causesOf(found: CauseList): Cause[] {
  if (found.more === 0) return found.causes;
  return [
    ...found.causes,
    { field: '', message: `and ${found.more} more causes (only the first ${MAX_CAUSES} are listed)` },
  ];
}

/** Adds a cause per violation to `found` (unknown keys one per key); paths are formatted only for kept ones. */
function collectIssues(
  found: CauseList,
  issues: ReadonlyArray<z.core.$ZodIssue>,
  prefix: PropertyKey[],
): void {
  for (const issue of issues) {
    const path = [...prefix, ...issue.path];
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) addCause(found, () => formatPath([...path, key]), 'unknown field');
    } else if (issue.code === 'invalid_union' && issue.errors.length > 0) {
      // Report the branch that got furthest: the one with the fewest issues.
      let best = issue.errors[0];
      for (const branch of issue.errors) if (branch.length < best.length) best = branch;
      collectIssues(found, best, path);
    } else if (issue.code === 'invalid_key' && issue.issues.length > 0) {
      // A bad record key: the key's own messages, on the key's path (`tags["Bad Key"]`).
      collectIssues(found, issue.issues, path);
    } else if (issue.code === 'invalid_type' && isMissing(issue)) {
      addCause(found, () => formatPath(path), 'cannot be empty');
    } else {
      addCause(found, () => formatPath(path), issue.message);
    }
  }
}

/** Turns zod issues into causes, one per violation, unknown keys one per key, capped at {@link MAX_CAUSES}. */
export function issuesToCauses(issues: ReadonlyArray<z.core.$ZodIssue>, prefix: PropertyKey[] = []): Cause[] {
  const found = causeList();
  collectIssues(found, issues, prefix);
  return causesOf(found);
}

/** The brand of a {@link ValidatedSpec}: not exported, so only this module makes one. */
declare const validated: unique symbol;

/**
 * Spec fields that passed their kind's schema and the body rules of {@link validateBody}, typed by
 * the schema. The write path (`commands.put`) takes no other spec, so a writer that skipped the
 * validation does not compile; only this module creates one.
 */
export type ValidatedSpec<S extends Spec = Spec> = S & { readonly [validated]: true };

/** What a valid PUT body yields: the spec fields alone. */
export type ValidationResult<S extends Spec = Spec> =
  { ok: true; spec: ValidatedSpec<S> } | { ok: false; causes: Cause[] };

/** The resource a body is validated for: its URL's mesh and name. */
export interface ValidationTarget {
  mesh?: string;
  name: string;
  /** The name was checked by the caller's own rules (sync: a long mesh's defaults made on Global are longer). */
  nameChecked?: boolean;
}

const META_FIELDS = new Set(['type', 'name', 'mesh', 'creationTime', 'modificationTime']);

/**
 * Validates a PUT body against a kind (decisions §3): `type`, `name` and `mesh` must match the URL,
 * times are ignored, every other field is checked by the kind's strict spec schema, and no key or
 * string holds a control or bidi character (multi-line keys may hold tab, LF, CR).
 */
export function validateBody<Schema extends z.ZodType<Spec>>(
  desc: ResourceDescriptor<Schema>,
  body: unknown,
  target: ValidationTarget,
): ValidationResult<z.output<Schema>> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { ok: false, causes: [{ field: '', message: 'body must be a JSON object' }] };
  }
  const record = body as Record<string, unknown>;
  const characterCauses = controlCharacterCauses(record, desc.multiLineKeys);
  const found = causeList();
  const causes = found.causes;
  if (record.type === undefined) causes.push({ field: 'type', message: 'cannot be empty' });
  else if (typeof record.type !== 'string' || !desc.acceptedTypes.includes(record.type)) {
    causes.push({
      field: 'type',
      message: `must be ${desc.acceptedTypes.map((t) => `"${t}"`).join(' or ')}`,
    });
  }
  // Sync checks names by its own rules (a long mesh's defaults made on Global are longer).
  const nameCheck = target.nameChecked ? undefined : resourceName.safeParse(target.name);
  if (nameCheck?.success === false)
    causes.push({ field: 'name', message: nameCheck.error.issues[0].message });
  if (record.name === undefined) causes.push({ field: 'name', message: 'cannot be empty' });
  else if (record.name !== target.name) {
    causes.push({
      field: 'name',
      message: `must be equal to the name in the URL (${printable(JSON.stringify(target.name))})`,
    });
  }
  if (desc.scope === 'mesh') {
    // Secrets may be written before their mesh (decisions §3): the mesh name is checked here.
    const meshCheck = resourceName.safeParse(target.mesh);
    if (!meshCheck.success) causes.push({ field: 'mesh', message: meshCheck.error.issues[0].message });
    if (record.mesh === undefined) causes.push({ field: 'mesh', message: 'cannot be empty' });
    else if (record.mesh !== target.mesh) {
      causes.push({
        field: 'mesh',
        message: `must be equal to the mesh in the URL (${printable(JSON.stringify(target.mesh ?? ''))})`,
      });
    }
  } else if (record.mesh !== undefined) {
    causes.push({ field: 'mesh', message: 'unknown field: this kind is not mesh-scoped' });
  }
  const specInput: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(record)) if (!META_FIELDS.has(k)) specInput[k] = v;
  // Parse without per-call options first: the same parse given an error map and reportInput ran
  // much slower here (TrafficPermission 5.0 vs 1.5 µs, Dataplane 7.9 vs 4.5 µs, warm). Only a body
  // that fails is parsed again with them, to word its causes.
  const parsed = desc.spec.safeParse(specInput);
  if (!parsed.success) {
    const worded = desc.spec.safeParse(specInput, { reportInput: true, error: messageMap });
    collectIssues(found, worded.success ? parsed.error.issues : worded.error.issues, []);
  }
  if (causes.length > 0 || characterCauses.length > 0) {
    // Both lists hold at most MAX_CAUSES; the answer too, then one cause that counts the rest.
    const merged = mergeCauses(characterCauses, causes);
    const capped: CauseList = { causes: merged.slice(0, MAX_CAUSES), more: found.more };
    capped.more += Math.max(0, merged.length - MAX_CAUSES);
    return { ok: false, causes: causesOf(capped) };
  }
  // The one place a ValidatedSpec is made: the body passed every rule above.
  return { ok: true, spec: parsed.data as ValidatedSpec<z.output<Schema>> };
}

/**
 * Validates a spec that mesh-cp writes itself (a signing key, the Zone of a zone's first connection,
 * a zone ingress's available services) as the PUT body of `target` would be. Throws `INVALID_BODY`
 * with the causes when it is not valid: a fault of the program, never of a user's input.
 */
export function validSpec<Schema extends z.ZodType<Spec>>(
  desc: ResourceDescriptor<Schema>,
  target: ValidationTarget,
  spec: Spec,
): ValidatedSpec<z.output<Schema>> {
  const meta = desc.scope === 'mesh' ? { mesh: target.mesh } : {};
  const checked = validateBody(desc, { type: desc.wireType, name: target.name, ...meta, ...spec }, target);
  if (checked.ok) return checked.spec;
  throw new AppError(
    'INVALID_BODY',
    'Resource is not valid',
    `the ${desc.wireType} ${printable(JSON.stringify(target.name))} written by mesh-cp itself is not valid`,
    checked.causes,
  );
}
