// Injected into the CommonJS bundle of mesh-cp (scripts/build.mjs): what `import.meta.url` is in
// the source, the URL of the file that runs, from which the code finds proto/, dist/gui and its
// own packages.
// eslint-disable-next-line no-undef, @typescript-eslint/no-require-imports -- CommonJS globals of the bundle this is injected into
export const __meshCpFileUrl = require('node:url').pathToFileURL(__filename).href;
