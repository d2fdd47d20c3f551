import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';

/** Where the GUI is served; every view is a path under it. */
export const BASE = '/gui';

const listeners = new Set<() => void>();

/** The current view's path (without the base) and query. */
export function currentRoute(): { path: string; query: URLSearchParams } {
  const p = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : location.pathname;
  return { path: p === '' ? '/' : p.replace(/\/+$/, '') || '/', query: new URLSearchParams(location.search) };
}

/** Goes to a view without reloading the page. */
export function navigate(to: string, replace = false): void {
  const url = BASE + (to === '/' ? '' : to);
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  for (const l of listeners) l();
  // The new view's heading gets the focus, so that a screen reader announces it.
  requestAnimationFrame(() => document.querySelector<HTMLElement>('main h1')?.focus());
}

addEventListener('popstate', () => {
  for (const l of listeners) l();
});

/** The current route, re-rendering on navigation. */
export function useRoute(): ReturnType<typeof currentRoute> {
  const [route, setRoute] = useState(currentRoute);
  useEffect(() => {
    const l = () => setRoute(currentRoute());
    listeners.add(l);
    return () => void listeners.delete(l);
  }, []);
  return route;
}

/** A link to a view: a real `<a href>` (open in a new tab works), handled without a reload. */
export function Link(props: {
  to: string;
  children: ComponentChildren;
  'aria-current'?: 'page' | 'true';
  'aria-label'?: string;
}) {
  const { to, children } = props;
  const onClick = (e: MouseEvent) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(to);
  };
  const here = currentRoute().path === to;
  return (
    <a
      href={BASE + (to === '/' ? '' : to)}
      onClick={onClick}
      aria-current={props['aria-current'] ?? (here ? 'page' : undefined)}
      aria-label={props['aria-label']}
    >
      {children}
    </a>
  );
}

/** Matches a path against a pattern with `:params`; undefined when it does not match. */
export function match(pattern: string, path: string): Record<string, string> | undefined {
  const ps = pattern.split('/');
  const xs = path.split('/');
  if (ps.length !== xs.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < ps.length; i += 1) {
    if (ps[i].startsWith(':')) params[ps[i].slice(1)] = decodeURIComponent(xs[i]);
    else if (ps[i] !== xs[i]) return undefined;
  }
  return params;
}
