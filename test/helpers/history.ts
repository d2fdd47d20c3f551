import type { FastifyInstance } from 'fastify';

/** A small deterministic PRNG (mulberry32), so a failing seed can be replayed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const MESHES = ['default', 'm1', 'm2'];
const all = [{ match: { 'mesh.io/service': '*' } }];

/** One random write through the API: creates, updates and deletes of several kinds in a few meshes. */
function randomWrite(rand: () => number): {
  method: 'PUT' | 'DELETE';
  url: string;
  payload?: Record<string, unknown>;
} {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
  const mesh = pick(MESHES);
  const n = Math.floor(rand() * 4);
  const svc = pick(['web', 'api', 'db']);
  const del = rand() < 0.25;
  switch (pick(['mesh', 'tp', 'tp', 'dp', 'dp', 'dp', 'es', 'secret', 'zone'] as const)) {
    case 'mesh':
      if (mesh === 'default')
        return { method: 'PUT', url: '/meshes/default', payload: { type: 'Mesh', name: 'default' } };
      return del
        ? { method: 'DELETE', url: `/meshes/${mesh}` }
        : { method: 'PUT', url: `/meshes/${mesh}`, payload: { type: 'Mesh', name: mesh } };
    case 'tp': {
      const url = `/meshes/${mesh}/traffic-permissions/tp-${n}`;
      return del
        ? { method: 'DELETE', url }
        : {
            method: 'PUT',
            url,
            payload: {
              type: 'TrafficPermission',
              mesh,
              name: `tp-${n}`,
              sources: all,
              destinations: [{ match: { 'mesh.io/service': svc } }],
            },
          };
    }
    case 'dp': {
      const url = `/meshes/${mesh}/dataplanes/dp-${n}`;
      return del
        ? { method: 'DELETE', url }
        : {
            method: 'PUT',
            url,
            payload: {
              type: 'Dataplane',
              mesh,
              name: `dp-${n}`,
              networking: {
                address: `10.0.0.${n + 1}`,
                inbound: [{ port: 8000 + Math.floor(rand() * 3), tags: { 'mesh.io/service': svc } }],
              },
            },
          };
    }
    case 'es': {
      const url = `/meshes/${mesh}/external-services/es-${n}`;
      return del
        ? { method: 'DELETE', url }
        : {
            method: 'PUT',
            url,
            payload: {
              type: 'ExternalService',
              mesh,
              name: `es-${n}`,
              networking: { address: `ext-${svc}.example:443` },
              tags: { 'mesh.io/service': `ext-${svc}` },
            },
          };
    }
    case 'secret': {
      const url = `/meshes/${mesh}/secrets/s-${n}`;
      return del
        ? { method: 'DELETE', url }
        : {
            method: 'PUT',
            url,
            payload: { type: 'Secret', mesh, name: `s-${n}`, data: Buffer.from(svc).toString('base64') },
          };
    }
    case 'zone': {
      const url = `/zones/z-${n}`;
      return del
        ? { method: 'DELETE', url }
        : { method: 'PUT', url, payload: { type: 'Zone', name: `z-${n}`, enabled: rand() < 0.5 } };
    }
  }
}

/** Makes `count` random writes (refused ones, e.g. a DELETE of nothing, are part of the mix); `after` sees each accepted one. */
export async function randomWrites(
  app: FastifyInstance,
  seed: number,
  count: number,
  after?: () => Promise<void>,
): Promise<void> {
  const rand = prng(seed);
  for (let i = 0; i < count; i++) {
    const w = randomWrite(rand);
    const res = await app.inject({ method: w.method, url: w.url, payload: w.payload });
    if (res.statusCode < 300 && after) await after();
  }
}

/** The URLs whose answers make up "the state the API shows": lists, overviews, insights, single resources. */
export const STATE_URLS: readonly string[] = [
  '/meshes?size=1000',
  '/dataplanes?size=1000',
  '/traffic-permissions?size=1000',
  '/external-services?size=1000',
  '/secrets?size=1000',
  '/global-secrets?size=1000',
  '/zones?size=1000',
  '/zones+insights?size=1000',
  '/mesh-insights?size=1000',
  '/global-insights',
  ...MESHES.flatMap((m) => [
    `/meshes/${m}`,
    `/mesh-insights/${m}`,
    `/meshes/${m}/dataplanes+insights?size=1000`,
    `/meshes/${m}/service-insights?size=1000`,
    `/meshes/${m}/traffic-permissions/tp-1`,
    `/meshes/${m}/dataplanes/dp-2`,
    `/meshes/${m}/dataplanes+insights/dp-0`,
  ]),
  '/zones/z-0',
];

/** Fields that are not a function of the log alone, with why. */
function stable(url: string, status: number, body: unknown): unknown {
  // An error's details may name the revision asked for ("not found ... at revision R").
  if (status >= 400) return { title: (body as { title?: string }).title };
  if (url.startsWith('/global-insights') && body && typeof body === 'object') {
    // GlobalInsights is "created" when it is read: now for the live answer, the time of R in the past.
    const { creationTime: _c, ...rest } = body as Record<string, unknown>;
    return rest;
  }
  if (url.includes('/service-insights') && body && typeof body === 'object') {
    // A ServiceInsight's times depend on when its mesh summary was first built (live: incrementally
    // since the first read; at R: built once at the first read), so only its counts are compared.
    const list = body as { items?: Array<Record<string, unknown>> };
    return {
      ...list,
      items: list.items?.map(({ creationTime: _c, modificationTime: _m, ...rest }) => rest),
    };
  }
  return body;
}

/** The state the API shows, at the head or (with `revision`) as of R: status, ETag and body per URL. */
export async function observe(
  app: FastifyInstance,
  revision?: number,
): Promise<Record<string, { status: number; etag?: string; revision?: string; body: unknown }>> {
  const out: Record<string, { status: number; etag?: string; revision?: string; body: unknown }> = {};
  for (const url of STATE_URLS) {
    const at = revision === undefined ? url : `${url}${url.includes('?') ? '&' : '?'}revision=${revision}`;
    const res = await app.inject({ method: 'GET', url: at });
    const body = res.json() as { next?: unknown };
    // `next` would carry the revision parameter; lists here fit one page.
    if (body && typeof body === 'object' && 'next' in body) body.next = null;
    out[url] = {
      status: res.statusCode,
      etag: res.headers.etag as string | undefined,
      revision: res.statusCode === 200 ? (res.headers['x-mesh-revision'] as string) : undefined,
      body: stable(url, res.statusCode, body),
    };
  }
  return out;
}
