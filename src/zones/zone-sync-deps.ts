/**
 * What the zone's sync client and its sessions are given, and what the zone says of the Global it
 * follows: apart from both, so that the client and its session class import them without importing
 * each other.
 */
import type * as grpc from '@grpc/grpc-js';
import type { Logger } from 'pino';
import type { SyncApplier } from '../app/sync-apply.js';
import type { SyncSource } from '../app/sync-source.js';
import type { EventLog } from '../events/event-log.js';
import type { Registry } from '../resources/registry.js';
import type { StatusStore } from '../status/status-store.js';
import type { SenderLimits, SenderLog } from './entry-sender.js';
import type { StreamTimers } from './peer-stream.js';
import type { DumpRequest, WireVersion } from './sync-protocol.js';

/** What a zone says about the Global it follows (`GET /`, `/config`). */
export interface GlobalLink {
  /** This zone's name. */
  name: string;
  globalAddress: string;
  connected: boolean;
  globalInstanceId?: string;
  /** How the last Global→zone stream started (`resume` or `snapshot`). */
  start?: string;
  connectTime?: string;
  disconnectTime?: string;
  lastError?: string;
}

/** Dependencies of `createZoneSyncClient` (and of each of its sessions). */
export interface ZoneSyncDeps {
  registry: Registry;
  log: SenderLog & Pick<EventLog, 'getMeta'>;
  applier: SyncApplier;
  source: SyncSource;
  status: StatusStore;
  zone: string;
  /** As configured (`grpcs://host:port`). */
  globalAddress: string;
  credentials: grpc.ChannelCredentials;
  token: string;
  info: { instanceId: string; clusterId: string; version: WireVersion; config: string };
  logger?: Logger;
  now: () => Date;
  timers?: StreamTimers;
  limits?: Partial<SenderLimits>;
  /** Back-off between attempts: from `min` doubling to `max` (ms). */
  backoff?: { min: number; max: number };
  /** Answers Global's requests for a view of one of this zone's proxies; absent: none are answered. */
  answerDump?: (req: DumpRequest) => Promise<{ contentType: string; body: string }>;
}
