import type * as grpc from '@grpc/grpc-js';
import type protobufjs from 'protobufjs';
import { protobuf } from './protobuf-lib.js';
import type { EncodedAny } from './encode-any.js';
import { envoyType } from './envoy-protos.js';
import { CLUSTER, CLUSTER_LOAD_ASSIGNMENT, LISTENER, ROUTE_CONFIGURATION } from './type-urls.js';

/** The locality a proxy declares (`node.locality`, mandatory for @grpc/grpc-js-xds). */
export interface Locality {
  region?: string;
  zone?: string;
  sub_zone?: string;
}

/** `envoy.config.core.v3.Node` as the server reads it; `metadata` is the Struct as plain JSON. */
export interface Node {
  id: string;
  cluster: string;
  metadata: Record<string, unknown>;
  locality?: Locality;
  user_agent_name: string;
  user_agent_version: string;
  client_features: string[];
}

/** A DiscoveryRequest (state of the world): proto field names, empty strings for unset ones. */
export interface DiscoveryRequest {
  version_info: string;
  node?: Node;
  resource_names: string[];
  type_url: string;
  response_nonce: string;
  /** Set on a NACK (google.rpc.Status). */
  error_detail?: { code: number; message: string };
  /** Set when the request cannot be read (the server refuses it with INVALID_ARGUMENT): why, in words. */
  invalid?: string;
}

/** A DiscoveryResponse with its resources already encoded. */
export interface DiscoveryResponse {
  version_info: string;
  /** Not changed once written: a response's encoding of its resources is kept per list. */
  resources: readonly EncodedAny[];
  type_url: string;
  nonce: string;
}

/** The bidirectional stream of one proxy, as the server holds it. */
export type AdsCall = grpc.ServerDuplexStream<DiscoveryRequest, DiscoveryResponse>;

const REQUEST = 'envoy.service.discovery.v3.DiscoveryRequest';
const RESPONSE = 'envoy.service.discovery.v3.DiscoveryResponse';

/** The gRPC path of the one method served (ads.proto). */
export const ADS_METHOD_PATH =
  '/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources';

/**
 * The AggregatedDiscoveryService definition, written by hand rather than by @grpc/proto-loader:
 * proto-loader would parse the protos when the server is added (65–200 ms at start-up, see the
 * startup figures of bench/README.md), while these (de)serializers parse them on the first message only.
 * test/unit/xds/ads-protocol.test.ts checks it against proto-loader's definition of ads.proto.
 */
export const ADS_SERVICE: grpc.ServiceDefinition = {
  StreamAggregatedResources: {
    path: ADS_METHOD_PATH,
    requestStream: true,
    responseStream: true,
    originalName: 'streamAggregatedResources',
    requestSerialize: (value: DiscoveryRequest) => encode(REQUEST, value),
    requestDeserialize: (bytes: Buffer) => decodeRequest(bytes),
    responseSerialize: (value: DiscoveryResponse) => encodeResponse(value),
    responseDeserialize: (bytes: Buffer) =>
      envoyType(RESPONSE).toObject(envoyType(RESPONSE).decode(bytes), OBJECT),
  },
};

const OBJECT = { enums: String, longs: Number, arrays: true } as const;

function encode(name: string, value: object): Buffer {
  const type = envoyType(name);
  const bytes = type.encode(type.fromObject(value)).finish();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * A DiscoveryResponse in protobuf wire format. Its resources are already encoded, and a push sends
 * the same resource list to many streams: the list's part of the message (each resource's `Any`,
 * field 2) is encoded once per list and copied into each stream's message; only the version and
 * nonce differ per stream. Equal to protobufjs's encoding of the whole message
 * (test/unit/xds/ads-protocol.test.ts).
 */
export function encodeResponse(res: DiscoveryResponse): Buffer {
  const body = resourcesBytes(res.resources);
  const version = Buffer.byteLength(res.version_info);
  const typeUrl = Buffer.byteLength(res.type_url);
  const nonce = Buffer.byteLength(res.nonce);
  // Fields in number order (tag = field << 3 | 2, length-delimited); strings written even when
  // empty, as protobufjs does for a set field.
  const out = Buffer.allocUnsafe(
    fieldSize(version) + body.byteLength + fieldSize(typeUrl) + fieldSize(nonce),
  );
  let at = writeString(out, 0, 10, res.version_info, version);
  out.set(body, at);
  at += body.byteLength;
  at = writeString(out, at, 34, res.type_url, typeUrl);
  writeString(out, at, 42, res.nonce, nonce);
  return out;
}

/** Bytes of a length-delimited field of `length` bytes with a one-byte tag. */
const fieldSize = (length: number): number => 1 + varintSize(length) + length;

const varintSize = (n: number): number =>
  n < 0x80 ? 1 : n < 0x4000 ? 2 : n < 0x200000 ? 3 : n < 0x10000000 ? 4 : 5;

function writeString(out: Buffer, at: number, tag: number, value: string, length: number): number {
  out[at++] = tag;
  let n = length;
  while (n >= 0x80) {
    out[at++] = (n & 0x7f) | 0x80;
    n >>>= 7;
  }
  out[at++] = n;
  return at + out.write(value, at, length, 'utf8');
}

/** The resources' part of a response, by resource list (a push shares one list between streams). */
const RESOURCES_BYTES = new WeakMap<readonly EncodedAny[], Uint8Array>();

function resourcesBytes(resources: readonly EncodedAny[]): Uint8Array {
  let bytes = RESOURCES_BYTES.get(resources);
  if (!bytes) {
    const w = protobuf().Writer.create();
    for (const any of resources) w.uint32(18).bytes(anyBytes(any));
    bytes = w.finish();
    RESOURCES_BYTES.set(resources, bytes);
  }
  return bytes;
}

/** Encoded `Any` messages by value buffer (the encode cache shares value buffers between streams). */
const ANY_BYTES = new WeakMap<Uint8Array, Uint8Array>();

function anyBytes(any: EncodedAny): Uint8Array {
  let bytes = ANY_BYTES.get(any.value);
  if (!bytes) {
    bytes = protobuf().Writer.create().uint32(10).string(any.type_url).uint32(18).bytes(any.value).finish();
    ANY_BYTES.set(any.value, bytes);
  }
  return bytes;
}

/** The largest node a request may carry, encoded (its id, metadata, locality, user agent...). */
export const NODE_MAX_BYTES = 64 * 1024;

/** How deep `node.metadata` may nest Structs and lists. */
export const METADATA_MAX_DEPTH = 16;

/**
 * A request read from the decoded message itself: only the node (first requests) goes through
 * `toObject`, so the ACKs of a push to many streams allocate little. The node is read as bytes
 * first and decoded only when it is at most {@link NODE_MAX_BYTES}: an unauthenticated caller's
 * node costs no more than that to read. Never throws (grpc-js would answer INTERNAL): a request
 * that cannot be read comes back with `invalid` saying why.
 */
function decodeRequest(bytes: Buffer): DiscoveryRequest {
  const empty = { version_info: '', resource_names: [], type_url: '', response_nonce: '' };
  let raw: ShallowRequest;
  try {
    raw = shallowRequest().decode(bytes) as unknown as ShallowRequest;
  } catch (err) {
    return { ...empty, invalid: `the DiscoveryRequest is not a valid protobuf message (${errorText(err)})` };
  }
  const req: DiscoveryRequest = {
    version_info: raw.version_info || '',
    node: undefined,
    resource_names: raw.resource_names ?? [],
    type_url: knownTypeUrl(raw.type_url || ''),
    response_nonce: raw.response_nonce || '',
    error_detail: undefined,
  };
  // Unset fields read protobufjs' defaults (an empty buffer): a field is there when it is its own.
  const node = Object.hasOwn(raw, 'node') ? raw.node : undefined;
  const errorDetail = Object.hasOwn(raw, 'error_detail') ? raw.error_detail : undefined;
  try {
    if (node && node.length > NODE_MAX_BYTES) {
      return {
        ...req,
        invalid: `the node is ${node.length} bytes; at most ${NODE_MAX_BYTES} (node.id, node.metadata and the rest of the bootstrap's node)`,
      };
    }
    if (node) req.node = nodeOf(envoyType(NODE).toObject(envoyType(NODE).decode(node), OBJECT) as RawNode);
    if (errorDetail) {
      const detail = envoyType(STATUS).decode(errorDetail) as { code?: number; message?: string };
      req.error_detail = { code: detail.code || 0, message: detail.message || '' };
    }
  } catch (err) {
    const invalid =
      err instanceof TooDeep
        ? err.message
        : `the DiscoveryRequest's node or error_detail is not a valid protobuf message (${errorText(err)})`;
    return { ...req, node: undefined, invalid };
  }
  return req;
}

/** The four resource type URLs, so that a stream keeps the one string, not each request's copy. */
const TYPE_URLS = new Map(
  [LISTENER, ROUTE_CONFIGURATION, CLUSTER, CLUSTER_LOAD_ASSIGNMENT].map((url) => [url, url]),
);
const knownTypeUrl = (url: string): string => TYPE_URLS.get(url) ?? url;

const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err)).slice(0, 200);

const STATUS = 'google.rpc.Status';

/** A DiscoveryRequest whose node and error_detail stay bytes (field numbers of discovery.proto). */
interface ShallowRequest {
  version_info?: string;
  node?: Uint8Array;
  resource_names?: string[];
  type_url?: string;
  response_nonce?: string;
  error_detail?: Uint8Array;
}

let SHALLOW: protobufjs.Type | undefined;
function shallowRequest(): protobufjs.Type {
  if (!SHALLOW) {
    const pb = protobuf();
    SHALLOW = new pb.Type('ShallowDiscoveryRequest')
      .add(new pb.Field('version_info', 1, 'string'))
      .add(new pb.Field('node', 2, 'bytes'))
      .add(new pb.Field('resource_names', 3, 'string', 'repeated'))
      .add(new pb.Field('type_url', 4, 'string'))
      .add(new pb.Field('response_nonce', 5, 'string'))
      .add(new pb.Field('error_detail', 6, 'bytes'));
    new pb.Root().add(SHALLOW).resolveAll();
  }
  return SHALLOW;
}

/** node.metadata nests deeper than {@link METADATA_MAX_DEPTH}. */
class TooDeep extends Error {}

const NODE = 'envoy.config.core.v3.Node';

type RawNode = Partial<Omit<Node, 'metadata'>> & { metadata?: StructValue['structValue'] };

function nodeOf(raw: RawNode): Node {
  const metadata = raw.metadata ? structToJson(raw.metadata) : {};
  const features = raw.client_features ?? [];
  return {
    id: raw.id ?? '',
    cluster: shared(raw.cluster ?? ''),
    // The parts every proxy of a mesh mostly shares are shared (a node is kept per open stream).
    metadata: Object.keys(metadata).length === 0 ? NO_METADATA : metadata,
    locality: raw.locality && sharedLocality(raw.locality),
    user_agent_name: shared(raw.user_agent_name ?? ''),
    user_agent_version: shared(raw.user_agent_version ?? ''),
    client_features: features.length === 0 ? NO_FEATURES : sharedList(features),
  };
}

const NO_METADATA: Record<string, unknown> = Object.freeze({});
const NO_FEATURES: string[] = Object.freeze([]) as unknown as string[];

/** Distinct short strings and lists kept for sharing between nodes; past it the table starts again. */
const SHARED_MAX = 4096;
const SHARED = new Map<string, unknown>();

function sharedValue<T>(key: string, make: () => T): T {
  let v = SHARED.get(key) as T | undefined;
  if (v === undefined) {
    if (SHARED.size >= SHARED_MAX) SHARED.clear();
    v = make();
    SHARED.set(key, v);
  }
  return v;
}

/** The one copy of a short string (a user agent, a cluster): long ones are not shared. */
const shared = (s: string): string => (s.length > 256 ? s : sharedValue(`s${s}`, () => s));

function sharedList(list: string[]): string[] {
  const key = `l${JSON.stringify(list)}`;
  return key.length > 1024 ? list : sharedValue(key, () => Object.freeze([...list]) as string[]);
}

function sharedLocality(l: Locality): Locality {
  const key = `z${JSON.stringify([l.region ?? null, l.zone ?? null, l.sub_zone ?? null])}`;
  return key.length > 1024 ? l : sharedValue(key, () => Object.freeze({ ...l }));
}

/** A `google.protobuf.Value` as protobufjs decodes it: its bundled well-known types keep camelCase names. */
interface StructValue {
  nullValue?: unknown;
  numberValue?: number;
  stringValue?: string;
  boolValue?: boolean;
  structValue?: { fields?: Record<string, StructValue> };
  listValue?: { values?: StructValue[] };
}

/** A decoded `google.protobuf.Struct` as the JSON it stands for (`depth`: Structs and lists around it). */
export function structToJson(
  struct: { fields?: Record<string, StructValue> },
  depth = 0,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(struct.fields ?? {})) out[key] = valueToJson(value, depth);
  return out;
}

/** One level deeper, or {@link TooDeep} past {@link METADATA_MAX_DEPTH}. */
function deeper(depth: number): number {
  if (depth >= METADATA_MAX_DEPTH) {
    throw new TooDeep(
      `node.metadata nests Structs and lists more than ${METADATA_MAX_DEPTH} levels deep; flatten it`,
    );
  }
  return depth + 1;
}

function valueToJson(value: StructValue, depth: number): unknown {
  if (value.structValue !== undefined) return structToJson(value.structValue, deeper(depth));
  if (value.listValue !== undefined) {
    const inner = deeper(depth);
    return (value.listValue.values ?? []).map((v) => valueToJson(v, inner));
  }
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.numberValue !== undefined) return value.numberValue;
  if (value.boolValue !== undefined) return value.boolValue;
  return null;
}
