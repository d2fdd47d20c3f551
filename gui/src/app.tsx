import { useEffect, useState } from 'preact/hooks';
import { getJson, token } from './api/client.js';
import type { Page, Resource } from './api/client.js';
import { Link, match, navigate, useRoute } from './router.js';
import { loadSession, mayReadSecrets, travelTo, update, useAppState } from './store.js';
import { ErrorBox } from './ui/parts.js';
import { Audit } from './views/audit.js';
import { Changes } from './views/changes.js';
import { Home, MESH_INFO, MeshPage, Services } from './views/home.js';
import { Gateways, PolicyKinds, PolicyList, PolicyPage, usePolicyKinds } from './views/policies.js';
import { ProxyPage, Proxies } from './views/proxies.js';
import { ResourceList } from './views/resource.js';
import { SignIn } from './views/sign-in.js';
import { Diagnostics } from './views/system.js';
import { Secrets, ZonePage, ZoneProxies, ZoneProxyPage, Zones } from './views/zones.js';
import { useData } from './ui/data.js';

/** The view of the current path. */
function View() {
  const { path, query } = useRoute();
  const kinds = usePolicyKinds();
  const m = (pattern: string) => match(pattern, path);
  let p: Record<string, string> | undefined;
  if (path === '/') return <Home />;
  if (path === '/meshes')
    return (
      <ResourceList
        info={{ ...MESH_INFO, title: 'Meshes' }}
        linkOf={(r) => `/meshes/${r.name}`}
        empty="No mesh yet: write one with Apply changes (type: Mesh)."
      />
    );
  if ((p = m('/meshes/:mesh'))) return <MeshPage name={p.mesh} />;
  if ((p = m('/meshes/:mesh/dataplanes'))) return <Proxies key={p.mesh} mesh={p.mesh} query={query} />;
  if ((p = m('/meshes/:mesh/dataplanes/:name')))
    return <ProxyPage mesh={p.mesh} name={p.name} query={query} />;
  if ((p = m('/meshes/:mesh/services'))) return <Services mesh={p.mesh} />;
  if ((p = m('/meshes/:mesh/policies'))) return <PolicyKinds mesh={p.mesh} />;
  if ((p = m('/meshes/:mesh/gateways'))) return <Gateways mesh={p.mesh} />;
  if ((p = m('/meshes/:mesh/secrets'))) return <Secrets mesh={p.mesh} />;
  if ((p = m('/meshes/:mesh/:kind'))) {
    const info = kinds.find((k) => k.path === p?.kind);
    if (info) return <PolicyList key={info.kind} mesh={p.mesh} info={info} />;
  }
  if ((p = m('/meshes/:mesh/:kind/:name'))) {
    const info = kinds.find((k) => k.path === p?.kind);
    if (info) return <PolicyPage mesh={p.mesh} info={info} name={p.name} />;
  }
  if (path === '/zones') return <Zones />;
  if ((p = m('/zones/:name'))) return <ZonePage name={p.name} />;
  if (path === '/zone-ingresses') return <ZoneProxies which="ingress" />;
  if ((p = m('/zone-ingresses/:name'))) return <ZoneProxyPage which="ingress" name={p.name} />;
  if (path === '/zoneegresses') return <ZoneProxies which="egress" />;
  if ((p = m('/zoneegresses/:name'))) return <ZoneProxyPage which="egress" name={p.name} />;
  if (path === '/global-secrets') return <Secrets />;
  if (path === '/audit') return <Audit key={query.toString()} query={query} />;
  if (path === '/changes') return <Changes />;
  if (path === '/diagnostics') return <Diagnostics />;
  if (path === '/sign-in') return <SignIn />;
  if (kinds.length === 0 && path.startsWith('/meshes/')) return <p role="status">Loading…</p>;
  return (
    <>
      <h1 tabIndex={-1}>Not found</h1>
      <p>
        No view at <code>{path}</code>. <Link to="/">Go to the overview</Link>.
      </p>
    </>
  );
}

/** The mesh picker: the mesh whose proxies, services and policies the menu links to. */
function MeshPicker() {
  const s = useAppState();
  const meshes = useData(
    () => getJson<Page<Resource>>('/meshes', { query: { size: 1000 } }),
    [],
    (e) => e.kind === 'Mesh',
  );
  const names = meshes.data?.items.map((m) => m.name) ?? [];
  return (
    <label class="mesh-picker">
      Mesh{' '}
      <select
        value={s.mesh}
        onChange={(e) => {
          update({ mesh: e.currentTarget.value });
          navigate(`/meshes/${e.currentTarget.value}`);
        }}
      >
        {(names.includes(s.mesh) ? names : [s.mesh, ...names]).map((n) => (
          <option key={n} value={n}>
            {n}
          </option>
        ))}
      </select>
    </label>
  );
}

/** The point in time every view shows, and the way back to now. */
function TimeTravel() {
  const s = useAppState();
  const [value, setValue] = useState('');
  const go = (e: Event) => {
    e.preventDefault();
    const v = value.trim();
    if (v === '') return;
    if (/^\d+$/.test(v)) travelTo({ revision: Number(v) });
    else {
      const d = new Date(v);
      if (!Number.isNaN(d.getTime())) travelTo({ at: d.toISOString() });
    }
  };
  const p = s.pointInTime;
  return (
    <div class={p ? 'time-travel past' : 'time-travel'} role="region" aria-label="Time travel">
      {p ? (
        <p role="status">
          <strong>Viewing the past</strong>: every view shows the mesh as of{' '}
          {'revision' in p ? `revision ${p.revision}` : p.at}. Nothing can be changed here.{' '}
          <button type="button" class="primary" onClick={() => travelTo(null)}>
            Back to now
          </button>
        </p>
      ) : null}
      <form onSubmit={go}>
        <label>
          As of revision or time{' '}
          <input
            type="text"
            name="pointInTime"
            value={value}
            onInput={(e) => setValue(e.currentTarget.value)}
            placeholder="42 or 2026-11-28T10:00:00Z"
          />
        </label>
        <button type="submit">Go</button>
      </form>
    </div>
  );
}

function LiveState() {
  const s = useAppState();
  if (s.pointInTime) return <span class="live paused">Live updates paused</span>;
  return (
    <span role="status" class={`live ${s.live}`}>
      {s.live === 'live' ? 'Live' : s.live === 'lost' ? 'Connection lost: reconnecting…' : 'Connecting…'}
    </span>
  );
}

/** The page: skip link, header, menu, the view. */
export function App() {
  const s = useAppState();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    loadSession().then(
      () => travelTo(null),
      (err: unknown) => setError(err),
    );
  }, []);
  const { path } = useRoute();
  const inMesh = /^\/meshes\/([^/]+)\/./.exec(path)?.[1] ?? match('/meshes/:mesh', path)?.mesh;
  useEffect(() => {
    if (inMesh !== undefined && decodeURIComponent(inMesh) !== s.mesh)
      update({ mesh: decodeURIComponent(inMesh) });
  }, [inMesh]);
  const mesh = s.mesh;
  const nav: Array<[string, string]> = [
    ['/', 'Overview'],
    ['/meshes', 'Meshes'],
    [`/meshes/${mesh}/dataplanes`, 'Data plane proxies'],
    [`/meshes/${mesh}/services`, 'Services'],
    [`/meshes/${mesh}/policies`, 'Policies'],
    [`/meshes/${mesh}/gateways`, 'Gateways'],
    ['/zones', 'Zones'],
    ['/zone-ingresses', 'Zone ingresses'],
    ['/zoneegresses', 'Zone egresses'],
    ...(mayReadSecrets(s.caller)
      ? ([
          [`/meshes/${mesh}/secrets`, 'Mesh secrets'],
          ['/global-secrets', 'Global secrets'],
        ] as Array<[string, string]>)
      : []),
    ['/audit', 'Audit log'],
    // Offered to callers who may write something, on a server that takes writes.
    ...(!s.serverReadOnly && (s.caller?.grants ?? []).some((g) => g.role === 'writer' || g.role === 'admin')
      ? ([['/changes', 'Apply changes']] as Array<[string, string]>)
      : []),
    ['/diagnostics', 'Diagnostics'],
  ];
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">mesh-cp</span>
        {s.info && <span class="mode">{s.info.mode}</span>}
        <MeshPicker />
        <LiveState />
        <span class="who">
          {s.caller ? `${s.caller.name} (${s.caller.via})` : ''}{' '}
          <Link to="/sign-in">{token.get() ? 'Account' : 'Sign in'}</Link>
        </span>
      </header>
      <div class="layout">
        <nav class="side" aria-label="Main">
          <ul>
            {nav.map(([to, label]) => (
              <li key={to}>
                <Link to={to}>{label}</Link>
              </li>
            ))}
          </ul>
        </nav>
        <main id="main">
          <TimeTravel />
          {error !== undefined ? (
            <ErrorBox error={error} />
          ) : s.caller ? (
            <View />
          ) : (
            <p role="status">Loading…</p>
          )}
        </main>
      </div>
    </>
  );
}
