import { createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateSigningKey } from '../../src/tokens/signing-key.js';

/**
 * RSA-2048 keys made once (one base64 PKCS#1 DER per line), so that the tests' control planes do
 * not each spend ~200 ms of CPU per signing key: a start on an empty store makes four, every new
 * mesh one more, ~130 s of CPU over `npm test`. Made with
 * `generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'der' })`.
 * In-process control planes take the first {@link KEPT_KEYS_IN_PROCESS} through their `keygen`
 * ({@link testKeygen}); the control planes started as processes take the others through a preload
 * (`kept-keys-preload.cjs`, {@link keptKeysEnv}).
 */
const HELPERS = dirname(fileURLToPath(import.meta.url));
const KEPT_KEYS_FILE = join(HELPERS, '..', 'fixtures', 'signing-keys.txt');
export const KEPT_KEYS_IN_PROCESS = 64;
/** Keys per process: a start on an empty store takes four. */
const KEYS_PER_PROCESS = 6;
const PRELOAD = join(HELPERS, 'kept-keys-preload.cjs');

let kept: string[] | undefined;
/** In-process keys handed out in this test file. */
let handedOut = 0;
/** Processes given keys in this test file. */
let processesGivenKeys = 0;

/** The kept keys (base64 PKCS#1 DER, in the file's order), read at first use. */
export function keptKeys(): string[] {
  kept ??= readFileSync(KEPT_KEYS_FILE, 'utf8').split('\n').filter(Boolean);
  return kept;
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
 * Hands the kept keys out again from the first (in-process) and the last (processes): a test file
 * that shares its process with the files before it starts as a file in a process of its own would
 * (keys differ within a file, not across).
 */
export function restartTestKeys(): void {
  handedOut = 0;
  processesGivenKeys = 0;
}

/**
 * The `keygen` of the tests' in-process control planes: each call gives a key no earlier call in
 * this test file gave (as generated keys are all different), taken from the kept keys while they
 * last, then generated as the control plane's own `generateSigningKey` does.
 */
export async function testKeygen(): Promise<string> {
  if (handedOut < KEPT_KEYS_IN_PROCESS) return asSecretData(keptKeys()[handedOut++]);
  return generateSigningKey();
}

/**
 * The env that makes a control plane started as a process sign with kept keys
 * (`kept-keys-preload.cjs`): each process of a test file gets six keys that no other process or
 * in-process control plane of the file gets. Past its six, and once the kept keys run out, a
 * process makes its own.
 */
export function keptKeysEnv(): Record<string, string> {
  const from = keptKeys().length - KEYS_PER_PROCESS * (processesGivenKeys + 1);
  if (from < KEPT_KEYS_IN_PROCESS) return {};
  processesGivenKeys++;
  return {
    // Quoted, as NODE_OPTIONS splits on spaces outside double quotes.
    NODE_OPTIONS: [process.env.NODE_OPTIONS, `--require ${JSON.stringify(PRELOAD)}`]
      .filter(Boolean)
      .join(' '),
    TEST_KEPT_KEYS_FROM: String(from),
    TEST_KEPT_KEYS_TO: String(from + KEYS_PER_PROCESS),
  };
}
