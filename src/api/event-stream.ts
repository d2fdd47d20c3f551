import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';

/**
 * Takes the reply over as a stream of server-sent events: the headers fastify's hooks set (CORS,
 * the request id) kept, then the event-stream ones, sent at once. Returns the raw response to write
 * events to.
 */
export function openEventStream(reply: FastifyReply, extra: Record<string, string> = {}): ServerResponse {
  reply.hijack();
  const res = reply.raw;
  const headers: Record<string, string | string[] | number> = {};
  for (const [k, v] of Object.entries(reply.getHeaders())) if (v !== undefined) headers[k] = v;
  res.writeHead(200, {
    ...headers,
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'x-accel-buffering': 'no',
    ...extra,
  });
  return res;
}
