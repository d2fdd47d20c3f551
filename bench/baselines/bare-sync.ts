// The server half of the bare @grpc/grpc-js baseline of bench/zones.ts: the Sync service of
// proto/sync.proto over TLS, sending the same Batch messages (mesh-cp's batch size and window,
// DEFAULT_LIMITS of src/zones/entry-sender.ts) as mesh-cp's sync does, to bench/baselines/bare-sync-client.mjs in its own process. No log, no
// write path: what a stream of the same messages costs by itself.
import * as grpc from '@grpc/grpc-js';
import type { Started } from '../lib/processes.js';
import { startProcess } from '../lib/processes.js';
import type { ReceivedMessage, SyncMessage, WireEntry } from '../../src/zones/sync-protocol.js';
import { syncService } from '../../src/zones/sync-protocol.js';
import { DEFAULT_LIMITS } from '../../src/zones/entry-sender.js';

const BATCH = DEFAULT_LIMITS.batchEntries;
const WINDOW = DEFAULT_LIMITS.window;

type Call = grpc.ServerDuplexStream<ReceivedMessage, SyncMessage>;

/** A bare server with its client connected. */
export interface BareSync {
  /** Sends the resources as batches; resolves with the ms until the last batch is acknowledged. */
  sendDown(resources: readonly Buffer[]): Promise<number>;
  /** Round trips of a one-entry batch to its ack, in ms. */
  roundTrips(resource: Buffer, n: number): Promise<number[]>;
  /** Has the client send `n` entries up (acked per batch); resolves with the ms until all arrived. */
  sendUp(n: number, json: string): Promise<number>;
  close(): Promise<void>;
  /** The client process's pid. */
  pid: number;
}

/**
 * Starts the bare server on port 0 with `tls`, and its client process verifying with `caFile`; with
 * `durableDir`, the client also writes each received batch to classic-level (synced) before its ack;
 * with `work` as well, it also does the per-entry work of a zone's apply (the work floor).
 */
export async function startBareSync(
  tls: { key: string; cert: string },
  caFile: string,
  durableDir?: string,
  work = false,
): Promise<BareSync> {
  const server = new grpc.Server({
    'grpc.max_receive_message_length': 64 * 1024 * 1024,
    'grpc.max_send_message_length': 64 * 1024 * 1024,
  });
  let down: Call | undefined;
  let up: Call | undefined;
  let acked = 0;
  let ackWaiter: (() => void) | undefined;
  let upReceived = 0;
  let upWaiter: (() => void) | undefined;
  let connected: () => void = () => undefined;
  const bothConnected = new Promise<void>((resolve) => (connected = resolve));
  const check = (): void => {
    if (down && up) connected();
  };
  server.addService(syncService(), {
    GlobalToZone: (call: Call) => {
      down = call;
      call.on('data', (m: ReceivedMessage) => {
        if (m.body === 'ack' && m.ack) {
          acked = m.ack.seq;
          ackWaiter?.();
        }
      });
      call.on('error', () => undefined);
      check();
    },
    ZoneToGlobal: (call: Call) => {
      up = call;
      call.on('data', (m: ReceivedMessage) => {
        if (m.body !== 'batch' || !m.batch) return;
        for (const e of m.batch.entries) JSON.parse(e.resource.toString('utf8'));
        upReceived += m.batch.entries.length;
        call.write({ ack: { seq: m.batch.seq, revision: m.batch.toRevision, rejected: [] } });
        upWaiter?.();
      });
      call.on('error', () => undefined);
      check();
    },
  } as grpc.UntypedServiceImplementation);
  const creds = grpc.ServerCredentials.createSsl(
    null,
    [{ private_key: Buffer.from(tls.key), cert_chain: Buffer.from(tls.cert) }],
    false,
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', creds, (err, p) => (err ? reject(err) : resolve(p))),
  );
  const client: Started = await startProcess(
    'node',
    [
      ...(work ? ['--import', 'tsx'] : []),
      'bench/baselines/bare-sync-client.mjs',
      String(port),
      caFile,
      ...(durableDir ? [durableDir] : []),
    ],
    { BARE_SYNC_BATCH: String(BATCH), BARE_SYNC_WINDOW: String(WINDOW), BARE_SYNC_WORK: work ? '1' : '0' },
    ['ready'],
  );
  await bothConnected;
  let seq = 0;
  // A client that dies (a floor's check failing) ends the run with its exit instead of a hang.
  let died: Error | undefined;
  let onDeath: (() => void) | undefined;
  client.proc.once('exit', (code, signal) => {
    died = new Error(`the bare sync client exited (${signal ?? code}) before acknowledging`);
    onDeath?.();
  });
  const waitAck = (target: number): Promise<void> =>
    new Promise((resolve, reject) => {
      const test = (): void => {
        if (acked >= target) {
          ackWaiter = undefined;
          resolve();
        } else if (died) reject(died);
        else ackWaiter = test;
      };
      onDeath = test;
      test();
    });
  const sendBatch = (entries: WireEntry[], toRevision: number): void => {
    seq += 1;
    (down as Call).write({ batch: { seq, entries, toRevision, snapshot: 'NONE' } });
  };

  return {
    pid: client.proc.pid as number,
    async sendDown(resources) {
      const t0 = performance.now();
      for (let i = 0; i < resources.length; i += BATCH) {
        await waitAck(seq - WINDOW + 1);
        const entries = resources.slice(i, i + BATCH).map((resource, j) => ({
          revision: i + j + 1,
          kind: 'TrafficPermission',
          mesh: 'default',
          // The names of bench/fixtures.ts's policy(i), the resources the benchmark sends.
          name: `tp-${String(i + j).padStart(6, '0')}`,
          operation: 'CREATE' as const,
          resource,
        }));
        sendBatch(entries, i + entries.length);
      }
      await waitAck(seq);
      return performance.now() - t0;
    },
    async roundTrips(resource, n) {
      const out: number[] = [];
      for (let i = 0; i < n; i++) {
        const t0 = performance.now();
        sendBatch(
          [
            {
              revision: i + 1,
              kind: 'TrafficPermission',
              mesh: 'default',
              name: 'rt',
              operation: 'UPDATE',
              resource,
            },
          ],
          i + 1,
        );
        await waitAck(seq);
        out.push(performance.now() - t0);
      }
      return out;
    },
    async sendUp(n, json) {
      const target = upReceived + n;
      const t0 = performance.now();
      const done = new Promise<void>((resolve) => {
        const test = (): void => {
          if (upReceived >= target) {
            upWaiter = undefined;
            resolve();
          } else upWaiter = test;
        };
        test();
      });
      (up as Call).write({
        welcome: { instanceId: '', clusterId: '', version: null, cursor: null, start: json, fromRevision: n },
      });
      await done;
      return performance.now() - t0;
    },
    async close() {
      await client.stop();
      server.forceShutdown();
    },
  };
}
