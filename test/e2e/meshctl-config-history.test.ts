import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { startListeningPlane, tempDir } from '../helpers/control-plane.js';
import { callApi, meshctl } from '../helpers/meshctl.js';

/**
 * A proxy's config through time with the built CLI as a process: `inspect dataplane X --revision R
 * | --at T`, `history dataplane X --config` and `diff dataplane X --from R1 --to R2`. Expected
 * values come from the API (`…/xds/_history`, `?revision=` reads), never from the CLI's own code.
 */
const SVC = 'mesh.io/service';

describe('meshctl: a proxy at any revision, its config timeline and config diff', () => {
  const dir = tempDir('e2e-meshctl-config-');
  let cp: ControlPlane;
  let address: string;
  const config = join(dir.path, 'meshctl-config.yaml');
  const run = (...args: string[]) => meshctl(['--api-address', address, ...args], { config });
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await callApi(address, method, path, body);
    expect(res.status, `${method} ${path}: ${res.text}`).toBeLessThan(300);
    return res;
  };
  const timeout = (seconds: number) =>
    api('PUT', '/meshes/default/timeouts/to-backend', {
      type: 'Timeout',
      mesh: 'default',
      name: 'to-backend',
      sources: [{ match: { [SVC]: 'web' } }],
      destinations: [{ match: { [SVC]: 'backend' } }],
      conf: { connectTimeout: '3s', http: { requestTimeout: `${seconds}s` } },
    });
  /** Revisions of the steps below. */
  const rev: Record<string, number> = {};
  const revisionOf = async (res: Promise<{ headers: Headers }>): Promise<number> =>
    Number((await res).headers.get('etag')?.replace(/"/g, ''));

  beforeAll(async () => {
    cp = await startListeningPlane({
      MESH_STORE_TYPE: 'level',
      MESH_STORE_LEVEL_PATH: join(dir.path, 'data'),
    });
    address = `http://127.0.0.1:${cp.ports.api}`;
    rev.web = await revisionOf(
      api('PUT', '/meshes/default/dataplanes/web-1', {
        type: 'Dataplane',
        mesh: 'default',
        name: 'web-1',
        networking: {
          address: '10.0.0.1',
          inbound: [{ port: 8080, tags: { [SVC]: 'web' } }],
          outbound: [{ port: 10001, tags: { [SVC]: 'backend' } }],
        },
      }),
    );
    rev.t7 = await revisionOf(timeout(7));
    rev.t9 = await revisionOf(timeout(9));
    // A write that does not change web-1's config: it is in no timeline of web-1.
    rev.other = await revisionOf(
      api('PUT', '/meshes/default/timeouts/elsewhere', {
        type: 'Timeout',
        mesh: 'default',
        name: 'elsewhere',
        sources: [{ match: { [SVC]: 'nobody' } }],
        destinations: [{ match: { [SVC]: '*' } }],
        conf: { connectTimeout: '1s' },
      }),
    );
  });
  afterAll(async () => {
    await cp?.close();
    dir.cleanup();
  });

  it('history dataplane X --config prints the timeline the API answers, one row per change', async () => {
    const timeline = (await api('GET', '/meshes/default/dataplanes/web-1/xds/_history')).body as {
      items: Array<{ revision: number; config: string; write: { kind: string; name: string } }>;
    };
    expect(timeline.items.map((i) => i.revision)).toEqual([rev.web, rev.t7, rev.t9]);
    const out = await run('history', 'dataplane', 'web-1', '--config');
    expect(out.code, out.stderr).toBe(0);
    const rows = out.stdout.trim().split('\n');
    expect(rows[0].split(/\s{2,}/)).toEqual(['REVISION', 'TIME', 'CONFIG', 'WRITE', 'ACTOR']);
    expect(rows.slice(1).map((r) => r.split(/\s{2,}/)[0])).toEqual(
      timeline.items.map((i) => String(i.revision)),
    );
    expect(rows[2]).toContain('changed');
    expect(rows[2]).toContain('Timeout to-backend create');
    // JSON is the API's answer; --config on another kind is a usage error.
    const json = await run('history', 'dataplane', 'web-1', '--config', '-o', 'json');
    expect(JSON.parse(json.stdout)).toEqual(timeline);
    const wrong = await run('history', 'timeout', 'to-backend', '--config');
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toContain('--config goes with dataplane NAME');
  });

  it('a change of the config made by a change set names the set', async () => {
    const res = await api('POST', '/_changes', {
      items: [
        {
          type: 'Timeout',
          mesh: 'default',
          name: 'to-backend',
          sources: [{ match: { [SVC]: 'web' } }],
          destinations: [{ match: { [SVC]: 'backend' } }],
          conf: { connectTimeout: '3s', http: { requestTimeout: '11s' } },
        },
      ],
    });
    const set = res.body as { changeSet: string; revision: number };
    const timeline = (await api('GET', '/meshes/default/dataplanes/web-1/xds/_history')).body as {
      items: Array<{ revision: number; write: { changeSet?: string } }>;
    };
    const last = timeline.items.at(-1);
    expect(last?.write.changeSet).toBe(set.changeSet);
    // Put back as it was, so that the other cases read the history they expect.
    await timeout(9);
  });

  it('inspect dataplane X --revision R and --at T answer as of then, and say which revision', async () => {
    const then = await run('inspect', 'dataplane', 'web-1', '--revision', String(rev.t7), '-o', 'json');
    expect(then.code, then.stderr).toBe(0);
    const expected = (await api('GET', `/meshes/default/dataplanes/web-1/policies?revision=${rev.t7}`)).body;
    expect(JSON.parse(then.stdout)).toEqual(expected);
    expect(then.stderr).toContain(`As of revision ${rev.t7}`);
    const dump = await run(
      'inspect',
      'dataplane',
      'web-1',
      '--type',
      'config-dump',
      '--revision',
      String(rev.t7),
    );
    expect(JSON.parse(dump.stdout).pointInTime.revision).toBe(rev.t7);
    expect(dump.stdout).toContain('"seconds": 7');
    // --at: the time of t7's entry is at or before it, and before t9.
    const events = (await api('GET', `/_events?fromRevision=${rev.t7}&size=1`)).body as {
      items: Array<{ time: string }>;
    };
    const at = await run('inspect', 'dataplane', 'web-1', '--at', events.items[0].time, '-o', 'json');
    expect(at.code, at.stderr).toBe(0);
    expect(at.stderr).toContain(`As of revision ${rev.t7} (the last at or before ${events.items[0].time})`);
    // Before the proxy existed: the server's 404, naming the revision.
    const before = await run('inspect', 'dataplane', 'web-1', '--revision', String(rev.web - 1));
    expect(before.code).not.toBe(0);
    expect(before.stderr).toContain(
      `Dataplane "web-1" not found in mesh "default" at revision ${rev.web - 1}`,
    );
    const both = await run('inspect', 'dataplane', 'web-1', '--revision', '3', '--at', events.items[0].time);
    expect(both.code).not.toBe(0);
    expect(both.stderr).toContain('--revision and --at name one point in time');
  });

  it('diff dataplane X --from R1 --to R2 prints the config diff and the writes between that changed it', async () => {
    const out = await run('diff', 'dataplane', 'web-1', '--from', String(rev.t7), '--to', String(rev.other));
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toContain(`--- dataplane/web-1/xds@${rev.t7}`);
    expect(out.stdout).toContain(`+++ dataplane/web-1/xds@${rev.other}`);
    expect(out.stdout).toMatch(/-\s+seconds: 7\n\+\s+seconds: 9/);
    // Versions differ at every revision: they are not part of the diff.
    expect(out.stdout).not.toContain('version_info');
    const writes = out.stdout.slice(out.stdout.indexOf('Writes that changed'));
    expect(writes).toContain(`${rev.t9}  `);
    expect(writes).toContain('Timeout to-backend update by admin: config changed');
    expect(writes).not.toContain('elsewhere');
    // Between two revisions with no change of its config: no diff, and it says so.
    const same = await run('diff', 'dataplane', 'web-1', '--from', String(rev.t9), '--to', String(rev.other));
    expect(same.stdout).toBe(
      `No write changed the config of web-1 between revisions ${rev.t9} and ${rev.other}\n`,
    );
    // --from is for a proxy's config.
    const wrong = await run('diff', 'timeout', 'to-backend', '--from', '3');
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toContain('--from goes with dataplane NAME');
  });
});
