// `npm run build`: bundles the CLI and everything it imports into dist/bin (esbuild), so that a start
// loads a few files instead of ~300 modules resolved one by one (about 80 ms of every start).
// Type checking is `npm run lint` (tsc --noEmit); esbuild only strips the types.
import { rmSync } from 'node:fs';
import { build } from 'esbuild';

const out = 'dist/bin';
rmSync('dist', { recursive: true, force: true });
await build({
  entryPoints: { 'mesh-cp': 'src/cli/main.ts' },
  outdir: out,
  bundle: true,
  // The control plane, multi-zone sync and the log tools load when a command needs them.
  splitting: true,
  chunkNames: '[name]-[hash]',
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // Native code (classic-level) stays in node_modules, and so do gRPC and its proto loader, which
  // only multi-zone sync loads (on demand).
  external: [
    'classic-level',
    '@grpc/grpc-js',
    '@grpc/proto-loader',
    // The xDS encoder (src/xds/): protobufjs finds `fs` at run time through its own require shim.
    'protobufjs',
    // fastify's schema compilers: no route has a fastify schema, so they never load (see server.ts).
    '@fastify/ajv-compiler',
    '@fastify/fast-json-stringify-compiler',
  ],
  // Bundled CommonJS packages (fastify, pino, …) call require() for node's built-ins.
  banner: {
    js: "import { createRequire as __meshCpRequire } from 'node:module';\nconst require = __meshCpRequire(import.meta.url);",
  },
  // Stack traces name the TypeScript source with `node --enable-source-maps`.
  sourcemap: 'linked',
  logLevel: 'warning',
});
