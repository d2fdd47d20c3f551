import { createRequire } from 'node:module';
import type protobufjs from 'protobufjs';

/** protobufjs' module object (its types are `protobufjs.Type`, `protobufjs.Writer`, …). */
export type Protobuf = typeof protobufjs;

let lib: Protobuf | undefined;

/**
 * protobufjs, required on first use rather than imported: it is ~40 files of CommonJS that only a
 * proxy's first request (or the warm-up just after `ready`) needs, so a start does not load it before
 * every listener is bound. A plain `require` (not `import()`) keeps encoding synchronous.
 */
export function protobuf(): Protobuf {
  lib ??= createRequire(import.meta.url)('protobufjs') as Protobuf;
  return lib;
}
