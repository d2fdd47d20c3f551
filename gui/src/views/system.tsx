import { get } from '../api/client.js';
import { useAppState } from '../store.js';
import { useData } from '../ui/data.js';
import { Code, Show } from '../ui/parts.js';

/** What the server is, its versions, and its effective config (`/config`, secrets masked). */
export function Diagnostics() {
  const s = useAppState();
  const config = useData(() => get('/config', {}, { timeless: true }), []);
  const versions = useData(() => get('/versions', {}, { timeless: true }), []);
  return (
    <>
      <h1 tabIndex={-1}>Diagnostics</h1>
      <section aria-labelledby="server-h">
        <h2 id="server-h">Control plane</h2>
        {s.info && (
          <dl class="facts">
            {Object.entries(s.info).map(([k, v]) => (
              <div key={k}>
                <dt>{k}</dt>
                <dd>{String(v)}</dd>
              </div>
            ))}
            <div>
              <dt>revision</dt>
              <dd>{s.revision ?? '—'}</dd>
            </div>
            <div>
              <dt>signed in as</dt>
              <dd>
                {s.caller?.name} ({s.caller?.via})
              </dd>
            </div>
          </dl>
        )}
      </section>
      <section aria-labelledby="config-h">
        <h2 id="config-h">Effective configuration</h2>
        <Show loaded={config}>{(c) => <Code text={JSON.stringify(c, null, 2)} label="Configuration" />}</Show>
      </section>
      <section aria-labelledby="versions-h">
        <h2 id="versions-h">Compatible versions</h2>
        <Show loaded={versions}>{(v) => <Code text={JSON.stringify(v, null, 2)} label="Versions" />}</Show>
      </section>
    </>
  );
}
