import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';

/** The Greeter service definition, loaded from greeter.proto beside this file. */
export function greeterPackage() {
  const def = loadSync(join(dirname(fileURLToPath(import.meta.url)), 'greeter.proto'));
  return grpc.loadPackageDefinition(def).greeter;
}

/**
 * Flags (`--name value`) with environment fallbacks: `spec` maps each option to
 * `{env, default}`; every value is a string until the caller converts it.
 */
export function options(spec) {
  const { values } = parseArgs({
    options: Object.fromEntries(Object.keys(spec).map((k) => [k, { type: 'string' }])),
    strict: true,
  });
  return Object.fromEntries(
    Object.entries(spec).map(([k, { env, def }]) => [k, values[k] ?? process.env[env] ?? def]),
  );
}
