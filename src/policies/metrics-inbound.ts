/**
 * The inbound of the metrics endpoint (Kuma 2.0 `AdditionalInbounds` / `PrometheusInbound`): a mesh
 * whose `metrics.enabledBackend` names a `prometheus` backend adds one inbound to each of its
 * proxies (built-in gateways aside: their view has no inbounds), on the proxy's address, whose
 * port and tags are the backend's `conf` with the Dataplane's `metrics` override merged over it.
 * TrafficPermission, FaultInjection and RateLimit attach to it like to any inbound; nothing else
 * reads it (its tags are no source or selector tag set of the proxy).
 *
 * Kuma writes the backend's defaults into the stored Mesh (port 5670, `kuma.io/service:
 * dataplane-metrics` when it has no tags); our Mesh is stored as written, so they apply here.
 */
import { SERVICE_TAG } from '../resources/fragments.js';
import { isBuiltinGateway, type MetricsInbound, type Networking } from './proxy-interfaces.js';

type Tags = Readonly<Record<string, string>>;

/** What of a Prometheus backend's `conf` makes the inbound. */
export interface PrometheusConf {
  port?: number;
  tags?: Tags;
}

/** The port of the metrics endpoint when neither the mesh backend nor the Dataplane names one. */
export const DEFAULT_METRICS_PORT = 5670;

/** The service tag of the metrics inbound when the mesh backend has no tags. */
export const DEFAULT_METRICS_SERVICE = 'dataplane-metrics';

interface MeshMetrics {
  metrics?: {
    enabledBackend?: string;
    backends?: ReadonlyArray<{ name: string; type: string; conf?: PrometheusConf }>;
  };
}

/**
 * The `conf` of a mesh's enabled Prometheus backend (`{}` when it has none), or undefined when the
 * mesh has no metrics enabled; `mesh` is the stored Mesh resource.
 */
export function meshPrometheus(mesh: object | undefined): PrometheusConf | undefined {
  const metrics = (mesh as MeshMetrics | undefined)?.metrics;
  const enabled = metrics?.enabledBackend;
  if (!enabled) return undefined;
  const backend = metrics.backends?.find((b) => b.name === enabled);
  if (backend?.type !== 'prometheus') return undefined;
  return backend.conf ?? {};
}

const nonEmpty = (tags: Tags | undefined): tags is Tags => tags !== undefined && Object.keys(tags).length > 0;

/**
 * The metrics inbound of a Dataplane (the stored resource) in a mesh whose enabled Prometheus
 * backend is `mesh` (see `meshPrometheus`); undefined when metrics are off. The Dataplane's
 * `metrics` (type prometheus) overrides the port and adds or replaces tags, as Go's proto.Merge.
 */
export function metricsInbound(
  mesh: PrometheusConf | undefined,
  dataplane: object,
): MetricsInbound | undefined {
  if (!mesh) return undefined;
  const override = (dataplane as { metrics?: { type?: string; conf?: PrometheusConf } }).metrics;
  const own = override?.type === 'prometheus' ? (override.conf ?? {}) : {};
  const meshTags = nonEmpty(mesh.tags) ? mesh.tags : { [SERVICE_TAG]: DEFAULT_METRICS_SERVICE };
  return {
    port: own.port || mesh.port || DEFAULT_METRICS_PORT,
    tags: { ...meshTags, ...own.tags },
  };
}

/**
 * The networking a Dataplane is matched with: its own, plus the metrics inbound of its mesh's
 * enabled Prometheus backend `mesh` (none on a built-in gateway).
 */
export function matchNetworking(
  dataplane: Readonly<Record<string, unknown>>,
  mesh: PrometheusConf | undefined,
): Networking {
  const networking = (dataplane.networking ?? { address: '' }) as Networking;
  if (isBuiltinGateway(networking)) return networking;
  const inbound = metricsInbound(mesh, dataplane);
  return inbound ? { ...networking, metricsInbound: inbound } : networking;
}
