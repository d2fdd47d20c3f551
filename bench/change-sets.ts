// Change sets: `POST /_changes` with 100 data planes must be appended (answered once durable) in at
// most 3× the time of one durable PUT, measured beside it on the same server in the same run. Each
// run starts a fresh mesh-cp (LevelDB in a temp dir, as put-durable), writes the 100 data planes
// once, warms both requests, then times them interleaved (PUT, set, PUT, set, …), one request at a
// time on an otherwise idle server: the figure is the median set time, the baseline the median PUT
// time, the ratio theirs. Every request changes what it writes (an address), as a PUT of the stored
// body is a no-op that never reaches the log. `changeSetFigures()` returns figures shaped like
// bench/run.ts's.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dataplane } from './fixtures.js';
import { groupSelection, measureFigure, type GroupOptions } from './lib/measure.js';
import { settle, startMeshCp } from './lib/processes.js';
import type { Figure } from './lib/report.js';
import { median } from './lib/stats.js';

const SET_SIZE = 100;

/** Data plane `i` with an address that changes with `round` (so every write changes it). */
function changed(i: number, round: number): Record<string, unknown> {
  const dp = dataplane(i) as Record<string, unknown>;
  const { creationTime: _c, modificationTime: _m, ...body } = dp;
  const networking = body.networking as Record<string, unknown>;
  return { ...body, networking: { ...networking, address: `10.200.${(round >> 8) & 255}.${round & 255}` } };
}

async function timed(url: string, init: RequestInit, expect: number): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(url, init);
  const text = await res.text();
  const ms = performance.now() - t0;
  if (res.status !== expect) throw new Error(`${init.method} ${url}: ${res.status} ${text.slice(0, 300)}`);
  return ms;
}

/** The change-set scenario: one figure, `set-100`. */
export async function changeSetFigures(opts: GroupOptions & { quick?: boolean }): Promise<Figure[]> {
  const { log, want } = groupSelection(opts);
  if (!want('set-100')) return [];
  const warm = opts.quick ? 10 : 30;
  const pairs = opts.quick ? 10 : 40;
  log(`set-100: POST /_changes of ${SET_SIZE} data planes against one durable PUT, one request at a time`);
  const figure = await measureFigure(
    { name: 'set-100', figure: 'ms', target: 3, higherIsBetter: false, warmUp: false },
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'mesh-bench-set-'));
      const server = await startMeshCp(dir);
      try {
        const base = `http://127.0.0.1:${server.ready.apiPort as number}`;
        const json = { 'content-type': 'application/json' };
        let round = 0;
        const set = () => {
          round += 1;
          const items = Array.from({ length: SET_SIZE }, (_, i) => changed(i, round));
          return timed(
            `${base}/_changes`,
            { method: 'POST', headers: json, body: JSON.stringify({ items }) },
            200,
          );
        };
        let created = false;
        const put = () => {
          round += 1;
          const body = changed(SET_SIZE, round);
          const status = created ? 200 : 201;
          created = true;
          return timed(
            `${base}/meshes/default/dataplanes/${String(body.name)}`,
            { method: 'PUT', headers: json, body: JSON.stringify(body) },
            status,
          );
        };
        await put();
        await set();
        await settle([server.proc.pid as number]);
        for (let i = 0; i < warm; i++) {
          await put();
          await set();
        }
        const puts: number[] = [];
        const sets: number[] = [];
        for (let i = 0; i < pairs; i++) {
          puts.push(await put());
          sets.push(await set());
        }
        return { ours: median(sets), baseline: median(puts) };
      } finally {
        await server.stop();
        rmSync(dir, { recursive: true, force: true });
      }
    },
    { runs: opts.quick ? 1 : 3, log },
  );
  figure.note = `a set of ${SET_SIZE} data planes (each changed) against one PUT of a data plane, on the same fresh server, ${pairs} of each timed interleaved after ${warm} of each not counted, one request at a time; median ms of each`;
  return [figure];
}
