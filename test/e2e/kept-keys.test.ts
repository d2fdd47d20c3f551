import { createPrivateKey } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/control-plane.js';
import { eventually } from '../helpers/eventually.js';
import { startMeshCp } from '../helpers/process.js';
import { KEPT_KEYS_IN_PROCESS, keptKeys } from '../helpers/signing-keys.js';

/**
 * The control planes the tests start as processes sign with kept keys (`kept-keys-preload.cjs`)
 * instead of making four RSA keys on each empty store. If the preload stopped taking (a different
 * key call in the product, say), every test would still pass, only slower: this one would not.
 */
describe('a control plane started by the tests as a process', () => {
  const dir = tempDir();
  afterAll(() => dir.cleanup());

  it('stores kept signing keys, each once, from the part of the kept keys that processes take', async () => {
    const cp = startMeshCp({ MESH_STORE_LEVEL_PATH: dir.path });
    try {
      const { apiPort } = await cp.ready;
      const kept = keptKeys();
      // The keys are made just after `ready`.
      const secret = async (path: string) => {
        const res = await eventually(
          async () => {
            const r = await fetch(`http://127.0.0.1:${apiPort}${path}`);
            return r.status === 200 && r;
          },
          10_000,
          path,
        );
        const { data } = (await res.json()) as { data: string };
        const pem = Buffer.from(data, 'base64').toString();
        return createPrivateKey(pem).export({ type: 'pkcs1', format: 'der' }).toString('base64');
      };
      const meshKey = await secret('/meshes/default/secrets/dataplane-token-signing-key-default-1');
      const at = kept.indexOf(meshKey);
      expect(at).toBeGreaterThanOrEqual(KEPT_KEYS_IN_PROCESS);
      const globalKeys = await eventually(
        async () => {
          const list = (await (await fetch(`http://127.0.0.1:${apiPort}/global-secrets`)).json()) as {
            items: Array<{ name: string }>;
          };
          const names = list.items.map((i) => i.name).filter((n) => n.includes('signing-key'));
          return names.length >= 3 && names;
        },
        10_000,
        'the global signing keys',
      );
      const indexes = [at];
      for (const name of globalKeys) indexes.push(kept.indexOf(await secret(`/global-secrets/${name}`)));
      for (const i of indexes) expect(i).toBeGreaterThanOrEqual(KEPT_KEYS_IN_PROCESS);
      expect(new Set(indexes).size).toBe(indexes.length);
    } finally {
      cp.proc.kill('SIGTERM');
      await cp.exited;
    }
  });
});
