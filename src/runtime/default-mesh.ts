import type { Config } from '../config/schema.js';
import { registry } from '../resources/registry.js';
import { validateBody, type ValidatedSpec } from '../resources/validate.js';
import { readYaml } from '../util/bounded-yaml.js';
import { AppError } from '../util/errors.js';
import { StructureLimitError } from '../util/structure-bounds.js';

const KEY = 'defaults.mesh (MESH_DEFAULTS_MESH)';

function invalid(problem: string): AppError {
  return new AppError('BAD_REQUEST', 'invalid configuration', `${KEY}: ${problem}`);
}

/**
 * The spec of the mesh `default` made at first start, from `defaults.mesh`: a Mesh as YAML or JSON
 * (`type` and `name` may be left out; empty: a mesh with no settings). Throws naming the key.
 */
export function defaultMeshSpec(config: Config): ValidatedSpec {
  const text = config.defaults.mesh;
  if (text.trim() === '') return validMesh({});
  // yaml loads only when the key is set; depth and size are bounded before anything is built.
  let read;
  try {
    read = readYaml(text, { maxDocuments: 2 });
  } catch (error) {
    if (error instanceof StructureLimitError) throw invalid(`too large or too deep: ${error.message}`);
    throw error;
  }
  const [document, second] = read.documents;
  if (document.errors.length > 0) throw invalid(`not YAML or JSON: ${read.describe(document.errors[0])}`);
  if (second !== undefined) throw invalid('not YAML or JSON: holds several YAML documents, a Mesh is one');
  const value: unknown = document.toJS();
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalid('must be a Mesh, a mapping such as {"mtls": {...}}');
  }
  return validMesh(value as Record<string, unknown>);
}

/** `fields` as the spec of a Mesh named default (`type` and `name` may be left out); throws naming the key. */
function validMesh(fields: Record<string, unknown>): ValidatedSpec {
  const body = { type: 'Mesh', name: 'default', ...fields };
  const checked = validateBody(registry.get('Mesh'), body, { name: 'default' });
  if (!checked.ok) {
    const causes = checked.causes.map((cause) => `${cause.field}: ${cause.message}`).join('; ');
    throw invalid(`not a valid Mesh named default: ${causes}`);
  }
  return checked.spec;
}
