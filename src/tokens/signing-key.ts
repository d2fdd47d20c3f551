import { generateKeyPair } from 'node:crypto';
import { promisify } from 'node:util';

const generate = promisify(generateKeyPair);

/** Generates an RSA-2048 signing key; returns the private key as base64 of its PKCS#1 PEM (secret `data`). */
export async function generateSigningKey(): Promise<string> {
  const { privateKey } = await generate('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  return Buffer.from(privateKey).toString('base64');
}
