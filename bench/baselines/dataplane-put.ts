import { registry } from '../../src/resources/registry.js';

/**
 * What the PUT baselines do with a body, alike: drop `type`, `mesh` and `name`, validate the rest
 * with mesh-cp's own Dataplane schema, and keep it in a Map. Undefined when the body is invalid.
 */
export function createDataplaneMap(): {
  put(name: string, body: unknown): { created: boolean; spec: unknown } | undefined;
} {
  const spec = registry.get('Dataplane').spec;
  const stored = new Map<string, unknown>();
  return {
    put(name, body) {
      const { type: _t, mesh: _m, name: _n, ...rest } = body as Record<string, unknown>;
      const parsed = spec.safeParse(rest);
      if (!parsed.success) return undefined;
      const created = !stored.has(name);
      stored.set(name, parsed.data);
      return { created, spec: parsed.data };
    },
  };
}
