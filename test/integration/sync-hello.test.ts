import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { CHANNEL_OPTIONS } from '../../src/zones/sync-protocol.js';
import type { SyncClient, SyncMessage } from '../../src/zones/sync-protocol.js';
import { tempDir } from '../helpers/control-plane.js';
import { capturingLogger, eventually, startGlobal, zoneToken } from '../helpers/multizone.js';
import { syncClientOf } from '../helpers/sync-wire.js';

describe("a zone's Hello with control or bidi characters", () => {
  const dir = tempDir('mz-hello-');
  const { logger, lines } = capturingLogger();
  let global: ControlPlane;
  let client: SyncClient;
  let token: string;

  beforeAll(async () => {
    global = await startGlobal(dir.path, {}, { logger });
    token = await zoneToken(global, 'zone-1');
    client = syncClientOf(global, dir.path);
  });
  afterAll(async () => {
    client?.close();
    await global?.close();
    dir.cleanup();
  });

  /** Opens ZoneToGlobal, sends `hello`, and resolves with how Global ended the stream. */
  const helloEnd = (bearer: string, hello: Record<string, unknown>) =>
    new Promise<{ code: number; details: string }>((resolve) => {
      const metadata = new grpc.Metadata();
      metadata.set('authorization', `Bearer ${bearer}`);
      const call = client.ZoneToGlobal(metadata);
      call.on('data', () => undefined);
      call.on('error', (err: grpc.ServiceError) => resolve({ code: err.code, details: err.details }));
      call.on('status', (s: grpc.StatusObject) => resolve({ code: s.code, details: s.details }));
      call.write({
        hello: {
          zone: 'zone-1',
          sessionId: 's-1',
          instanceId: 'i-1',
          clusterId: 'c-1',
          config: '{}',
          version: null,
          cursor: null,
          ...hello,
        },
      });
    });

  it('is refused with INVALID_ARGUMENT naming the field, and the log line writes the zone escaped', async () => {
    const zone = await helloEnd(token, { zone: 'zone\u202e1' });
    expect(zone).toEqual({
      code: grpc.status.INVALID_ARGUMENT,
      details:
        "the Hello's zone must not contain control characters or bidirectional formatting characters (found U+202E)",
    });
    const line = await eventually(
      () => lines.find((l) => l.msg === 'zone connection refused'),
      2000,
      'the log line',
    );
    expect(line.zone).toBe('zone\\u202e1');
    expect(JSON.stringify(lines)).not.toContain('\u202e');

    const session = await helloEnd(token, { sessionId: 's\u00001' });
    expect(session.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(session.details).toContain("the Hello's sessionId must not contain control characters");
    expect(global.views.get('Zone', undefined, 'zone-1')).toBeUndefined();
    // Without a valid token the Hello is not even read.
    const unauthenticated = await helloEnd('not-a-token', { zone: 'zone\u202e1' });
    expect(unauthenticated.code).toBe(grpc.status.UNAUTHENTICATED);
  });
});

describe('a zone that sends what a stream does not carry at that point', () => {
  const dir = tempDir('mz-early-');
  const { logger, lines } = capturingLogger();
  let global: ControlPlane;
  let client: SyncClient;

  beforeAll(async () => {
    global = await startGlobal(dir.path, {}, { logger });
    client = syncClientOf(global, dir.path);
  });
  afterAll(async () => {
    client?.close();
    await global?.close();
    dir.cleanup();
  });

  const hello = (zone: string): SyncMessage => ({
    hello: {
      zone,
      sessionId: `s-${zone}`,
      instanceId: 'i-1',
      clusterId: 'c-1',
      config: '{}',
      version: null,
      cursor: null,
    },
  });

  /**
   * Opens `method` as `zone`, sends its Hello and `message` right after it (or, with `afterWelcome`,
   * once Global's Welcome came), and resolves with how Global ended the stream and what it sent.
   * Each zone is new, so Global writes its Zone before it answers: the message comes before the Welcome.
   */
  const send = async (
    method: 'GlobalToZone' | 'ZoneToGlobal',
    zone: string,
    message: SyncMessage,
    afterWelcome = false,
  ) => {
    const metadata = new grpc.Metadata();
    metadata.set('authorization', `Bearer ${await zoneToken(global, zone)}`);
    return new Promise<{ code: number; details: string; received: string[] }>((resolve) => {
      const call = client[method](metadata);
      const received: string[] = [];
      call.on('data', (m: { body: string }) => {
        received.push(m.body);
        if (afterWelcome && m.body === 'welcome') call.write(message);
      });
      call.on('error', (err: grpc.ServiceError) =>
        resolve({ code: err.code, details: err.details, received }),
      );
      call.on('status', (st: grpc.StatusObject) => resolve({ code: st.code, details: st.details, received }));
      call.write(hello(zone));
      if (!afterWelcome) call.write(message);
    });
  };

  it('between the Hello and the Welcome: ends the stream with INVALID_ARGUMENT naming the message, never drops it silently', async () => {
    const batch: SyncMessage = { batch: { seq: 1, entries: [], toRevision: 1, snapshot: 'NONE' } };
    expect(await send('ZoneToGlobal', 'zone-1', batch)).toEqual({
      code: grpc.status.INVALID_ARGUMENT,
      details:
        "a batch arrived before Global's Welcome: a zone sends nothing on a stream but its Hello until Global answers with a Welcome",
      received: [],
    });
    const status = await send('ZoneToGlobal', 'zone-2', { status: { proxies: [], full: true } });
    expect(status.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(status.details).toContain("a status arrived before Global's Welcome");
    const ack = await send('GlobalToZone', 'zone-3', { ack: { seq: 1, revision: 1, rejected: [] } });
    expect(ack).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, received: [] });
    expect(ack.details).toContain("an ack arrived before Global's Welcome");
    const twice = await send('GlobalToZone', 'zone-4', hello('zone-4'));
    expect(twice).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, received: [] });
    expect(twice.details).toContain("a hello arrived before Global's Welcome");
    const refused = lines.filter((l) => l.msg === 'zone connection refused');
    expect(refused.map((l) => [l.zone, l.code])).toEqual([
      ['zone-1', 'INVALID_ARGUMENT'],
      ['zone-2', 'INVALID_ARGUMENT'],
      ['zone-3', 'INVALID_ARGUMENT'],
      ['zone-4', 'INVALID_ARGUMENT'],
    ]);
    expect(global.multizone?.zoneStatuses().filter((z) => z.active)).toEqual([]);
  });

  it('after the Welcome: a message of the other direction ends the stream with INVALID_ARGUMENT', async () => {
    const batch: SyncMessage = { batch: { seq: 1, entries: [], toRevision: 1, snapshot: 'NONE' } };
    const down = await send('GlobalToZone', 'zone-5', batch, true);
    expect(down).toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
      details:
        'a batch is not a message of the Global→zone stream: a zone sends only acks and proxy views on it',
    });
    expect(down.received[0]).toBe('welcome');
    const up = await send('ZoneToGlobal', 'zone-6', { ack: { seq: 1, revision: 1, rejected: [] } }, true);
    expect(up).toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
      details:
        'an ack is not a message of the zone→Global stream: a zone sends only batches and proxy status on it',
    });
    expect(lines.filter((l) => l.msg === 'a zone sent a message out of place').map((l) => l.zone)).toEqual([
      'zone-5',
      'zone-6',
    ]);
  });

  it('a stream the zone half-closes is ended by Global, with or without its Hello (never left open)', async () => {
    for (const withHello of [false, true]) {
      const metadata = new grpc.Metadata();
      metadata.set('authorization', `Bearer ${await zoneToken(global, 'zone-7')}`);
      const end = await new Promise<{ code: number } | 'still open'>((resolve) => {
        const call = client.GlobalToZone(metadata);
        const timer = setTimeout(() => {
          resolve('still open');
          call.cancel();
        }, 3000);
        call.on('data', () => undefined);
        call.on('error', () => undefined);
        call.on('status', (st: grpc.StatusObject) => {
          clearTimeout(timer);
          resolve({ code: st.code });
        });
        if (withHello) call.write(hello('zone-7'));
        call.end();
      });
      expect(end).toEqual({ code: grpc.status.OK });
    }
  });

  it('bytes that are no SyncMessage end the stream with INVALID_ARGUMENT, not INTERNAL', async () => {
    const metadata = new grpc.Metadata();
    metadata.set('authorization', `Bearer ${await zoneToken(global, 'zone-8')}`);
    const raw = new grpc.Client(
      `127.0.0.1:${global.ports.kds}`,
      grpc.credentials.createSsl(readFileSync(join(dir.path, 'tls', 'cert.pem'))),
      CHANNEL_OPTIONS,
    );
    const end = await new Promise<grpc.StatusObject>((resolve) => {
      const call = raw.makeBidiStreamRequest(
        '/meshcp.sync.v1.Sync/ZoneToGlobal',
        (b: Buffer) => b,
        (b: Buffer) => b,
        metadata,
      );
      call.on('data', () => undefined);
      call.on('error', () => undefined);
      call.on('status', resolve);
      // Field 1 (the Hello), length-delimited, whose length runs past the end.
      call.write(Buffer.from([0x0a, 0x7f, 0x01]));
    });
    raw.close();
    expect(end.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(end.details).toMatch(/^a message that is not a SyncMessage of proto\/sync\.proto \(.+\)$/);
    const line = await eventually(
      () => lines.find((l) => l.msg === 'a zone sent a message out of place' && l.zone === 'zone-8'),
      2000,
      'the log line',
    );
    expect(line.reason).toBe(end.details);
  });
});
