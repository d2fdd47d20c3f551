import type { ConnectionError } from './api-client.js';

/** The TLS codes of a certificate no trusted CA signed: mesh-cp's self-signed one, most often. */
const UNTRUSTED = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
]);

/**
 * What to do about a control plane that could not be reached, when the cause says it: nothing
 * listens (is mesh-cp running, and where), or its certificate is self-signed (the file that trusts
 * it: `<data dir>/tls/cert.pem`, where mesh-cp keeps the pair it made at first start).
 */
export function connectionHint(err: ConnectionError): string | undefined {
  if (err.code === 'ECONNREFUSED') {
    return [
      `Hint: nothing listens at ${err.address}. Is mesh-cp running? Start it with \`mesh-cp run\``,
      '(`npm start` in a checkout): its API listens on port 5681 (apiServer.port), HTTPS on 5682.',
      'If it runs elsewhere: --api-address URL, or `meshctl config control-planes add --name NAME --address URL`.',
    ].join('\n');
  }
  if (err.code !== undefined && UNTRUSTED.has(err.code)) {
    return [
      "Hint: the server's certificate is not signed by a CA meshctl trusts. mesh-cp's own certificate,",
      'made at its first start, is <data dir>/tls/cert.pem on its machine (the data dir is',
      'store.level.path, ./data by default; the "mesh-cp ready" log line names the file as tlsCertFile).',
      'Trust it with:',
      `  meshctl config control-planes add --name NAME --address ${err.address} --ca-cert <data dir>/tls/cert.pem`,
      'With the postgres or memory store the pair is kept in memory only: give mesh-cp a certificate',
      '(apiServer.https.tlsCertFile and tlsKeyFile) and pass its CA to --ca-cert.',
    ].join('\n');
  }
  return undefined;
}
