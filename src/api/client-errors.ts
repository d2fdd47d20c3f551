import type { Socket } from 'node:net';
import { STATUS_CODES } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../util/errors.js';
import type { ErrorBody } from './errors.js';
import { STATUS_OF } from './errors.js';

/** The limits the node server enforces before fastify sees a request (hardening). */
export interface ConnectionLimits {
  maxHeaderSize: number;
  /** The config values as written, for the messages. */
  headersTimeout: string;
  requestTimeout: string;
}

/** The error of a connection-level failure: a slow request, too many header bytes, or bad HTTP. */
function errorOf(err: NodeJS.ErrnoException, limits: ConnectionLimits): AppError {
  switch (err.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new AppError(
        'REQUEST_TIMEOUT',
        'Request timeout',
        `the request was not received in time: headers must arrive within ${limits.headersTimeout} and the whole request within ${limits.requestTimeout} (apiServer.timeouts)`,
      );
    case 'HPE_HEADER_OVERFLOW':
      return new AppError(
        'HEADERS_TOO_LARGE',
        'Request header fields too large',
        `the request headers are larger than ${limits.maxHeaderSize} bytes (apiServer.maxHeaderSize)`,
      );
    default:
      return new AppError('BAD_REQUEST', 'Bad request', 'the request is not valid HTTP/1.1');
  }
}

/** Fastify's `clientErrorHandler`: answers header floods and slow requests with our JSON error, then closes. */
export function createClientErrorHandler(limits: ConnectionLimits) {
  return function clientErrorHandler(
    this: FastifyInstance,
    err: NodeJS.ErrnoException,
    socket: Socket,
  ): void {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const known = errorOf(err, limits);
    const status = STATUS_OF[known.code];
    const body: ErrorBody = { title: known.title, details: known.details };
    const text = JSON.stringify(body);
    this.log.debug({ code: err.code, status }, 'client connection error');
    if (socket.writable) {
      socket.write(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
      );
    }
    socket.destroy();
  };
}
