import type { KeyObject } from 'node:crypto';
import { createPrivateKey, createPublicKey, generateKeyPair } from 'node:crypto';
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

/** Both halves of a signing key. */
export interface SigningKeyPair {
  privateKey: KeyObject;
  publicKey: KeyObject;
}

/** Reads a signing key secret's `data` (base64 of an RSA private key PEM); undefined when it is not one. */
export function parseSigningKey(data: string): SigningKeyPair | undefined {
  try {
    const privateKey = createPrivateKey(Buffer.from(data, 'base64').toString('utf8'));
    if (privateKey.asymmetricKeyType !== 'rsa') return undefined;
    return { privateKey, publicKey: createPublicKey(privateKey) };
  } catch {
    return undefined;
  }
}
