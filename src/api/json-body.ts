import sjson from 'secure-json-parse';
import { AppError } from '../util/errors.js';

const POSITION = / in JSON at position (\d+)(?: \(line \d+ column \d+\))?$/;

/** Line and column (from 1) of a character offset in `text`. */
function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    start = i + 1;
  }
  return { line, column: offset - start + 1 };
}

/**
 * Parses a JSON request body as fastify's own parser does (`__proto__` and `constructor.prototype`
 * keys refused), but says where it is broken: "invalid JSON at line 3, column 7: Expected ',' or
 * '}' after property value" (fastify's only says that the body is not valid JSON).
 */
export function parseJsonBody(text: string): unknown {
  if (text.length === 0) throw new AppError('INVALID_BODY', 'Invalid request body', 'request body is empty');
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
