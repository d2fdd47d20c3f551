import { randomUUID } from 'node:crypto';
import cors from '@fastify/cors';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply } from 'fastify';
import Fastify, { LogController } from 'fastify';
import { parse as parseYaml } from 'yaml';
import type { Commands } from '../app/commands.js';
import type { Queries } from '../app/queries.js';
import { COMPATIBILITY } from '../app/versions.js';
import type { WriteSettings } from '../app/write-policy.js';
import { writeRefusal } from '../app/write-policy.js';
import type { Registry } from '../resources/registry.js';
import { AppError } from '../util/errors.js';
import { errorHandler } from './errors.js';
import { registerResourceRoutes } from './resource-routes.js';

/** What `GET /` says about this control plane (decisions §9). */
export interface ServerInfo {
  hostname: string;
  tagline: string;
  version: string;
  instanceId: string;
  clusterId: string;
  mode: string;
}

/** Everything the HTTP API needs; built by the runtime (or a test). */
export interface ServerDeps {
  registry: Registry;
  queries: Queries;
  commands: Commands;
  writeSettings: WriteSettings;
  info: ServerInfo;
  /** The effective config with secrets masked (`GET /config`). */
  maskedConfig: () => Record<string, unknown>;
  /** Zone statuses for `GET /status/zones` ([] when there are none). */
  zoneStatuses: () => Array<{ name: string; url: string; active: boolean }>;
  corsAllowedDomains: readonly string[];
  bodyLimit: number;
  /** A pino logger; when absent the server logs nothing (tests). */
  logger?: FastifyBaseLogger;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Builds the API server without listening (style habit 6): tests call `app.inject()`. */
export async function buildServer(deps: ServerDeps): Promise<FastifyInstance> {
  const app = Fastify({
    ...(deps.logger ? { loggerInstance: deps.logger } : { logger: false }),
    bodyLimit: deps.bodyLimit,
    // Writes are logged by their handlers with kind, name and revision; reads are not logged.
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: false,
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    },
    routerOptions: { ignoreTrailingSlash: true },
  });

  app.setErrorHandler(errorHandler);
  // Decisions §9: only JSON and YAML bodies; text/plain is 415 like any other type.
  app.removeContentTypeParser('text/plain');
  app.setNotFoundHandler((req, reply) => {
    errorHandler(
      new AppError('NOT_FOUND', 'Not found', `no such endpoint: ${req.method} ${req.url.split('?')[0]}`),
      req,
      reply,
    );
  });
  app.addHook('onRequest', async (req, reply) => {
    reply.header('x-request-id', req.id);
  });

  // Decisions §3: application/yaml is accepted on PUT besides JSON.
  app.addContentTypeParser(
    ['application/yaml', 'application/x-yaml'],
    { parseAs: 'string' },
    (_req, body, done) => {
      try {
        done(null, parseYaml(body as string));
      } catch (err) {
        done(
          new AppError(
            'INVALID_BODY',
            'Invalid request body',
            `invalid YAML: ${(err as Error).message.split('\n')[0]}`,
          ),
          undefined,
        );
      }
    },
  );

  const allowed = deps.corsAllowedDomains.map((d) => new RegExp(`^(?:${d})$`));
  await app.register(cors, {
    origin: (origin, cb) => cb(null, origin !== undefined && allowed.some((r) => r.test(origin))),
    methods: ['GET', 'PUT', 'POST', 'DELETE', 'OPTIONS'],
    exposedHeaders: ['etag', 'x-mesh-revision', 'x-request-id'],
  });

  const send = (reply: FastifyReply, body: unknown) =>
    reply
      .type('application/json')
      .header('x-mesh-revision', String(deps.queries.revision()))
      .send(JSON.stringify(body));

  app.get('/', async (_req, reply) => send(reply, deps.info));
  app.get('/config', async (_req, reply) => send(reply, deps.maskedConfig()));
  app.get('/versions', async (_req, reply) => send(reply, COMPATIBILITY));
  app.get('/policies', async (_req, reply) =>
    send(reply, {
      policies: deps.registry.catalogue.map((d) => ({
        name: d.kind,
        readOnly: writeRefusal(d, deps.writeSettings) !== undefined,
        path: d.path,
        displayName: d.catalogue?.displayName,
        singularDisplayName: d.catalogue?.singularDisplayName,
        pluralDisplayName: d.catalogue?.displayName,
        isExperimental: false,
      })),
    }),
  );
  app.get('/status/zones', async (_req, reply) => send(reply, deps.zoneStatuses()));
  registerResourceRoutes(app, deps);
  return app;
}
