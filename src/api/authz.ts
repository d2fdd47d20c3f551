import type { Registry } from '../resources/registry.js';
import { AppError } from '../util/errors.js';
import type { Identity } from './identity.js';

/** What a role may do: admin everything; writer reads and writes except secrets; reader reads except secrets. */
export type Role = 'admin' | 'writer' | 'reader' | 'none';

/** A role, for every mesh or only for some. */
export interface Grant {
  role: Role;
  meshes?: readonly string[];
}

/** The role model from config (`apiServer.authz`, `apiServer.authn.anonymousWrite`). */
export interface AuthzSettings {
  /** Group of a user token → grant (defaults already merged in by the config schema). */
  groups: Readonly<Record<string, Grant>>;
  /** What callers without credentials may do. */
  anonymous: 'reader' | 'none';
  /** Anonymous callers may also write (every kind but secrets). */
  anonymousWrite: boolean;
}

/** What a request touches: from the route config, the method and the path parameters. */
export interface AccessTarget {
  method: string;
  /** The path without the query, for routes that are not about one kind (`/config`, `/tokens/user`). */
  path: string;
  action: 'read' | 'write';
  kind?: string;
  mesh?: string;
  /** Only admins may call the route (token endpoints, and any route that declares nothing). */
  adminOnly: boolean;
}

// Kinds keyed by mesh name (spec 2.2, 2.3): `/meshes/{name}` and `/mesh-insights/{name}` are "in" that mesh.
const NAMED_BY_MESH = new Set(['Mesh', 'MeshInsight']);

/** The mesh a request addresses: `/meshes/{mesh}/...`, or the mesh itself; undefined for everything else. */
export function meshOfRequest(
  kind: string | undefined,
  params: { mesh?: string; name?: string },
): string | undefined {
  if (params.mesh !== undefined) return params.mesh;
  return kind !== undefined && NAMED_BY_MESH.has(kind) ? params.name : undefined;
}

const ADMIN: Grant = { role: 'admin' };

/** Why a credential the browser sent did not count, and what to do (decisions §7). */
function uncountedWhy({ credential, origin }: NonNullable<Identity['uncounted']>): string {
  const shown = origin.length > 200 ? `${origin.slice(0, 200)}…` : origin;
  return `its ${credential} does not count with Origin ${JSON.stringify(shown)}, which apiServer.corsAllowedDomains does not allow: call without an Origin header, with a user token, or list the origin`;
}

/** Who a caller is, as 403 answers name it. */
export function describeCaller(identity: Identity): string {
  return identity.via === 'anonymous'
    ? `anonymous caller (${identity.uncounted ? uncountedWhy(identity.uncounted) : 'no credentials'})`
    : `user "${identity.name}" (${identity.groups.length > 0 ? `groups: ${identity.groups.join(', ')}` : 'no groups'})`;
}

/** Creates the authorizer: `check` throws 403 when no grant of the identity allows the target. */
export function createAuthorizer(registry: Registry, settings: AuthzSettings) {
  const anonymousGrant: Grant = { role: settings.anonymousWrite ? 'writer' : settings.anonymous };

  const isSecret = (kind: string | undefined): boolean =>
    kind !== undefined && registry.find(kind)?.secret === true;

  const roleAllows = (role: Role, target: AccessTarget): boolean => {
    switch (role) {
      case 'admin':
        return true;
      case 'writer':
        return !target.adminOnly && !isSecret(target.kind);
      case 'reader':
        return !target.adminOnly && !isSecret(target.kind) && target.action === 'read';
      case 'none':
        return false;
    }
  };

  const allows = (grant: Grant, target: AccessTarget): boolean =>
    roleAllows(grant.role, target) &&
    (grant.meshes === undefined || (target.mesh !== undefined && grant.meshes.includes(target.mesh)));

  /** The grants of an identity; a token never gives less than no token (the anonymous grant is always in). */
  const grantsOf = (identity: Identity): Grant[] => {
    if (identity.via === 'loopback' || identity.via === 'client-certificate') return [ADMIN];
    const grants = [anonymousGrant];
    if (identity.via === 'token') {
      for (const group of identity.groups) {
        const grant = Object.hasOwn(settings.groups, group) ? settings.groups[group] : undefined;
        if (grant) grants.push(grant);
      }
    }
    return grants;
  };

  const describe = (identity: Identity, target: AccessTarget): string => {
    const who = describeCaller(identity);
    const what =
      target.kind === undefined
        ? `${target.method} ${target.path}`
        : `${target.method} ${target.kind}${target.mesh === undefined ? '' : ` in mesh "${target.mesh}"`}`;
    return `${who} may not ${what}`;
  };

  return {
    grantsOf,
    /** True when some grant of the identity allows the target. */
    allows: (identity: Identity, target: AccessTarget): boolean =>
      grantsOf(identity).some((grant) => allows(grant, target)),
    /**
     * Throws 403 unless some grant of the identity may write at all (writer or admin, in any mesh):
     * a route whose body names what it writes (a change set) checks each item once it is read.
     */
    checkMayWrite(identity: Identity, method: string, path: string): void {
      if (grantsOf(identity).some((g) => g.role === 'admin' || g.role === 'writer')) return;
      throw new AppError(
        'FORBIDDEN',
        'Forbidden',
        `${describeCaller(identity)} may not ${method} ${path}: it may write nothing`,
      );
    },
    /** Throws 403 (decisions §7) naming the caller and what was refused. */
    check(identity: Identity, target: AccessTarget): void {
      if (grantsOf(identity).some((grant) => allows(grant, target))) return;
      throw new AppError('FORBIDDEN', 'Forbidden', describe(identity, target));
    },
  };
}

/** The authorizer of {@link createAuthorizer}. */
export type Authorizer = ReturnType<typeof createAuthorizer>;
