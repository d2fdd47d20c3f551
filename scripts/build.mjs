// `npm run build`: bundles the CLI and everything it imports into dist/bin (esbuild), so that a start
// loads a few files instead of ~300 modules resolved one by one (about 80 ms of every start).
// Type checking is `npm run lint` (tsc --noEmit); esbuild only strips the types.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress as brotliCompressCb, gzip as gzipCb } from 'node:zlib';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { inputsHash, upToDate, writeStamp } from './build-stamp.mjs';

const brotliCompress = promisify(brotliCompressCb);
const gzip = promisify(gzipCb);

const out = 'dist/bin';

// A build whose inputs hash as the last one's did (the same sources, protos, lock file, build
// scripts and Node.js) leaves dist as it is, V8 code caches included: `npm test` and `npm run bench`
// build first, and `npm ci` builds too (prepare), so each run after the first skips ~4 s of
// bundling. `--force` builds anyway.
const inputs = inputsHash('.');
if (!process.argv.includes('--force') && upToDate('.', inputs)) {
  console.log('dist is up to date with its sources (`npm run build -- --force` builds anyway)');
  process.exit(0);
}
rmSync('dist', { recursive: true, force: true });
// Bundled CommonJS packages (fastify, pino, commander, …) call require() for node's built-ins.
const banner = {
  js: "import { createRequire as __meshCpRequire } from 'node:module';\nconst require = __meshCpRequire(import.meta.url);",
};

/**
 * zod re-exports its ~50 message locales (`z.locales`, 360 KB) from its namespace, so every bundle
 * that uses `z` carried them all, to be read and compiled at each start. Only English is used (zod
 * registers it itself); the others resolve to nothing.
 */
const englishOnlyZod = {
  name: 'zod-english-only',
  setup(b) {
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]v4[\\/]/.test(args.importer)
        ? { path: join(dirname(args.importer), '..', 'locales', 'en.js'), namespace: 'zod-locales' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'zod-locales' }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(args.path)};`,
      resolveDir: dirname(args.path),
      loader: 'js',
    }));
  },
};

// mesh-cp is one CommonJS file (dist/bin/mesh-cp.bundle.cjs): node loads it through one compile,
// where the same code as ES module chunks took the ESM loader's asynchronous reads and per-chunk
// compiles, 60–120 ms more of every start on this project's 2-core machines. The control plane,
// multi-zone sync and the log tools are still evaluated only when a command needs them (esbuild
// keeps each dynamically imported module behind its own initialiser), and V8 compiles a function
// when it first runs. The source stays ES modules: `import.meta.url` becomes the bundle's own URL.
const commonJs = {
  outdir: out,
  outExtension: { '.js': '.cjs' },
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  logLevel: 'warning',
};
const meshCpBundle = build({
  ...commonJs,
  entryPoints: { 'mesh-cp.bundle': 'src/cli/main.ts' },
  // Native code (classic-level) stays in node_modules, and so does gRPC's proto loader (multi-zone
  // sync only). @grpc/grpc-js is bundled: resolving and reading its ~80 files from node_modules was
  // ~0.2 s of CPU at every start (it serves xDS before `ready`), where the bundle's code cache holds
  // it. Two of its parts read files beside their own code (`__dirname/../../proto`): channelz's and
  // ORCA's services, which mesh-cp never adds.
  external: [
    'classic-level',
    '@grpc/proto-loader',
    // The xDS encoder (src/xds/), required when the first proxy (or the warm-up after `ready`) needs it.
    'protobufjs',
    // fastify's schema compilers: no route has a fastify schema, so they never load (see server.ts).
    '@fastify/ajv-compiler',
    '@fastify/fast-json-stringify-compiler',
  ],
  define: { 'import.meta.url': '__meshCpFileUrl' },
  inject: ['scripts/file-url.cjs.js'],
  plugins: [englishOnlyZod],
  // Less to read and parse at each start; names are kept, so stack traces still name functions.
  minifyWhitespace: true,
  minifySyntax: true,
  // Stack traces name the TypeScript source with `node --enable-source-maps`.
  sourcemap: 'linked',
});

// The `mesh-cp` command: runs the bundle above through a V8 code cache (src/cli/launch.ts).
const launcher = build({ ...commonJs, entryPoints: { 'mesh-cp': 'src/cli/launch.ts' } });

/**
 * Bundles `options` (an entry point or stdin) as one ES module in dist/bin, imports it and removes
 * the file: how the build runs code of src/ to write out what it computes. From dist/bin, code that
 * finds files relative to its own module (proto/) finds them as the mesh-cp bundle does.
 */
async function importBundled(name, options) {
  const tmp = `${out}/.${name}.mjs`;
  await build({
    outfile: tmp,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    banner,
    logLevel: 'warning',
    ...options,
  });
  try {
    return await import(pathToFileURL(tmp).href);
  } finally {
    rmSync(tmp);
  }
}

/**
 * src/meshctl/kind-table.ts as a literal: the registry's kinds without their zod schemas, which
 * meshctl would otherwise load at every start. The table is computed from the registry itself.
 */
async function kindTableModule() {
  const { KIND_TABLE } = await importBundled('kind-table', { entryPoints: ['src/meshctl/kind-table.ts'] });
  const entries = KIND_TABLE.map((k) => {
    const { tagSets, ...data } = k;
    const json = JSON.stringify(data);
    if (!tagSets) return json;
    // The function's own source: it reads only its argument (checked by test/unit/meshctl-kinds.test.ts).
    return `${json.slice(0, -1)},"tagSets":${tagSets.toString()}}`;
  });
  return `export const KIND_TABLE = [\n${entries.join(',\n')}\n];\n`;
}

async function buildMeshctl() {
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
      englishOnlyZod,
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
}

/**
 * The web GUI (gui/, served at /gui by src/api/gui-routes.ts). First its API types: the OpenAPI
 * document the server serves, built from the registry, turned into TypeScript by openapi-typescript
 * (gui/src/generated/, not committed: always the API of this build). Then the browser bundle,
 * minified, with hashed names, pre-compressed (brotli and gzip) for @fastify/static.
 */
async function buildGui() {
  const { buildOpenApiDocument, registry } = await importBundled('openapi', {
    stdin: {
      contents:
        "export { buildOpenApiDocument } from './src/api/openapi-document.ts';\nexport { registry } from './src/resources/registry.ts';",
      resolveDir: '.',
      loader: 'ts',
    },
  });
  const { default: openapiTS, astToString } = await import('openapi-typescript');
  const document = buildOpenApiDocument(registry, 'build');
  const types = astToString(await openapiTS(document));
  mkdirSync('gui/src/generated', { recursive: true });
  writeFileSync(
    'gui/src/generated/openapi.d.ts',
    `// Generated by scripts/build.mjs from the API's OpenAPI document: do not edit.\n${types}`,
  );

  const guiOut = 'dist/gui';
  const result = await build({
    entryPoints: { app: 'gui/src/main.tsx' },
    outdir: `${guiOut}/assets`,
    entryNames: '[name]-[hash]',
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: ['chrome110', 'firefox115', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    tsconfig: 'gui/tsconfig.json',
    metafile: true,
    sourcemap: 'linked',
    legalComments: 'linked',
    logLevel: 'warning',
  });
  const outputs = Object.keys(result.metafile.outputs);
  const asset = (ext) => {
    const file = outputs.find((o) => o.endsWith(ext) && !o.endsWith('.map'));
    if (!file) throw new Error(`the GUI build made no ${ext} file`);
    return `/gui/assets/${basename(file)}`;
  };
  const template = readFileSync('gui/index.html', 'utf8');
  writeFileSync(
    `${guiOut}/index.html`,
    template.replace('%SCRIPT%', asset('.js')).replace('%STYLE%', asset('.css')),
  );
  // Compressed in node's thread pool, beside the other builds.
  await Promise.all(
    [...outputs.filter((o) => /\.(js|css)$/.test(o)), `${guiOut}/index.html`].map(async (file) => {
      const data = readFileSync(file);
      const [br, gz] = await Promise.all([brotliCompress(data), gzip(data, { level: 9 })]);
      writeFileSync(`${file}.br`, br);
      writeFileSync(`${file}.gz`, gz);
    }),
  );
}

/**
 * The Envoy protos as protobufjs JSON (dist/envoy-protos.json): src/xds/envoy-protos.ts builds its
 * root from it, for ~60% of the CPU of parsing the 73 .proto files at each start.
 */
async function buildEnvoyProtos() {
  const { parseEnvoyProtos } = await importBundled('envoy-protos', {
    entryPoints: ['src/xds/envoy-protos.ts'],
    external: ['protobufjs'],
  });
  writeFileSync('dist/envoy-protos.json', JSON.stringify(parseEnvoyProtos().toJSON()));
}

// The builds run at once: esbuild works on them in parallel, and most of a build was waiting.
await Promise.all([meshCpBundle, launcher, buildMeshctl(), buildGui(), buildEnvoyProtos()]);

writeStamp('.', inputs);
