import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { request as httpRequest } from 'node:http';

// node:http(s) rather than fetch: it takes a CA and `rejectUnauthorized` without undici as a
// dependency, and it is loaded already, where the first fetch costs ~20 ms of start-up.

/** Query values; arrays repeat the key (`tag=a&tag=b`), undefined values are left out. */
export type Query = Record<string, string | number | boolean | readonly string[] | undefined>;

/** Options of one request. */
export interface RequestOptions {
  query?: Query;
  /** A string is sent as it is (give its content-type in `headers`); anything else as JSON. */
  body?: unknown;
  headers?: Record<string, string>;
  accept?: string;
}

/** An answer: status, headers and the body (parsed when it is JSON, else text). */
export interface ApiResponse<T = unknown> {
  status: number;
  headers: IncomingHttpHeaders;
  body: T;
  text: string;
}

/** A streamed answer (SSE): the raw response, to be read as it comes, and a way to stop it. */
export interface ApiStream {
  status: number;
  headers: IncomingHttpHeaders;
  body: IncomingMessage;
  close(): void;
}

/** Where a client connects and how. */
export interface ApiTarget {
  /** Base URL, e.g. `http://127.0.0.1:5681`. */
  address: string;
  /** The context it came from, named in connection errors; absent when `--api-address` gave it. */
  context?: string;
  authToken?: string;
  /** PEM text of the CA that signed the server's certificate. */
  caCert?: string;
  skipVerify?: boolean;
}

/** One cause of an API error (decisions §4). */
export interface ApiErrorCause {
  field: string;
  message: string;
}

/** A non-2xx answer of the control plane, with its `title`, `details` and `causes`. */
export class ApiError extends Error {
  readonly status: number;
  readonly title: string;
  readonly details: string;
  readonly causes: ApiErrorCause[];
  /** The item of a change set the server refused (the whole set with it). */
  readonly item?: ApiErrorItem;

  constructor(status: number, title: string, details: string, causes: ApiErrorCause[], item?: ApiErrorItem) {
    super(details ? `${title}: ${details}` : title);
    this.name = 'ApiError';
    this.status = status;
    this.title = title;
    this.details = details;
    this.causes = causes;
    if (item) this.item = item;
  }
}

/** Where a refused change set went wrong: the item's index (from 0) and what it names. */
export interface ApiErrorItem {
  index: number;
  kind: string;
  mesh?: string;
  name: string;
}

/** The control plane could not be reached (refused, DNS, TLS, timeout). */
export class ConnectionError extends Error {
  readonly address: string;
  readonly context?: string;
  /** The system's or TLS's code of the cause (`ECONNREFUSED`, `DEPTH_ZERO_SELF_SIGNED_CERT`), if any. */
  readonly code?: string;

  constructor(target: ApiTarget, cause: Error) {
    const from = target.context === undefined ? 'given by --api-address' : `context "${target.context}"`;
    super(`cannot reach the control plane at ${target.address} (${from}): ${cause.message}`);
    this.name = 'ConnectionError';
    this.address = target.address;
    this.context = target.context;
    this.code = (cause as NodeJS.ErrnoException).code;
  }
}

/** A client of one control plane's HTTP API. */
export interface ApiClient {
  readonly target: ApiTarget;
  request<T = unknown>(method: string, path: string, opts?: RequestOptions): Promise<ApiResponse<T>>;
  /** Like `request`, but resolves once the headers arrive and hands over the body as a stream. */
  stream(method: string, path: string, opts?: RequestOptions): Promise<ApiStream>;
}

/** The URL of `path` (may carry its own query) under `base`, with `query` appended. */
export function buildUrl(base: string, path: string, query: Query = {}): URL {
  const url = new URL(base.replace(/\/+$/, '') + (path.startsWith('/') ? path : `/${path}`));
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined) continue;
    if (Array.isArray(v)) for (const x of v) url.searchParams.append(k, x);
    else url.searchParams.set(k, String(v));
  }
  return url;
}

/** The error of a non-2xx answer: the server's `{title, details, causes}`, or the status line. */
function apiErrorOf(status: number, text: string, body: unknown): ApiError {
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const title = typeof b.title === 'string' ? b.title : `HTTP ${status}`;
  const details = typeof b.details === 'string' ? b.details : typeof body === 'string' ? text.trim() : '';
  const causes = Array.isArray(b.causes)
    ? (b.causes as Array<Record<string, unknown>>).map((c) => ({
        field: String(c.field ?? ''),
        message: String(c.message ?? ''),
      }))
    : [];
  const item =
    typeof b.item === 'object' && b.item !== null && typeof (b.item as ApiErrorItem).index === 'number'
      ? (b.item as ApiErrorItem)
      : undefined;
  return new ApiError(status, title, details, causes, item);
}

/** Creates a client for one target. */
export function createApiClient(target: ApiTarget): ApiClient {
  const open = (method: string, path: string, opts: RequestOptions): Promise<IncomingMessage> => {
    const url = buildUrl(target.address, path, opts.query);
    const headers: Record<string, string> = { accept: opts.accept ?? 'application/json', ...opts.headers };
    if (target.authToken) headers.authorization = `Bearer ${target.authToken}`;
    let payload: string | undefined;
    if (opts.body !== undefined) {
      payload = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
      headers['content-length'] = String(Buffer.byteLength(payload));
    } else if (method === 'POST') {
      // The server refuses a POST without a JSON (or YAML) type, even with no body (a revert): a
      // browser can send one from any web page without asking.
      headers['content-type'] ??= 'application/json';
    }
    const https = url.protocol === 'https:';
    if (!https && url.protocol !== 'http:') {
      return Promise.reject(new ConnectionError(target, new Error(`unsupported scheme ${url.protocol}`)));
    }
    return new Promise((resolve, reject) => {
      // node:https (and the TLS it loads, ~13 ms of each start) only for an https:// server.
      const request = https ? process.getBuiltinModule('node:https').request : httpRequest;
      const req = request(url, {
        method,
        headers,
        ...(https ? { ca: target.caCert, rejectUnauthorized: !target.skipVerify } : {}),
      });
      req.on('response', resolve);
      req.on('error', (err) => reject(new ConnectionError(target, err)));
      req.end(payload);
    });
  };

  const read = async (res: IncomingMessage): Promise<string> => {
    const chunks: Buffer[] = [];
    for await (const c of res) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  };

  return {
    target,
    async request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<ApiResponse<T>> {
      const res = await open(method, path, opts);
      let text: string;
      try {
        text = await read(res);
      } catch (err) {
        throw new ConnectionError(target, err as Error);
      }
      const status = res.statusCode ?? 0;
      const type = res.headers['content-type'] ?? '';
      let body: unknown = text;
      if (type.includes('json') && text !== '') {
        try {
          body = JSON.parse(text);
        } catch {
          body = text;
        }
      }
      if (status < 200 || status > 299) throw apiErrorOf(status, text, body);
      return { status, headers: res.headers, body: body as T, text };
    },
    async stream(method: string, path: string, opts: RequestOptions = {}): Promise<ApiStream> {
      const res = await open(method, path, opts);
      const status = res.statusCode ?? 0;
      if (status < 200 || status > 299) {
        const text = await read(res);
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          body = text;
        }
        throw apiErrorOf(status, text, body);
      }
      return { status, headers: res.headers, body: res, close: () => res.destroy() };
    },
  };
}
