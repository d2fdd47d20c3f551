import { createBenchDatabase, pgStoreEnv } from './lib/postgres.js';
import { startMeshCp } from './lib/processes.js';
import { createPutLoad } from './lib/put-load.js';
const db = await createBenchDatabase();
const s = await startMeshCp('/tmp/bench-pg-try-data', pgStoreEnv(db.name));
let out = '';
s.proc.stdout?.on('data', (c: Buffer) => (out += c.toString()));
try {
  const putLoad = createPutLoad({ connections: 50, duration: 4 });
  for (let i = 0; i < 4; i++) {
    const r = await putLoad(s, '/meshes/default/dataplanes/');
    console.log(JSON.stringify(r));
  }
} finally {
  await s.stop(); await db.drop();
  const bad = out.split('\n').filter((l) => /"level":(4|5)0/.test(l));
  console.log(bad.length, bad.slice(0, 5).join('\n'));
}
