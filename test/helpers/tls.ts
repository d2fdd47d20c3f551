import { request } from 'node:https';
import { generate } from 'selfsigned';

/** The TLS side of an HTTPS request: the CA to trust, a client certificate, the server name. */
export interface TlsClient {
  ca?: string;
  key?: string;
  cert?: string;
  servername?: string;
  rejectUnauthorized?: boolean;
}

/**
 * One HTTPS request to 127.0.0.1 with real TLS; resolves with the status and body, rejects on a TLS
 * error. An object body is sent as JSON (`content-type: application/json`); a string as it is, with
 * only the `headers` given.
 */
export function httpsRequest(
  port: number,
  path: string,
  tls: TlsClient,
  method = 'GET',
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const json = body !== undefined && typeof body !== 'string';
    const payload = body === undefined ? undefined : json ? JSON.stringify(body) : (body as string);
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method,
        agent: false,
        ...tls,
        headers: { ...(json ? { 'content-type': 'application/json' } : {}), ...headers },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** A test CA and a client certificate it signed, made with `selfsigned` (independent of the server's own certificate code). */
export async function clientPki(cn: string): Promise<{ caCert: string; key: string; cert: string }> {
  const ca = await generate([{ name: 'commonName', value: `${cn.replace(/[^\w.-]/g, '_')}-ca` }], {
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  const client = await generate([{ name: 'commonName', value: cn }], {
    algorithm: 'sha256',
    ca: { key: ca.private, cert: ca.cert },
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', clientAuth: true },
    ],
  });
  return { caCert: ca.cert, key: client.private, cert: client.cert };
}
