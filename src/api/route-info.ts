import type { ResourceDescriptor } from '../resources/descriptor.js';

/** Params of the parametric resource routes. */
export interface KindParams {
  mesh?: string;
  seg: string;
  name?: string;
}

/** What a route touches, kept in fastify's route config so hooks can authorize by kind and action. */
export interface RouteInfo {
  /** Registry kind, absent for control-plane routes (`/config`, `/versions`, …). */
  kind?: string;
  /**
   * For the parametric resource routes: the kind the path names. Undefined means no such endpoint:
   * the request is answered 404 before it is authorized or its body is read.
   */
  kindOf?: (params: KindParams) => ResourceDescriptor | undefined;
  action: 'read' | 'write';
  /** Only admins may call the route (token endpoints). */
  adminOnly?: boolean;
  /**
   * The body names what the request writes (a change set): the hook only refuses callers who may
   * write nothing at all, and the handler authorizes each item as the single write would be.
   */
  perItem?: boolean;
}
