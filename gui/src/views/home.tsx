import type { Page, Resource, Schema } from '../api/client.js';
import { get, getJson } from '../api/client.js';
import { Link } from '../router.js';
import { useAppState } from '../store.js';
import { useData } from '../ui/data.js';
import { Empty, Show } from '../ui/parts.js';
import { ResourcePage } from './resource.js';

type Counts = { total?: number; online?: number; offline?: number; partiallyDegraded?: number };
type Insight = Resource & {
  dataplanes?: Counts;
  policies?: Record<string, { total?: number }>;
  services?: { total?: number };
};

/** Online, offline and partially degraded counts of a mesh's proxies. */
function ProxyCounts({ c }: { c?: Counts }) {
  const total = c?.total ?? 0;
  const offline = c?.offline ?? 0;
  const partial = c?.partiallyDegraded ?? 0;
  const online = c?.online ?? total - offline - partial;
  return (
    <span>
      {total} total: <span class="ok">{online} online</span>, <span class="bad">{offline} offline</span>,{' '}
      <span class="warn">{partial} partially degraded</span>
    </span>
  );
}

/** Home: the meshes with their proxies and policies, the zones (on Global), what the server is. */
export function Home() {
  const s = useAppState();
  const insights = useData(
    () => getJson<Page<Insight>>('/mesh-insights', { query: { size: 1000 } }),
    [],
    () => true,
    () => true,
  );
  const global = useData(() => getJson<Record<string, unknown>>('/global-insights'), []);
  const zones = useData(
    () => get('/status/zones'),
    [],
    (e) => e.kind === 'Zone',
  );
  return (
    <>
      <h1 tabIndex={-1}>Overview</h1>
      {s.info && (
        <p>
          mesh-cp {s.info.version}, {s.info.mode} control plane on {s.info.hostname}.
        </p>
      )}
      <section aria-labelledby="meshes-h">
        <h2 id="meshes-h">Meshes</h2>
        <Show loaded={insights}>
          {(page) =>
            page.items.length === 0 ? (
              <Empty>
                No mesh yet. Create one with <Link to="/changes">Apply changes</Link> (a document of type
                Mesh) or <code>meshctl apply</code>.
              </Empty>
            ) : (
              <table class="table">
                <caption class="sr-only">Meshes with their proxies and policies</caption>
                <thead>
                  <tr>
                    <th scope="col">Mesh</th>
                    <th scope="col">Data plane proxies</th>
                    <th scope="col">Policies</th>
                    <th scope="col">Services</th>
                  </tr>
                </thead>
                <tbody>
                  {page.items.map((m) => (
                    <tr key={m.name}>
                      <td>
                        <Link to={`/meshes/${m.name}`}>{m.name}</Link>
                      </td>
                      <td>
                        <ProxyCounts c={m.dataplanes} />
                      </td>
                      <td>{Object.values(m.policies ?? {}).reduce((n, p) => n + (p.total ?? 0), 0)}</td>
                      <td>{m.services?.total ?? 0}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )
          }
        </Show>
      </section>
      <section aria-labelledby="zones-h">
        <h2 id="zones-h">Zones</h2>
        <Show loaded={zones}>
          {(list) =>
            list.length === 0 ? (
              <Empty>
                {s.info?.mode === 'global'
                  ? 'No zone has connected yet: start a zone control plane with a zone token from this Global (docs/multi-zone.md).'
                  : 'This control plane has no zones: zones connect to a Global control plane.'}
              </Empty>
            ) : (
              <p>
                {list.filter((z) => z.active).length} of {list.length} zones online.{' '}
                <Link to="/zones">See the zones</Link>
              </p>
            )
          }
        </Show>
      </section>
      <section aria-labelledby="totals-h">
        <h2 id="totals-h">Totals</h2>
        <Show loaded={global}>
          {(g) => (
            <dl class="facts">
              {Object.entries((g.resources ?? {}) as Record<string, { total?: number }>).map(([k, v]) => (
                <div key={k}>
                  <dt>{k}</dt>
                  <dd>{v.total ?? 0}</dd>
                </div>
              ))}
            </dl>
          )}
        </Show>
      </section>
    </>
  );
}

export const MESH_INFO = { kind: 'Mesh', path: 'meshes', title: 'Mesh', mesh: false };

/** One mesh: its insight, its definition and history. */
export function MeshPage({ name }: { name: string }) {
  const insight = useData(
    () => get('/mesh-insights/{name}', { name }),
    [name],
    () => true,
    (st) => st.mesh === name,
  );
  return (
    <ResourcePage info={MESH_INFO} name={name}>
      <section aria-labelledby="insight-h">
        <h2 id="insight-h">Insight</h2>
        <Show loaded={insight}>
          {(i) => {
            const m = i as Insight;
            return (
              <dl class="facts">
                <div>
                  <dt>Data plane proxies</dt>
                  <dd>
                    <ProxyCounts c={m.dataplanes} />
                  </dd>
                </div>
                <div>
                  <dt>Services</dt>
                  <dd>{m.services?.total ?? 0}</dd>
                </div>
                {Object.entries(m.policies ?? {}).map(([k, v]) => (
                  <div key={k}>
                    <dt>{k}</dt>
                    <dd>{v.total ?? 0}</dd>
                  </div>
                ))}
              </dl>
            );
          }}
        </Show>
        <p>
          <Link to={`/meshes/${name}/dataplanes`}>Data plane proxies</Link> ·{' '}
          <Link to={`/meshes/${name}/services`}>Services</Link> ·{' '}
          <Link to={`/meshes/${name}/policies`}>Policies</Link>
        </p>
      </section>
    </ResourcePage>
  );
}

/** A mesh's services with their proxies' status. */
export function Services({ mesh }: { mesh: string }) {
  const loaded = useData(
    () => get('/meshes/{mesh}/service-insights', { mesh }, { query: { size: 1000 } }),
    [mesh],
    (e) => e.mesh === mesh,
    (st) => st.mesh === mesh,
  );
  return (
    <>
      <h1 tabIndex={-1}>Services in {mesh}</h1>
      <Show loaded={loaded}>
        {(raw) => {
          const page = raw as unknown as Page<
            Resource & { status?: string; dataplanes?: Counts; serviceType?: string }
          >;
          return page.items.length === 0 ? (
            <Empty>
              No service yet: a service appears when a data plane proxy declares it in an inbound tag
              mesh.io/service.
            </Empty>
          ) : (
            <table class="table">
              <caption class="sr-only">Services</caption>
              <thead>
                <tr>
                  <th scope="col">Service</th>
                  <th scope="col">Type</th>
                  <th scope="col">Status</th>
                  <th scope="col">Proxies</th>
                </tr>
              </thead>
              <tbody>
                {page.items.map((sv) => (
                  <tr key={sv.name}>
                    <td>
                      <Link to={`/meshes/${mesh}/dataplanes?service=${encodeURIComponent(sv.name)}`}>
                        {sv.name}
                      </Link>
                    </td>
                    <td>{sv.serviceType ?? '—'}</td>
                    <td>{sv.status ?? '—'}</td>
                    <td>
                      <ProxyCounts c={sv.dataplanes} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          );
        }}
      </Show>
    </>
  );
}

export type { Schema };
