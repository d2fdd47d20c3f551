import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import type { Logger } from 'pino';
import type { Commands } from '../app/commands.js';
import { createSyncApplier } from '../app/sync-apply.js';
import { createSyncSource } from '../app/sync-source.js';
import type { TokenService } from '../app/token-service.js';
import { MESH_CP_VERSION } from '../app/versions.js';
import type { Config } from '../config/schema.js';
import type { EventLog } from '../events/event-log.js';
import type { ResourceViews } from '../projections/resource-views.js';
import { registry } from '../resources/registry.js';
import type { StatusStore, Subscription } from '../status/status-store.js';
import { AppError } from '../util/errors.js';
import type { ZoneStatus } from '../zones/global-server.js';
import { createGlobalSyncServer } from '../zones/global-server.js';
import type { StreamTimers } from '../zones/peer-stream.js';
import type { DumpReply } from '../zones/dump-requests.js';
import type { DumpRequest, WireVersion } from '../zones/sync-protocol.js';
import type { GlobalLink } from '../zones/zone-client.js';
import { createZoneSyncClient } from '../zones/zone-client.js';
import type { PgCluster } from './pg-cluster.js';
import type { TlsMaterial } from './tls.js';
import { keptSelfSigned } from './tls.js';

/** Global's or a zone's end of the sync, as the composition root sees it. */
export interface Multizone {
  /** Global: the bound sync port (0 on a zone). */
  kdsPort: number;
  /** Global: where the sync port's certificate came from. */
  kdsTls?: Pick<TlsMaterial, 'source' | 'certFile'>;
  zoneStatuses(): ZoneStatus[];
  isConnected(zone: string): boolean;
  /** Zone: the Global it follows and whether it is connected now. */
  link?(): GlobalLink;
  /** Global: a view of a zone's proxy, answered by that zone. */
  proxyDump?(zone: string, req: Omit<DumpRequest, 'id'>): Promise<DumpReply>;
  close(): Promise<void>;
}

/** Test knobs: shorter timers and back-off. */
export interface MultizoneOptions {
  timers?: StreamTimers;
  backoff?: { min: number; max: number };
  /** Global: how long a zone has to answer a proxy view request (default 5 s). */
  dumpTimeoutMs?: number;
}

/** This build's version as the sync handshake carries it (spec 2.12 `version.meshCp`). */
export const VERSION: WireVersion = {
  version: MESH_CP_VERSION,
  gitTag: 'unknown',
  gitCommit: 'unknown',
  buildDate: 'unknown',
};

const readFile = (file: string, key: string): string => {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new AppError(
      'BAD_REQUEST',
      'invalid configuration',
      `${key}: cannot read ${file}: ${(err as Error).message}`,
    );
  }
};

/**
 * The sync port's TLS: the configured pair, else the self-signed certificate kept in the
 * data dir (the one HTTPS serves, when HTTPS made it).
 */
export async function loadSyncTls(config: Config, https?: TlsMaterial): Promise<TlsMaterial> {
  const kds = config.multizone.global.kds;
  if (kds.tlsCertFile !== '') {
    return {
      cert: readFile(kds.tlsCertFile, 'multizone.global.kds.tlsCertFile'),
      key: readFile(kds.tlsKeyFile, 'multizone.global.kds.tlsKeyFile'),
      source: 'files',
      certFile: kds.tlsCertFile,
    };
  }
  if (https && https.source !== 'files') return { ...https, ca: undefined };
  return keptSelfSigned(config);
}

/**
 * Credentials that send no TLS server name (SNI) when Global's address is an IP. grpc-js sets the
 * target host as `servername` whatever it is, and Node then prints DEP0123 ("Setting the TLS
 * ServerName to an IP address is not permitted by RFC 6066") on every zone pointed at
 * `grpcs://<ip>:…`. The certificate is still checked against the IP (`host`). The connector's
 * options are grpc-js internals: if they change shape this does nothing (and the e2e test that
 * reads a zone's stderr for the warning fails).
 */
function withoutIpServername(creds: grpc.ChannelCredentials): grpc.ChannelCredentials {
  const create = creds._createSecureConnector.bind(creds);
  creds._createSecureConnector = (target, options, callCredentials) => {
    const connector = create(target, options, callCredentials);
    const tlsOptions = (connector as { connectionOptions?: { servername?: unknown } }).connectionOptions;
    if (typeof tlsOptions?.servername === 'string' && isIP(tlsOptions.servername) !== 0) {
      delete tlsOptions.servername;
    }
    return connector;
  };
  return creds;
}

/**
 * How a zone verifies Global: with `rootCaFile`; not at all only with `tlsSkipVerify`
 * (and a warning); otherwise with the system's CAs.
 */
export function zoneCredentials(config: Config, logger?: Logger): grpc.ChannelCredentials {
  return withoutIpServername(verifiedCredentials(config, logger));
}

function verifiedCredentials(config: Config, logger?: Logger): grpc.ChannelCredentials {
  const zone = config.multizone.zone;
  if (!zone.globalAddress.startsWith('grpcs://')) {
    throw new AppError(
      'BAD_REQUEST',
      'invalid configuration',
      `multizone.zone.globalAddress: Global serves the sync port over TLS only: use grpcs:// (got ${zone.globalAddress})`,
    );
  }
  if (zone.kds.rootCaFile !== '') {
    return grpc.credentials.createSsl(
      Buffer.from(readFile(zone.kds.rootCaFile, 'multizone.zone.kds.rootCaFile')),
    );
  }
  if (zone.kds.tlsSkipVerify) {
    logger?.warn(
      { globalAddress: zone.globalAddress },
      'multizone.zone.kds.tlsSkipVerify is true: the certificate of Global is NOT verified',
    );
    return grpc.credentials.createSsl(null, null, null, {
      rejectUnauthorized: false,
      checkServerIdentity: () => undefined,
    });
  }
  return grpc.credentials.createSsl();
}

/** What Global's sync server or a zone's sync client is built from. */
export interface MultizoneDeps {
  /** What Global's sync server and a zone's sync client read of the log. */
  log: Pick<EventLog, 'head' | 'read' | 'onCommit' | 'getMeta' | 'catchUp'>;
  views: ResourceViews;
  commands: Commands;
  status: StatusStore;
  tokens: TokenService;
  info: { instanceId: string; clusterId: string };
  /** A zone on a shared log: only the leader of its instances syncs with Global. */
  leadership?: Pick<PgCluster, 'leads' | 'onLeadChange'>;
  /** Global on a shared log: the open subscription of a zone connected to another instance. */
  elsewhere?: (zone: string) => Subscription | undefined;
  maskedConfig: () => Record<string, unknown>;
  https?: TlsMaterial;
  logger?: Logger;
  now: () => Date;
  options?: MultizoneOptions;
  /** Zone: answers Global's requests for a view of one of this zone's proxies. */
  answerDump?: (req: DumpRequest) => Promise<{ contentType: string; body: string }>;
}

/** Starts Global's sync server or a zone's sync client, per `mode`; undefined in standalone mode. */
export async function startMultizone(config: Config, deps: MultizoneDeps): Promise<Multizone | undefined> {
  if (config.mode === 'standalone') return undefined;
  const source = createSyncSource({ registry, views: deps.views });
  const applier = createSyncApplier({ registry, commands: deps.commands, now: deps.now });
  const info = { ...deps.info, version: VERSION };
  if (config.mode === 'global') {
    const tls = await loadSyncTls(config, deps.https);
    const server = createGlobalSyncServer({
      registry,
      log: deps.log,
      commands: deps.commands,
      applier,
      source,
      verifyZone: (token) => deps.tokens.verifyZone(token),
      status: deps.status,
      info,
      elsewhere: deps.elsewhere,
      logger: deps.logger,
      now: deps.now,
      timers: deps.options?.timers,
      dumpTimeoutMs: deps.options?.dumpTimeoutMs,
    });
    const kdsPort = await server.listen(
      config.multizone.global.kds.grpcPort,
      tls,
      config.multizone.global.kds.bindAddress,
    );
    return {
      kdsPort,
      kdsTls: { source: tls.source, certFile: tls.certFile },
      zoneStatuses: () => server.zoneStatuses(),
      isConnected: (zone) => server.isConnected(zone),
      proxyDump: (zone, req) => server.proxyDump(zone, req),
      close: () => server.close(),
    };
  }
  const zone = config.multizone.zone;
  const makeClient = () =>
    createZoneSyncClient({
      registry,
      log: deps.log,
      applier,
      source,
      status: deps.status,
      zone: zone.name,
      globalAddress: zone.globalAddress,
      credentials: zoneCredentials(config, deps.logger),
      token: zone.kds.token,
      info: { ...info, config: JSON.stringify(deps.maskedConfig()) },
      logger: deps.logger,
      now: deps.now,
      timers: deps.options?.timers,
      backoff: deps.options?.backoff,
      answerDump: deps.answerDump,
    });
  if (zone.kds.token === '') {
    deps.logger?.warn('multizone.zone.kds.token is empty: Global will refuse this zone');
  }
  if (deps.leadership === undefined) {
    const client = makeClient();
    client.start();
    return {
      kdsPort: 0,
      zoneStatuses: () => [],
      isConnected: () => false,
      link: () => client.describe(),
      close: () => client.close(),
    };
  }
  // Several instances of this zone on one PostgreSQL log: one of them (the leader) syncs with
  // Global, as two connections of one zone would keep replacing each other there.
  const { leadership } = deps;
  let client: ReturnType<typeof makeClient> | undefined;
  let switching = Promise.resolve();
  const follow = (leading: boolean): void => {
    switching = switching.then(async () => {
      if (leading && client === undefined) {
        client = makeClient();
        client.start();
        deps.logger?.info('this instance leads the zone: it syncs with Global');
      } else if (!leading && client !== undefined) {
        const stopping = client;
        client = undefined;
        await stopping.close();
        deps.logger?.info('another instance of the zone syncs with Global now');
      }
    });
  };
  const stopFollowing = leadership.onLeadChange(follow);
  follow(leadership.leads());
  return {
    kdsPort: 0,
    zoneStatuses: () => [],
    isConnected: () => false,
    link: () =>
      client?.describe() ?? {
        name: zone.name,
        globalAddress: zone.globalAddress,
        connected: false,
        lastError: 'another instance of this zone (the leader of its cluster) syncs with Global',
      },
    async close() {
      stopFollowing();
      follow(false);
      await switching;
    },
  };
}
