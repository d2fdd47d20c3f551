'use strict';
/**
 * Preloaded (`node --require`) into the control planes that the tests start as processes, so that
 * they sign with the kept RSA-2048 keys of `test/fixtures/signing-keys.txt` instead of making new
 * ones: a start on an empty store makes four (~160 ms of CPU each), and the suite starts about
 * sixty. The in-process control planes take the same keys through their `keygen` dependency
 * (`signing-keys.ts`); a process has no such seam, and the product gets none for tests.
 *
 * It answers only the call the control plane makes for a signing key (RSA, 2048 bits), with the
 * kept keys from `TEST_KEPT_KEYS_FROM` up to `TEST_KEPT_KEYS_TO` (excluded), one per call, encoded
 * as the call asks; any other call, and every call once those run out, goes to node's own
 * `generateKeyPair`. Everything else (signing, verifying, storing) runs on real keys as in
 * production.
 */
const crypto = require('node:crypto');
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const { promisify } = require('node:util');

const keys = readFileSync(join(__dirname, '..', 'fixtures', 'signing-keys.txt'), 'utf8')
  .split('\n')
  .filter(Boolean);
let next = Number(process.env.TEST_KEPT_KEYS_FROM ?? 0);
const end = Math.min(keys.length, Number(process.env.TEST_KEPT_KEYS_TO ?? keys.length));
const original = crypto.generateKeyPair;
const generateOriginal = promisify(original);

/** The next kept key pair, encoded as `options` asks; undefined when the call is not for a signing key. */
function keptPair(type, options) {
  if (type !== 'rsa' || options?.modulusLength !== 2048 || next >= end) return undefined;
  const privateKey = crypto.createPrivateKey({
    key: Buffer.from(keys[next++], 'base64'),
    format: 'der',
    type: 'pkcs1',
  });
  const publicKey = crypto.createPublicKey(privateKey);
  return {
    publicKey: options.publicKeyEncoding ? publicKey.export(options.publicKeyEncoding) : publicKey,
    privateKey: options.privateKeyEncoding ? privateKey.export(options.privateKeyEncoding) : privateKey,
  };
}

function generateKeyPair(type, options, callback) {
  const pair = keptPair(type, options);
  if (!pair) return original(type, options, callback);
  process.nextTick(callback, null, pair.publicKey, pair.privateKey);
}
// What `promisify(generateKeyPair)` gives for node's own: `{ publicKey, privateKey }`.
generateKeyPair[promisify.custom] = (type, options) => {
  const pair = keptPair(type, options);
  return pair ? Promise.resolve(pair) : generateOriginal(type, options);
};
crypto.generateKeyPair = generateKeyPair;
