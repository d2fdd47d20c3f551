import type { FastifyInstance } from 'fastify';
import type { Queries } from '../app/queries.js';
import type { Config } from '../config/schema.js';
import type { Registry } from '../resources/registry.js';
import { nodeId } from '../resources/keys.js';
import { AppError } from '../util/errors.js';
import type { RouteInfo } from './route-info.js';
import { localZoneOf } from '../config/local-zone.js';

/** What a data plane bootstrap names besides the proxy: the xDS address and this control plane's zone. */
export interface XdsBootstrapSettings {
  /** `host:port` of the xDS server, as {@link xdsServerUri} makes it. */
  serverUri: string;
  /** The zone's name in zone mode; absent in standalone mode (the locality is then `{}`). */
  zone?: string;
}

/** A host as a gRPC target wants it: an IPv6 literal in brackets. */
function targetHost(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/**
 * The xDS address a bootstrap names, part by part. Host: `bootstrapServer.params.xdsHost`, else
 * the host of `xdsServer.advertisedAddress`, else `general.advertisedHostname`. Port:
 * `bootstrapServer.params.xdsPort` (when not 0), else the port of `xdsServer.advertisedAddress`,
 * else `xdsServer.grpcPort` (the port actually bound, `boundPort`, when that is 0).
 */
export function xdsServerUri(config: Config, boundPort?: number): string {
  const { xdsHost, xdsPort } = config.bootstrapServer.params;
  const advertised = config.xdsServer.advertisedAddress;
  // The schema checked `host:port`; the port is after the last colon (an IPv6 host is in brackets).
  const colon = advertised.lastIndexOf(':');
  const advertisedHost = advertised === '' ? '' : advertised.slice(0, colon);
  const advertisedPort = advertised === '' ? 0 : Number(advertised.slice(colon + 1));
  const host = xdsHost || advertisedHost || config.general.advertisedHostname;
  const grpcPort = config.xdsServer.grpcPort === 0 ? (boundPort ?? 0) : config.xdsServer.grpcPort;
  const port = xdsPort || advertisedPort || grpcPort;
  return `${targetHost(host)}:${port}`;
}

/** The bootstrap settings of a standalone or zone control plane; undefined on Global, which serves no xDS (decisions §11). */
export function xdsBootstrapSettings(config: Config): XdsBootstrapSettings | undefined {
  if (config.mode === 'global') return undefined;
  return { serverUri: xdsServerUri(config), zone: localZoneOf(config) };
}

/**
 * After the xDS server has bound: with `grpcPort` 0 and no other port configured, the bootstrap
 * names the port actually bound (else it would send proxies to port 0).
 */
export function useBoundXdsPort(settings: XdsBootstrapSettings, config: Config, port: number): void {
  settings.serverUri = xdsServerUri(config, port);
}

/**
 * The bootstrap file `@grpc/grpc-js-xds` reads from `GRPC_XDS_BOOTSTRAP` (decisions §11): the xDS
 * server with insecure channel credentials and `ignore_resource_deletion`, and the node: id
 * `<mesh>.<name>`, a locality (mandatory for that client, even empty) and the metadata that name the
 * Dataplane whatever dots its mesh has, and the Listener name template of an `XdsServer`. It carries no token: the user adds `dataplane.token` to
 * `node.metadata` (docs/proxyless-grpc.md).
 */
export function dataplaneBootstrap(settings: XdsBootstrapSettings, mesh: string, name: string) {
  return {
    xds_servers: [
      {
        server_uri: settings.serverUri,
        channel_creds: [{ type: 'insecure' }],
        server_features: ['ignore_resource_deletion'],
      },
    ],
    node: {
      id: nodeId(mesh, name),
      locality: settings.zone === undefined ? {} : { zone: settings.zone },
      metadata: { 'dataplane.mesh': mesh, 'dataplane.name': name },
    },
    // The names src/xds/proxyless/server-listener.ts answers (api may not import xds).
    server_listener_resource_name_template: 'grpc/server?xds.resource.listening_address=%s',
  };
}

/** Dependencies of the xDS routes. */
export interface XdsRouteDeps {
  registry: Registry;
  queries: Queries;
  /** Absent on Global: the bootstrap route says to ask the proxy's zone. */
  xdsBootstrap?: XdsBootstrapSettings;
}

/**
 * `GET /meshes/{mesh}/dataplanes/{name}/bootstrap`: a read of Dataplane in that mesh;
 * 404 naming the mesh or the Dataplane when either is missing.
 */
export function registerXdsRoutes(app: FastifyInstance, deps: XdsRouteDeps): void {
  const { registry, queries, xdsBootstrap } = deps;
  const meshDesc = registry.get('Mesh');
  const dataplaneDesc = registry.get('Dataplane');
  type ProxyParams = { mesh: string; name: string };
  app.get<{ Params: ProxyParams }>(
    '/meshes/:mesh/dataplanes/:name/bootstrap',
    { config: { action: 'read', kind: 'Dataplane' } satisfies RouteInfo },
    async (req, reply) => {
      const revision = queries.revision();
      const { mesh, name } = req.params;
      // Throw NOT_FOUND naming the mesh, then the Dataplane (decisions §4 details).
      queries.get(meshDesc, undefined, mesh);
      queries.get(dataplaneDesc, mesh, name);
      if (xdsBootstrap === undefined) {
        throw new AppError(
          'BAD_REQUEST',
          'No xDS on Global',
          'Global serves no xDS: a proxy connects to the control plane of its zone; get its bootstrap there',
        );
      }
      return reply
        .type('application/json; charset=utf-8')
        .header('x-mesh-revision', String(revision))
        .send(JSON.stringify(dataplaneBootstrap(xdsBootstrap, mesh, name)));
    },
  );
}
