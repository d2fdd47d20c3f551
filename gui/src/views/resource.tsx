import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import type { Page, Resource } from '../api/client.js';
import { getJson, getText, resourcePath } from '../api/client.js';
import { Link } from '../router.js';
import { useAppState } from '../store.js';
import { useData } from '../ui/data.js';
import { Code, Empty, Pager, Show, Time } from '../ui/parts.js';
import { HistoryPanel } from './history.js';

/** A kind the GUI lists: its wire type, collection path, and whether it lives in a mesh. */
export interface KindInfo {
  kind: string;
  path: string;
  title: string;
  mesh: boolean;
}

/** The page of one resource: its YAML as the API serves it, what else the kind shows, its history. */
export function ResourcePage(props: {
  info: KindInfo;
  name: string;
  mesh?: string;
  children?: ComponentChildren;
}) {
  const { info, name, mesh } = props;
  const path = resourcePath(info.path, name, info.mesh ? mesh : undefined);
  const yaml = useData(
    (signal) => getText(path, { accept: 'application/yaml', signal }),
    [path],
    (e) => e.kind === info.kind && e.name === name,
  );
  return (
    <>
      <h1 tabIndex={-1}>
        {info.title}: {name}
      </h1>
      {mesh && info.mesh && <p class="muted">Mesh {mesh}</p>}
      <section aria-labelledby="spec-h">
        <h2 id="spec-h">Definition</h2>
        <Show loaded={yaml}>{(text) => <Code text={text} label={`${info.title} ${name} as YAML`} />}</Show>
      </section>
      {props.children}
      <HistoryPanel
        path={path}
        kind={info.kind}
        mesh={info.mesh ? mesh : undefined}
        onChanged={yaml.reload}
      />
    </>
  );
}

const SIZE = 50;

/** A server-paged list of one kind, with a name filter; each name opens its page. */
export function ResourceList(props: {
  info: KindInfo;
  mesh?: string;
  /** Where a name links to; absent: names are not links (secrets). */
  linkOf?: (r: Resource) => string;
  empty: ComponentChildren;
  columns?: Array<{ title: string; cell: (r: Resource) => ComponentChildren }>;
  /** Show the heading (false when the list is part of a larger page). */
  heading?: boolean;
}) {
  const { info, mesh } = props;
  useAppState();
  const [offset, setOffset] = useState(0);
  const [name, setName] = useState('');
  const base = info.mesh && mesh ? `/meshes/${encodeURIComponent(mesh)}/${info.path}` : `/${info.path}`;
  const loaded = useData(
    (signal) => getJson<Page<Resource>>(base, { query: { size: SIZE, offset, name }, signal }),
    [base, offset, name],
    (e) => e.kind === info.kind,
  );
  const id = `list-${info.path}`;
  return (
    <section aria-labelledby={id}>
      {props.heading === false ? (
        <h2 id={id}>{info.title}</h2>
      ) : (
        <h1 id={id} tabIndex={-1}>
          {info.title}
        </h1>
      )}
      <div class="filters">
        <label>
          Name contains{' '}
          <input
            type="search"
            value={name}
            onInput={(e) => {
              setOffset(0);
              setName(e.currentTarget.value);
            }}
          />
        </label>
      </div>
      <Show loaded={loaded}>
        {(page) =>
          page.total === 0 ? (
            <Empty>
              {name ? `No ${info.title.toLowerCase()} whose name contains "${name}".` : props.empty}
            </Empty>
          ) : (
            <>
              <table class="table">
                <caption class="sr-only">
                  {info.title}: {page.total}
                </caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    {info.mesh && !mesh && <th scope="col">Mesh</th>}
                    {(props.columns ?? []).map((c) => (
                      <th scope="col" key={c.title}>
                        {c.title}
                      </th>
                    ))}
                    <th scope="col" class="wide">
                      Changed
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {page.items.map((r) => (
                    <tr key={`${r.mesh ?? ''}/${r.name}`}>
                      <td>{props.linkOf ? <Link to={props.linkOf(r)}>{r.name}</Link> : r.name}</td>
                      {info.mesh && !mesh && <td>{r.mesh}</td>}
                      {(props.columns ?? []).map((c) => (
                        <td key={c.title}>{c.cell(r)}</td>
                      ))}
                      <td class="wide">
                        <Time value={r.modificationTime as string | undefined} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <Pager offset={offset} size={SIZE} total={page.total} onOffset={setOffset} label={info.title} />
            </>
          )
        }
      </Show>
    </section>
  );
}
