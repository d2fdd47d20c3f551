import sjson from 'secure-json-parse';
import { AppError } from '../util/errors.js';
import { checkJsonStructure, lineColumn, StructureLimitError } from '../util/structure-bounds.js';

const POSITION = / in JSON at position (\d+)(?: \(line \d+ column \d+\))?$/;

/**
 * The 400 of a JSON or YAML body that passes a structure bound (STRUCTURE_BOUNDS), with where:
 * "the JSON body is too deep at line 1, column 65: it nests more than 64 levels of arrays and
 * objects; ...".
 */
export function structureRefusal(format: 'JSON' | 'YAML', text: string, err: StructureLimitError): AppError {
  const { line, column } = lineColumn(text, err.offset);
  const what = err.limit === 'depth' ? 'too deep' : 'too large';
  return new AppError(
    'INVALID_BODY',
    'Invalid request body',
    `the ${format} body is ${what} at line ${line}, column ${column}: ${err.message}; ` +
      'no resource comes near this: check what generated the body',
  );
}

/**
 * Parses a JSON request body as fastify's own parser does (`__proto__` and `constructor.prototype`
 * keys refused), within STRUCTURE_BOUNDS (400 naming the bound), and says where it is broken: "invalid JSON at line 3, column 7: Expected ',' or
 * '}' after property value" (fastify's only says that the body is not valid JSON).
 */
export function parseJsonBody(text: string): unknown {
  if (text.length === 0) throw new AppError('INVALID_BODY', 'Invalid request body', 'request body is empty');
  // Bounded before JSON.parse builds anything: 1 MB of balanced `[]` is 500,000 levels, which parse in
  // ~100 ms and then overflow every recursive walk of the value.
  try {
    checkJsonStructure(text);
  } catch (err) {
    if (err instanceof StructureLimitError) throw structureRefusal('JSON', text, err);
    throw err;
  }
  try {
    return sjson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch (err) {
    const message = (err as Error).message;
    if (!(err instanceof SyntaxError)) {
      throw new AppError('INVALID_BODY', 'Invalid request body', `invalid JSON: ${message}`);
    }
    const at = POSITION.exec(message);
    if (at) {
      const { line, column } = lineColumn(text, Number(at[1]));
      const what = message.slice(0, at.index);
      throw new AppError(
        'INVALID_BODY',
        'Invalid request body',
        `invalid JSON at line ${line}, column ${column}: ${what}`,
      );
    }
    if (message === 'Unexpected end of JSON input') {
      const { line, column } = lineColumn(text, text.length);
      throw new AppError(
        'INVALID_BODY',
        'Invalid request body',
        `invalid JSON at line ${line}, column ${column}: the body ends too early`,
      );
    }
    // V8 gives no offset for an unexpected token, but quotes the text around it.
    throw new AppError('INVALID_BODY', 'Invalid request body', `invalid JSON: ${message}`);
  }
}
