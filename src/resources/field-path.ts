import { printable } from '../util/printable.js';

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/**
 * Formats a path as `networking.inbound[0].tags["mesh.io/service"]` (decisions §4); control and
 * bidi characters of a key are written as `\uXXXX`, so a cause never carries them.
 */
export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (typeof seg === 'string' && IDENT.test(seg)) out += out === '' ? seg : `.${seg}`;
    else out += `[${printable(JSON.stringify(String(seg)))}]`;
  }
  return out;
}
