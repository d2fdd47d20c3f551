import { readFileSync } from 'node:fs';
import type { ClientConfig } from 'pg';

import { AppError } from '../util/errors.js';

/** The settings of `store.postgres` in the config (declared here: events do not import config). */
export interface PgStoreConfig {
  host: string;
  port: number;
  user: string;
  password: string;
  dbName: string;
  connectionTimeout: number;
  tls: { mode: 'disable' | 'verifyNone' | 'verifyCa' | 'verifyFull'; caPath: string };
}

/** `database "mesh" on 127.0.0.1:5432`: how messages name the database of the log. */
export function describePgDatabase(config: Pick<ClientConfig, 'database' | 'host' | 'port'>): string {
  return `database "${config.database ?? ''}" on ${config.host ?? ''}:${config.port ?? ''}`;
}

function readCa(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new AppError(
      'UNAVAILABLE',
      'PostgreSQL CA unreadable',
      `cannot read store.postgres.tls.caPath ${path}: ${(error as Error).message}`,
    );
  }
}

/** The node-postgres connection options of `store.postgres` (TLS modes as in Kuma's config). */
export function pgClientConfig(postgres: PgStoreConfig): ClientConfig {
  const { tls } = postgres;
  const ca = tls.caPath === '' ? undefined : readCa(tls.caPath);
  const ssl =
    tls.mode === 'disable'
      ? false
      : tls.mode === 'verifyNone'
        ? { rejectUnauthorized: false }
        : tls.mode === 'verifyCa'
          ? { rejectUnauthorized: true, ca, checkServerIdentity: () => undefined }
          : { rejectUnauthorized: true, ca };
  return {
    host: postgres.host,
    port: postgres.port,
    user: postgres.user,
    password: postgres.password === '' ? undefined : postgres.password,
    database: postgres.dbName,
    ssl,
    connectionTimeoutMillis: postgres.connectionTimeout * 1000,
    keepAlive: true,
    application_name: 'mesh-cp',
  };
}
