import type { FastifyRequest } from 'fastify';
import { AppError } from '../util/errors.js';

/**
 * Refuses (415) a POST that any web page can make a browser send (decisions §7). A browser sends a
 * POST with no content type, or as a form or as text, without a CORS preflight, and attaches by
 * itself what makes a caller admin: its client certificate, or its loopback address. PUT and DELETE
 * (and any other method) are preflighted, and a preflight from an origin CORS does not allow is
 * refused, so only POST needs this. A POST passes with a content type the API parses (JSON, YAML:
 * a browser preflights those), even with no body, or with an `Authorization` header (preflighted,
 * and then a user token, not something the browser adds, decides who calls).
 */
export function refuseForgeablePost(req: FastifyRequest): void {
  if (req.method !== 'POST' || req.headers.authorization !== undefined) return;
  const type = req.headers['content-type'];
  const essence = type?.split(';', 1)[0].trim().toLowerCase();
  if (essence !== undefined && essence !== '' && req.server.hasContentTypeParser(essence)) return;
  throw new AppError(
    'UNSUPPORTED_MEDIA_TYPE',
    'Unsupported media type',
    'a POST must say "Content-Type: application/json" (or a YAML type), even with no body: a web page can make a browser send a POST without one, with its client certificate or from loopback',
  );
}
