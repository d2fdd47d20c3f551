import { readFileSync } from 'node:fs';
import type { ClientHttp2Session } from 'node:http2';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { CHANNEL_OPTIONS, syncService } from '../../src/zones/sync-protocol.js';
import { tempDir } from '../helpers/control-plane.js';
import { assertInLanes } from '../helpers/fuzz-lanes.js';
import { measureLoopDelay } from '../helpers/loop-delay.js';
import { startGlobal, zoneToken } from '../helpers/multizone.js';
import { connectSync, grpcFrame, rawSyncCall } from '../helpers/sync-wire.js';

/**
 * What a caller of the sync port can send before it is a zone: random metadata (no token, a
 * malformed one, a valid one without the cp scope, a valid one), random Hellos, other messages and
 * random bytes, as gRPC messages or as raw HTTP/2 data. Invariants: Global never answers INTERNAL
 * or UNKNOWN, stays ready, and its event loop is never held for more than 100 ms. Four runs of
 * cases at once ({@link assertInLanes}). The seed is printed; `FUZZ_SEED=<n> npx vitest run
 * test/fuzz/sync.fuzz.test.ts` replays a run, `FUZZ_MS` sets its time.
 */
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
const TIME_MS = Number(process.env.FUZZ_MS ?? 3000);
/** Calls in flight at once: most cases wait on Global (up to 300 ms for a call left open). */
const LANES = 4;
const RUNS = Number(process.env.FUZZ_RUNS ?? 100_000);

const ZONE = 'zone-f';
const METHODS = ['GlobalToZone', 'ZoneToGlobal'] as const;

const text = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom('', ZONE, 'local', '\u0000', '\u202e', 'a'.repeat(300), 'zone-f\n'),
);

/** A Hello: every field random, the zone often the token's. */
const hello = fc.record({
  zone: fc.oneof({ weight: 3, arbitrary: fc.constant(ZONE) }, { weight: 1, arbitrary: text }),
  sessionId: text,
  instanceId: text,
  clusterId: text,
  config: fc.oneof(text, fc.json({ maxDepth: 3 })),
  version: fc.option(fc.record({ version: text, gitTag: text, gitCommit: text, buildDate: text }), {
    nil: null,
  }),
  cursor: fc.option(fc.record({ logId: text, revision: fc.nat() }), { nil: null }),
});

/** Any message a zone could send, with random contents. */
const message = fc.oneof(
  { weight: 4, arbitrary: hello.map((h) => ({ hello: h })) },
  {
    weight: 1,
    arbitrary: fc.record({
      batch: fc.record({
        seq: fc.nat(),
        toRevision: fc.nat(),
        snapshot: fc.constantFrom('NONE', 'PART', 'END'),
        entries: fc.array(
          fc.record({
            revision: fc.nat(),
            kind: fc.constantFrom('Dataplane', 'Mesh', 'ZoneIngress', 'X'),
            mesh: text,
            name: text,
            operation: fc.constantFrom('CREATE', 'UPDATE', 'DELETE'),
            resource: fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)),
          }),
          { maxLength: 3 },
        ),
      }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      ack: fc.record({ seq: fc.nat(), revision: fc.nat(), rejected: fc.constant([]) }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      status: fc.record({
        full: fc.boolean(),
        proxies: fc.array(
          fc.record({
            kind: fc.constant('Dataplane'),
            mesh: text,
            name: text,
            insight: fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)),
          }),
          { maxLength: 3 },
        ),
      }),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ ping: {} }) },
  {
    weight: 1,
    arbitrary: fc.constant({ welcome: { instanceId: 'x', clusterId: 'y', start: '', fromRevision: 0 } }),
  },
);

const encode = syncService().GlobalToZone.requestSerialize;

/** The bytes of one gRPC message: an encoded SyncMessage or random bytes. */
const payload = fc.oneof(
  { weight: 3, arbitrary: message.map((m) => encode(m)) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 2048 }).map((b) => Buffer.from(b)) },
);

type Auth = 'none' | 'garbage' | 'bearer-garbage' | 'no-cp' | 'valid' | 'other-zone';
const auth = fc.constantFrom<Auth>('none', 'garbage', 'bearer-garbage', 'no-cp', 'valid', 'other-zone');

/** Metadata besides the token: keys a client may send (not grpc-*, which grpc-js reads itself). */
const extraMetadata = fc.dictionary(
  fc.stringMatching(/^x-[a-z0-9_.-]{1,20}$/).filter((k) => !k.endsWith('-bin')),
  fc.stringMatching(/^[ -~]{0,200}$/).map((v) => v.trim()),
  { maxKeys: 3 },
);

/** One call: how it authenticates, what it sends, and whether it half-closes afterwards. */
const call = fc.record({
  method: fc.constantFrom(...METHODS),
  auth,
  garbage: fc.stringMatching(/^[!-~]{0,300}$/),
  extra: extraMetadata,
  raw: fc.boolean(),
  messages: fc.array(payload, { maxLength: 4 }),
  /** Raw data only: bytes that are no gRPC framing at all. */
  rawBytes: fc.option(fc.uint8Array({ minLength: 1, maxLength: 4096 }), { nil: undefined }),
  halfClose: fc.boolean(),
});

type Call = typeof call extends fc.Arbitrary<infer T> ? T : never;

function ready(port: number): Promise<number> {
  return fetch(`http://127.0.0.1:${port}/ready`).then((r) => r.status);
}

describe(`sync port fuzz before authentication (FUZZ_SEED=${SEED})`, () => {
  const dir = tempDir('mesh-cp-sync-fuzz-');
  let global: ControlPlane;
  let client: grpc.Client;
  let session: ClientHttp2Session;
  const tokens: Record<'valid' | 'no-cp' | 'other-zone', string> = {
    valid: '',
    'no-cp': '',
    'other-zone': '',
  };

  beforeAll(async () => {
    console.log(
      `sync fuzz seed: ${SEED} (replay: FUZZ_SEED=${SEED} npx vitest run test/fuzz/sync.fuzz.test.ts)`,
    );
    global = await startGlobal(dir.path);
    tokens.valid = await zoneToken(global, ZONE);
    tokens['no-cp'] = await zoneToken(global, ZONE, ['ingress']);
    tokens['other-zone'] = await zoneToken(global, 'zone-g');
    const ca = readFileSync(join(dir.path, 'tls', 'cert.pem'));
    client = new grpc.Client(
      `127.0.0.1:${global.ports.kds}`,
      grpc.credentials.createSsl(ca),
      CHANNEL_OPTIONS,
    );
    session = await connectSync(global.ports.kds, ca);
  });
  afterAll(async () => {
    session?.destroy();
    client?.close();
    await global?.close();
    dir.cleanup();
  });

  const bearer = (c: { auth: Auth; garbage: string }): string | undefined => {
    switch (c.auth) {
      case 'none':
        return undefined;
      case 'garbage':
        return c.garbage;
      case 'bearer-garbage':
        return `Bearer ${c.garbage}`;
      default:
        return `Bearer ${tokens[c.auth]}`;
    }
  };

  /**
   * Sends `c` through grpc-js; the status Global ended the call with. A call Global welcomed (a
   * session), or one still open after 300 ms, is cancelled here (CANCELLED).
   */
  const viaGrpc = (c: Call): Promise<grpc.StatusObject> =>
    new Promise((resolve) => {
      const metadata = new grpc.Metadata();
      const token = bearer(c);
      if (token !== undefined) metadata.set('authorization', token);
      for (const [k, v] of Object.entries(c.extra)) metadata.set(k, v);
      const stream = client.makeBidiStreamRequest(
        `/meshcp.sync.v1.Sync/${c.method}`,
        (b: Buffer) => b,
        (b: Buffer) => b,
        metadata,
      );
      const timer = setTimeout(() => stream.cancel(), 300);
      stream.on('data', () => stream.cancel());
      stream.on('error', () => undefined);
      stream.on('status', (s: grpc.StatusObject) => {
        clearTimeout(timer);
        resolve(s);
      });
      for (const m of c.messages) stream.write(m);
      if (c.halfClose) stream.end();
    });

  /** Sends `c` as raw HTTP/2 data (gRPC frames, or bytes that are none); with a token it is left to grpc-js above. */
  const viaHttp2 = async (c: Call): Promise<number | undefined> => {
    const token = bearer(c);
    const headers: Record<string, string> = { ...c.extra };
    if (token !== undefined) headers.authorization = token;
    const body = c.rawBytes ? [Buffer.from(c.rawBytes)] : c.messages.map(grpcFrame);
    const end = await Promise.race([
      rawSyncCall(session, { method: c.method, headers, body, keepOpen: !c.halfClose }),
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 300)),
    ]);
    return end?.code;
  };

  it(
    'never answers INTERNAL or UNKNOWN, stays ready, never holds the loop for 100 ms',
    async () => {
      let runs = 0;
      const byStatus = new Map<string, number>();
      const { maxMs } = await measureLoopDelay(() =>
        assertInLanes(
          fc.asyncProperty(call, async (c) => {
            runs++;
            // Raw HTTP/2 only without a valid token: an authenticated zone's framing is grpc-js's own.
            const raw = c.raw && (c.auth === 'none' || c.auth === 'garbage' || c.auth === 'bearer-garbage');
            const code = raw ? await viaHttp2(c) : (await viaGrpc(c)).code;
            const name = code === undefined ? 'open' : grpc.status[code];
            byStatus.set(`${c.auth}:${name}`, (byStatus.get(`${c.auth}:${name}`) ?? 0) + 1);
            expect(code, JSON.stringify(c).slice(0, 500)).not.toBe(grpc.status.INTERNAL);
            expect(code).not.toBe(grpc.status.UNKNOWN);
            if (c.auth === 'none' || c.auth === 'garbage' || c.auth === 'bearer-garbage') {
              // Refused on its metadata, whatever it sends.
              expect(code).toBe(grpc.status.UNAUTHENTICATED);
            }
          }),
          { seed: SEED, lanes: LANES, timeMs: TIME_MS, numRuns: RUNS },
        ),
      );
      console.log(
        `sync fuzz: ${runs} calls, longest loop stall ${maxMs.toFixed(1)} ms, by auth:status ${JSON.stringify(Object.fromEntries(byStatus))}`,
      );
      expect(runs).toBeGreaterThan(50);
      expect(maxMs).toBeLessThan(100);
      expect(await ready(global.ports.diagnostics)).toBe(200);
    },
    TIME_MS + 60_000,
  );
});
