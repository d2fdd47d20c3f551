import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { CHANNEL_OPTIONS, syncClientConstructor } from '../../src/zones/sync-protocol.js';
import type { SyncClient } from '../../src/zones/sync-protocol.js';
import { tempDir } from '../helpers/control-plane.js';
import { capturingLogger, eventually, startGlobal, zoneToken } from '../helpers/multizone.js';

describe("a zone's Hello with control or bidi characters (issue 15 item 7)", () => {
  const dir = tempDir('mz-hello-');
  const { logger, lines } = capturingLogger();
  let global: ControlPlane;
  let client: SyncClient;
  let token: string;

  beforeAll(async () => {
    global = await startGlobal(dir.path, {}, { logger });
    token = await zoneToken(global, 'zone-1');
    const Client = syncClientConstructor();
    const ca = readFileSync(join(dir.path, 'tls', 'cert.pem'));
    client = new Client(`127.0.0.1:${global.ports.kds}`, grpc.credentials.createSsl(ca), CHANNEL_OPTIONS);
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
    const zone = await helloEnd('not-a-token', { zone: 'zone\u202e1' });
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
  });
});
