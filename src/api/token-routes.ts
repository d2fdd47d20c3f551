import type { FastifyInstance } from 'fastify';
import type { TokenService } from '../app/token-service.js';
import { TOKEN_TYPES } from '../tokens/token-types.js';
import type { RouteInfo } from './route-info.js';

const ADMIN_ONLY: RouteInfo = { action: 'write', adminOnly: true };

/**
 * `POST /tokens/{user,dataplane,zone,zone-ingress}` (spec 4.8; PUT works too, decisions §7): a JSON
 * request in, the JWT out as `text/plain`. The log line names the token id, never the token.
 */
export function registerTokenRoutes(app: FastifyInstance, tokens: TokenService): void {
  for (const type of TOKEN_TYPES) {
    app.route({
      method: ['POST', 'PUT'],
      url: `/tokens/${type}`,
      config: ADMIN_ONLY,
      handler: async (req, reply) => {
        const issued = await tokens.issue(type, req.body);
        req.log.info(
          {
            tokenType: type,
            tokenId: issued.id,
            subject: issued.subject,
            signingKey: issued.serial,
            expiresAt: issued.expiresAt?.toISOString(),
            by: req.identity.name,
          },
          'token issued',
        );
        return reply.type('text/plain; charset=utf-8').header('cache-control', 'no-store').send(issued.token);
      },
    });
  }
}
