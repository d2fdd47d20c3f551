import { generateKeyPair } from 'node:crypto';
import { promisify } from 'node:util';

const generate = promisify(generateKeyPair);

/**
 * A token signing key as the control plane stores one in a signing-key Secret's `data`: base64 of
 * an RSA-2048 private key in PKCS#1 PEM (what `src/tokens/signing-key.ts` makes on the server;
 * meshctl makes it here, since it imports nothing of the server's). test/e2e/meshctl-generate.test.ts
 * checks that the server signs with a key made here.
 */
export async function generateSigningKey(): Promise<string> {
  const { privateKey } = await generate('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  return Buffer.from(privateKey).toString('base64');
}
