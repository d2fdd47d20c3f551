#!/usr/bin/env node
/**
 * The `mesh-cp` command as installed (`dist/bin/mesh-cp.cjs`): runs the bundle of the CLI
 * (`dist/bin/mesh-cp.bundle.cjs`, built from `main.ts`) through a V8 code cache kept beside it.
 *
 * Compiling the 2 MB bundle, and then each function it runs, was a sixth of a start's CPU. The
 * cache holds the compiled code of everything a process ran, so the next start deserialises it
 * instead. It is written when a process ends that found no cache it could use: none yet, or one
 * made by another build of the bundle or another Node.js (V8 checks both, and V8 flags, and refuses
 * a cache that does not match: the bundle is then compiled as without one). It is only written
 * where the bundle is (a read-only install runs without it), through a temporary file and a rename
 * so that processes ending together never leave half a cache. With `--enable-source-maps` the
 * bundle is required as usual, so that node maps its stack traces to the TypeScript sources.
 *
 * Node.js 22 has this built in (`module.enableCompileCache`); this is the same for Node.js 20.
 * Built on its own (scripts/build.mjs): it imports only node's modules.
 */
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { join } from 'node:path';
import { constants, Script } from 'node:vm';

/** The bundle, beside this file once built (`__dirname` of the CommonJS output). */
const BUNDLE = join(__dirname, 'mesh-cp.bundle.cjs');

/**
 * A cache per command (`run`, `log`, `config-keys`, the rest), each holding what its command runs,
 * and per set of node flags: V8 refuses a cache made under other flags, so `npm start` (which adds
 * one) and a command typed in a shell would otherwise replace each other's at every alternation.
 */
const COMMANDS = new Set(['run', 'log', 'config-keys']);
const command = COMMANDS.has(process.argv[2] ?? '') ? process.argv[2] : 'other';
const CACHE = `${BUNDLE}.${command}${flagsTag()}.v8-cache`;

/** Empty without node flags; else `-` and a hash (32-bit FNV-1a, hex) of the flags and NODE_OPTIONS. */
function flagsTag(): string {
  const flags = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].join('\0');
  if (flags === '') return '';
  let hash = 0x811c9dc5;
  for (let i = 0; i < flags.length; i++) hash = Math.imul(hash ^ flags.charCodeAt(i), 0x01000193);
  return `-${(hash >>> 0).toString(16).padStart(8, '0')}`;
}

/** Node's own wrapper of a CommonJS module's source (`(function (exports, require, module, …) {`). */
const wrap = (Module as unknown as { wrap(source: string): string }).wrap;

function readCache(): Buffer | undefined {
  try {
    return readFileSync(CACHE);
  } catch {
    return undefined;
  }
}

/** Writes the cache whole or not at all; a directory it cannot write to means no cache. */
function writeCache(script: Script): void {
  const tmp = `${CACHE}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, script.createCachedData());
    renameSync(tmp, CACHE);
  } catch {
    rmSync(tmp, { force: true });
  }
}

function launch(): void {
  if (process.sourceMapsEnabled) {
    createRequire(BUNDLE)(BUNDLE);
    return;
  }
  const source = readFileSync(BUNDLE, 'utf8');
  const cachedData = readCache();
  const script = new Script(wrap(source), {
    filename: BUNDLE,
    cachedData,
    importModuleDynamically: constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  if (cachedData === undefined || script.cachedDataRejected === true) {
    process.once('exit', () => writeCache(script));
  }
  const module = { exports: {}, filename: BUNDLE, id: BUNDLE, loaded: false };
  const run = script.runInThisContext() as (
    exports: object,
    require: NodeJS.Require,
    module: object,
    filename: string,
    dirname: string,
  ) => void;
  run.call(module.exports, module.exports, createRequire(BUNDLE), module, BUNDLE, __dirname);
}

launch();
