import type { FastifyRequest } from 'fastify';
import { isIPv6 } from 'node:net';
import { AppError } from '../util/errors.js';
import { printable } from '../util/printable.js';

/** Who may call from a browser, which `Host` names this control plane, and its public URL (decisions §7). */
export interface RequestOriginSettings {
  /** Regexes, each matched against the whole `Origin` (config `apiServer.corsAllowedDomains`). */
  corsAllowedDomains: readonly string[];
  /** Host names besides the loopback ones (config `apiServer.allowedHosts`); `.example.com` allows its subdomains. */
  allowedHosts?: readonly string[];
  /** The URL clients reach this API at (config `apiServer.externalUrl`); empty: taken from the request. */
  externalUrl?: string;
}

/** What the API asks about where a request comes from. */
export interface RequestOrigin {
  /** True when `origin` may read answers cross-origin (CORS). */
  corsAllows(origin: string): boolean;
  /** True when the `Host` header names this control plane: a loopback name or address, or an allowed host. */
  hostAllowed(req: FastifyRequest): boolean;
  /**
   * True when the request carries no `Origin`, its own (same-origin) or one that CORS allows: a page
   * of another site fails this, and then no credential the browser sends by itself (loopback, a
   * client certificate) counts.
   */
  originAllowed(req: FastifyRequest): boolean;
  /** `scheme://host[:port]` for absolute links (`next`), never from a `Host` header that is not allowed. */
  baseUrl(req: FastifyRequest): string;
}

const LOOPBACK_V4 = /^127(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

// `host[:port]` (RFC 9110 7.2): a host name or IPv4 address (letters, digits, `-`, `_`, dots; a
// trailing dot allowed), or an IPv6 address in brackets, then at most one numeric port.
const HOST = /^(?:\[([0-9a-f:.]+)\]|([a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?))(?::(\d{1,5}))?$/i;

/**
 * The host name of a `Host` header value (lower-cased, without brackets or a trailing dot), or
 * undefined when the value is not strictly `host[:port]`: `localhost:1@evil.example` names no host.
 */
export function parseHost(header: string): string | undefined {
  const m = HOST.exec(header);
  if (m === null) return undefined;
  if (m[3] !== undefined && Number(m[3]) > 65535) return undefined;
  if (m[1] !== undefined) return isIPv6(m[1]) ? m[1].toLowerCase() : undefined;
  const name = m[2].toLowerCase();
  return name.endsWith('.') ? name.slice(0, -1) : name;
}

/**
 * Refuses a request whose `Host` header is not strictly `host[:port]` (400): it would pass for
 * another host in the loopback check, or land in absolute links. No `Host` (HTTP/1.0) is left to the
 * other rules.
 */
export function checkHostHeader(req: FastifyRequest): void {
  const header = req.headers.host;
  if (header === undefined || parseHost(header) !== undefined) return;
  const shown = header.length > 100 ? `${header.slice(0, 100)}…` : header;
  throw new AppError(
    'BAD_REQUEST',
    'Bad request',
    `the Host header ${JSON.stringify(printable(shown))} is not host[:port]: send a host name, an IPv4 address or an [IPv6] address, with an optional numeric port`,
  );
}

/** The host name of a configured host value, lower-cased, without port, brackets or a trailing dot. */
export function hostNameOf(host: string): string | undefined {
  const value = host.trim().toLowerCase();
  if (value === '') return undefined;
  if (value.startsWith('[')) {
    const end = value.indexOf(']');
    if (end < 0) return undefined;
    return value.slice(1, end);
  }
  const colon = value.indexOf(':');
  const name = colon < 0 ? value : value.slice(0, colon);
  return name.endsWith('.') ? name.slice(0, -1) : name;
}

/** True for names a browser itself resolves to loopback (RFC 6761) and loopback addresses. */
export function isLoopbackName(name: string): boolean {
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  if (LOOPBACK_V4.test(name)) return true;
  if (name === '::1' || name === '0:0:0:0:0:0:0:1') return true;
  const mapped = /^::ffff:(.+)$/.exec(name);
  return mapped !== null && LOOPBACK_V4.test(mapped[1]);
}

/** Builds the request-origin checks from the settings (compiled once per server). */
export function createRequestOrigin(settings: RequestOriginSettings): RequestOrigin {
  const cors = settings.corsAllowedDomains.map((d) => new RegExp(`^(?:${d})$`));
  const exact = new Set<string>();
  const suffixes: string[] = [];
  for (const raw of settings.allowedHosts ?? []) {
    const h = raw.trim().toLowerCase();
    if (h.startsWith('.')) suffixes.push(h);
    else if (h !== '') exact.add(hostNameOf(h) ?? h);
  }
  const external = settings.externalUrl ? settings.externalUrl.replace(/\/+$/, '') : undefined;

  const nameAllowed = (name: string): boolean =>
    isLoopbackName(name) || exact.has(name) || suffixes.some((s) => name.endsWith(s) || name === s.slice(1));

  const hostAllowed = (req: FastifyRequest): boolean => {
    const header = req.headers.host;
    if (typeof header !== 'string') return false;
    const name = parseHost(header);
    return name !== undefined && nameAllowed(name);
  };

  const corsAllows = (origin: string): boolean => cors.some((r) => r.test(origin));

  const originAllowed = (req: FastifyRequest): boolean => {
    const origin = req.headers.origin;
    if (origin === undefined) return true;
    if (corsAllows(origin)) return true;
    return origin.toLowerCase() === `${req.protocol}://${String(req.headers.host).toLowerCase()}`;
  };

  return {
    corsAllows,
    hostAllowed,
    originAllowed,
    baseUrl(req) {
      if (external !== undefined) return external;
      // hostAllowed holds only for a Host that is strictly `host[:port]`: safe in a URL as it is.
      if (hostAllowed(req)) return `${req.protocol}://${String(req.headers.host)}`;
      // A Host that names nothing we know: link to the address the connection arrived at.
      const socket = req.raw.socket;
      const address = (socket.localAddress ?? '127.0.0.1').replace(/^::ffff:(?=\d+\.)/, '');
      const port = socket.localPort;
      const host = address.includes(':') ? `[${address}]` : address;
      return `${req.protocol}://${host}${port === undefined ? '' : `:${port}`}`;
    },
  };
}
