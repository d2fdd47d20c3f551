/**
 * The services proxyless clients dial, per proxy and open stream (the match view's `setDialled`).
 * A proxy's dialled services are the union over its open streams, sorted, each once.
 *
 * Kept small, for 10,000 proxies each with a stream: a proxy with one stream holds a pair (a Map of
 * streams only once it has several), and every list is shared, never changed (`sharedList`: the
 * proxies of a workload dial the same few services, so they hold one list between them).
 */
import { sameStrings } from '../util/deep-equal.js';

/** One stream's services, or several streams' by stream key. */
type Dials =
  { readonly stream: string; readonly services: readonly string[] } | Map<string, readonly string[]>;

/** Distinct lists kept for sharing; past it the table starts again (lists already handed out stay valid). */
const SHARED_MAX = 4096;
const SHARED = new Map<string, readonly string[]>();
const NONE: readonly string[] = Object.freeze([]);

/** `services` sorted, each once, as a frozen list shared by every caller with the same services. */
export function sharedList(services: readonly string[]): readonly string[] {
  if (services.length === 0) return NONE;
  let sorted = services;
  for (let i = 1; i < services.length; i++) {
    if ((services[i - 1] as string) >= (services[i] as string)) {
      sorted = [...new Set(services)].sort();
      break;
    }
  }
  const key = sorted.join('\u0000');
  const known = SHARED.get(key);
  // A name holding the separator could make two lists one key: such a list is not shared.
  if (known !== undefined) return sameStrings(known, sorted) ? known : Object.freeze([...sorted]);
  if (SHARED.size >= SHARED_MAX) SHARED.clear();
  const list = Object.freeze([...sorted]);
  SHARED.set(key, list);
  return list;
}

/** The dialled services of every proxy, by mesh, proxy and stream. */
export class DialledServices {
  private readonly meshes = new Map<string, Map<string, Dials>>();

  /** The proxy's dialled services (the union over its streams), or undefined when no stream told any. */
  of(mesh: string, name: string): readonly string[] | undefined {
    const dials = this.meshes.get(mesh)?.get(name);
    if (dials === undefined) return undefined;
    if (!(dials instanceof Map)) return dials.services;
    const all: string[] = [];
    for (const services of dials.values()) for (const s of services) all.push(s);
    return sharedList(all);
  }

  /**
   * Sets the services one stream dials (`undefined`: the stream ended). Returns the proxy's dialled
   * services before and after, when they changed; undefined when they did not.
   */
  set(
    mesh: string,
    name: string,
    stream: string,
    services: readonly string[] | undefined,
  ): { before: readonly string[] | undefined; after: readonly string[] | undefined } | undefined {
    let byProxy = this.meshes.get(mesh);
    const dials = byProxy?.get(name);
    const before = this.of(mesh, name);
    if (services === undefined) {
      if (dials === undefined || byProxy === undefined) return undefined;
      if (dials instanceof Map) {
        if (!dials.delete(stream)) return undefined;
        // Back to one stream: a pair again.
        if (dials.size === 1) {
          const [[other, list]] = dials as Map<string, readonly string[]>;
          byProxy.set(name, { stream: other as string, services: list as readonly string[] });
        }
      } else {
        if (dials.stream !== stream) return undefined;
        byProxy.delete(name);
        if (byProxy.size === 0) this.meshes.delete(mesh);
      }
    } else {
      const list = sharedList(services);
      if (!byProxy) this.meshes.set(mesh, (byProxy = new Map()));
      if (dials === undefined || (!(dials instanceof Map) && dials.stream === stream)) {
        byProxy.set(name, { stream, services: list });
      } else if (dials instanceof Map) {
        dials.set(stream, list);
      } else {
        byProxy.set(
          name,
          new Map([
            [dials.stream, dials.services],
            [stream, list],
          ]),
        );
      }
    }
    const after = this.of(mesh, name);
    return sameStrings(before ?? NONE, after ?? NONE) ? undefined : { before, after };
  }
}
