import { useState } from 'preact/hooks';
import { isNode, parseAllDocuments } from 'yaml';
import { ApiError, request } from '../api/client.js';
import { canWrite, useAppState } from '../store.js';
import { Empty, ErrorBox } from '../ui/parts.js';
import { ChangeSetLink } from './audit.js';

interface SetItem {
  index: number;
  kind: string;
  mesh?: string;
  name: string;
  operation: 'create' | 'update' | 'delete' | 'unchanged';
  revision: number | null;
}
interface Attachment {
  type: string;
  name: string;
  service?: string;
  policyKind?: string;
  added?: unknown[];
  removed?: unknown[];
  replaced?: unknown[];
}
interface Impact {
  total: number;
  items: Array<{
    mesh: string;
    name: string;
    zone?: string | null;
    kind: string;
    attachments?: Attachment[];
    resources?: Array<{ type: string; name: string; change?: string }>;
  }>;
}
interface SetResult {
  changeSet: string | null;
  dryRun: boolean;
  revision: number;
  items: SetItem[];
  impact?: Impact;
}

const EXAMPLE = `type: TrafficPermission
mesh: default
name: web-to-backend
sources:
  - match: {mesh.io/service: web}
destinations:
  - match: {mesh.io/service: backend}
`;

/** `a.b[0]["c.d"]` as path segments: a, b, 0, c.d. */
export function fieldPath(field: string): Array<string | number> {
  const out: Array<string | number> = [];
  const re = /([^.[\]]+)|\[(\d+)\]|\["((?:[^"\\]|\\.)*)"\]/g;
  for (let m = re.exec(field); m !== null; m = re.exec(field)) {
    if (m[1] !== undefined) out.push(m[1]);
    else if (m[2] !== undefined) out.push(Number(m[2]));
    else out.push(m[3].replace(/\\(.)/g, '$1'));
  }
  return out;
}

/** The line (1-based) of a field in the n-th document of a YAML text, or of the document itself. */
export function lineOf(text: string, doc: number, field: string): number | undefined {
  const docs = parseAllDocuments(text);
  const d = Array.isArray(docs) ? docs[doc] : undefined;
  if (!d) return undefined;
  let node: unknown = d.getIn(fieldPath(field), true);
  // A missing field: point at the nearest parent that exists.
  for (let p = fieldPath(field); !isNode(node) && p.length > 0; p = p.slice(0, -1)) node = d.getIn(p, true);
  const at = isNode(node) ? node.range?.[0] : d.contents?.range?.[0];
  return at === undefined ? undefined : text.slice(0, at).split('\n').length;
}

/**
 * Change preview: YAML (one document or several) → a dry run of the change set shows each item's
 * outcome, the validation errors at their lines and fields, and what it does to proxies when the
 * server tells; then the same set is applied, all or nothing.
 */
export function Changes() {
  const s = useAppState();
  const [text, setText] = useState(EXAMPLE);
  const [result, setResult] = useState<SetResult>();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const [previewed, setPreviewed] = useState<string>();
  const writable =
    canWrite(s, 'Mesh') ||
    canWrite(s, 'Dataplane') ||
    (s.catalogue ?? []).some((p) => canWrite(s, p.name, 'default'));
  const send = async (dryRun: boolean) => {
    setBusy(true);
    setError(undefined);
    try {
      const res = await request('/_changes', {
        method: 'POST',
        body: text,
        contentType: 'application/yaml',
        query: dryRun ? { dryRun: 'true', impact: 'true' } : {},
      });
      setResult((await res.json()) as SetResult);
      setPreviewed(dryRun ? text : undefined);
    } catch (err) {
      setResult(undefined);
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  if (!writable) {
    return (
      <>
        <h1 tabIndex={-1}>Apply changes</h1>
        <Empty>
          {s.pointInTime !== null
            ? 'You are looking at the past: go back to now to make changes.'
            : 'You may not write here (your role reads only, or this control plane is read-only). Sign in with a writer or admin token.'}
        </Empty>
      </>
    );
  }
  const located =
    error instanceof ApiError
      ? error.causes.map((c) => {
          // A change set's causes name their item: `items[1].networking.address`.
          const m = /^items\[(\d+)\]\.?(.*)$/.exec(c.field);
          const doc = m ? Number(m[1]) : (error.item?.index ?? 0);
          return { ...c, line: lineOf(text, doc, m ? m[2] : c.field) };
        })
      : [];
  return (
    <>
      <h1 tabIndex={-1}>Apply changes</h1>
      <p>
        Write one or more resources as YAML documents separated by <code>---</code>. Preview checks them all
        without writing anything; Apply writes them together, or none of them.
      </p>
      <label for="yaml-editor">Resources (YAML)</label>
      <textarea
        id="yaml-editor"
        class="editor"
        spellcheck={false}
        rows={16}
        value={text}
        onInput={(e) => {
          setText(e.currentTarget.value);
          setPreviewed(undefined);
        }}
        aria-describedby={error ? 'change-errors' : undefined}
      />
      <div class="buttons">
        <button type="button" disabled={busy} onClick={() => send(true)}>
          Preview
        </button>
        <button
          type="button"
          class="primary"
          disabled={busy || previewed !== text}
          onClick={() => send(false)}
        >
          Apply
        </button>
        {previewed !== text && <span class="hint">Preview first: Apply writes the set you previewed.</span>}
      </div>
      <div id="change-errors" aria-live="polite">
        {error !== undefined && (
          <>
            <ErrorBox error={error} />
            {error instanceof ApiError && error.item && (
              <p>
                In document {error.item.index + 1}: {error.item.kind}{' '}
                {error.item.mesh ? `${error.item.mesh}/` : ''}
                {error.item.name}
              </p>
            )}
            {located.length > 0 && (
              <ul class="causes">
                {located.map((c) => (
                  <li key={c.field + c.message}>
                    {c.line !== undefined ? `Line ${c.line}, ` : ''}
                    <code>{c.field}</code>: {c.message}
                  </li>
                ))}
              </ul>
            )}
          </>
        )}
      </div>
      {result && <SetOutcome result={result} />}
    </>
  );
}

function SetOutcome({ result }: { result: SetResult }) {
  return (
    <section aria-labelledby="outcome-h" aria-live="polite">
      <h2 id="outcome-h">
        {result.dryRun ? 'Preview: nothing written yet' : `Applied at revision ${result.revision}`}
      </h2>
      {!result.dryRun && result.changeSet && (
        <p>
          Change set <ChangeSetLink id={result.changeSet} />: see its changes in the audit log.
        </p>
      )}
      <table class="table">
        <caption class="sr-only">Items of the change set</caption>
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">Resource</th>
            <th scope="col">Outcome</th>
          </tr>
        </thead>
        <tbody>
          {result.items.map((i) => (
            <tr key={i.index}>
              <td>{i.index + 1}</td>
              <td>
                {i.kind} {i.mesh ? `${i.mesh}/` : ''}
                {i.name}
              </td>
              <td>{i.operation}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {result.impact && (
        <>
          <h3>Impact on proxies ({result.impact.total})</h3>
          {result.impact.total === 0 ? (
            <p>No proxy's config changes.</p>
          ) : (
            <ul class="impact">
              {result.impact.items.map((p) => (
                <li key={`${p.mesh}/${p.name}`}>
                  <strong>
                    {p.mesh}/{p.name}
                  </strong>{' '}
                  ({p.kind}
                  {p.zone ? `, zone ${p.zone}` : ''})
                  <ul>
                    {(p.attachments ?? []).map((a, k) => (
                      <li key={k}>
                        {a.type} {a.name}
                        {a.service ? ` (${a.service})` : ''}
                        {a.policyKind ? ` · ${a.policyKind}` : ''}:{' '}
                        {[
                          namesOf('added', a.added),
                          namesOf('removed', a.removed),
                          namesOf('replaced', a.replaced),
                        ]
                          .filter((t) => t !== '')
                          .join('; ')}
                      </li>
                    ))}
                    {(p.resources ?? []).map((r) => (
                      <li key={`${r.type}/${r.name}`}>
                        xDS {r.type} {r.name}
                        {r.change ? ` ${r.change}` : ''}
                      </li>
                    ))}
                  </ul>
                </li>
              ))}
            </ul>
          )}
          {result.impact.total > result.impact.items.length && (
            <p class="hint">
              The first {result.impact.items.length} of {result.impact.total} proxies.
            </p>
          )}
        </>
      )}
    </section>
  );
}

/** `added a, b` for the policies an attachment gains (or loses, or sees replaced); '' for none. */
function namesOf(what: string, names: unknown[] | undefined): string {
  if (!names || names.length === 0) return '';
  return `${what} ${names.map((n) => (typeof n === 'string' ? n : JSON.stringify(n))).join(', ')}`;
}
