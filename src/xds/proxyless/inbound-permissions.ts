/**
 * Who may call one inbound of a proxyless gRPC server (an `XdsServer`), from TrafficPermission or
 * MeshTrafficPermission.
 *
 * Identity without certificates: the mesh has no mTLS for proxyless clients, so the only identity a
 * caller shows is its source IP. A caller is a Dataplane of the mesh, known by its
 * `networking.address` and its inbounds' addresses; a policy's sources become those addresses, each
 * as a `direct_remote_ip` /32 (IPv4) or /128 (IPv6) principal. Consequences, on purpose:
 * - a caller that is no Dataplane of the mesh is never allowed, not even by a source `*` or a
 *   `from` of kind `Mesh` (as with Kuma's mTLS, where such a caller could not connect at all);
 * - Dataplanes sharing an address cannot be told apart: the address is allowed when any of them is;
 * - a hostname address names no caller (said in the notes);
 * - `@grpc/grpc-js-xds` 1.14.1 listens dual-stack and sees an IPv4 caller as `::ffff:a.b.c.d`,
 *   which its RBAC never matches with an IPv4 range and cannot parse against an IPv6 one (it throws
 *   and the server process ends): with that client only IPv6 callers can be allowed, and an IPv4
 *   connection to a server whose Listener holds an IPv6 principal ends it. Nothing in RBAC avoids
 *   that parse (every source principal goes through it); the fix belongs in the client.
 *
 * Which policies: when any MeshTrafficPermission selects the inbound (its `targetRef` selects the
 * listener), its `from` rules decide (the rules engine's `buildRules`): a caller is
 * allowed when the rule of one of its tag sets says ALLOW or ALLOW_WITH_SHADOW_DENY (the client has
 * no shadow rules: the shadow deny is said in the notes). Otherwise the single best
 * TrafficPermission of the inbound (destinations against its tags, as the policy engine matches
 * it) allows the callers its sources match. No policy: nobody is allowed.
 */
import { SERVER_PERMISSION_KINDS, SERVER_TARGET_REF_KINDS } from '../../policies/kind-sets.js';
import { isIP } from 'node:net';
import type { PolicyResource } from '../../policies/policy-resource.js';
import { proxyInterfaces, type Networking } from '../../policies/proxy-interfaces.js';
import { buildRules, type PolicyItem, type Subset } from '../../policies/rules/index.js';
import { bestForInbound, bestSelectorRank } from '../../policies/select-policies.js';
import { policyKey } from '../../resources/keys.js';
import {
  compareByTargetRef,
  targetRefListeners,
  type TargetRef,
  type TargetRefPolicy,
} from '../../policies/target-ref-match.js';

type Tags = Readonly<Record<string, string>>;

/** The kinds whose policies decide who may call a server, in words (`A or B`). */
const PERMISSION_KINDS = [...SERVER_PERMISSION_KINDS, ...SERVER_TARGET_REF_KINDS].join(' or ');
/** The inbound a server listens on, and who could call it. */
export interface PermissionInput {
  /** The server proxy's Dataplane networking. */
  server: Networking;
  /** The inbound's port and address (its own, else the proxy's). */
  inbound: { port: number; address: string; tags: Tags };
  /** The mesh's Dataplanes: the possible callers. */
  callers: Iterable<Networking>;
  trafficPermissions: readonly PolicyResource[];
  meshTrafficPermissions: readonly TargetRefPolicy[];
}

/** The allowed caller addresses (sorted, no repeats), the policies that decided (`Kind/name`), and notes. */
export interface InboundPermissions {
  allowed: string[];
  policies: string[];
  notes: string[];
}

type Verdict = (tagSets: readonly Tags[]) => boolean;

/** The callers of `input.inbound` that its permissions allow. */
export function inboundPermissions(input: PermissionInput): InboundPermissions {
  const notes: string[] = [];
  const decided = meshTrafficVerdict(input, notes) ?? trafficVerdict(input, notes);
  const allowed = new Set<string>();
  if (decided) {
    for (const caller of input.callers) {
      if (!decided.allows(proxyInterfaces(caller).tagSets)) continue;
      for (const address of addressesOf(caller)) {
        if (isIP(address) === 0) notes.push(`caller address ${address} is not an IP: it cannot be allowed`);
        else allowed.add(address);
      }
    }
  }
  return {
    allowed: [...allowed].sort(),
    policies: decided?.policies ?? [],
    notes: [...new Set(notes)],
  };
}

function addressesOf(caller: Networking): string[] {
  const out = [caller.address];
  for (const ib of caller.inbound ?? []) if (ib.address !== undefined) out.push(ib.address);
  return out;
}

function meshTrafficVerdict(
  input: PermissionInput,
  notes: string[],
): { allows: Verdict; policies: string[] } | undefined {
  const { inbound } = input;
  const selecting = input.meshTrafficPermissions
    .filter((p) =>
      targetRefListeners(p.spec.targetRef, input.server).some(
        (l) => l.origin === 'inbound' && l.port === inbound.port && l.address === inbound.address,
      ),
    )
    .sort(compareByTargetRef);
  if (selecting.length === 0) return undefined;
  const items: PolicyItem[] = selecting.flatMap((policy) =>
    (policy.spec.from ?? []).map((entry) => {
      const e = entry as { targetRef: TargetRef; default?: unknown };
      return {
        targetRef: e.targetRef,
        conf: e.default ?? {},
        origin: { type: policy.type, mesh: policy.mesh ?? '', name: policy.name },
      };
    }),
  );
  const rules = buildRules(items);
  if (rules.some((r) => (r.conf as { action?: string }).action === 'ALLOW_WITH_SHADOW_DENY')) {
    notes.push('ALLOW_WITH_SHADOW_DENY allows: a proxyless gRPC server has no shadow rules to log a deny');
  }
  const allows: Verdict = (tagSets) =>
    tagSets.some((tags) => {
      const action = (rules.find((r) => holds(r.subset, tags))?.conf as { action?: string } | undefined)
        ?.action;
      return action === 'ALLOW' || action === 'ALLOW_WITH_SHADOW_DENY';
    });
  return { allows, policies: selecting.map((p) => policyKey(p.type, p.name)) };
}

/**
 * True when a caller with exactly `tags` lies in `subset`. Not `computeRule`, which takes a subset of
 * peers: a caller's tags are all there is to it, so a tag it lacks is a negated tag it satisfies
 * (a caller without `team` is in `team != b`).
 */
const holds = (subset: Subset, tags: Tags): boolean =>
  subset.every((t) => (tags[t.key] === t.value) !== t.not);

function trafficVerdict(
  input: PermissionInput,
  notes: string[],
): { allows: Verdict; policies: string[] } | undefined {
  const best = bestForInbound(input.inbound.tags, input.trafficPermissions);
  if (!best) {
    notes.push(`no ${PERMISSION_KINDS} selects this inbound: every call is denied`);
    return undefined;
  }
  return {
    allows: (tagSets) => bestSelectorRank(best.sources, tagSets) !== undefined,
    policies: [policyKey(best.type, best.name)],
  };
}
