import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';
import type * as Yaml from 'yaml';

const YAML_TYPES = new Set(['application/yaml', 'text/yaml', 'application/x-yaml', 'text/x-yaml']);

/** Whether an Accept header prefers YAML: its first media type with the highest `q` is a YAML one. */
export function prefersYaml(accept: string | undefined): boolean {
  if (accept === undefined || !accept.includes('yaml')) return false;
  let best: { type: string; q: number } | undefined;
  for (const part of accept.split(',')) {
    const [type, ...params] = part.trim().toLowerCase().split(';');
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    if (!Number.isFinite(q) || q <= 0) continue;
    if (best === undefined || q > best.q) best = { type: type.trim(), q };
  }
  return best !== undefined && YAML_TYPES.has(best.type);
}

/**
 * Answers YAML to a caller whose Accept prefers it (decisions §3 takes YAML bodies; `meshctl` and
 * `curl -H 'accept: application/yaml'` read it back): every JSON answer, errors included, is
 * turned into one YAML document. Event streams and text answers are left alone.
 */
export function registerYamlAnswers(app: FastifyInstance): void {
  // A callback hook, not an async one: it runs on every answer, and a JSON one (nearly all) passes
  // through without the promise and the extra turn an async hook costs.
  app.addHook('onSend', (req, reply, payload, done) => {
    if (!prefersYaml(req.headers.accept)) return done(null, payload);
    const type = String(reply.getHeader('content-type') ?? '');
    if (!type.startsWith('application/json')) return done(null, payload);
    if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return done(null, payload);
    const text = payload.toString();
    if (text.length === 0) return done(null, payload);
    let yaml: string;
    try {
      const { stringify } = createRequire(import.meta.url)('yaml') as typeof Yaml;
      yaml = stringify(JSON.parse(text), { lineWidth: 0 });
    } catch (err) {
      return done(err as Error);
    }
    reply.header('content-type', 'application/yaml; charset=utf-8');
    const vary = reply.getHeader('vary');
    reply.header('vary', vary === undefined || vary === '' ? 'Accept' : `${String(vary)}, Accept`);
    done(null, yaml);
  });
}
