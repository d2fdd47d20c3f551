// `npm run build`: bundles the CLI and everything it imports into dist/bin (esbuild), so that a start
// loads a few files instead of ~300 modules resolved one by one (about 80 ms of every start).
// Type checking is `npm run lint` (tsc --noEmit); esbuild only strips the types.
import { rmSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const out = 'dist/bin';
rmSync('dist', { recursive: true, force: true });
// Bundled CommonJS packages (fastify, pino, commander, …) call require() for node's built-ins.
const banner = {
  js: "import { createRequire as __meshCpRequire } from 'node:module';\nconst require = __meshCpRequire(import.meta.url);",
};

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
  banner,
  // Stack traces name the TypeScript source with `node --enable-source-maps`.
  sourcemap: 'linked',
  logLevel: 'warning',
});

/**
 * src/meshctl/kind-table.ts as a literal: the registry's kinds without their zod schemas, which
 * meshctl would otherwise load at every start. The table is computed from the registry itself.
 */
async function kindTableModule() {
  const tmp = `${out}/.kind-table.mjs`;
  await build({
    entryPoints: ['src/meshctl/kind-table.ts'],
    outfile: tmp,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'warning',
  });
  const { KIND_TABLE } = await import(pathToFileURL(tmp).href);
  rmSync(tmp);
  const entries = KIND_TABLE.map((k) => {
    const { tagSets, ...data } = k;
    const json = JSON.stringify(data);
    if (!tagSets) return json;
    // The function's own source: it reads only its argument (checked by test/unit/meshctl-kinds.test.ts).
    return `${json.slice(0, -1)},"tagSets":${tagSets.toString()}}`;
  });
  return `export const KIND_TABLE = [\n${entries.join(',\n')}\n];\n`;
}

const kindTable = await kindTableModule();
await build({
  entryPoints: { meshctl: 'src/meshctl/main.ts' },
  outdir: out,
  bundle: true,
  // yaml and the less used commands load when a command needs them.
  splitting: true,
  chunkNames: 'meshctl-[name]-[hash]',
  format: 'esm',
  platform: 'node',
  target: 'node20',
  banner,
  plugins: [
    {
      name: 'kind-table',
      setup(b) {
        b.onLoad({ filter: /src[\\/]meshctl[\\/]kind-table\.ts$/ }, () => ({
          contents: kindTable,
          loader: 'js',
        }));
      },
    },
  ],
  sourcemap: 'linked',
  logLevel: 'warning',
});
