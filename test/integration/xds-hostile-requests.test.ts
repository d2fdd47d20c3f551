import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { startControlPlane } from '../../src/runtime/control-plane.js';
import { createLogger } from '../../src/runtime/logger.js';
import { LISTENER } from '../../src/xds/type-urls.js';
import { testConfig } from '../helpers/control-plane.js';
import { measureLoopDelay, measureRssGrowth } from '../helpers/loop-delay.js';
import { capturedLog } from '../helpers/captured-log.js';
import {
  pbField as field,
  rawAdsClient,
  rawAdsRequest as rawRequest,
  rawNode,
  statusWithin,
} from '../helpers/xds.js';

const refusedLines = (lines: string[]) => lines.filter((l) => l.includes('"proxy refused"'));

describe('the xDS port before authentication: what one request may cost', () => {
  let cp: ControlPlane;
  let log: ReturnType<typeof capturedLog>;
  // The clock of the server: the refusal log lines are rate-limited by it.
  let nowMs = Date.parse('2026-03-01T00:00:00Z');

  /** Sends one first request with `node` and resolves with the stream's status. */
  const refusal = (node: object, names: string[] = ['web']) => {
    const client = rawAdsClient(cp.ports.xds);
    client.send({ type_url: LISTENER, resource_names: names, node });
    return statusWithin(client);
  };

  beforeAll(async () => {
    log = capturedLog();
    cp = await startControlPlane(
      testConfig({
        MESH_API_SERVER_PORT: '0',
        MESH_API_SERVER_HTTPS_ENABLED: 'false',
        MESH_DIAGNOSTICS_PORT: '0',
        MESH_XDS_SERVER_GRPC_PORT: '0',
      }),
      { logger: createLogger('info', log.stream), now: () => new Date(nowMs) },
    );
    await cp.defaultsReady;
    // The protos are parsed at the first request (client and server): once, not a request's cost.
    await refusal(rawNode('default.warm-up'));
  });
  afterAll(async () => {
    await cp?.close();
  });

  it('a 4 KB node.id of dots is refused at once with a short status; the log and the loop stay small', async () => {
    const before = log.bytes();
    const id = `${'a.'.repeat(2047)}a`;
    const { result: status, maxMs } = await measureLoopDelay(() => refusal(rawNode(id)));
    expect(status.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(status.details).toMatch(/^node\.id is 4095 characters long; at most 507/);
    expect(status.details.length).toBeLessThanOrEqual(1024);
    expect(log.bytes() - before).toBeLessThan(4096);
    expect(maxMs).toBeLessThan(100);
  });

  it('ten 4 KB node.ids of dots at once: each refused, memory and log bounded', async () => {
    const before = log.bytes();
    const id = `${'a.'.repeat(2047)}a`;
    const { result: statuses, growth } = await measureRssGrowth(() =>
      Promise.all(Array.from({ length: 10 }, () => refusal(rawNode(id)))),
    );
    for (const status of statuses) expect(status.code).toBe(grpc.status.INVALID_ARGUMENT);
    // Each refusal used to log every split of the id: ten wrote 76 MiB.
    expect(log.bytes() - before).toBeLessThan(4096);
    expect(growth).toBeLessThan(64 * 1024 * 1024);
  });

  it('a 40 KB node.id is INVALID_ARGUMENT, not INTERNAL', async () => {
    const status = await refusal(rawNode('x'.repeat(40_000)));
    expect(status.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(status.details).toContain('at most 507');
  });

  it('an id of the longest allowed length, all dots, names the id once and tries it in one pass', async () => {
    const before = log.bytes();
    const id = `${'b.'.repeat(253)}b`;
    const { result: status, maxMs } = await measureLoopDelay(() => refusal(rawNode(id)));
    expect(status.code).toBe(grpc.status.NOT_FOUND);
    expect(status.details.length).toBeLessThanOrEqual(1024);
    expect(status.details).toContain('names no Dataplane');
    expect(log.bytes() - before).toBeLessThan(4096);
    expect(maxMs).toBeLessThan(100);
  });

  it('a node.id with characters no mesh or name has is refused without a lookup, as INVALID_ARGUMENT', async () => {
    const status = await refusal(rawNode('default.WEB 1'));
    expect(status.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(status.details).toContain('[0-9a-z._-]');
  });

  it('node.metadata over its size limit is refused with the limit; a deeply nested one too', async () => {
    const big = await refusal(rawNode('default.web-1', { 'dataplane.token': 'x'.repeat(100_000) }));
    expect(big.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(big.details).toMatch(/^the node is \d+ bytes; at most 65536 /);

    // 3,000 levels, written by hand: the test client's own encoder refuses to nest so deep.
    let value = field(3, Buffer.from('deep'));
    for (let i = 0; i < 3000; i++) {
      value = field(5, field(1, Buffer.concat([field(1, Buffer.from('k')), field(2, value)])));
    }
    const metadata = field(1, Buffer.concat([field(1, Buffer.from('nested')), field(2, value)]));
    const node = Buffer.concat([field(1, Buffer.from('default.web-1')), field(3, metadata)]);
    const deep = await rawRequest(
      cp.ports.xds,
      Buffer.concat([field(2, node), field(4, Buffer.from(LISTENER))]),
    );
    expect(deep.code, deep.details).toBe(grpc.status.INVALID_ARGUMENT);
    expect(deep.details).toMatch(
      /^the DiscoveryRequest's node or error_detail is not a valid protobuf message/,
    );
    expect(deep.details.length).toBeLessThanOrEqual(1024);
    // Within the node's size, nested past the depth limit.
    let nested: object = { stringValue: 'deep' };
    for (let i = 0; i < 40; i++) nested = { listValue: { values: [nested] } };
    const tooDeep = await refusal({ id: 'default.web-1', metadata: { fields: { nested } } });
    expect(tooDeep.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(tooDeep.details).toBe(
      'node.metadata nests Structs and lists more than 16 levels deep; flatten it',
    );
  });

  it('a request over the message size limit is RESOURCE_EXHAUSTED, read no further', async () => {
    const names = Array.from({ length: 3000 }, (_, i) => `${'s'.repeat(400)}-${i}`);
    const status = await refusal(rawNode('default.web-1'), names);
    expect(status.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
  });

  it('repeated refusals from one peer log one line per interval, then one that counts the rest', async () => {
    nowMs += 3600_000;
    const start = refusedLines(log.lines).length;
    const before = log.bytes();
    for (let i = 0; i < 10; i++) {
      const status = await refusal(rawNode('default.web-1'));
      expect(status.code).toBe(grpc.status.NOT_FOUND);
    }
    expect(refusedLines(log.lines).length - start).toBe(1);
    nowMs += 60_000;
    await refusal(rawNode('default.web-1'));
    const lines = refusedLines(log.lines).slice(start);
    expect(lines).toHaveLength(2);
    expect(JSON.parse(lines[1] as string)).toMatchObject({ suppressed: 9 });
    expect(log.bytes() - before).toBeLessThan(4096);
  });

  it('the API stays ready', async () => {
    const res = await fetch(`http://127.0.0.1:${cp.ports.diagnostics}/ready`);
    expect(res.status).toBe(200);
  });
});
