// Imported dynamically (`await import('./yaml-codec.js')`) so that the YAML library loads only when
// a command reads or writes YAML. A module of our own rather than `import('yaml')`: esbuild hands a
// dynamically imported CommonJS package over as `default` only.
export { parse, parseAllDocuments, stringify } from 'yaml';
