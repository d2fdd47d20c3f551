// meshctl start-up: `meshctl get meshes` against a local server must take at most
// 2× `node -e 0` plus the request. Each run times, interleaved, `node -e 0`, a tiny node script that
// does the same GET with node:http (node + the request), and the built CLI with a config file of one
// context. The baseline is `node -e 0` + the script: twice node's start plus the request.
// `meshctlFigures()` returns figures shaped like bench/run.ts's.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, startMeshCp } from './lib/processes.js';
import { groupSelection, measureFigure, type GroupOptions } from './lib/measure.js';
import type { Figure } from './lib/report.js';
import { median } from './lib/stats.js';

/** Ms from spawn to exit of one process; throws unless it exits 0. */
function timeRun(args: string[], env: Record<string, string> = {}): Promise<number> {
  const t0 = performance.now();
  const proc = spawn('node', args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: 'ignore' });
  return new Promise((resolve, reject) => {
    proc.once('exit', (code) =>
      code === 0
        ? resolve(performance.now() - t0)
        : reject(new Error(`node ${args.join(' ')} exited ${code}`)),
    );
  });
}

/** The meshctl scenario: one figure, `meshctl-get`. */
export async function meshctlFigures(opts: GroupOptions): Promise<Figure[]> {
  const { log, want } = groupSelection(opts);
  if (!want('meshctl-get')) return [];
  const dir = mkdtempSync(join(tmpdir(), 'mesh-bench-meshctl-'));
  const server = await startMeshCp(join(dir, 'data'));
  try {
    const address = `http://127.0.0.1:${server.ready.apiPort as number}`;
    const env = { MESHCTL_CONFIG: join(dir, 'config.yaml') };
    await timeRun(
      ['dist/bin/meshctl.js', 'config', 'control-planes', 'add', '--name', 'bench', '--address', address],
      env,
    );
    // node:http, as meshctl uses: fetch would add undici's load (~100 ms) to the baseline.
    const script = `import { get } from 'node:http'; get(${JSON.stringify(`${address}/meshes`)}, (r) => { if (r.statusCode !== 200) process.exit(1); r.resume(); });`;
    // Each run: the median of several interleaved starts of each, so that one slow start weighs less.
    const starts = opts.quick ? 3 : 9;
    log(
      'meshctl-get: ms of `meshctl get meshes` vs `node -e 0` + a node script doing the GET with node:http',
    );
    const figure = await measureFigure(
      {
        name: 'meshctl-get',
        figure: 'ms, meshctl get meshes',
        target: 1,
        higherIsBetter: false,
        note: 'baseline: node -e 0 plus a node script that does the GET with node:http (2× node start + the request)',
      },
      async () => {
        const node: number[] = [];
        const httpScript: number[] = [];
        const meshctl: number[] = [];
        for (let i = 0; i < starts; i++) {
          node.push(await timeRun(['-e', '0']));
          httpScript.push(await timeRun(['--input-type=module', '-e', script]));
          meshctl.push(await timeRun(['dist/bin/meshctl.js', 'get', 'meshes'], env));
        }
        log(
          `  [meshctl-get] medians: node -e 0 ${median(node).toFixed(0)} ms, http script ${median(httpScript).toFixed(0)} ms, meshctl ${median(meshctl).toFixed(0)} ms`,
        );
        return { ours: median(meshctl), baseline: median(node) + median(httpScript) };
      },
      { runs: opts.quick ? 1 : 3, log },
    );
    return [figure];
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
