import * as grpc from '@grpc/grpc-js';
import { grpcStatusOf } from '../util/grpc-status.js';
import type { StreamEnd } from './peer-stream.js';

/** The status a stream ends with for an error (the table shared with xDS, src/util/grpc-status.ts). */
export const toStreamEnd: (err: unknown) => StreamEnd = grpcStatusOf;

/** The name of a gRPC status code, for log lines. */
export const statusName = (code: grpc.status): string => grpc.status[code] ?? String(code);
