import { useState } from 'preact/hooks';
import { stringify } from 'yaml';
import type { Page, Resource } from '../api/client.js';
import { getJson, request } from '../api/client.js';
import { canWrite, travelTo, useAppState } from '../store.js';
import { ChangeSetLink } from './audit.js';
import { useData } from '../ui/data.js';
import { Dialog, Diff, Empty, ErrorBox, Pager, Show, Time } from '../ui/parts.js';

/** One change of a resource (`…/_history`). */
export interface Change {
  revision: number;
  time: string;
  operation: 'create' | 'update' | 'delete';
  actor: { name?: string; groups?: string[]; address?: string };
  changeSet?: string;
  resource: Resource;
}

/** A resource as YAML, without the times that every write changes. */
export function yamlOf(r: Resource | undefined): string {
  if (!r) return '';
  const { creationTime: _c, modificationTime: _m, ...rest } = r;
  return stringify(rest);
}

const SIZE = 50;

/**
 * The history of one resource: every revision with its time, actor and change set; a diff of any
 * two; and, for a caller who may write it, a revert that shows the diff it will write and asks first.
 */
export function HistoryPanel(props: { path: string; kind: string; mesh?: string; onChanged: () => void }) {
  const s = useAppState();
  const [offset, setOffset] = useState(0);
  const [picked, setPicked] = useState<number[]>([]);
  const [revert, setRevert] = useState<Change>();
  const loaded = useData(
    () => getJson<Page<Change>>(`${props.path}/_history`, { query: { size: SIZE, offset }, timeless: true }),
    [props.path, offset],
    (e) => e.kind === props.kind && e.name === props.path.split('/').at(-1),
  );
  const writable = canWrite(s, props.kind, props.mesh);
  const toggle = (rev: number) =>
    setPicked((p) => (p.includes(rev) ? p.filter((r) => r !== rev) : [...p, rev].slice(-2)));
  return (
    <section aria-labelledby="history-h">
      <h2 id="history-h">History</h2>
      <Show loaded={loaded}>
        {(page) => {
          if (page.total === 0)
            return <Empty>No recorded change yet: the history starts at its first write.</Empty>;
          const chosen = page.items
            .filter((c) => picked.includes(c.revision))
            .sort((a, b) => a.revision - b.revision);
          const last = page.items[page.items.length - 1];
          return (
            <>
              <p class="hint">Tick two revisions to compare them.</p>
              <table class="table">
                <caption class="sr-only">Changes, oldest first</caption>
                <thead>
                  <tr>
                    <th scope="col">Compare</th>
                    <th scope="col">Revision</th>
                    <th scope="col">Time</th>
                    <th scope="col">Change</th>
                    <th scope="col">Actor</th>
                    <th scope="col">Change set</th>
                    <th scope="col">Actions</th>
                  </tr>
                </thead>
                <tbody>
                  {page.items.map((c) => (
                    <tr key={c.revision}>
                      <td>
                        <input
                          type="checkbox"
                          checked={picked.includes(c.revision)}
                          onChange={() => toggle(c.revision)}
                          aria-label={`Compare revision ${c.revision}`}
                        />
                      </td>
                      <td>{c.revision}</td>
                      <td>
                        <Time value={c.time} />
                      </td>
                      <td>{c.operation}</td>
                      <td>
                        {c.actor.name ?? '—'}
                        {c.actor.address ? <span class="muted"> ({c.actor.address})</span> : null}
                      </td>
                      <td>{c.changeSet ? <ChangeSetLink id={c.changeSet} /> : '—'}</td>
                      <td class="actions">
                        <button type="button" onClick={() => travelTo({ revision: c.revision })}>
                          View as of {c.revision}
                        </button>
                        {writable && c !== last && c.operation !== 'delete' && (
                          <button type="button" onClick={() => setRevert(c)}>
                            Revert to {c.revision}
                          </button>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <Pager offset={offset} size={SIZE} total={page.total} onOffset={setOffset} label="History" />
              {chosen.length === 2 && (
                <div class="diff-box">
                  <h3>
                    Revision {chosen[0].revision} → {chosen[1].revision}
                  </h3>
                  <Diff
                    before={yamlOf(chosen[0].resource)}
                    after={yamlOf(chosen[1].resource)}
                    label={`Difference between revision ${chosen[0].revision} and ${chosen[1].revision}`}
                  />
                </div>
              )}
            </>
          );
        }}
      </Show>
      {revert && (
        <RevertDialog
          path={props.path}
          to={revert}
          onClose={() => setRevert(undefined)}
          onDone={() => {
            setRevert(undefined);
            loaded.reload();
            props.onChanged();
          }}
        />
      )}
    </section>
  );
}

/** Asks before a revert, showing the diff it will write (a dry run of the same revert). */
function RevertDialog(props: { path: string; to: Change; onClose: () => void; onDone: () => void }) {
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const url = `${props.path}/_revert`;
  const preview = useData(
    async () => {
      const now = await getJson<Resource>(props.path, { timeless: true }).catch(() => undefined);
      const res = await request(url, {
        method: 'POST',
        query: { toRevision: props.to.revision, dryRun: 'true' },
      });
      const after = (await res.json()) as Resource;
      return { now, after };
    },
    [props.path, props.to.revision],
    () => false,
  );
  const apply = async () => {
    setBusy(true);
    try {
      await request(url, { method: 'POST', query: { toRevision: props.to.revision } });
      props.onDone();
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };
  return (
    <Dialog title={`Revert to revision ${props.to.revision}?`} onClose={props.onClose}>
      <p>This writes one new change that restores the resource as it was at revision {props.to.revision}:</p>
      <Show loaded={preview}>
        {({ now, after }) => (
          <Diff
            before={yamlOf(now)}
            after={after && 'name' in after ? yamlOf(after) : ''}
            label="What the revert will write"
          />
        )}
      </Show>
      {error !== undefined && <ErrorBox error={error} />}
      <div class="buttons">
        <button type="button" class="primary" disabled={busy || preview.data === undefined} onClick={apply}>
          Revert
        </button>
        <button type="button" onClick={props.onClose}>
          Cancel
        </button>
      </div>
    </Dialog>
  );
}
