import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { diffLines } from 'diff';
import { ApiError } from '../api/client.js';
import type { Loaded } from './data.js';

/** An error as the user should read it: the API's title, details and each cause at its field. */
export function ErrorBox({ error }: { error: unknown }) {
  if (error instanceof ApiError) {
    return (
      <div class="error" role="alert">
        <strong>
          {error.title} (HTTP {error.status})
        </strong>
        {error.details && <p>{error.details}</p>}
        {error.causes.length > 0 && (
          <ul>
            {error.causes.map((c) => (
              <li key={c.field + c.message}>
                <code>{c.field}</code>: {c.message}
              </li>
            ))}
          </ul>
        )}
        {error.status === 401 || error.status === 403 ? (
          <p>
            <a href="/gui/sign-in">Sign in with a user token</a> that may read this.
          </p>
        ) : null}
      </div>
    );
  }
  return (
    <div class="error" role="alert">
      <strong>Request failed</strong>
      <p>{error instanceof Error ? error.message : String(error)}: is the control plane reachable?</p>
    </div>
  );
}

/** What an empty list shows: that it is empty, and what to do about it. */
export function Empty({ children }: { children: ComponentChildren }) {
  return <div class="empty">{children}</div>;
}

/** The data of a view, or its loading state or error. */
export function Show<T>({
  loaded,
  children,
}: {
  loaded: Loaded<T>;
  children: (data: T) => ComponentChildren;
}) {
  if (loaded.data !== undefined) {
    return (
      <>
        {loaded.error !== undefined && <ErrorBox error={loaded.error} />}
        {children(loaded.data)}
      </>
    );
  }
  if (loaded.error !== undefined) return <ErrorBox error={loaded.error} />;
  return (
    <p class="loading" role="status">
      Loading…
    </p>
  );
}

/** A block of code (YAML, JSON) that can be scrolled with the keyboard. */
export function Code({ text, label }: { text: string; label: string }) {
  return (
    <pre class="code" tabIndex={0} aria-label={label}>
      <code>{text}</code>
    </pre>
  );
}

/** A line diff of two texts, removed lines marked `-` and added `+`. */
export function Diff({ before, after, label }: { before: string; after: string; label: string }) {
  const parts = diffLines(before, after);
  const same = parts.every((p) => !p.added && !p.removed);
  return (
    <pre class="code diff" tabIndex={0} aria-label={label}>
      {same ? (
        <span>(no difference)</span>
      ) : (
        parts.map((p, i) => {
          const mark = p.added ? '+' : p.removed ? '-' : ' ';
          const lines = p.value.replace(/\n$/, '').split('\n');
          return (
            <span key={i} class={p.added ? 'add' : p.removed ? 'del' : 'same'}>
              {p.added && <span class="sr-only">added: </span>}
              {p.removed && <span class="sr-only">removed: </span>}
              {lines.map((l) => `${mark} ${l}`).join('\n')}
              {'\n'}
            </span>
          );
        })
      )}
    </pre>
  );
}

/** A modal dialog (the platform's `<dialog>`: focus kept inside, Escape closes it). */
export function Dialog(props: { title: string; onClose: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
    return () => d?.close();
  }, []);
  return (
    <dialog ref={ref} aria-labelledby="dialog-title" onClose={props.onClose} class="dialog">
      <h2 id="dialog-title">{props.title}</h2>
      {props.children}
    </dialog>
  );
}

/** A relative and absolute time, for tables. */
export function Time({ value }: { value?: string }) {
  if (!value) return <span>—</span>;
  return <time dateTime={value}>{value.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}</time>;
}

/** Tags as badges. */
export function Tags({ tags }: { tags?: Record<string, string> }) {
  const entries = Object.entries(tags ?? {});
  if (entries.length === 0) return <span>—</span>;
  return (
    <ul class="tags">
      {entries.map(([k, v]) => (
        <li key={k}>
          <code>
            {k}={v}
          </code>
        </li>
      ))}
    </ul>
  );
}

/** Previous and next page buttons of a server-paged list. */
export function Pager(props: {
  offset: number;
  size: number;
  total: number;
  onOffset: (o: number) => void;
  label: string;
}) {
  const { offset, size, total } = props;
  if (total <= size && offset === 0) {
    return (
      <p class="pager">
        {total === 0 ? 0 : 1}–{total} of {total}
      </p>
    );
  }
  return (
    <nav class="pager" aria-label={`${props.label} pages`}>
      <button
        type="button"
        disabled={offset === 0}
        onClick={() => props.onOffset(Math.max(0, offset - size))}
      >
        Previous page
      </button>
      <span>
        {total === 0 ? 0 : offset + 1}–{Math.min(offset + size, total)} of {total}
      </span>
      <button type="button" disabled={offset + size >= total} onClick={() => props.onOffset(offset + size)}>
        Next page
      </button>
    </nav>
  );
}
