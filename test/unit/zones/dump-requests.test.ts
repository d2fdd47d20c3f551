import { describe, expect, it } from 'vitest';
import { createDumpRequests } from '../../../src/zones/dump-requests.js';
import type { DumpRequest } from '../../../src/zones/sync-protocol.js';
import { AppError } from '../../../src/util/errors.js';

const req = { kind: 'Dataplane', mesh: 'default', name: 'web', view: 'xds' };
const ok = (id: number, body: string) => ({
  id,
  contentType: 'application/json',
  body: Buffer.from(body),
  errorCode: '',
  errorTitle: '',
  errorDetails: '',
});

describe('Global’s proxy view requests to zones (correlated by id)', () => {
  it('each answer goes to the request of its id, and only from the zone asked', async () => {
    const requests = createDumpRequests(5000);
    const sent: DumpRequest[] = [];
    const a = requests.ask('zone-1', (r) => sent.push(r), req);
    const b = requests.ask('zone-2', (r) => sent.push(r), { ...req, name: 'db' });
    expect(sent.map((r) => r.name)).toEqual(['web', 'db']);
    expect(sent[0].id).not.toBe(sent[1].id);
    requests.answered('zone-1', ok(sent[1].id, 'not yours'));
    requests.answered('zone-2', ok(sent[1].id, 'db'));
    requests.answered('zone-1', ok(sent[0].id, 'web'));
    expect((await a).body.toString()).toBe('web');
    expect((await b).body.toString()).toBe('db');
  });

  it('the zone’s error comes back with its code; an unknown code is INTERNAL', async () => {
    const requests = createDumpRequests(5000);
    const sent: DumpRequest[] = [];
    const a = requests.ask('zone-1', (r) => sent.push(r), req);
    const b = requests.ask('zone-1', (r) => sent.push(r), req);
    const fail = (id: number, errorCode: string) => ({
      ...ok(id, ''),
      errorCode,
      errorTitle: 'Not found',
      errorDetails: 'Dataplane "web" not found in mesh "default"',
    });
    requests.answered('zone-1', fail(sent[0].id, 'NOT_FOUND'));
    requests.answered('zone-1', fail(sent[1].id, 'SOMETHING_NEW'));
    await expect(a).rejects.toMatchObject({
      code: 'NOT_FOUND',
      details: 'Dataplane "web" not found in mesh "default"',
    });
    await expect(b).rejects.toMatchObject({ code: 'INTERNAL' });
  });

  it('UNAVAILABLE naming the zone when it does not answer in time or disconnects first', async () => {
    const requests = createDumpRequests(50);
    const late = requests.ask('zone-1', () => undefined, req);
    await expect(late).rejects.toBeInstanceOf(AppError);
    await expect(late).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      details: 'zone "zone-1" did not answer within 50 ms',
    });
    const slow = createDumpRequests(60_000);
    const dropped = slow.ask('zone-2', () => undefined, req);
    slow.dropZone('zone-2', 'the stream ended');
    await expect(dropped).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      details: 'zone "zone-2" disconnected before answering: the stream ended',
    });
  });
});
