/**
 * A policy kind as one unit: everything the policy engine and the renderers need to know about a
 * kind, declared once in `kinds/<kind>.ts` beside its resource file (`resources/kinds/<kind>.ts`).
 * The engine (sidecar cells, the gateway matcher, the reach index), inspect, the xDS renderers and
 * the defaults of a new mesh read kinds only through these declarations (`kind-sets.ts`), so adding
 * a kind is its resource file, its policy file and their tests.
 */
import type { ResourceDescriptor, ResourceOf, SpecOf } from '../resources/descriptor.js';
import { SERVICE_TAG } from '../resources/fragments.js';
import type { ProxylessSettings } from './proxyless-settings.js';

/**
 * Where a kind's policies attach on a sidecar, how they are matched there, and how many apply:
 * - `inbound`: destinations against the inbound's tags; `best`: the single best by destination
 *   rank; `all`: every match, ranked by their best source;
 * - `outbound`: sources against the proxy's tag sets, destinations against `{service: <outbound's>}`,
 *   the pair ranked by the sum; the single best per outbound;
 * - `service`: as `outbound`, per service: the services the outbounds' routes reach (`routed`), or
 *   the outbounds' own services and `pass_through` (`logged`);
 * - `dataplane`: `selectors` against the proxy's tag sets (`best` or `all`), or a top-level
 *   `targetRef` that selects a listener of the proxy (`targetRef`: all, in the order they apply).
 */
export type SidecarAttachment =
  | { at: 'inbound'; pick: 'best' | 'all' }
  | { at: 'outbound'; pick: 'best' }
  | { at: 'service'; pick: 'best'; services: 'routed' | 'logged' }
  | { at: 'dataplane'; pick: 'best' | 'all' | 'targetRef' };

/**
 * A kind's place in a built-in gateway's view: the MeshGateway that serves the proxy (`gateway`),
 * its routes (`route`), the best per route destination (`destination`: sources against the host's
 * listener tags, destinations against the backend's tags), or the whole gateway (`whole`: matched
 * as on a sidecar's `pass_through` service or dataplane item).
 */
export type GatewayRole = 'gateway' | 'route' | 'destination' | 'whole';

/** One setting of a proxyless client, read from a policy of the kind (method form: kinds of different specs share one list). */
type SettingPart<R, K extends keyof ProxylessSettings> = {
  setting: K;
  read(policy: R): ProxylessSettings[K] | undefined;
};

/**
 * What a proxyless client gets from a kind's policies: a setting (see `ProxylessSettings` for the
 * item each is read from), or a note saying why it cannot apply (for `/xds` and inspect), said when
 * the kind is listed on the dialled service's outbound or service item.
 */
export type ProxylessPart<R> =
  | { [K in keyof ProxylessSettings]: SettingPart<R, K> }[keyof ProxylessSettings]
  | { note: string; from: 'outbound' | 'service' };

/** Fields Go always writes of a conf: `list` ones as `null` when unset, `struct` ones as `{}`; nested shapes. */
export interface GoShape {
  always?: Record<string, 'list' | 'struct'>;
  nested?: Record<string, GoShape>;
  /** The shape of each element of a list field. */
  each?: Record<string, GoShape>;
}

/**
 * How a targetRef kind makes `/rules` items (Kuma 2.0 GetFromList / GetToList / GetPolicyItem): from
 * its `from` entries (per inbound, by caller subset), its `to` entries (per outbound), or as one
 * single item; and its conf's shape as the reference's Go struct writes it.
 */
export interface RuleParts {
  from?: true;
  to?: true;
  single?: true;
  goShape?: GoShape;
}

/** A default policy a new mesh gets (decisions §3). */
export interface DefaultPolicy<D extends ResourceDescriptor> {
  name: string;
  spec: SpecOf<D>;
}

/** One policy kind, declared once. */
export interface PolicyKind<D extends ResourceDescriptor = ResourceDescriptor> {
  /** The kind's resource descriptor (its name, schema and typed spec). */
  descriptor: D;
  /** Where it attaches on a sidecar (none: it configures no sidecar). */
  sidecar: readonly SidecarAttachment[];
  /** Its best policy on an outbound decides where that outbound's calls go (the routed services follow it). */
  routes?: boolean;
  /** Also listed on a proxyless client's dialled outbounds: the client applies it for the servers it calls. */
  dialled?: boolean;
  gateway?: GatewayRole;
  proxyless?: ProxylessPart<ResourceOf<D>>;
  /** What an `XdsServer` takes from it: who may call an inbound (`inbound-permissions`, the inbound's best) or the targetRef rules (`target-ref-permissions`). */
  xdsServer?: 'inbound-permissions' | 'target-ref-permissions';
  /** A targetRef kind's `/rules` items. */
  rules?: RuleParts;
  /** The policies of the kind a new mesh gets. */
  defaults?(mesh: string): ReadonlyArray<DefaultPolicy<D>>;
}

/** Declares a kind's unit, typed by its descriptor's schema. */
export const definePolicyKind = <D extends ResourceDescriptor>(unit: PolicyKind<D>): PolicyKind<D> => unit;

/** Every service, as a policy's `sources` or `destinations`. */
export const EVERY_SERVICE = [{ match: { [SERVICE_TAG]: '*' } }];

/** A default policy's spec: from every service to every service, with `conf`. */
export const betweenAllServices = <C>(conf: C) => ({
  sources: EVERY_SERVICE,
  destinations: EVERY_SERVICE,
  conf,
});
