import { useState } from 'preact/hooks';
import type { Page } from '../api/client.js';
import { getJson, getText } from '../api/client.js';
import { Link, navigate } from '../router.js';
import { travelTo } from '../store.js';
import { useData } from '../ui/data.js';
import { Code, Empty, Pager, Show, Tags, Time } from '../ui/parts.js';
import { ResourcePage } from './resource.js';

type Tagged = { port?: number; servicePort?: number; tags?: Record<string, string>; address?: string };
interface Subscription {
  id?: string;
  controlPlaneInstanceId?: string;
  connectTime?: string;
  disconnectTime?: string;
  status?: { lastUpdateTime?: string; total?: { responsesSent?: string; responsesAcknowledged?: string } };
}
/** A DataplaneOverview: the proxy and its runtime status. */
export interface Overview {
  mesh: string;
  name: string;
  modificationTime?: string;
  dataplane: {
    networking: {
      address?: string;
      inbound?: Array<Tagged & { health?: { ready?: boolean } }>;
      outbound?: Tagged[];
      gateway?: { type?: string; tags?: Record<string, string> };
    };
  };
  dataplaneInsight?: { subscriptions?: Subscription[] };
}

/** online, offline or partially degraded, as the API's `status` filter says. */
export function statusOf(o: Overview): 'online' | 'offline' | 'partially degraded' {
  const subs = o.dataplaneInsight?.subscriptions ?? [];
  const connected = subs.some((s) => s.connectTime && !s.disconnectTime);
  if (!connected) return 'offline';
  const inbound = o.dataplane.networking.inbound ?? [];
  return inbound.some((i) => i.health?.ready === false) ? 'partially degraded' : 'online';
}

function kindOf(o: Overview): string {
  const gw = o.dataplane.networking.gateway;
  return gw ? `gateway (${(gw.type ?? 'delegated').toLowerCase()})` : 'sidecar';
}

function serviceOf(o: Overview): string {
  const n = o.dataplane.networking;
  const tags = n.gateway?.tags ?? n.inbound?.[0]?.tags ?? {};
  return tags['mesh.io/service'] ?? '—';
}

const SIZE = 50;

/** A mesh's data plane proxies: paged by the server, filtered by name, tag, service, zone and status. */
export function Proxies({ mesh, query }: { mesh: string; query: URLSearchParams }) {
  const [offset, setOffset] = useState(0);
  const [filters, setFilters] = useState({
    name: query.get('name') ?? '',
    service: query.get('service') ?? '',
    zone: query.get('zone') ?? '',
    tag: query.get('tag') ?? '',
    status: query.get('status') ?? '',
  });
  const tags = [
    filters.service && `mesh.io/service:${filters.service}`,
    filters.zone && `mesh.io/zone:${filters.zone}`,
    filters.tag.includes(':') ? filters.tag : '',
  ].filter((t): t is string => t !== '');
  const loaded = useData(
    (signal) =>
      getJson<Page<Overview>>(`/meshes/${encodeURIComponent(mesh)}/dataplanes+insights`, {
        query: { size: SIZE, offset, name: filters.name, tag: tags, status: filters.status },
        signal,
      }),
    [mesh, offset, JSON.stringify(filters)],
    (e) => e.kind === 'Dataplane' && e.mesh === mesh,
    (st) => st.mesh === mesh,
  );
  const set = (key: keyof typeof filters) => (e: Event) => {
    const value = (e.currentTarget as HTMLInputElement).value;
    setOffset(0);
    setFilters((f) => ({ ...f, [key]: value }));
  };
  const filtered = Object.values(filters).some((v) => v !== '');
  return (
    <>
      <h1 tabIndex={-1}>Data plane proxies in {mesh}</h1>
      <form class="filters" role="search" aria-label="Filter proxies" onSubmit={(e) => e.preventDefault()}>
        <label>
          Name contains <input type="search" name="name" value={filters.name} onInput={set('name')} />
        </label>
        <label>
          Service <input type="search" name="service" value={filters.service} onInput={set('service')} />
        </label>
        <label>
          Zone <input type="search" name="zone" value={filters.zone} onInput={set('zone')} />
        </label>
        <label>
          Tag (key:value){' '}
          <input type="search" name="tag" value={filters.tag} onInput={set('tag')} placeholder="version:v1" />
        </label>
        <label>
          Status{' '}
          <select name="status" value={filters.status} onChange={set('status')}>
            <option value="">any</option>
            <option value="online">online</option>
            <option value="offline">offline</option>
            <option value="partially_degraded">partially degraded</option>
          </select>
        </label>
      </form>
      <Show loaded={loaded}>
        {(page) =>
          page.total === 0 ? (
            <Empty>
              {filtered
                ? 'No proxy matches these filters: clear one of them.'
                : 'No data plane proxy in this mesh yet: register one (a Dataplane resource) and start it with its bootstrap (docs/proxyless-grpc.md).'}
            </Empty>
          ) : (
            <>
              <table class="table" aria-busy={loaded.loading}>
                <caption class="sr-only">Data plane proxies: {page.total}</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Status</th>
                    <th scope="col" class="wide">
                      Kind
                    </th>
                    <th scope="col">Service</th>
                    <th scope="col" class="wide">
                      Address
                    </th>
                    <th scope="col" class="wide">
                      Changed
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {page.items.map((o) => {
                    const st = statusOf(o);
                    return (
                      <tr key={o.name}>
                        <td>
                          <Link to={`/meshes/${mesh}/dataplanes/${o.name}`}>{o.name}</Link>
                        </td>
                        <td>
                          <span class={`status ${st.replace(' ', '-')}`}>{st}</span>
                        </td>
                        <td class="wide">{kindOf(o)}</td>
                        <td>{serviceOf(o)}</td>
                        <td class="wide">{o.dataplane.networking.address ?? '—'}</td>
                        <td class="wide">
                          <Time value={o.modificationTime} />
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
              <Pager offset={offset} size={SIZE} total={page.total} onOffset={setOffset} label="Proxies" />
            </>
          )
        }
      </Show>
    </>
  );
}

const TABS = ['Overview', 'Policies', 'Rules', 'xDS config', 'Config timeline', 'Stats', 'Clusters'] as const;
type Tab = (typeof TABS)[number];

/** One proxy: tags, inbounds and outbounds, status, what applies to it, its config and history. */
export function ProxyPage({ mesh, name, query }: { mesh: string; name: string; query: URLSearchParams }) {
  const tab = (TABS.find((t) => t === query.get('tab')) ?? 'Overview') as Tab;
  const base = `/meshes/${encodeURIComponent(mesh)}/dataplanes/${encodeURIComponent(name)}`;
  return (
    <ResourcePage
      info={{ kind: 'Dataplane', path: 'dataplanes', title: 'Data plane proxy', mesh: true }}
      name={name}
      mesh={mesh}
    >
      <nav class="tabs" aria-label="Proxy views">
        {TABS.map((t) => (
          <Link
            key={t}
            to={`/meshes/${mesh}/dataplanes/${name}${t === 'Overview' ? '' : `?tab=${encodeURIComponent(t)}`}`}
            aria-current={t === tab ? 'true' : undefined}
          >
            {t}
          </Link>
        ))}
      </nav>
      <section aria-label={tab} class="tab-panel">
        {tab === 'Overview' && <ProxyOverview mesh={mesh} name={name} />}
        {tab === 'Policies' && <JsonView url={`${base}/policies`} label="Policies that apply" />}
        {tab === 'Rules' && <JsonView url={`${base}/rules`} label="Rules" />}
        {tab === 'xDS config' && <JsonView url={`${base}/xds`} label="xDS config" />}
        {tab === 'Config timeline' && <ConfigTimeline url={`${base}/xds/_history`} mesh={mesh} name={name} />}
        {tab === 'Stats' && <TextView url={`${base}/stats`} label="Stats" />}
        {tab === 'Clusters' && <TextView url={`${base}/clusters`} label="Clusters" />}
      </section>
    </ResourcePage>
  );
}

function ProxyOverview({ mesh, name }: { mesh: string; name: string }) {
  const loaded = useData(
    () =>
      getJson<Overview>(
        `/meshes/${encodeURIComponent(mesh)}/dataplanes+insights/${encodeURIComponent(name)}`,
      ),
    [mesh, name],
    (e) => e.kind === 'Dataplane' && e.name === name,
    (st) => st.mesh === mesh && st.name === name,
  );
  return (
    <Show loaded={loaded}>
      {(o) => {
        const n = o.dataplane.networking;
        const subs = o.dataplaneInsight?.subscriptions ?? [];
        return (
          <>
            <dl class="facts">
              <div>
                <dt>Status</dt>
                <dd>{statusOf(o)}</dd>
              </div>
              <div>
                <dt>Kind</dt>
                <dd>{kindOf(o)}</dd>
              </div>
              <div>
                <dt>Address</dt>
                <dd>{n.address ?? '—'}</dd>
              </div>
            </dl>
            {n.gateway && (
              <>
                <h3>Gateway tags</h3>
                <Tags tags={n.gateway.tags} />
              </>
            )}
            <h3>Inbounds</h3>
            {(n.inbound ?? []).length === 0 ? (
              <Empty>No inbound: this proxy serves nothing (a gateway or a client only).</Empty>
            ) : (
              <table class="table">
                <caption class="sr-only">Inbounds</caption>
                <thead>
                  <tr>
                    <th scope="col">Port</th>
                    <th scope="col">Service port</th>
                    <th scope="col">Ready</th>
                    <th scope="col">Tags</th>
                  </tr>
                </thead>
                <tbody>
                  {(n.inbound ?? []).map((i, k) => (
                    <tr key={k}>
                      <td>{i.port}</td>
                      <td>{i.servicePort ?? '—'}</td>
                      <td>{i.health?.ready === false ? 'no' : 'yes'}</td>
                      <td>
                        <Tags tags={i.tags} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
            <h3>Outbounds</h3>
            {(n.outbound ?? []).length === 0 ? (
              <Empty>No outbound declared: the proxy reaches services through the mesh's own routes.</Empty>
            ) : (
              <table class="table">
                <caption class="sr-only">Outbounds</caption>
                <thead>
                  <tr>
                    <th scope="col">Port</th>
                    <th scope="col">Tags</th>
                  </tr>
                </thead>
                <tbody>
                  {(n.outbound ?? []).map((i, k) => (
                    <tr key={k}>
                      <td>{i.port}</td>
                      <td>
                        <Tags tags={i.tags} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
            <h3>Subscriptions</h3>
            {subs.length === 0 ? (
              <Empty>Never connected: start the proxy with a bootstrap from this control plane.</Empty>
            ) : (
              <table class="table">
                <caption class="sr-only">Subscriptions</caption>
                <thead>
                  <tr>
                    <th scope="col">Connected</th>
                    <th scope="col">Disconnected</th>
                    <th scope="col">Control plane</th>
                    <th scope="col">Responses sent / acknowledged</th>
                  </tr>
                </thead>
                <tbody>
                  {subs.map((sub, k) => (
                    <tr key={sub.id ?? k}>
                      <td>
                        <Time value={sub.connectTime} />
                      </td>
                      <td>
                        <Time value={sub.disconnectTime} />
                      </td>
                      <td>{sub.controlPlaneInstanceId ?? '—'}</td>
                      <td>
                        {sub.status?.total?.responsesSent ?? 0} /{' '}
                        {sub.status?.total?.responsesAcknowledged ?? 0}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </>
        );
      }}
    </Show>
  );
}

/** A JSON answer shown as indented text. */
export function JsonView({ url, label }: { url: string; label: string }) {
  const loaded = useData((signal) => getJson<unknown>(url, { signal }), [url]);
  return <Show loaded={loaded}>{(d) => <Code text={JSON.stringify(d, null, 2)} label={label} />}</Show>;
}

function TextView({ url, label }: { url: string; label: string }) {
  const loaded = useData((signal) => getText(url, { accept: 'text/plain', signal }), [url]);
  return <Show loaded={loaded}>{(t) => <Code text={t} label={label} />}</Show>;
}

interface TimelineItem {
  revision: number;
  time: string;
  config: 'created' | 'changed' | 'removed';
  write: {
    kind: string;
    mesh?: string;
    name: string;
    operation: string;
    actor: { name: string };
    changeSet?: string;
  };
}

/** Which writes changed the proxy's config, newest first; each opens the config as of then. */
function ConfigTimeline({ url, mesh, name }: { url: string; mesh: string; name: string }) {
  // Newest first: the API pages oldest first, so read the last page.
  const loaded = useData(
    async (signal) => {
      const head = await getJson<Page<TimelineItem>>(url, { query: { size: 1 }, timeless: true, signal });
      const offset = Math.max(0, head.total - 100);
      const page = await getJson<Page<TimelineItem>>(url, {
        query: { size: 100, offset },
        timeless: true,
        signal,
      });
      return { ...page, items: page.items.reverse() };
    },
    [url],
  );
  return (
    <Show loaded={loaded}>
      {(page) =>
        page.total === 0 ? (
          <Empty>No write has changed this proxy's config yet.</Empty>
        ) : (
          <table class="table">
            <caption class="sr-only">Config timeline</caption>
            <thead>
              <tr>
                <th scope="col">Revision</th>
                <th scope="col">Time</th>
                <th scope="col">Config</th>
                <th scope="col">Write</th>
                <th scope="col">Actor</th>
              </tr>
            </thead>
            <tbody>
              {page.items.map((i) => (
                <tr key={i.revision}>
                  <td>
                    <button
                      type="button"
                      class="link"
                      onClick={() => {
                        travelTo({ revision: i.revision });
                        navigate(
                          `/meshes/${mesh}/dataplanes/${name}?tab=${encodeURIComponent('xDS config')}`,
                        );
                      }}
                    >
                      {i.revision}
                    </button>
                  </td>
                  <td>
                    <Time value={i.time} />
                  </td>
                  <td>{i.config}</td>
                  <td>
                    {i.write.operation} {i.write.kind} {i.write.mesh ? `${i.write.mesh}/` : ''}
                    {i.write.name}
                  </td>
                  <td>{i.write.actor.name}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )
      }
    </Show>
  );
}
