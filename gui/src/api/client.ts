import type { components, paths } from '../generated/openapi.js';

/** A schema of the API's OpenAPI document. */
export type Schema<N extends keyof components['schemas']> = components['schemas'][N];
/** Any stored resource, as the API answers it. */
export type Resource = { type: string; name: string; mesh?: string } & Record<string, unknown>;
/** A page of a list (`{total, items, next}`). */
export interface Page<T> {
  total: number;
  items: T[];
  next: string | null;
}
/** One cause of an error answer: the field and what is wrong with it. */
export type Cause = { field: string; message: string };

type GetPath = { [P in keyof paths]: paths[P] extends { get: object } ? P : never }[keyof paths];
type JsonOf<Op> = Op extends { responses: { 200: { content: { 'application/json': infer J } } } }
  ? J
  : unknown;

const TOKEN_KEY = 'mesh-cp.token';

/** The user token pasted at sign-in: kept for this tab only, never in a URL. */
export const token = {
  get: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  set: (value: string): void => sessionStorage.setItem(TOKEN_KEY, value),
  clear: (): void => sessionStorage.removeItem(TOKEN_KEY),
};

/** An error answer of the API: its status, title, details and causes (`{title, details, causes}`). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly details: string,
    readonly causes: Cause[] = [],
    readonly item?: { index: number; kind: string; mesh?: string; name: string },
  ) {
    super(`${title}: ${details}`);
  }
}

/** The point in time every read is made at: now, a revision, or a time (`?revision=`, `?at=`). */
export type PointInTime = { revision: number } | { at: string } | null;
let pointInTime: PointInTime = null;

/** Sets the point in time of every later read of a resource or a list. */
export function setPointInTime(p: PointInTime): void {
  pointInTime = p;
}

// Reads whose answer does not depend on a point in time (or that refuse one).
const TIMELESS =
  /^\/(_identity|_events|config|versions|policies|status\/zones|openapi\.json)?$|\/_history$|\/(stats|clusters)$/;

/** Query string of a request: its own parameters, then the point in time when it is a read of the past. */
function queryOf(
  path: string,
  query: Record<string, string | number | string[] | undefined>,
  timeless: boolean,
) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === '') continue;
    for (const one of Array.isArray(v) ? v : [v]) q.append(k, String(one));
  }
  if (!timeless && pointInTime && !TIMELESS.test(path)) {
    if ('revision' in pointInTime) q.set('revision', String(pointInTime.revision));
    else q.set('at', pointInTime.at);
  }
  const s = q.toString();
  return s === '' ? '' : `?${s}`;
}

/** Headers of every call: the token, if one was pasted (loopback callers need none). */
function authHeaders(): Record<string, string> {
  const t = token.get();
  return t ? { authorization: `Bearer ${t}` } : {};
}

async function errorOf(res: Response): Promise<ApiError> {
  try {
    const body = (await res.json()) as Partial<Schema<'Error'>>;
    return new ApiError(
      res.status,
      body.title ?? res.statusText,
      body.details ?? '',
      body.causes ?? [],
      body.item,
    );
  } catch {
    return new ApiError(res.status, res.statusText || 'Request failed', `HTTP ${res.status}`);
  }
}

export interface RequestOptions {
  method?: 'GET' | 'PUT' | 'POST' | 'DELETE';
  query?: Record<string, string | number | string[] | undefined>;
  body?: string;
  contentType?: string;
  accept?: string;
  /** Read now even while the GUI shows the past (history, the audit log). */
  timeless?: boolean;
  signal?: AbortSignal;
  headers?: Record<string, string>;
}

/** One call of the API of this origin; an error answer throws {@link ApiError}. */
export async function request(path: string, opts: RequestOptions = {}): Promise<Response> {
  const method = opts.method ?? 'GET';
  const url = path + queryOf(path, opts.query ?? {}, opts.timeless === true || method !== 'GET');
  const headers: Record<string, string> = {
    accept: opts.accept ?? 'application/json',
    ...authHeaders(),
    ...opts.headers,
  };
  // Every POST says its type, even with no body: the API refuses a POST a web page could forge.
  if (opts.contentType || method === 'POST') headers['content-type'] = opts.contentType ?? 'application/json';
  const res = await fetch(url, {
    method,
    headers,
    body: opts.body,
    signal: opts.signal,
    credentials: 'same-origin',
    cache: 'no-store',
  });
  if (!res.ok) throw await errorOf(res);
  return res;
}

/** A GET answered as JSON, typed by its path when the path is a literal of the API document. */
export async function getJson<T = unknown>(path: string, opts: RequestOptions = {}): Promise<T> {
  return (await (await request(path, opts)).json()) as T;
}

/** A GET of a path of the API document, its answer typed by the document. */
export function get<P extends GetPath>(
  path: P,
  params: Record<string, string> = {},
  opts: RequestOptions = {},
): Promise<JsonOf<paths[P]['get']>> {
  const concrete = path.replace(/\{(\w+)\}/g, (_m, key: string) => encodeURIComponent(params[key] ?? ''));
  return getJson(concrete, opts);
}

/** The text of a GET (YAML answers). */
export async function getText(path: string, opts: RequestOptions = {}): Promise<string> {
  return (await request(path, opts)).text();
}

/** The URL path of one resource (mesh-scoped or not). */
export function resourcePath(collection: string, name: string, mesh?: string): string {
  const n = encodeURIComponent(name);
  return mesh === undefined
    ? `/${collection}/${n}`
    : `/meshes/${encodeURIComponent(mesh)}/${collection}/${n}`;
}
