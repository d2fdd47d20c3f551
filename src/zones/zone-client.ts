import * as grpc from '@grpc/grpc-js';
import type { SyncClient } from './sync-protocol.js';
import { CHANNEL_OPTIONS, syncClientConstructor } from './sync-protocol.js';
import { explainConnectFailure } from './connect-failure.js';
import { ZoneSession } from './zone-session.js';
import type { GlobalLink, ZoneSyncDeps } from './zone-sync-deps.js';

export type { GlobalLink, ZoneSyncDeps } from './zone-sync-deps.js';

/** The zone's end of the sync: dials Global, keeps both streams up, reconnects with back-off. */
export interface ZoneSyncClient {
  start(): void;
  describe(): GlobalLink;
  close(): Promise<void>;
}

/** Creates the zone's sync client (architecture: Multi-zone sync). */
export function createZoneSyncClient(deps: ZoneSyncDeps): ZoneSyncClient {
  const { status, logger } = deps;
  const backoff = deps.backoff ?? { min: 500, max: 5000 };
  const target = deps.globalAddress.replace(/^grpcs?:\/\//, '');
  const Client = syncClientConstructor();
  const client: SyncClient = new Client(target, deps.credentials, CHANNEL_OPTIONS);
  const link: GlobalLink = { name: deps.zone, globalAddress: deps.globalAddress, connected: false };
  let closed = false;
  let current: ZoneSession | undefined;
  let loop: Promise<void> | undefined;
  let lastFailure = '';
  // One listener for the client's lifetime; the open session, if any, takes the changes.
  status.onChange((mesh, name) => {
    if (name !== undefined && mesh !== '') current?.statusChanged(mesh, name);
  });

  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const t = setTimeout(resolve, ms);
      t.unref();
      wakeSleep = () => {
        clearTimeout(t);
        resolve();
      };
    });
  let wakeSleep: (() => void) | undefined;

  const run = async (): Promise<void> => {
    let delay = backoff.min;
    while (!closed) {
      current = new ZoneSession(deps, client, link);
      const { connected, end } = await current.run();
      current = undefined;
      if (closed) break;
      if (connected) {
        delay = backoff.min;
        // The session connected: a failure after it is worth a line even if it is the last one again.
        lastFailure = '';
      } else {
        const failure = explainConnectFailure(end.details, deps.globalAddress);
        link.lastError = failure;
        // One line per distinct failure, not one per attempt.
        if (failure !== lastFailure) {
          logger?.warn({ global: deps.globalAddress, reason: failure }, 'cannot connect to Global; retrying');
          lastFailure = failure;
        }
      }
      await sleep(delay + Math.floor(Math.random() * 100));
      delay = Math.min(delay * 2, backoff.max);
    }
  };

  return {
    start() {
      loop ??= run();
    },
    describe: () => ({ ...link }),
    async close() {
      closed = true;
      current?.close({ code: grpc.status.CANCELLED, details: 'the zone is stopping' });
      wakeSleep?.();
      await loop;
      client.close();
    },
  };
}
