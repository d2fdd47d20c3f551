import { X509Certificate } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Config } from '../config/schema.js';
import { AppError } from '../util/errors.js';
import { makeDir } from '../util/make-dir.js';

/** The certificate and key the HTTPS listener serves, client CAs if any, and where they came from. */
export interface TlsMaterial {
  key: string;
  cert: string;
  /** CA certificates from `apiServer.auth.clientCertsDir`: a client certificate they verify is admin. */
  ca?: string[];
  /** `files` (configured), `kept` (generated before, read from the data dir), `generated` (now), `memory`. */
  source: 'files' | 'kept' | 'generated' | 'memory';
  /** Where the certificate is, when it is a file. */
  certFile?: string;
}

const TEN_YEARS_MS = 10 * 365 * 24 * 3600 * 1000;
const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

const badConfig = (details: string): AppError =>
  new AppError('BAD_REQUEST', 'invalid configuration', details);

function readConfigured(file: string, key: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw badConfig(`${key}: cannot read ${file}: ${(err as Error).message}`);
  }
}

/** A self-signed server certificate for this host: localhost, 127.0.0.1, ::1, the host name and the advertised one. */
export async function generateSelfSigned(advertisedHostname: string): Promise<{ key: string; cert: string }> {
  const dns = [...new Set(['localhost', hostname(), advertisedHostname].filter((h) => h && isIP(h) === 0))];
  const ips = [...new Set(['127.0.0.1', '::1', advertisedHostname].filter((h) => isIP(h) !== 0))];
  const now = Date.now();
  // The certificate encoder (asn1js) loads only when a certificate is made: at a first start, or
  // in memory with the memory store.
  const { makeSelfSigned } = await import('./self-signed.js');
  return makeSelfSigned({
    commonName: advertisedHostname || 'localhost',
    dnsNames: dns,
    ips,
    notBefore: new Date(now),
    notAfter: new Date(now + TEN_YEARS_MS),
  });
}

/** Writes a file whole or not at all (a crash mid-write must not leave half a key). */
function writeAtomically(file: string, text: string, mode: number): void {
  const tmp = `${file}.tmp`;
  writeFileSync(tmp, text, { mode });
  renameSync(tmp, file);
}

/** The CA certificates of every `.pem`, `.crt` and `.cer` file in the client certificates directory. */
export function readClientCas(dir: string): string[] {
  const key = 'apiServer.auth.clientCertsDir';
  let files: string[];
  try {
    files = readdirSync(dir)
      .filter((f) => /\.(pem|crt|cer)$/i.test(f))
      .sort();
  } catch (err) {
    throw badConfig(`${key}: cannot read the directory ${dir}: ${(err as Error).message}`);
  }
  const cas: string[] = [];
  for (const file of files) {
    const path = join(dir, file);
    const pems = readConfigured(path, key).match(PEM_CERT) ?? [];
    for (const pem of pems) {
      try {
        new X509Certificate(pem);
      } catch (err) {
        throw badConfig(`${key}: ${path} holds a certificate that cannot be read: ${(err as Error).message}`);
      }
      cas.push(pem);
    }
  }
  if (cas.length === 0) throw badConfig(`${key}: no PEM certificate in ${dir} (*.pem, *.crt, *.cer)`);
  return cas;
}

/**
 * The HTTPS listener's TLS material (decisions §7, §9): the configured files, or a self-signed pair
 * made at first start and kept in `<store.level.path>/tls/` (in memory only with the memory store).
 */
export async function loadTlsMaterial(config: Config): Promise<TlsMaterial> {
  const https = config.apiServer.https;
  const ca = config.apiServer.auth.clientCertsDir
    ? readClientCas(config.apiServer.auth.clientCertsDir)
    : undefined;
  const withCa = <T extends object>(m: T): T & { ca?: string[] } => (ca ? { ...m, ca } : m);
  if (https.tlsCertFile !== '') {
    return withCa({
      cert: readConfigured(https.tlsCertFile, 'apiServer.https.tlsCertFile'),
      key: readConfigured(https.tlsKeyFile, 'apiServer.https.tlsKeyFile'),
      source: 'files' as const,
      certFile: https.tlsCertFile,
    });
  }
  return withCa(await keptSelfSigned(config));
}

/**
 * The self-signed pair made at first start and kept in `<store.level.path>/tls/` (decisions §9),
 * in memory only with the memory store. The HTTPS API and Global's sync port share it.
 */
export async function keptSelfSigned(config: Config): Promise<TlsMaterial> {
  if (config.store.type !== 'level') {
    return { ...(await generateSelfSigned(config.general.advertisedHostname)), source: 'memory' };
  }
  const dir = join(config.store.level.path, 'tls');
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  if (existsSync(certFile) && existsSync(keyFile)) {
    return {
      cert: readFileSync(certFile, 'utf8'),
      key: readFileSync(keyFile, 'utf8'),
      source: 'kept',
      certFile,
    };
  }
  const pair = await generateSelfSigned(config.general.advertisedHostname);
  await makeDir(dir, 0o700);
  writeAtomically(keyFile, pair.key, 0o600);
  writeAtomically(certFile, pair.cert, 0o644);
  return { ...pair, source: 'generated', certFile };
}
