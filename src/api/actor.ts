import type { FastifyRequest } from 'fastify';
import type { Actor } from '../events/types.js';

const LOOPBACK = /^(127\.|::1$|::ffff:127\.)/;

/** True when the request comes from the loopback interface. */
export function isLoopback(address: string): boolean {
  return LOOPBACK.test(address);
}

/**
 * Who is making a request. Until tokens land (issue 4) loopback callers are the local admin
 * (decisions §7) and everyone else is anonymous; the address is always recorded.
 */
export function actorOf(req: FastifyRequest): Actor {
  const address = req.ip;
  return isLoopback(address)
    ? { name: 'admin', groups: ['mesh-system:admin'], address }
    : { name: 'anonymous', groups: [], address };
}
