import { useState } from 'preact/hooks';
import type { Page, Resource } from '../api/client.js';
import { getJson } from '../api/client.js';
import { Link } from '../router.js';
import { useAppState } from '../store.js';
import { useData } from '../ui/data.js';
import { Empty, Pager, Show } from '../ui/parts.js';
import type { KindInfo } from './resource.js';
import { ResourceList, ResourcePage } from './resource.js';

/** The kinds of the policy catalogue (`/policies`) as the GUI lists them. */
export function usePolicyKinds(): KindInfo[] {
  const s = useAppState();
  return (s.catalogue ?? []).map((p) => ({ kind: p.name, path: p.path, title: p.displayName, mesh: true }));
}

/** Every policy kind of a mesh with how many it holds. */
export function PolicyKinds({ mesh }: { mesh: string }) {
  const kinds = usePolicyKinds();
  const insight = useData(
    () =>
      getJson<{ policies?: Record<string, { total?: number }> }>(
        `/mesh-insights/${encodeURIComponent(mesh)}`,
      ),
    [mesh],
  );
  return (
    <>
      <h1 tabIndex={-1}>Policies in {mesh}</h1>
      <Show loaded={insight}>
        {(i) =>
          kinds.length === 0 ? (
            <Empty>The server lists no policy kind (GET /policies).</Empty>
          ) : (
            <table class="table">
              <caption class="sr-only">Policy kinds</caption>
              <thead>
                <tr>
                  <th scope="col">Kind</th>
                  <th scope="col">In this mesh</th>
                </tr>
              </thead>
              <tbody>
                {kinds.map((k) => (
                  <tr key={k.kind}>
                    <td>
                      <Link to={`/meshes/${mesh}/${k.path}`}>{k.title}</Link>
                    </td>
                    <td>{i.policies?.[k.kind]?.total ?? 0}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Show>
    </>
  );
}

/** The policies of one kind in a mesh. */
export function PolicyList({ mesh, info }: { mesh: string; info: KindInfo }) {
  return (
    <ResourceList
      info={info}
      mesh={mesh}
      linkOf={(r) => `/meshes/${mesh}/${info.path}/${r.name}`}
      empty={`No ${info.title} in mesh ${mesh} yet: write one with Apply changes (type: ${info.kind}) or meshctl apply.`}
    />
  );
}

interface Affected {
  total: number;
  items: Array<
    { dataplane?: { mesh: string; name: string }; kind?: string; name?: string; mesh?: string } & Record<
      string,
      unknown
    >
  >;
}

// Kinds of the catalogue that select no proxy, so have no `…/{name}/dataplanes` (external services).
const AFFECTED_PAGE = 50;

const SELECTS_NO_PROXY = new Set(['ExternalService']);

/** One policy: its definition, the proxies it affects, its history. */
export function PolicyPage({ mesh, info, name }: { mesh: string; info: KindInfo; name: string }) {
  if (SELECTS_NO_PROXY.has(info.kind)) return <ResourcePage info={info} name={name} mesh={mesh} />;
  return <MatchingPolicyPage mesh={mesh} info={info} name={name} />;
}

function MatchingPolicyPage({ mesh, info, name }: { mesh: string; info: KindInfo; name: string }) {
  const [offset, setOffset] = useState(0);
  const affected = useData(
    (signal) =>
      getJson<Affected>(
        `/meshes/${encodeURIComponent(mesh)}/${info.path}/${encodeURIComponent(name)}/dataplanes`,
        {
          query: { size: AFFECTED_PAGE, offset },
          signal,
        },
      ),
    [mesh, info.path, name, offset],
    (e) => e.mesh === mesh,
  );
  return (
    <ResourcePage info={info} name={name} mesh={mesh}>
      <section aria-labelledby="affected-h">
        <h2 id="affected-h">Affected data plane proxies</h2>
        <Show loaded={affected}>
          {(a) =>
            a.total === 0 ? (
              <Empty>No proxy matches this policy's selectors now.</Empty>
            ) : (
              <>
                <ul class="inline-list">
                  {a.items.map((item, k) => {
                    const dp = item.dataplane ?? { mesh, name: String(item.name ?? '') };
                    return (
                      <li key={k}>
                        <Link to={`/meshes/${dp.mesh}/dataplanes/${dp.name}?tab=Policies`}>{dp.name}</Link>
                      </li>
                    );
                  })}
                </ul>
                <Pager
                  offset={offset}
                  size={AFFECTED_PAGE}
                  total={a.total}
                  onOffset={setOffset}
                  label="Affected proxies"
                />
              </>
            )
          }
        </Show>
      </section>
    </ResourcePage>
  );
}

/** A mesh's gateways (MeshGateway) and their routes (MeshGatewayRoute). */
export function Gateways({ mesh }: { mesh: string }) {
  const kinds = usePolicyKinds();
  const gw = kinds.find((k) => k.kind === 'MeshGateway');
  const routes = kinds.find((k) => k.kind === 'MeshGatewayRoute');
  return (
    <>
      <h1 tabIndex={-1}>Gateways in {mesh}</h1>
      {gw && (
        <ResourceList
          heading={false}
          info={gw}
          mesh={mesh}
          linkOf={(r: Resource) => `/meshes/${mesh}/${gw.path}/${r.name}`}
          empty="No gateway yet: write a MeshGateway, then a gateway proxy (a Dataplane with networking.gateway)."
        />
      )}
      {routes && (
        <ResourceList
          heading={false}
          info={routes}
          mesh={mesh}
          linkOf={(r: Resource) => `/meshes/${mesh}/${routes.path}/${r.name}`}
          empty="No gateway route yet: write a MeshGatewayRoute that selects a gateway."
        />
      )}
    </>
  );
}

export type { Page };
