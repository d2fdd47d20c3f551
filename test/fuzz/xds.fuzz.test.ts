import * as grpc from '@grpc/grpc-js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { createLogger } from '../../src/runtime/logger.js';
import { CLUSTER, CLUSTER_LOAD_ASSIGNMENT, LISTENER } from '../../src/xds/type-urls.js';
import { issueDataplaneToken } from '../helpers/auth.js';
import { capturedLog } from '../helpers/captured-log.js';
import { startListeningPlane, tempDir } from '../helpers/control-plane.js';
import { assertInLanes } from '../helpers/fuzz-lanes.js';
import { measureLoopDelay } from '../helpers/loop-delay.js';
import {
  encodeAdsRequest,
  putDataplane,
  rawAdsClient,
  rawAdsExchange,
  rawAdsRequest,
  type RawAdsClient,
} from '../helpers/xds.js';

/**
 * Random DiscoveryRequests against the xDS port of a control plane on a real LevelDB: node ids
 * (names, dots, any text, too long), node metadata (the identity and token keys, nested values),
 * resource names (few, many, over the cap), type URLs, and messages that are not protobuf at all.
 * Invariants: every stream is answered or ends within its deadline, never with INTERNAL or UNKNOWN,
 * with a status message that fits gRPC trailers; no request holds the loop 100 ms; the log lines
 * stay short; the API stays ready. Four runs of cases at once ({@link assertInLanes}), so a loop
 * delay measured over one stream includes what the others in flight cost. `FUZZ_SEED=<n> npx
 * vitest run test/fuzz` replays a run, `FUZZ_MS` sets its time.
 */
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
const TIME_MS = Number(process.env.FUZZ_MS ?? 3000);
/** Streams in flight at once: most of a case is waiting on a new connection and its answer. */
const LANES = 4;
const RUNS = Number(process.env.FUZZ_RUNS ?? 100_000);
const DEADLINE_MS = 5000;

const SVC = 'mesh.io/service';

/** A JSON value as a `google.protobuf.Value` the test client encodes. */
function toValue(v: unknown): object {
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'number') return { numberValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  if (Array.isArray(v)) return { listValue: { values: v.map(toValue) } };
  if (v !== null && typeof v === 'object') return { structValue: toStruct(v as Record<string, unknown>) };
  return { nullValue: 'NULL_VALUE' };
}
const toStruct = (o: Record<string, unknown>): object => ({
  fields: Object.fromEntries(Object.entries(o).map(([k, v]) => [k, toValue(v)])),
});

const nameLike = fc.stringMatching(/^[0-9a-z][0-9a-z._-]{0,40}$/);
const nodeId = fc.oneof(
  fc.constantFrom('default.client-1', 'default.web-1', 'default.nope', 'default.', '.x', ''),
  fc.tuple(nameLike, nameLike).map(([m, n]) => `${m}.${n}`),
  fc
    .array(fc.constantFrom('a', 'b', '.', '-', 'default', 'web-1'), { maxLength: 400 })
    .map((p) => p.join('')),
  fc.string({ unit: 'grapheme', maxLength: 300 }),
  fc.integer({ min: 500, max: 50_000 }).map((n) => 'a.'.repeat(Math.ceil(n / 2)).slice(0, n)),
);
const metadataValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', maxDepth: 24 },
    fc.string({ maxLength: 40 }),
    fc.double({ noNaN: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.string({ maxLength: 8 }), tie('value'), { maxKeys: 3 }),
  ),
})).value;
const fullMetadata = fc.record(
  {
    'dataplane.mesh': fc.oneof(fc.constantFrom('default', ''), nameLike, metadataValue),
    'dataplane.name': fc.oneof(fc.constantFrom('client-1', 'web-1'), nameLike, metadataValue),
    'dataplane.token': fc.oneof(fc.constant('valid'), fc.string({ maxLength: 60 }), metadataValue),
    extra: metadataValue,
    // A length (the value is made when sent): a counterexample stays readable.
    big: fc.integer({ min: 1, max: 120_000 }),
  },
  { requiredKeys: [] },
);
const metadata = fc.oneof(
  fc.constant({}),
  fc.record({ 'dataplane.token': fc.constant('valid') }),
  fc.record({
    'dataplane.token': fc.constant('valid'),
    'dataplane.mesh': fc.constant('default'),
    'dataplane.name': fc.constant('client-1'),
  }),
  fullMetadata,
);
const resourceNames = fc.oneof(
  fc.array(fc.oneof(nameLike, fc.constantFrom('web', 'client', 'nothing')), { maxLength: 20 }),
  fc.integer({ min: 0, max: 2500 }).map((n) => Array.from({ length: n }, (_, i) => `svc-${i}`)),
  fc.array(fc.string({ unit: 'grapheme', maxLength: 80 }), { maxLength: 50 }),
);
const request = fc.record({
  withNode: fc.boolean(),
  id: nodeId,
  metadata,
  names: resourceNames,
  typeUrl: fc.oneof(
    fc.constantFrom(LISTENER, CLUSTER, CLUSTER_LOAD_ASSIGNMENT),
    fc.string({ maxLength: 30 }),
  ),
  bearer: fc.option(fc.string({ maxLength: 40 }), { nil: undefined }),
});
const exchange = fc.oneof(
  { weight: 5, arbitrary: request.map((r) => ({ kind: 'request' as const, ...r })) },
  {
    weight: 1,
    arbitrary: fc.uint8Array({ maxLength: 2000 }).map((bytes) => ({ kind: 'bytes' as const, bytes })),
  },
);

describe(`xDS fuzz (FUZZ_SEED=${SEED})`, () => {
  let cp: ControlPlane;
  let dir: ReturnType<typeof tempDir>;
  let token: string;
  const log = capturedLog();

  const put = (name: string, service: string, port: number) =>
    putDataplane(cp.app, 'default', name, {
      address: '127.0.0.1',
      inbound: [{ port, tags: { [SVC]: service } }],
    });

  /** The first answer of a stream, or the status it ended with; fails past the deadline. */
  const firstOf = (client: RawAdsClient): Promise<{ answered: true } | grpc.StatusObject> =>
    Promise.race([client.next(DEADLINE_MS).then(() => ({ answered: true as const })), client.status]);

  beforeAll(async () => {
    console.log(
      `xDS fuzz seed: ${SEED} (replay: FUZZ_SEED=${SEED} npx vitest run test/fuzz/xds.fuzz.test.ts)`,
    );
    dir = tempDir('mesh-cp-xds-fuzz-');
    cp = await startListeningPlane(
      { MESH_STORE_TYPE: 'level', MESH_STORE_LEVEL_PATH: dir.path },
      { logger: createLogger('info', log.stream) },
    );
    await put('client-1', 'client', 1);
    await put('web-1', 'web', 8080);
    token = await issueDataplaneToken(cp.app, { mesh: 'default', name: 'client-1' });
    // The protos are parsed, and the paths compiled, at the first requests (client and server):
    // once, not a request's cost.
    for (const node of [
      undefined,
      { id: 'default.nope', metadata: toStruct({ a: [1, { b: true }] }) },
      { id: 'default.client-1', metadata: toStruct({ 'dataplane.token': token }) },
    ]) {
      const warm = rawAdsClient(cp.ports.xds);
      const names = Array.from({ length: 900 }, (_, i) => `svc-${i}`);
      warm.send({ type_url: LISTENER, resource_names: names, ...(node ? { node } : {}) });
      await firstOf(warm);
      warm.close();
    }
    await rawAdsRequest(cp.ports.xds, Buffer.from([1, 2, 3]));
  });
  afterAll(async () => {
    await cp?.close();
    dir?.cleanup();
  });

  it(
    'every stream is answered or ends in time, never INTERNAL, with a short status; no request holds the loop 100 ms',
    async () => {
      let runs = 0;
      const byCode = new Map<string, number>();
      let worstMs = 0;
      await assertInLanes(
        fc.asyncProperty(exchange, async (ex) => {
          runs++;
          // Encoded first: the loop delay measured is the server's (the client shares this process).
          let bytes: Buffer;
          const md = new grpc.Metadata();
          if (ex.kind === 'bytes') bytes = Buffer.from(ex.bytes);
          else {
            if (ex.bearer !== undefined) md.set('authorization', `Bearer ${ex.bearer}`);
            const meta = { ...ex.metadata } as Record<string, unknown>;
            if (meta['dataplane.token'] === 'valid') meta['dataplane.token'] = token;
            if (typeof meta.big === 'number') meta.big = 'x'.repeat(meta.big);
            bytes = encodeAdsRequest({
              type_url: ex.typeUrl,
              resource_names: ex.names,
              ...(ex.withNode ? { node: { id: ex.id, metadata: toStruct(meta) } } : {}),
            });
          }
          const { result, maxMs } = await measureLoopDelay(() =>
            rawAdsExchange(cp.ports.xds, bytes, md, DEADLINE_MS),
          );
          worstMs = Math.max(worstMs, maxMs);
          if (process.env.SLOW && maxMs > 30)
            console.log(
              'SLOW',
              maxMs,
              JSON.stringify(ex).slice(0, 200),
              ex.kind === 'request'
                ? [ex.names.length, ex.id.length, JSON.stringify(ex.metadata).length]
                : ex.bytes.length,
            );
          const code = 'answered' in result ? 'answered' : grpc.status[result.code];
          byCode.set(String(code), (byCode.get(String(code)) ?? 0) + 1);
          const where = `${JSON.stringify(ex).slice(0, 300)} -> ${code}`;
          if (!('answered' in result)) {
            expect(result.code, `${where} ${result.details}`).not.toBe(grpc.status.INTERNAL);
            expect(result.code, `${where} ${result.details}`).not.toBe(grpc.status.UNKNOWN);
            expect(result.code, `${where} ${result.details}`).not.toBe(grpc.status.DEADLINE_EXCEEDED);
            expect(result.details.length, where).toBeLessThanOrEqual(1024);
          }
          expect(maxMs, where).toBeLessThan(100);
        }),
        { seed: SEED, lanes: LANES, timeMs: TIME_MS, numRuns: RUNS },
      );
      console.log(
        `xDS fuzz: ${runs} streams, worst loop delay ${worstMs.toFixed(1)} ms, ${log.lines.length} log lines (${log.bytes()} bytes), by outcome ${JSON.stringify(Object.fromEntries(byCode))}`,
      );
      expect(runs).toBeGreaterThan(50);
      for (const line of log.lines) expect(Buffer.byteLength(line)).toBeLessThan(4096);
      const ready = await fetch(`http://127.0.0.1:${cp.ports.diagnostics}/ready`);
      expect(ready.status).toBe(200);
    },
    TIME_MS + 60_000,
  );
});
