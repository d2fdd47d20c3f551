/**
 * The inspect queries (spec 4.9, shapes 2.20, decisions §10): answers built from the match view,
 * which writes keep current before they answer, so every answer here is read-your-writes.
 *
 * A missing mesh, proxy or gateway is a 404 that names it; a policy that does not exist affects no
 * proxy (`{total: 0, items: []}`, as the reference answers).
 */
import type { MatchView, ProxyMatches } from '../policies/match-view.js';
import { proxyInterfaces } from '../policies/proxy-interfaces.js';
import type { ResourceViews } from '../projections/resource-views.js';
import type { ResourceDescriptor } from '../resources/descriptor.js';
import { AppError } from '../util/errors.js';

/** A page request of an inspect list. */
export interface InspectPage {
  offset: number;
  size: number;
}

/** One affected proxy as the wire shows it. */
type AffectedItem = Record<string, unknown>;

/** The inspect read side used by the API. */
export interface InspectQueries {
  /** `GET /meshes/{mesh}/dataplanes/{name}/policies`. */
  matchedPolicies(mesh: string, name: string): Record<string, unknown>;
  /** `GET /meshes/{mesh}/{collection}/{name}/dataplanes` for a policy kind. */
  affected(
    desc: ResourceDescriptor,
    mesh: string,
    name: string,
    page: InspectPage,
  ): { total: number; items: AffectedItem[] };
}

const notFound = (details: string): AppError => new AppError('NOT_FOUND', 'Not found', details);

/** Creates the inspect queries over the views and the match view. */
export function createInspectQueries<V>(deps: {
  views: ResourceViews;
  matches: MatchView<V>;
}): InspectQueries {
  const { views, matches } = deps;

  const requireMesh = (mesh: string): void => {
    if (!views.get('Mesh', undefined, mesh)) throw notFound(`Mesh "${mesh}" not found`);
  };

  const requireProxy = (mesh: string, name: string): ProxyMatches<V> => {
    requireMesh(mesh);
    const p = matches.proxy(mesh, name);
    if (!p) throw notFound(`Dataplane "${name}" not found in mesh "${mesh}"`);
    return p;
  };

  return {
    matchedPolicies(mesh, name) {
      const p = requireProxy(mesh, name);
      if (p.kind === 'SidecarDataplane') {
        const items = p.cells.items(proxyInterfaces(p.networking));
        return { total: items.length, kind: 'SidecarDataplane', items };
      }
      throw new AppError('NOT_FOUND', 'Not found', 'gateway proxies are not matched yet');
    },

    affected(desc, mesh, name, page) {
      requireMesh(mesh);
      if (!desc.isPolicy) {
        throw notFound(`${desc.wireType} is not inspectable: only policies have affected data plane proxies`);
      }
      const names = matches.affected(mesh, desc.kind, name);
      const items: AffectedItem[] = [];
      for (const proxy of names.slice(page.offset, page.offset + page.size)) {
        const p = matches.proxy(mesh, proxy);
        if (p?.kind !== 'SidecarDataplane') continue;
        items.push({
          kind: 'SidecarDataplane',
          dataplane: { mesh, name: proxy },
          attachments: p.cells.attachmentsOf(desc.kind, name, proxyInterfaces(p.networking)),
        });
      }
      return { total: names.length, items };
    },
  };
}
