import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import type { Operation } from '../events/types.js';
import { printable } from '../util/printable.js';

/** The wire version of a control plane (spec 2.12 `version.meshCp`). */
export interface WireVersion {
  version: string;
  gitTag: string;
  gitCommit: string;
  buildDate: string;
}

/** What a receiver applied of a sender's log: the log's id (its cluster id) and the revision. */
export interface WireCursor {
  logId: string;
  revision: number;
}

/** The zone's first message on each stream. */
export interface Hello {
  zone: string;
  sessionId: string;
  instanceId: string;
  clusterId: string;
  version: WireVersion | null;
  config: string;
  cursor: WireCursor | null;
}

/** Global's first message on each stream. */
export interface Welcome {
  instanceId: string;
  clusterId: string;
  version: WireVersion | null;
  cursor: WireCursor | null;
  start: string;
  fromRevision: number;
}

/** Operations on the wire. */
export type WireOperation = 'CREATE' | 'UPDATE' | 'DELETE';

/** One change on the wire; `resource` is the wire resource as JSON bytes (empty for a delete). */
export interface WireEntry {
  revision: number;
  kind: string;
  mesh: string;
  name: string;
  operation: WireOperation;
  resource: Buffer;
  /** The change set of the entry ('' for none; absent from senders that predate change sets). */
  changeSet?: string;
}

/** Snapshot marks of a batch. */
export type SnapshotMark = 'NONE' | 'PART' | 'END';

/** A batch of entries; `toRevision` is the receiver's cursor once it is applied. */
export interface Batch {
  seq: number;
  entries: WireEntry[];
  toRevision: number;
  snapshot: SnapshotMark;
}

/** An entry the receiver refused. */
export interface Rejection {
  revision: number;
  kind: string;
  mesh: string;
  name: string;
  reason: string;
}

/** Every batch up to `seq` is durably applied. */
export interface Ack {
  seq: number;
  revision: number;
  rejected: Rejection[];
}

/** Status of one proxy; an empty `insight` removes it. */
export interface ProxyStatus {
  kind: string;
  mesh: string;
  name: string;
  insight: Buffer;
}

/** Proxy statuses; `full` when it holds every proxy of the zone. */
export interface StatusUpdate {
  proxies: ProxyStatus[];
  full: boolean;
}

/** Global asks a zone for a view of one of its proxies, named as the zone names it. */
export interface DumpRequest {
  id: number;
  kind: string;
  mesh: string;
  name: string;
  view: string;
}

/** The zone's answer: `body` with `contentType`, or an error (empty `errorCode`: none). */
export interface DumpResponse {
  id: number;
  contentType: string;
  body: Buffer;
  errorCode: string;
  errorTitle: string;
  errorDetails: string;
}

/** A message to send: exactly one body. */
export type SyncMessage =
  | { hello: Hello }
  | { welcome: Welcome }
  | { batch: Batch }
  | { ack: Ack }
  | { status: StatusUpdate }
  | { ping: Record<string, never> }
  | { dumpRequest: DumpRequest }
  | { dumpResponse: DumpResponse };

/**
 * A received message: `body` names the one that is set. On Global, bytes that do not decode arrive
 * as `undecodable` with the decoder's words (see {@link syncServerService}).
 */
export interface ReceivedMessage {
  body:
    | 'hello'
    | 'welcome'
    | 'batch'
    | 'ack'
    | 'status'
    | 'ping'
    | 'dumpRequest'
    | 'dumpResponse'
    | 'undecodable';
  hello?: Hello;
  welcome?: Welcome;
  batch?: Batch;
  ack?: Ack;
  status?: StatusUpdate;
  dumpRequest?: DumpRequest;
  dumpResponse?: DumpResponse;
  undecodable?: string;
}

/** The two streams of a session, as the server implements them. */
export type SyncStream = grpc.ServerDuplexStream<ReceivedMessage, SyncMessage>;

/** A stream as the zone holds it. */
export type SyncClientStream = grpc.ClientDuplexStream<SyncMessage, ReceivedMessage>;

/** The generated client of the Sync service. */
export interface SyncClient extends grpc.Client {
  GlobalToZone(metadata: grpc.Metadata): SyncClientStream;
  ZoneToGlobal(metadata: grpc.Metadata): SyncClientStream;
}

const PROTO = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'proto', 'sync.proto');

/** Options of every channel and server: large resources, keepalive pings (a dead peer is seen). */
export const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  'grpc.max_receive_message_length': 64 * 1024 * 1024,
  'grpc.max_send_message_length': 64 * 1024 * 1024,
  'grpc.keepalive_time_ms': 5000,
  'grpc.keepalive_timeout_ms': 5000,
  'grpc.keepalive_permit_without_calls': 1,
  // A batch is ~0.3 MB: with HTTP/2's 64 KB start window the sender would wait on the receiver's
  // event loop (busy applying the previous batch) for every few KB. Zones are clients: this is
  // the window Global sends into.
  'grpc-node.flow_control_window': 16 * 1024 * 1024,
};

let loaded: grpc.ServiceDefinition | undefined;

/** The Sync service definition, loaded from `proto/sync.proto` on first use. */
export function syncService(): grpc.ServiceDefinition {
  if (!loaded) {
    const def = loadSync(PROTO, {
      keepCase: false,
      longs: Number,
      enums: String,
      defaults: true,
      oneofs: true,
    });
    loaded = def['meshcp.sync.v1.Sync'] as unknown as grpc.ServiceDefinition;
  }
  return loaded;
}

let served: grpc.ServiceDefinition | undefined;

/**
 * The Sync service as Global serves it: a message that does not decode is handed to the handler as
 * `{ body: 'undecodable' }`, which ends the stream with INVALID_ARGUMENT; grpc-js itself would
 * answer INTERNAL, a status that says the fault is Global's.
 */
export function syncServerService(): grpc.ServiceDefinition {
  if (!served) {
    const def = syncService();
    served = Object.fromEntries(
      Object.entries(def).map(([name, method]) => {
        const decode = method.requestDeserialize;
        const requestDeserialize = (bytes: Buffer): ReceivedMessage => {
          try {
            return decode(bytes) as ReceivedMessage;
          } catch (err) {
            return { body: 'undecodable', undecodable: printable((err as Error).message).slice(0, 200) };
          }
        };
        return [name, { ...method, requestDeserialize }];
      }),
    ) as grpc.ServiceDefinition;
  }
  return served;
}

/** A client constructor for the Sync service. */
export function syncClientConstructor(): new (
  address: string,
  credentials: grpc.ChannelCredentials,
  options?: grpc.ChannelOptions,
) => SyncClient {
  return grpc.makeGenericClientConstructor(syncService(), 'Sync') as unknown as new (
    address: string,
    credentials: grpc.ChannelCredentials,
    options?: grpc.ChannelOptions,
  ) => SyncClient;
}

const TO_WIRE: Record<Operation, WireOperation> = { create: 'CREATE', update: 'UPDATE', delete: 'DELETE' };

/** The wire operation of a log operation. */
export const wireOperation = (op: Operation): WireOperation => TO_WIRE[op];

/** The log operation of a wire operation (unknown values are treated as upserts). */
export const logOperation = (op: string): Operation => (op === 'DELETE' ? 'delete' : 'update');
