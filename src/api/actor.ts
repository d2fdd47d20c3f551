import type { FastifyRequest } from 'fastify';
import type { Actor } from '../events/types.js';
import './identity.js';

/** The actor of a write (decisions §8): the authenticated caller's name and groups, and its address. */
export function actorOf(req: FastifyRequest): Actor {
  return { name: req.identity.name, groups: [...req.identity.groups], address: req.ip };
}
