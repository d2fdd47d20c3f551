import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

import type { Started } from './processes.js';
import { freePort, startProcess } from './processes.js';

/** What `etcd` is when it is not on the PATH: how to get the peer the put-durable-etcd figure needs. */
const INSTALL_HINT =
  'the put-durable-etcd scenario needs the `etcd` binary (etcd 3.4) on the PATH: on Debian/Ubuntu `apt-get install -y etcd-server`, ' +
  'then `systemctl disable --now etcd` so that its service does not hold the default ports (the bench runs its own etcd on free ports)';

/**
 * Starts a single-member etcd on free client and peer ports with its data in `dataDir`, defaults
 * otherwise (durability included: etcd 3.4 fsyncs its WAL before it answers a write, and has no
 * switch to turn that off). Ready when it serves client traffic; fails with how to install it when
 * the binary is missing.
 */
export async function startEtcd(dataDir: string): Promise<Started & { version: string }> {
  const probe = spawnSync('etcd', ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0)
    throw new Error(`${INSTALL_HINT} (etcd --version: ${probe.error?.message ?? probe.stderr})`);
  const version = /etcd Version: (\S+)/.exec(probe.stdout)?.[1] ?? 'unknown';
  const client = `http://127.0.0.1:${await freePort()}`;
  const peer = `http://127.0.0.1:${await freePort()}`;
  const started = await startProcess(
    'etcd',
    [
      '--name=bench',
      `--data-dir=${join(dataDir, 'etcd')}`,
      `--listen-client-urls=${client}`,
      `--advertise-client-urls=${client}`,
      `--listen-peer-urls=${peer}`,
      `--initial-advertise-peer-urls=${peer}`,
      `--initial-cluster=bench=${peer}`,
      // JSON log lines on stdout, as the other processes of the bench, for the ready line.
      '--logger=zap',
      '--log-outputs=stdout',
    ],
    {},
    ['serving client traffic insecurely; this is strongly discouraged!'],
  );
  return { ...started, ready: { ...started.ready, port: Number(new URL(client).port) }, version };
}
