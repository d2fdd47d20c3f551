/**
 * What Global's sync server and its zone sessions are given: apart from both, so that the server
 * and its session class import it without importing each other.
 */
import type { Logger } from 'pino';
import type { Commands } from '../app/commands.js';
import type { SyncApplier } from '../app/sync-apply.js';
import type { SyncSource } from '../app/sync-source.js';
import type { EventLog } from '../events/event-log.js';
import type { Registry } from '../resources/registry.js';
import type { StatusStore, Subscription } from '../status/status-store.js';
import type { SenderLimits, SenderLog } from './entry-sender.js';
import type { StreamTimers } from './peer-stream.js';
import type { WireVersion } from './sync-protocol.js';

/** Dependencies of `createGlobalSyncServer` (and of its sessions). */
export interface GlobalSyncDeps {
  registry: Registry;
  log: SenderLog & Pick<EventLog, 'getMeta' | 'catchUp'>;
  commands: Commands;
  applier: SyncApplier;
  source: SyncSource;
  verifyZone(token: string): Promise<{ zone: string; scope: string[]; tokenId: string }>;
  status: StatusStore;
  info: { instanceId: string; clusterId: string; version: WireVersion };
  /** With several Global instances on one log: the open subscription of a zone connected to another. */
  elsewhere?: (zone: string) => Subscription | undefined;
  logger?: Logger;
  now: () => Date;
  timers?: StreamTimers;
  limits?: Partial<SenderLimits>;
  /** How long a zone has to answer a proxy view request (default 5 s). */
  dumpTimeoutMs?: number;
}
