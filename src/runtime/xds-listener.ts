import type { XdsBootstrapSettings } from '../api/xds-routes.js';
import { useBoundXdsPort } from '../api/xds-routes.js';
import { bound, listenerKeys } from './listeners.js';
import type { Services } from './build-services.js';
import type { LoadedState } from './load-state.js';
import type { StartContext } from './start-context.js';
import type { XdsServer, XdsServerDeps } from './xds-server.js';

/** The xDS listener's start-up step. */
export interface XdsListener {
  /**
   * Binds ADS on `xdsServer.grpcPort` and points the bootstrap the API serves at the bound port;
   * undefined on Global (which serves no xDS) or when the plane does not listen.
   */
  start(parts: {
    state: Pick<LoadedState, 'views' | 'status'>;
    services: Pick<Services, 'matches' | 'tokens'>;
    bootstrap?: XdsBootstrapSettings;
  }): Promise<XdsServer | undefined>;
}

/**
 * The xDS listener of standalone and zone planes (decisions §11: proxies connect to their zone or to
 * a standalone plane). The data plane server loads gRPC (~50 ms): it starts loading here, at the
 * beginning of start-up, while the log opens; `start` binds it, the last listener.
 */
export function xdsListener(ctx: StartContext, listen: boolean): XdsListener {
  const { config } = ctx;
  const loading = listen && config.mode !== 'global' ? import('./xds-server.js') : undefined;
  loading?.catch(() => undefined);
  return {
    async start({ state, services, bootstrap }) {
      if (!loading) return undefined;
      const { startXdsServer } = await loading;
      const deps: XdsServerDeps = {
        config,
        views: state.views,
        matches: services.matches,
        status: state.status,
        tokens: services.tokens,
        instanceId: ctx.instanceId,
        logger: ctx.logger,
        now: ctx.now,
      };
      const xds = await bound(listenerKeys(config, 'xdsServer', 'grpcPort'), () => startXdsServer(deps));
      if (bootstrap) useBoundXdsPort(bootstrap, config, xds.port);
      return xds;
    },
  };
}
