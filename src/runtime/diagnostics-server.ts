import type { FastifyInstance } from 'fastify';
import Fastify from 'fastify';
import type { ServerLimits } from '../api/server.js';
import { lazySchemaCompilers, limitedServerOptions } from '../api/server.js';
import type { LogLifecycle } from '../events/log-lifecycle.js';
import type { ResourceViews } from '../projections/resource-views.js';

/**
 * The diagnostics server (not listening yet): `/healthy` for liveness, `/ready` for whether the
 * log takes writes, with the revision the views are at.
 */
export function buildDiagnostics(deps: {
  /** The API's header, request and idle deadlines hold on the diagnostics port too. */
  limits: ServerLimits;
  log: Pick<LogLifecycle, 'writeFailure'>;
  views: Pick<ResourceViews, 'revision'>;
}): FastifyInstance {
  const { log, views } = deps;
  const diagnostics = Fastify({
    logger: false,
    schemaController: lazySchemaCompilers,
    ...limitedServerOptions(deps.limits),
  });
  // Liveness only: a log that cannot write retries by itself, and a restart would not free the disk.
  diagnostics.get('/healthy', async () => ({ status: 'ok' }));
  diagnostics.get('/ready', async (_request, reply) => {
    const reason = log.writeFailure();
    if (reason === undefined) return { status: 'ready', revision: views.revision() };
    return reply.code(503).send({ status: 'unavailable', reason, revision: views.revision() });
  });
  return diagnostics;
}
