import type { Page, Resource } from '../api/client.js';
import { get, getJson } from '../api/client.js';
import { Link } from '../router.js';
import { mayReadSecrets, useAppState } from '../store.js';
import { useData } from '../ui/data.js';
import { Empty, Show, Time } from '../ui/parts.js';
import { ResourceList, ResourcePage } from './resource.js';

type Sub = { connectTime?: string; disconnectTime?: string; status?: { lastUpdateTime?: string } };
type Overview = Resource & {
  zone?: { enabled?: boolean };
  zoneInsight?: { subscriptions?: Sub[] };
  zoneIngressInsight?: { subscriptions?: Sub[] };
  zoneEgressInsight?: { subscriptions?: Sub[] };
};

function connected(subs: Sub[] | undefined): Sub | undefined {
  return (subs ?? []).find((s) => s.connectTime && !s.disconnectTime);
}

export const ZONE_INFO = { kind: 'Zone', path: 'zones', title: 'Zone', mesh: false };

/** The zones with their sync status (on Global). */
export function Zones() {
  const s = useAppState();
  const overviews = useData(
    () => getJson<Page<Overview>>('/zones+insights', { query: { size: 1000 } }),
    [],
    (e) => e.kind === 'Zone',
  );
  const statuses = useData(() => get('/status/zones'), []);
  return (
    <>
      <h1 tabIndex={-1}>Zones</h1>
      <Show loaded={overviews}>
        {(page) =>
          page.total === 0 ? (
            <Empty>
              {s.info?.mode === 'global'
                ? 'No zone yet: issue a zone token (POST /tokens/zone) and start a zone control plane that dials this Global.'
                : 'Zones exist on a Global control plane only; this one is ' +
                  (s.info?.mode ?? 'standalone') +
                  '.'}
            </Empty>
          ) : (
            <table class="table">
              <caption class="sr-only">Zones and their sync status</caption>
              <thead>
                <tr>
                  <th scope="col">Zone</th>
                  <th scope="col">Sync</th>
                  <th scope="col">Address</th>
                  <th scope="col">Last sync</th>
                </tr>
              </thead>
              <tbody>
                {page.items.map((z) => {
                  const sub = connected(z.zoneInsight?.subscriptions);
                  const st = statuses.data?.find((x) => x.name === z.name);
                  return (
                    <tr key={z.name}>
                      <td>
                        <Link to={`/zones/${z.name}`}>{z.name}</Link>
                      </td>
                      <td>
                        <span class={`status ${sub || st?.active ? 'online' : 'offline'}`}>
                          {sub || st?.active ? 'online' : 'offline'}
                        </span>
                      </td>
                      <td>{st?.url || '—'}</td>
                      <td>
                        <Time value={sub?.status?.lastUpdateTime ?? sub?.connectTime} />
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          )
        }
      </Show>
    </>
  );
}

/** One zone. */
export function ZonePage({ name }: { name: string }) {
  return <ResourcePage info={ZONE_INFO} name={name} />;
}

/** Zone ingresses or egresses with whether each is connected. */
export function ZoneProxies({ which }: { which: 'ingress' | 'egress' }) {
  const path = which === 'ingress' ? 'zoneingresses+insights' : 'zoneegressoverviews';
  const kind = which === 'ingress' ? 'ZoneIngress' : 'ZoneEgress';
  const title = which === 'ingress' ? 'Zone ingresses' : 'Zone egresses';
  const loaded = useData(
    () => getJson<Page<Overview>>(`/${path}`, { query: { size: 1000 } }),
    [path],
    (e) => e.kind === kind,
  );
  return (
    <>
      <h1 tabIndex={-1}>{title}</h1>
      <Show loaded={loaded}>
        {(page) =>
          page.total === 0 ? (
            <Empty>
              No zone {which} yet: a zone registers its {which} (a {kind} resource) and starts it with a
              bootstrap from the zone control plane.
            </Empty>
          ) : (
            <table class="table">
              <caption class="sr-only">{title}</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Status</th>
                  <th scope="col">Changed</th>
                </tr>
              </thead>
              <tbody>
                {page.items.map((z) => {
                  const sub = connected((z.zoneIngressInsight ?? z.zoneEgressInsight)?.subscriptions);
                  return (
                    <tr key={z.name}>
                      <td>
                        <Link to={`/${which === 'ingress' ? 'zone-ingresses' : 'zoneegresses'}/${z.name}`}>
                          {z.name}
                        </Link>
                      </td>
                      <td>
                        <span class={`status ${sub ? 'online' : 'offline'}`}>
                          {sub ? 'online' : 'offline'}
                        </span>
                      </td>
                      <td>
                        <Time value={z.modificationTime as string | undefined} />
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          )
        }
      </Show>
    </>
  );
}

/** One zone ingress or egress. */
export function ZoneProxyPage({ which, name }: { which: 'ingress' | 'egress'; name: string }) {
  const info =
    which === 'ingress'
      ? { kind: 'ZoneIngress', path: 'zone-ingresses', title: 'Zone ingress', mesh: false }
      : { kind: 'ZoneEgress', path: 'zoneegresses', title: 'Zone egress', mesh: false };
  return <ResourcePage info={info} name={name} />;
}

/**
 * Secrets of a mesh, or global ones: names only. The GUI never reads a secret's data; only admins
 * may list them, and others are told so instead of being offered a list.
 */
export function Secrets({ mesh }: { mesh?: string }) {
  const s = useAppState();
  const info = mesh
    ? { kind: 'Secret', path: 'secrets', title: `Secrets in ${mesh}`, mesh: true }
    : { kind: 'GlobalSecret', path: 'global-secrets', title: 'Global secrets', mesh: false };
  if (!mayReadSecrets(s.caller)) {
    return (
      <>
        <h1 tabIndex={-1}>{info.title}</h1>
        <Empty>Only admins may see secrets. Sign in with an admin's user token to list their names.</Empty>
      </>
    );
  }
  return (
    <ResourceList
      info={info}
      mesh={mesh}
      empty={`No ${mesh ? 'secret in this mesh' : 'global secret'} yet: write one with meshctl or the API (the GUI shows names only, never the data).`}
    />
  );
}
