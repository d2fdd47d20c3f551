/**
 * The inspect queries (spec 4.9, shapes 2.20, decisions §10): answers built from the match view,
 * which writes keep current before they answer, so every answer here is read-your-writes.
 *
 * A missing mesh, proxy or gateway is a 404 that names it; a policy that does not exist affects no
 * proxy (`{total: 0, items: []}`, as the reference answers).
 */
import { GATEWAY_KIND, GATEWAY_ROUTE_KIND, TARGET_REF_POLICY_KINDS } from '../policies/kind-sets.js';
import { GATEWAY_UNIT } from '../policies/kinds/index.js';
import type { SidecarItem } from '../policies/match-sidecar.js';
import {
  gatewayAttachments,
  routeAttachments,
  selectGateway,
  unselectedGatewayView,
  type GatewayView,
} from '../policies/match-gateway.js';
import type { MatchView, ProxyMatches } from '../policies/match-view.js';
import { proxyInterfaces } from '../policies/proxy-interfaces.js';
import { resolveOutboundRoutes } from '../policies/route-wildcards.js';
import { proxyRules, type RuleItem } from '../policies/rules/index.js';
import { bestSelectorRank } from '../policies/select-policies.js';
import type { GatewayListeners, TargetRefPolicy } from '../policies/target-ref-match.js';
import type { ResourceViews } from '../projections/resource-views.js';
import { resourceOf, type ResourceDescriptor } from '../resources/descriptor.js';
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
  /** `GET /meshes/{mesh}/dataplanes/{name}/policies`, as JSON bytes. */
  matchedPolicies(mesh: string, name: string): Buffer;
  /** `GET /meshes/{mesh}/{collection}/{name}/dataplanes` for a policy kind. */
  affected(
    desc: ResourceDescriptor,
    mesh: string,
    name: string,
    page: InspectPage,
  ): { total: number; items: AffectedItem[] };
  /** `GET /meshes/{mesh}/meshgateways/{name}/dataplanes`: the built-in gateway proxies it selects. */
  gatewayDataplanes(mesh: string, name: string, page: InspectPage): { total: number; items: AffectedItem[] };
  /** `GET /meshes/{mesh}/dataplanes/{name}/rules`: the targetRef policies merged into rules. */
  rules(mesh: string, name: string): { total: number; items: RuleItem[] };
}

const notFound = (details: string): AppError => new AppError('NOT_FOUND', 'Not found', details);

/** Creates the inspect queries over the views and the match view. */
export function createInspectQueries(deps: {
  views: ResourceViews;
  matches: MatchView<GatewayView>;
}): InspectQueries {
  const { views, matches } = deps;

  const requireMesh = (mesh: string): void => {
    if (!views.get('Mesh', undefined, mesh)) throw notFound(`Mesh "${mesh}" not found`);
  };

  const requireProxy = (mesh: string, name: string): ProxyMatches<GatewayView> => {
    requireMesh(mesh);
    const p = matches.proxy(mesh, name);
    if (!p) throw notFound(`Dataplane "${name}" not found in mesh "${mesh}"`);
    return p;
  };

  /**
   * `{total, kind, items}` of a sidecar with each policy as the bytes the views keep for it (a
   * policy is most of the answer: serialising them again was most of its time).
   */
  const sidecarBody = (mesh: string, items: readonly SidecarItem[]): Buffer => {
    const parts: Buffer[] = [];
    let text = `{"total":${items.length},"kind":"SidecarDataplane","items":[`;
    const flush = (bytes: Buffer): void => {
      parts.push(Buffer.from(text), bytes);
      text = '';
    };
    items.forEach((item, i) => {
      const service = `,"service":${JSON.stringify(item.service)}`;
      text += `${i > 0 ? ',' : ''}{"type":"${item.type}","name":${JSON.stringify(item.name)}${service},"matchedPolicies":{`;
      Object.entries(item.matchedPolicies).forEach(([kind, policies], k) => {
        text += `${k > 0 ? ',' : ''}${JSON.stringify(kind)}:[`;
        policies.forEach((policy, j) => {
          if (j > 0) text += ',';
          const stored = views.get(kind, mesh, policy.name);
          flush(
            stored && stored.resource === (policy as unknown)
              ? stored.body
              : Buffer.from(JSON.stringify(policy)),
          );
        });
        text += ']';
      });
      text += '}}';
    });
    parts.push(Buffer.from(`${text}]}`));
    return Buffer.concat(parts);
  };

  return {
    matchedPolicies(mesh, name) {
      const p = requireProxy(mesh, name);
      if (p.kind === 'SidecarDataplane') {
        // Each outbound's TrafficRoute as that outbound uses it, `*` resolved (as the reference shows it).
        return sidecarBody(mesh, resolveOutboundRoutes(p.cells.items(p.interfaces), p.networking));
      }
      // A gateway proxy that no MeshGateway selects: the reference's empty answer, not an error.
      return Buffer.from(JSON.stringify(p.view ?? unselectedGatewayView()));
    },

    affected(desc, mesh, name, page) {
      requireMesh(mesh);
      if (!desc.isPolicy) {
        throw notFound(`${desc.wireType} is not inspectable: only policies have affected data plane proxies`);
      }
      // A route is looked up like a gateway (decisions §10); a missing policy affects nothing.
      if (desc.kind === GATEWAY_ROUTE_KIND && !views.get(desc.kind, mesh, name)) {
        throw notFound(`${desc.kind} "${name}" not found in mesh "${mesh}"`);
      }
      const names = matches.affected(mesh, desc.kind, name);
      const items: AffectedItem[] = [];
      for (const proxy of names.slice(page.offset, page.offset + page.size)) {
        const p = matches.proxy(mesh, proxy);
        if (p?.kind === 'SidecarDataplane') {
          items.push({
            kind: 'SidecarDataplane',
            dataplane: { mesh, name: proxy },
            attachments: p.cells.attachmentsOf(desc.kind, name, p.interfaces),
          });
        } else if (p?.view) {
          const listeners =
            desc.kind === GATEWAY_ROUTE_KIND
              ? routeAttachments(p.view, name)
              : gatewayAttachments(p.view, desc.kind, name);
          items.push({
            kind: 'MeshGatewayDataplane',
            dataplane: { mesh, name: proxy },
            gateway: p.view.gateway,
            listeners: listeners ?? [],
          });
        }
      }
      return { total: names.length, items };
    },

    rules(mesh, name) {
      const p = requireProxy(mesh, name);
      const policies = TARGET_REF_POLICY_KINDS.flatMap(
        (kind) => matches.candidates(mesh, kind) as unknown as TargetRefPolicy[],
      );
      // A built-in gateway proxy's listeners come from the best MeshGateway that selects it.
      const gateway = selectGateway(p.networking, matches.candidates(mesh, GATEWAY_KIND));
      const dialled =
        p.kind === 'SidecarDataplane'
          ? p.interfaces.outbounds.filter((o) => o.dialled).map((o) => o.service)
          : undefined;
      const items = proxyRules(p.networking, policies, gateway as GatewayListeners | undefined, dialled);
      return { total: items.length, items };
    },

    gatewayDataplanes(mesh, name, page) {
      requireMesh(mesh);
      const gw = views.get(GATEWAY_KIND, mesh, name);
      if (!gw) throw notFound(`${GATEWAY_KIND} "${name}" not found in mesh "${mesh}"`);
      const { selectors } = resourceOf(GATEWAY_UNIT.descriptor, gw.resource);
      const selected = matches
        .gatewayProxies(mesh)
        .filter(([, p]) => bestSelectorRank(selectors, proxyInterfaces(p.networking).tagSets) !== undefined)
        .map(([proxy]) => ({ dataplane: { mesh, name: proxy } }));
      return { total: selected.length, items: selected.slice(page.offset, page.offset + page.size) };
    },
  };
}
