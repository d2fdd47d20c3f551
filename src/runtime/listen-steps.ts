import type { Server as HttpsServer } from 'node:https';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config/schema.js';
import { bound, listenerKeys } from './listeners.js';
import { maskConfig } from '../config/mask.js';
import type { Services } from './build-services.js';
import type { JoinedCluster } from './join-cluster.js';
import type { LoadedState } from './load-state.js';
import type { Multizone, MultizoneDeps, MultizoneOptions } from './multizone.js';
import { answerDumpRequest, localProxyDump } from './proxy-dump.js';
import type { StartContext } from './start-context.js';
import type { TlsMaterial } from './tls.js';

/** Listens on `port` (0: any free one); rejects with the listen error (EADDRINUSE…). */
function listenOn(server: HttpsServer, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** The start-up step that binds the API's HTTP listener (`apiServer.port`); resolves with the bound port. */
export async function listenHttp(app: FastifyInstance, config: Config): Promise<number> {
  await bound(listenerKeys(config, 'apiServer', 'port'), () =>
    app.listen({ port: config.apiServer.port, host: config.apiServer.bindAddress }),
  );
  return (app.server.address() as { port: number }).port;
}

/** The start-up step that binds the API's HTTPS listener (`apiServer.https.port`); resolves with the bound port. */
export async function listenHttps(server: HttpsServer, config: Config): Promise<number> {
  await bound(listenerKeys(config, 'apiServer.https', 'port'), () =>
    listenOn(server, config.apiServer.https.port, config.apiServer.https.bindAddress),
  );
  return (server.address() as { port: number }).port;
}

/** The start-up step that binds the diagnostics listener (`diagnostics.port`); resolves with the bound port. */
export async function listenDiagnostics(diagnostics: FastifyInstance, config: Config): Promise<number> {
  await bound(listenerKeys(config, 'diagnostics', 'port'), () =>
    diagnostics.listen({ port: config.diagnostics.port, host: config.diagnostics.bindAddress }),
  );
  return (diagnostics.server.address() as { port: number }).port;
}

/**
 * The start-up step that starts sync: Global's sync server (binding `multizone.global.kds.grpcPort`)
 * or a zone's sync client; none in standalone mode. The sync code (and gRPC) loads only in global
 * and zone modes: standalone starts without it.
 */
export async function startSync(
  ctx: StartContext,
  parts: {
    log: MultizoneDeps['log'];
    state: LoadedState;
    services: Services;
    joined: JoinedCluster;
    tls?: TlsMaterial;
    options?: MultizoneOptions;
  },
): Promise<Multizone | undefined> {
  const { config } = ctx;
  const { state, services } = parts;
  const { merged } = state;
  const deps: MultizoneDeps = {
    log: parts.log,
    views: state.views,
    commands: services.commands,
    status: state.status,
    tokens: services.tokens,
    info: { instanceId: ctx.instanceId, clusterId: parts.joined.clusterId },
    elsewhere: merged ? (zone) => merged.zoneOpenElsewhere(zone) : undefined,
    leadership: parts.joined.cluster,
    maskedConfig: () => maskConfig(config),
    https: parts.tls,
    logger: ctx.logger,
    now: ctx.now,
    options: parts.options,
    answerDump: answerDumpRequest(localProxyDump(services.dumpDeps), services.configTimeline),
  };
  const { startMultizone } =
    config.mode === 'standalone' ? { startMultizone: async () => undefined } : await import('./multizone.js');
  return bound(listenerKeys(config, 'multizone.global.kds', 'grpcPort'), () => startMultizone(config, deps));
}
