import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { generateSelfSigned } from '../../src/runtime/tls.js';
import { tempDir } from '../helpers/control-plane.js';
import { eventually } from '../helpers/multizone.js';
import { createTestDatabase, pgStoreEnv } from '../helpers/postgres.js';
import type { TestDatabase } from '../helpers/postgres.js';
import { meshCp, startMeshCp } from '../helpers/process.js';
import type { CpProcess } from '../helpers/process.js';
import { startTcpForwarder } from '../helpers/tcp-forwarder.js';
import type { TcpForwarder } from '../helpers/tcp-forwarder.js';

/** One `mesh-cp run` of the cluster, with its ports and the id `GET /` gives. */
interface Instance {
  cp: CpProcess;
  api: number;
  kds: number;
  diagnostics: number;
  id: string;
}

/** The env that points `run` and the log tools at the PostgreSQL log of `database`. */
const pgEnv = pgStoreEnv;

/** A TrafficPermission of mesh `default` whose destination service is `value` (what tells writes apart). */
function permission(name: string, value: string): Record<string, unknown> {
  return {
    type: 'TrafficPermission',
    mesh: 'default',
    name,
    sources: [{ match: { 'mesh.io/service': '*' } }],
    destinations: [{ match: { 'mesh.io/service': value } }],
  };
}

const valueOf = (body: unknown): string =>
  (body as { destinations: Array<{ match: Record<string, string> }> }).destinations[0].match[
    'mesh.io/service'
  ];

/** The revision an ETag (`"123"`) names. */
const revisionOf = (etag: string | null): number => Number(JSON.parse(etag ?? 'null'));

const tpPath = (name: string) => `/meshes/default/traffic-permissions/${name}`;

function put(
  at: Instance,
  name: string,
  value: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`http://127.0.0.1:${at.api}${tpPath(name)}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(permission(name, value)),
  });
}

async function get(
  port: number,
  path: string,
): Promise<{ status: number; body: unknown; etag: string | null }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, body: await res.json(), etag: res.headers.get('etag') };
}

/** The revision an instance has applied of the log (its `/ready`). */
async function appliedRevision(at: Instance): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${at.diagnostics}/ready`);
  return ((await res.json()) as { revision: number }).revision;
}

/** Whether `at` serves TrafficPermission `name` at the revision `etag` names, with `value`. */
async function reflects(at: Instance, name: string, etag: string, value: string): Promise<boolean> {
  const got = await get(at.api, tpPath(name));
  return got.status === 200 && got.etag === etag && valueOf(got.body) === value;
}

type ZoneSub = {
  id: string;
  globalInstanceId: string;
  connectTime: string;
  disconnectTime?: string;
  sync: {
    globalToZone: { start: string; snapshotResources: number };
    zoneToGlobal: { start: string };
  };
};

async function zoneSubs(at: Instance, zone: string): Promise<ZoneSub[]> {
  const got = await get(at.api, `/zones+insights/${zone}`);
  return (got.body as { zoneInsight?: { subscriptions?: ZoneSub[] } }).zoneInsight?.subscriptions ?? [];
}

async function zoneActive(at: Instance, zone: string): Promise<boolean> {
  const got = await get(at.api, '/status/zones');
  return (got.body as Array<{ name: string; active: boolean }>).some((z) => z.name === zone && z.active);
}

/** How many times an ETag is carried from one instance to the next, per resource. */
const HANDOFFS = 25;

/** Acknowledged writes before the kill, and after it. */
const PER_PHASE = 150;

const LEADS = 'this instance leads the cluster (work that runs once runs here)';
const leads = (at: Instance): boolean => at.cp.lines.some((line) => line.msg === LEADS);

describe('three Global instances on one PostgreSQL log', () => {
  const dirs = { tls: tempDir('cluster-tls-'), zone: tempDir('cluster-zone-') };
  const certFile = join(dirs.tls.path, 'cert.pem');
  const keyFile = join(dirs.tls.path, 'key.pem');
  const databases: TestDatabase[] = [];
  const started: CpProcess[] = [];
  const forwarders: TcpForwarder[] = [];

  beforeAll(async () => {
    // One sync certificate for every instance, as behind a load balancer: a zone trusts it once.
    const pair = await generateSelfSigned('');
    writeFileSync(certFile, pair.cert);
    writeFileSync(keyFile, pair.key, { mode: 0o600 });
  });
  afterEach(async () => {
    for (const f of forwarders.splice(0)) await f.close();
    const left = started.splice(0);
    for (const cp of left)
      if (cp.proc.exitCode === null && cp.proc.signalCode === null) cp.proc.kill('SIGKILL');
    await Promise.all(left.map((cp) => cp.exited));
  });
  afterAll(async () => {
    for (const db of databases) await db.drop();
    for (const dir of Object.values(dirs)) dir.cleanup();
  });

  const track = (cp: CpProcess): CpProcess => {
    started.push(cp);
    return cp;
  };

  /** Three Global instances started at once on a new database. */
  async function startCluster(): Promise<{ database: TestDatabase; instances: Instance[] }> {
    const database = await createTestDatabase();
    databases.push(database);
    const env = {
      ...pgEnv(database.name),
      MESH_MODE: 'global',
      MESH_API_SERVER_HTTPS_ENABLED: 'false',
      MESH_MULTIZONE_GLOBAL_KDS_GRPC_PORT: '0',
      MESH_MULTIZONE_GLOBAL_KDS_TLS_CERT_FILE: certFile,
      MESH_MULTIZONE_GLOBAL_KDS_TLS_KEY_FILE: keyFile,
    };
    const cps = [0, 1, 2].map(() => track(startMeshCp(env)));
    const instances = await Promise.all(
      cps.map(async (cp) => {
        const ready = await cp.ready;
        const info = await get(ready.apiPort, '/');
        return {
          cp,
          api: ready.apiPort,
          kds: ready.kdsPort,
          diagnostics: ready.diagnosticsPort,
          id: (info.body as { instanceId: string }).instanceId,
        };
      }),
    );
    expect(new Set(instances.map((i) => i.id)).size).toBe(3);
    return { database, instances };
  }

  async function kill(at: Instance): Promise<void> {
    at.cp.proc.kill('SIGKILL');
    expect((await at.cp.exited).signal).toBe('SIGKILL');
  }

  async function stop(at: Instance): Promise<void> {
    at.cp.proc.kill('SIGTERM');
    expect((await at.cp.exited).code, at.cp.stderr()).toBe(0);
  }

  it('keeps every acknowledged write on both survivors when one of three is SIGKILLed under load; log verify passes', async () => {
    const { database, instances } = await startCluster();
    const victim = instances[1];
    const survivors = instances.filter((i) => i !== victim);

    /** Per resource: the newest acknowledged write, and every value sent (an unanswered write may have landed). */
    const acked = new Map<string, { revision: number; value: string }>();
    const sent = new Map<string, Set<string>>();
    const failures: string[] = [];
    const counts = { acked: 0, ackedAfterKill: 0, victimFailed: 0 };
    let seq = 0;
    let killed = false;
    let done = false;

    const worker = async (w: number): Promise<void> => {
      for (let i = 0; !done; i += 1) {
        const at = instances[(w + i) % instances.length];
        // Half distinct resources, half repeated updates of four shared ones.
        const name = i % 2 === 0 ? `w${w}-${i}` : `shared-${(w + i) % 4}`;
        const value = `v${(seq += 1)}`;
        if (!sent.has(name)) sent.set(name, new Set());
        sent.get(name)?.add(value);
        const afterKill = killed;
        let res: Response;
        try {
          res = await put(at, name, value);
        } catch (err) {
          if (at === victim && killed) counts.victimFailed += 1;
          else failures.push(`PUT ${name} on ${at.id}: ${String((err as Error).cause ?? err)}`);
          continue;
        }
        const text = await res.text();
        if (res.status !== 200 && res.status !== 201) {
          if (at === victim && killed) counts.victimFailed += 1;
          else failures.push(`PUT ${name} on ${at.id}: ${res.status} ${text}`);
          continue;
        }
        const revision = revisionOf(res.headers.get('etag'));
        counts.acked += 1;
        if (afterKill) counts.ackedAfterKill += 1;
        if (revision > (acked.get(name)?.revision ?? 0)) acked.set(name, { revision, value });
      }
    };

    // The kill lands mid-load: after a number of acknowledged writes, and as many follow it.
    const loadStart = Date.now();
    const workers = Array.from({ length: 12 }, (_, w) => worker(w));
    await eventually(
      () => counts.acked >= PER_PHASE || failures.length > 0,
      30_000,
      'writes before the kill',
    );
    const ackedBeforeKill = counts.acked;
    const killAt = Date.now() - loadStart;
    killed = true;
    await kill(victim);
    await eventually(
      () => counts.ackedAfterKill >= PER_PHASE || failures.length > 0,
      30_000,
      'writes after the kill',
    );
    done = true;
    await Promise.all(workers);
    const loadMs = Date.now() - loadStart;
    expect(failures).toEqual([]);
    expect(ackedBeforeKill).toBeGreaterThan(0);
    // The survivors kept serving writes after the kill.
    expect(counts.ackedAfterKill).toBeGreaterThan(0);

    const newest = Math.max(...[...acked.values()].map((a) => a.revision));
    for (const at of survivors) {
      await eventually(async () => (await appliedRevision(at)) >= newest, 10_000, `${at.id} at ${newest}`);
      const missing: string[] = [];
      for (const [name, ack] of acked) {
        const got = await get(at.api, tpPath(name));
        const revision = revisionOf(got.etag);
        if (got.status !== 200) missing.push(`${name}: ${got.status}`);
        else if (revision < ack.revision)
          missing.push(`${name}: revision ${revision} < acked ${ack.revision}`);
        else if (revision === ack.revision && valueOf(got.body) !== ack.value)
          missing.push(`${name}: ${valueOf(got.body)} at acked revision ${revision}, acked ${ack.value}`);
        else if (!sent.get(name)?.has(valueOf(got.body)))
          missing.push(`${name}: ${valueOf(got.body)} was never written`);
      }
      expect(missing, `on ${at.id}`).toEqual([]);
    }

    const verified = await meshCp(['log', 'verify'], pgEnv(database.name));
    expect(verified.code, verified.stderr).toBe(0);
    expect(verified.stdout).toMatch(/^OK: \d+ entries, hash chain and history index sound/m);
    process.stdout.write(
      `cluster load: ${counts.acked} writes acknowledged in ${loadMs} ms, killed at ${killAt} ms ` +
        `(${counts.ackedAfterKill} after the kill, ` +
        `${acked.size} resources), ${counts.victimFailed} refused by the killed instance; ${verified.stdout}`,
    );
    for (const at of survivors) await stop(at);
  }, 60_000);

  it('holds If-Match across instances and reads its writes; the others reflect them', async () => {
    const { instances } = await startCluster();
    const [a, b, c] = instances;
    /** ETags one instance answered that the next one refused (checked last: how often, and the rest held). */
    const refused: string[] = [];
    /** A PUT with the ETag `from` answered, sent to `to` at once; a refusal is counted, then retried once `to` has it. */
    const handoff = async (
      name: string,
      from: Instance,
      to: Instance,
      etag: string,
      value: string,
      next: string,
    ): Promise<string> => {
      const res = await put(to, name, next, { 'if-match': etag });
      if (res.status === 200) return res.headers.get('etag') as string;
      refused.push(
        `${name}: If-Match ${etag} from ${from.id} on ${to.id}: ${res.status} ${await res.text()}`,
      );
      await eventually(() => reflects(to, name, etag, value), 10_000, `${to.id} reflects ${etag}`);
      const again = await put(to, name, next, { 'if-match': etag });
      expect(again.status, await again.clone().text()).toBe(200);
      return again.headers.get('etag') as string;
    };

    const created = await put(a, 'cas', 'one');
    expect(created.status, await created.clone().text()).toBe(201);
    const first = created.headers.get('etag') as string;
    // Read-your-writes on the instance that answered.
    expect(await reflects(a, 'cas', first, 'one')).toBe(true);
    // The ETag A answered succeeds on B, once: C refuses it.
    const second = await handoff('cas', a, b, first, 'one', 'two');
    expect(revisionOf(second)).toBeGreaterThan(revisionOf(first));
    expect(await reflects(b, 'cas', second, 'two')).toBe(true);
    const stale = await put(c, 'cas', 'three', { 'if-match': first });
    expect(stale.status, await stale.clone().text()).toBe(412);
    // Another instance reflects a write shortly (eventual, not timed here: bench measures it).
    for (const at of instances)
      await eventually(() => reflects(at, 'cas', second, 'two'), 10_000, `${at.id} reflects ${second}`);

    // Clients behind a load balancer: each ETag goes at once to the next instance, around the ring
    // (a few resources at a time, as several clients do).
    const ring = async (name: string): Promise<void> => {
      const made = await put(a, name, 'h0');
      expect(made.status, await made.clone().text()).toBe(201);
      let etag = made.headers.get('etag') as string;
      for (let round = 1; round <= HANDOFFS; round += 1) {
        const [from, to] = [instances[(round - 1) % 3], instances[round % 3]];
        etag = await handoff(name, from, to, etag, `h${round - 1}`, `h${round}`);
      }
      for (const at of instances)
        await eventually(() => reflects(at, name, etag, `h${HANDOFFS}`), 10_000, `${at.id} reflects ${etag}`);
    };
    await Promise.all([1, 2, 3, 4].map((k) => ring(`ring-${k}`)));

    let etag = second;
    let value = 'two';
    // The same ETag sent to all three at once: exactly one wins, the others get 412.
    for (let round = 0; round < 5; round += 1) {
      const answers = await Promise.all(
        instances.map((at, i) => put(at, 'cas', `r${round}-${i}`, { 'if-match': etag })),
      );
      const statuses = answers.map((res) => res.status);
      expect(
        statuses.filter((s) => s === 200),
        `round ${round}: ${statuses.join(' ')}`,
      ).toHaveLength(1);
      expect(
        statuses.filter((s) => s === 412),
        `round ${round}: ${statuses.join(' ')}`,
      ).toHaveLength(2);
      const winner = statuses.indexOf(200);
      etag = answers[winner].headers.get('etag') as string;
      value = `r${round}-${winner}`;
      for (const at of instances)
        await eventually(() => reflects(at, 'cas', etag, value), 10_000, `${at.id} reflects round ${round}`);
    }
    // Every ETag carried to the next instance was taken there at once (checked last, so that a
    // refusal shows how often it happened and that the rest of the ring held).
    expect(refused, `${refused.length} of ${4 * HANDOFFS + 1} handoffs refused`).toEqual([]);
    for (const at of instances) await stop(at);
  }, 60_000);

  it('resumes a zone on another instance without a snapshot when its instance is SIGKILLed', async () => {
    const { instances } = await startCluster();
    // The forwarder tries the leader first: the zone lands there, and its SIGKILL moves both.
    const leader = await eventually(() => instances.find(leads), 10_000, 'a leader');
    const lb = await startTcpForwarder([leader, ...instances.filter((i) => i !== leader)].map((i) => i.kds));
    forwarders.push(lb);

    const tokenRes = await fetch(`http://127.0.0.1:${instances[0].api}/tokens/zone`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ zone: 'zone-1', validFor: '1h' }),
    });
    expect(tokenRes.status).toBe(200);
    const zone = track(
      startMeshCp({
        MESH_MODE: 'zone',
        MESH_STORE_LEVEL_PATH: dirs.zone.path,
        MESH_API_SERVER_HTTPS_ENABLED: 'false',
        MESH_MULTIZONE_ZONE_NAME: 'zone-1',
        MESH_MULTIZONE_ZONE_GLOBAL_ADDRESS: `grpcs://127.0.0.1:${lb.port}`,
        MESH_MULTIZONE_ZONE_KDS_TOKEN: await tokenRes.text(),
        MESH_MULTIZONE_ZONE_KDS_ROOT_CA_FILE: certFile,
      }),
    );
    const z = await zone.ready;
    for (const at of instances)
      await eventually(() => zoneActive(at, 'zone-1'), 15_000, `zone-1 active on ${at.id}`);

    // Down: a policy written on each instance reaches the zone. Up: a zone proxy reaches Global.
    for (const [i, at] of instances.entries())
      expect((await put(at, `before-${i}`, `before-${i}`)).status).toBe(201);
    for (const i of [0, 1, 2])
      await eventually(
        async () => (await get(z.apiPort, tpPath(`before-${i}`))).status === 200,
        10_000,
        `before-${i} on the zone`,
      );
    const proxy = (name: string) => ({
      type: 'Dataplane',
      mesh: 'default',
      name,
      networking: { address: '10.0.0.1', inbound: [{ port: 8080, tags: { 'mesh.io/service': name } }] },
    });
    const putProxy = (name: string) =>
      fetch(`http://127.0.0.1:${z.apiPort}/meshes/default/dataplanes/${name}`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(proxy(name)),
      });
    expect((await putProxy('web-1')).status).toBe(201);
    for (const at of instances)
      await eventually(
        async () => (await get(at.api, '/meshes/default/dataplanes/zone-1.web-1')).status === 200,
        10_000,
        `zone-1.web-1 on ${at.id}`,
      );

    // The instance the zone is connected to, by the open subscription's globalInstanceId.
    const open = await eventually(
      async () => (await zoneSubs(instances[0], 'zone-1')).find((s) => s.disconnectTime === undefined),
      10_000,
      'the open subscription of zone-1',
    );
    const victim = instances.find((i) => i.id === open.globalInstanceId);
    expect(victim, `subscription on ${open.globalInstanceId}`).toBeDefined();
    const survivors = instances.filter((i) => i !== victim);
    expect(victim, 'the zone connected through the forwarder to its first backend').toBe(leader);

    const killedAt = Date.now();
    await kill(victim as Instance);

    // The zone reconnects through the forwarder to a survivor, resuming both ways from its cursors.
    const resumed = await eventually(
      async () => {
        const newest = (await zoneSubs(survivors[0], 'zone-1')).at(-1);
        return newest &&
          newest.globalInstanceId !== open.globalInstanceId &&
          newest.disconnectTime === undefined &&
          newest.sync.globalToZone.start !== 'pending' &&
          newest.sync.zoneToGlobal.start !== 'pending'
          ? newest
          : undefined;
      },
      20_000,
      'a subscription of zone-1 on a survivor',
    );
    const reconnectedMs = Date.now() - killedAt;
    expect(survivors.map((s) => s.id)).toContain(resumed.globalInstanceId);
    expect(resumed.sync.globalToZone).toMatchObject({ start: 'resume', snapshotResources: 0 });
    expect(resumed.sync.zoneToGlobal.start).toBe('resume');
    await eventually(
      async () => (await zoneSubs(survivors[1], 'zone-1')).at(-1)?.id === resumed.id,
      10_000,
      'the same newest subscription on the other survivor',
    );

    // Both directions work after the move.
    for (const [i, at] of survivors.entries())
      expect((await put(at, `after-${i}`, `after-${i}`)).status).toBe(201);
    for (const i of [0, 1])
      await eventually(
        async () => (await get(z.apiPort, tpPath(`after-${i}`))).status === 200,
        10_000,
        `after-${i} on the zone`,
      );
    expect((await putProxy('web-2')).status).toBe(201);
    for (const at of survivors)
      await eventually(
        async () => (await get(at.api, '/meshes/default/dataplanes/zone-1.web-2')).status === 200,
        10_000,
        `zone-1.web-2 on ${at.id}`,
      );

    // The leader ends the killed instance's subscription (it is not seen for 10 s).
    let endedMs = 0;
    for (const at of survivors) {
      const ended = await eventually(
        async () => (await zoneSubs(at, 'zone-1')).find((s) => s.id === open.id)?.disconnectTime,
        40_000,
        `the killed instance's subscription ended, on ${at.id}`,
      );
      endedMs = Math.max(endedMs, Date.parse(ended) - killedAt);
    }
    for (const at of survivors) expect(await zoneActive(at, 'zone-1')).toBe(true);

    // Leadership moves when the leader dies (measured by the time of the survivor's log line).
    const line = await eventually(
      () => survivors.flatMap((at) => at.cp.lines).find((l) => l.msg === LEADS),
      30_000,
      'a survivor leads',
    );
    const ledMs = (line.time as number) - killedAt;
    process.stdout.write(
      `zone moved: resumed on a survivor ${reconnectedMs} ms after SIGKILL, old subscription ended ` +
        `${endedMs} ms after; a survivor led ${ledMs} ms after\n`,
    );

    zone.proc.kill('SIGTERM');
    expect((await zone.exited).code, zone.stderr()).toBe(0);
    for (const at of survivors) await stop(at);
  }, 90_000);
});
