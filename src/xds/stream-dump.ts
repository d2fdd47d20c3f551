/**
 * The `/xds` answer of a connected proxy: what its stream last sent of each type, decoded
 * on request from the bytes the stream keeps, with the version and time of that response, and the
 * last NACK of each type as Envoy's `error_state`.
 */
import type { AdsStream } from './ads-stream.js';
import { configDump, type DumpInput, type Nack } from './config-dump.js';
import { decodeAny } from './encode-any.js';
import type { TypeStatus } from './stream-info.js';
import { CLUSTER, CLUSTER_LOAD_ASSIGNMENT, LISTENER, ROUTE_CONFIGURATION, SHORT_TYPE } from './type-urls.js';

type Short = 'lds' | 'rds' | 'cds' | 'eds';

const nackOf = (status: TypeStatus): Nack | undefined => {
  const nack = status.lastNack;
  if (!nack) return undefined;
  return {
    message: nack.message,
    time: nack.time.toISOString(),
    version: nack.version ?? 0,
    // A NACK leaves the last sent content in place: it is what failed until a new response goes.
    lastSent: nack.version !== undefined && nack.version === status.version,
  };
};

/** The ConfigDump of an open stream; `node` is the proxy as the dump names it. */
export function streamDump(
  stream: Pick<AdsStream, 'info' | 'served'>,
  node: DumpInput['node'],
): ReturnType<typeof configDump> {
  const versions: DumpInput['versions'] = {};
  const updated: NonNullable<DumpInput['updated']> = {};
  const nacks: NonNullable<DumpInput['nacks']> = {};
  for (const [url, status] of stream.info.types) {
    const short = SHORT_TYPE[url] as Short | undefined;
    if (!short) continue;
    if (status.version !== undefined) versions[short] = status.version;
    if (status.sentAt) updated[short] = status.sentAt.toISOString();
    const nack = nackOf(status);
    if (nack) nacks[short] = nack;
  }
  const decoded = (url: string) => stream.served(url).map((any) => decodeAny(any));
  return configDump({
    node,
    versions,
    updated,
    nacks,
    listeners: decoded(LISTENER),
    routes: decoded(ROUTE_CONFIGURATION),
    clusters: decoded(CLUSTER),
    assignments: decoded(CLUSTER_LOAD_ASSIGNMENT),
  });
}
