import { useEffect, useState } from 'preact/hooks';
import type { Page } from '../api/client.js';
import { getJson } from '../api/client.js';
import type { LogEvent, StreamState } from '../api/events.js';
import { watchEvents } from '../api/events.js';
import { Link } from '../router.js';
import { travelTo } from '../store.js';
import { useData } from '../ui/data.js';
import { Empty, Pager, Show, Time } from '../ui/parts.js';

const SIZE = 50;
type Filters = { kind: string; mesh: string; name: string; actor: string; changeSet: string };

/**
 * The audit log, newest first, filtered by kind, mesh, name and actor; on its first page, entries
 * written while it is open are added at the top as the server sends them (server-sent events).
 */
export function Audit({ query }: { query: URLSearchParams }) {
  const [filters, setFilters] = useState<Filters>({
    kind: query.get('kind') ?? '',
    mesh: query.get('mesh') ?? '',
    name: query.get('name') ?? '',
    actor: query.get('actor') ?? '',
    changeSet: query.get('changeSet') ?? '',
  });
  const [page, setPage] = useState(0);
  const [live, setLive] = useState<LogEvent[]>([]);
  const [state, setState] = useState<StreamState>('connecting');
  const key = JSON.stringify(filters);
  const loaded = useData(
    async (signal) => {
      const head = await getJson<Page<LogEvent>>('/_events', {
        query: { ...filters, size: 1 },
        timeless: true,
        signal,
      });
      const end = head.total - page * SIZE;
      const offset = Math.max(0, end - SIZE);
      const size = Math.max(0, end - offset);
      const items =
        size === 0
          ? []
          : (
              await getJson<Page<LogEvent>>('/_events', {
                query: { ...filters, size, offset },
                timeless: true,
                signal,
              })
            ).items;
      return { total: head.total, items: items.reverse() };
    },
    [key, page],
    () => false,
  );
  const newest = loaded.data?.items[0]?.revision;
  useEffect(() => {
    setLive([]);
    if (page !== 0 || loaded.data === undefined) return;
    const f = Object.fromEntries(Object.entries(filters).filter(([, v]) => v !== ''));
    return watchEvents({
      filters: f,
      after: newest ?? 0,
      onEvent: (e) => setLive((l) => (l.some((x) => x.revision === e.revision) ? l : [e, ...l])),
      onState: setState,
    });
  }, [key, page, loaded.data === undefined, newest]);
  const set = (k: keyof Filters) => (e: Event) => {
    setPage(0);
    setFilters((f) => ({ ...f, [k]: (e.currentTarget as HTMLInputElement).value.trim() }));
  };
  return (
    <>
      <h1 tabIndex={-1}>Audit log</h1>
      <p role="status" class={`live ${state}`}>
        {page !== 0
          ? 'Older entries: go back to the first page to follow new ones.'
          : state === 'live'
            ? 'Following new changes live.'
            : state === 'lost'
              ? 'Connection lost: reconnecting, and resuming after the last entry shown.'
              : 'Connecting…'}
      </p>
      <form
        class="filters"
        role="search"
        aria-label="Filter the audit log"
        onSubmit={(e) => e.preventDefault()}
      >
        {(['kind', 'mesh', 'name', 'actor'] as const).map((k) => (
          <label key={k}>
            {k[0].toUpperCase() + k.slice(1)}{' '}
            <input type="search" name={k} value={filters[k]} onChange={set(k)} />
          </label>
        ))}
      </form>
      <Show loaded={loaded}>
        {(data) => {
          const items = [...live, ...data.items];
          return items.length === 0 ? (
            <Empty>
              No change matches: nothing was written yet, or the filters exclude everything (kind is a type
              such as Dataplane).
            </Empty>
          ) : (
            <>
              <table class="table">
                <caption class="sr-only">Changes, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">Revision</th>
                    <th scope="col">Time</th>
                    <th scope="col">Change</th>
                    <th scope="col">Resource</th>
                    <th scope="col">Actor</th>
                    <th scope="col">Change set</th>
                  </tr>
                </thead>
                <tbody>
                  {items.map((e) => (
                    <tr key={e.revision}>
                      <td>
                        <button
                          type="button"
                          class="link"
                          onClick={() => travelTo({ revision: e.revision })}
                          aria-label={`View everything as of revision ${e.revision}`}
                        >
                          {e.revision}
                        </button>
                      </td>
                      <td>
                        <Time value={e.time} />
                      </td>
                      <td>{e.operation}</td>
                      <td>
                        {e.kind} {e.mesh ? `${e.mesh}/` : ''}
                        {e.name}
                      </td>
                      <td>
                        {e.actor.name} <span class="muted">({e.actor.address})</span>
                      </td>
                      <td>{e.changeSet ? <ChangeSetLink id={e.changeSet} /> : '—'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <Pager
                offset={page * SIZE}
                size={SIZE}
                total={data.total}
                onOffset={(o) => setPage(o / SIZE)}
                label="Audit log"
              />
            </>
          );
        }}
      </Show>
    </>
  );
}

/** A change set's short id, linking to the audit log of its changes. */
export function ChangeSetLink({ id }: { id: string }) {
  return (
    <Link to={`/audit?changeSet=${encodeURIComponent(id)}`} aria-label={`Changes of change set ${id}`}>
      {id.slice(0, 8)}
    </Link>
  );
}
