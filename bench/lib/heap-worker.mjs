/* global WebSocket */
// Reads the heap of a process started with `--inspect=HOST:PORT`, through its inspector (Chrome
// DevTools protocol): two full garbage collections, then `process.memoryUsage()`, printed as one JSON
// line. argv[2]: the inspector's WebSocket URL. Node 20 needs `--experimental-websocket` for WebSocket.
const ws = new WebSocket(process.argv[2]);
let id = 0;
const pending = new Map();
ws.addEventListener('message', (ev) => {
  const msg = JSON.parse(String(ev.data));
  const p = pending.get(msg.id);
  if (!p) return;
  pending.delete(msg.id);
  if (msg.error) p.reject(new Error(JSON.stringify(msg.error)));
  else p.resolve(msg.result);
});
const send = (method, params = {}) =>
  new Promise((resolve, reject) => {
    id += 1;
    pending.set(id, { resolve, reject });
    ws.send(JSON.stringify({ id, method, params }));
  });
await new Promise((resolve, reject) => {
  ws.addEventListener('open', resolve, { once: true });
  ws.addEventListener('error', () => reject(new Error(`cannot connect to ${process.argv[2]}`)), {
    once: true,
  });
});
await send('HeapProfiler.collectGarbage');
await send('HeapProfiler.collectGarbage');
const { result } = await send('Runtime.evaluate', {
  expression: 'JSON.stringify(process.memoryUsage())',
  returnByValue: true,
});
ws.close();
process.stdout.write(`${result.value}\n`);
