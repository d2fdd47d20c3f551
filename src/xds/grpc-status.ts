import { grpcStatusOf, type GrpcStatus } from '../util/grpc-status.js';

/** How an ADS stream ends: a status code and the details the proxy sees. */
export type StreamStatus = GrpcStatus;

/** The status for an error on the xDS transport (the table shared with zone sync). */
export const streamStatusOf = grpcStatusOf;
