import { createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { generateSigningKey } from '../../src/tokens/signing-key.js';
import { KEPT_KEYS_FILE, KEPT_KEYS_IN_PROCESS } from './process.js';

/**
 * RSA-2048 keys made once (one base64 PKCS#1 DER per line), so that the tests' control planes do
 * not each spend ~200 ms of CPU per signing key: a start on an empty store makes four, every new
 * mesh one more, ~130 s of CPU over `npm test`. Made with
 * `generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'der' })`.
 * The control planes started as processes take the keys after the first 64 (`kept-keys-preload.cjs`).
 */
let pool: string[] | undefined;
let handedOut = 0;

/** The in-process control planes' kept keys, read at first use. */
function keptKeys(): string[] {
  pool ??= readFileSync(KEPT_KEYS_FILE, 'utf8').split('\n').filter(Boolean).slice(0, KEPT_KEYS_IN_PROCESS);
  return pool;
}

/** A kept DER key as the control plane stores one: base64 of its PKCS#1 PEM. */
function asSecretData(der: string): string {
  const pem = createPrivateKey({ key: Buffer.from(der, 'base64'), format: 'der', type: 'pkcs1' }).export({
    type: 'pkcs1',
    format: 'pem',
  });
  return Buffer.from(pem).toString('base64');
}

/**
 * Hands the kept keys out again from the first: a test file that shares its process with the files
 * before it starts as a file in a process of its own would (keys differ within a file, not across).
 */
export function restartTestKeys(): void {
  handedOut = 0;
}

/**
 * The `keygen` of the tests' control planes: each call gives a key no earlier call in this test
 * file gave (as generated keys are all different), taken from the kept keys while they last, then
 * generated as the control plane's own `generateSigningKey` does.
 */
export async function testKeygen(): Promise<string> {
  const keys = keptKeys();
  if (handedOut < keys.length) return asSecretData(keys[handedOut++]);
  return generateSigningKey();
}
