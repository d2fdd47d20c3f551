import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import type { Config } from '../config/schema.js';
import { registry } from '../resources/registry.js';
import { validateBody } from '../resources/validate.js';
import { AppError } from '../util/errors.js';

const KEY = 'defaults.mesh (MESH_DEFAULTS_MESH)';

function invalid(problem: string): AppError {
  return new AppError('BAD_REQUEST', 'invalid configuration', `${KEY}: ${problem}`);
}

/**
 * The spec of the mesh `default` made at first start, from `defaults.mesh`: a Mesh as YAML or JSON
 * (`type` and `name` may be left out; empty: a mesh with no settings). Throws naming the key.
 */
export function defaultMeshSpec(config: Config): Record<string, unknown> {
  const text = config.defaults.mesh;
  if (text.trim() === '') return {};
  // yaml loads only when the key is set.
  const { parseDocument } = createRequire(import.meta.url)('yaml') as typeof Yaml;
  const document = parseDocument(text);
  if (document.errors.length > 0) throw invalid(`not YAML or JSON: ${document.errors[0].message}`);
  const value: unknown = document.toJS();
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalid('must be a Mesh, a mapping such as {"mtls": {...}}');
  }
  const body = { type: 'Mesh', name: 'default', ...(value as Record<string, unknown>) };
  const checked = validateBody(registry.get('Mesh'), body, { name: 'default' });
  if (!checked.ok) {
    const causes = checked.causes.map((cause) => `${cause.field}: ${cause.message}`).join('; ');
    throw invalid(`not a valid Mesh named default: ${causes}`);
  }
  return checked.spec;
}
