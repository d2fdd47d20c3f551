// Baseline for replay: a raw `nextv` iterator + JSON.parse over every log entry of a store.
import { Level } from 'level';

const db = new Level(process.argv[2], { valueEncoding: 'utf8' });
await db.open();
const it = db.iterator({ gte: 'e!', lt: 'e"', keys: false });
let n = 0;
for (;;) {
  const chunk = await it.nextv(1000);
  if (chunk.length === 0) break;
  for (const [, v] of chunk) {
    JSON.parse(v);
    n++;
  }
}
await it.close();
await db.close();
process.stdout.write(`${JSON.stringify({ msg: 'done', entries: n })}\n`);
