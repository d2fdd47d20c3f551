import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { Multizone } from './multizone.js';
import type { XdsServer } from './xds-server.js';

/** What every start-up step is given: the config, the start's clock and logger, this instance's id. */
export interface StartContext {
  config: Config;
  now: () => Date;
  logger?: Logger;
  /** This instance among the instances of one log (a PostgreSQL log has several). */
  instanceId: string;
}

/**
 * What a start has running, set as each listener starts: the steps built before read it through
 * getters (a zone's connection for a delete, a proxy's stream for its dump), the shutdown closes it.
 */
export interface Running {
  xds?: XdsServer;
  multizone?: Multizone;
  /** The servers that listen, in the order they started (the HTTPS server closes with the API's). */
  listening: FastifyInstance[];
}
