import type protobufjs from 'protobufjs';
import { protobuf } from './protobuf-lib.js';
import { AppError } from '../util/errors.js';
import { envoyType } from './envoy-protos.js';
import { TYPE_URL_PREFIX, typeNameOf } from './type-urls.js';

/** An encoded `google.protobuf.Any`, as a DiscoveryResponse carries its resources. */
export interface EncodedAny {
  type_url: string;
  value: Buffer;
}

/** One resource to serve, before encoding: its name and the object `encodeAny` takes. */
export interface NamedResource {
  name: string;
  resource: object;
}

const ANY = '.google.protobuf.Any';

/**
 * Verifies `object` against the type of `typeUrl` and encodes it. Objects use proto field names
 * (`api_listener`), enums as names, durations as `{seconds, nanos}`; a nested Any is written
 * `{'@type': url, ...fields}` (protobufjs' Any wrapper encodes it when the type is in the root).
 * The well-known types are protobufjs' bundled ones, whose fields are camelCase: a Struct value is
 * `{stringValue: 'x'}`, not `{string_value: 'x'}`.
 * protobufjs' `Type.verify` checks values but ignores unknown keys and does not look inside an Any
 * written with `@type`, so a second walk refuses unknown fields and verifies each nested Any: a
 * misspelt field would otherwise vanish silently from what the proxy gets.
 */
export function encodeAny(typeUrl: string, object: object): EncodedAny {
  const type = resolveType(typeUrl, typeNameOf(typeUrl));
  verifyMessage(type, object as Record<string, unknown>, type.name);
  const value = type.encode(type.fromObject(object)).finish();
  return { type_url: typeUrl, value: Buffer.from(value.buffer, value.byteOffset, value.byteLength) };
}

/** Encodings by resource object: streams served the same (shared) objects encode them once. */
const ENCODED = new WeakMap<object, Buffer>();

/** The encoded value of `resource` as {@link encodeAny} makes it, kept per object. */
export function encodedValue(typeUrl: string, resource: object): Buffer {
  let value = ENCODED.get(resource);
  if (!value) {
    value = encodeAny(typeUrl, resource).value;
    ENCODED.set(resource, value);
  }
  return value;
}

/**
 * A list of resources of one type as a response carries them: their names and their `Any`s. The
 * source hands streams with the same config the same list; its encoding is made once and shared by
 * all of them (and kept while some stream still refers to the list).
 */
export interface EncodedSet {
  readonly typeUrl: string;
  readonly names: readonly string[];
  readonly anys: readonly EncodedAny[];
}

const SETS = new WeakMap<readonly NamedResource[], EncodedSet>();

/** The encoding of `resources` (a list the caller does not change afterwards), made once per list. */
export function encodedSet(typeUrl: string, resources: readonly NamedResource[]): EncodedSet {
  let set = SETS.get(resources);
  if (set?.typeUrl !== typeUrl) {
    set = {
      typeUrl,
      names: resources.map((r) => r.name),
      anys: resources.map((r) => ({ type_url: typeUrl, value: encodedValue(typeUrl, r.resource) })),
    };
    SETS.set(resources, set);
  }
  return set;
}

/** Whether two encoded sets carry the same names and bytes. */
export function sameEncoding(a: EncodedSet, b: EncodedSet): boolean {
  if (a === b) return true;
  if (a.names.length !== b.names.length) return false;
  for (let i = 0; i < a.names.length; i++) {
    if (a.names[i] !== b.names[i]) return false;
    const x = (a.anys[i] as EncodedAny).value;
    const y = (b.anys[i] as EncodedAny).value;
    if (x !== y && !x.equals(y)) return false;
  }
  return true;
}

/** Decodes an Any back to an object in the form {@link encodeAny} takes (dumps and tests). */
export function decodeAny(any: { type_url: string; value: Uint8Array }): Record<string, unknown> {
  const type = resolveType(any.type_url, typeNameOf(any.type_url));
  return type.toObject(type.decode(any.value), { enums: String, longs: Number, bytes: String, json: true });
}

function resolveType(typeUrl: string, at: string): protobufjs.Type {
  if (!typeUrl.startsWith(TYPE_URL_PREFIX))
    throw invalid(`${at}: type URL ${typeUrl} lacks ${TYPE_URL_PREFIX}`);
  try {
    return envoyType(typeNameOf(typeUrl));
  } catch {
    throw invalid(`${at}: unknown type ${typeUrl}`);
  }
}

function invalid(message: string): AppError {
  return new AppError('INTERNAL', 'invalid xDS resource', message);
}

/**
 * Checks an object against a type: every key a field, every value of the field's type (enums by
 * name or number, 64-bit integers as numbers or decimal strings, bytes as buffers or base64), at
 * most one member of each oneof, and each nested Any written with `@type` against its own type.
 */
function verifyMessage(type: protobufjs.Type, object: unknown, at: string): void {
  if (typeof object !== 'object' || object === null || Array.isArray(object))
    throw invalid(`${at}: object expected`);
  const record = object as Record<string, unknown>;
  // The name first: protobufjs builds `fullName` from the parents at each read (a tenth of an
  // encode's CPU when it was read for every message).
  if (type.name === 'Any' && type.fullName === ANY && '@type' in record) return verifyAny(record, at);
  for (const [key, value] of Object.entries(record)) {
    const field = type.fields[key];
    if (!field) throw invalid(`${at}.${key}: no such field in ${type.fullName.slice(1)}`);
    if (value === null || value === undefined) continue;
    field.resolve();
    if (field.map) {
      if (typeof value !== 'object' || Array.isArray(value)) throw invalid(`${at}.${key}: object expected`);
      for (const [k, v] of Object.entries(value)) verifyValue(field, v, `${at}.${key}[${k}]`);
    } else if (field.repeated) {
      if (!Array.isArray(value)) throw invalid(`${at}.${key}: array expected`);
      value.forEach((v, i) => verifyValue(field, v, `${at}.${key}[${i}]`));
    } else verifyValue(field, value, `${at}.${key}`);
  }
  for (const oneof of type.oneofsArray) {
    const set = oneof.fieldsArray.filter((f) => record[f.name] !== undefined && record[f.name] !== null);
    if (set.length > 1)
      throw invalid(`${at}: only one of ${set.map((f) => f.name).join(', ')} (oneof ${oneof.name})`);
  }
}

function verifyAny(record: Record<string, unknown>, at: string): void {
  const url = record['@type'];
  if (typeof url !== 'string') throw invalid(`${at}.@type: string expected`);
  const content = { ...record };
  delete content['@type'];
  const inner = resolveType(url, at);
  verifyMessage(inner, content, `${at}(${inner.name})`);
}

const INTEGER_64 = /^-?\d+$/;

function verifyValue(field: protobufjs.Field, value: unknown, at: string): void {
  const resolved = field.resolvedType;
  const pb = protobuf();
  if (resolved instanceof pb.Type) return verifyMessage(resolved, value, at);
  if (resolved instanceof pb.Enum) {
    const ok =
      typeof value === 'string'
        ? value in resolved.values
        : Number.isInteger(value) && (value as number) in resolved.valuesById;
    if (!ok) throw invalid(`${at}: one of ${Object.keys(resolved.values).join(', ')} expected`);
    return;
  }
  const expected = scalarProblem(field.type, value);
  if (expected) throw invalid(`${at}: ${expected} expected`);
}

/** What a scalar of a proto type should be, or undefined when `value` is one. */
function scalarProblem(type: string, value: unknown): string | undefined {
  switch (type) {
    case 'string':
      return typeof value === 'string' ? undefined : 'string';
    case 'bool':
      return typeof value === 'boolean' ? undefined : 'boolean';
    case 'double':
    case 'float':
      return typeof value === 'number' ? undefined : 'number';
    case 'int64':
    case 'uint64':
    case 'sint64':
    case 'fixed64':
    case 'sfixed64':
      return Number.isInteger(value) || (typeof value === 'string' && INTEGER_64.test(value))
        ? undefined
        : 'integer';
    case 'bytes':
      return value instanceof Uint8Array || typeof value === 'string' ? undefined : 'bytes';
    default:
      return Number.isInteger(value) ? undefined : 'integer';
  }
}
