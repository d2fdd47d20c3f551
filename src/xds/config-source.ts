import type * as grpc from '@grpc/grpc-js';
import type { Node } from './ads-protocol.js';
import type { NamedResource } from './encode-any.js';

/** The resources of one type for a subscription, and the version (log revision) they were computed at. */
export interface ResourceSet {
  version: number;
  resources: NamedResource[];
}

/**
 * Where the ADS server gets config: the server speaks the protocol, the source knows the mesh.
 * `open` names the proxy behind a stream from the node of its first request and the call metadata;
 * it refuses with an `AppError` (UNAUTHENTICATED, FORBIDDEN, NOT_FOUND, …), which ends the stream
 * with the matching gRPC status and the error's details.
 */
export interface ConfigSource {
  open(node: Node, metadata: grpc.Metadata): Promise<ProxyHandle>;
}

/** What a source tells a stream that follows it ({@link ProxyHandle.follow}). */
export interface StreamFollower {
  changed(): void;
  end(err: unknown): void;
}

/** The config of one connected proxy. */
export interface ProxyHandle {
  /** The Dataplane behind the stream, when the source names one (its mesh and name). */
  readonly proxy?: { readonly mesh: string; readonly name: string };
  /** Resources of a type for the subscribed names (`[]` = all, the LDS/CDS wildcard). */
  resources(typeUrl: string, names: readonly string[]): ResourceSet;
  /** Calls `listener` when config may have changed; returns the unsubscribe function. */
  onChange(listener: () => void): () => void;
  /**
   * Calls `listener` when the source ends the stream (its data plane token was revoked or
   * expired: an `AppError`, whose status the stream ends with); returns the unsubscribe function.
   */
  onEnd?(listener: (err: unknown) => void): () => void;
  /**
   * What a server of many streams calls instead of `onChange` and `onEnd`: the source tells
   * `follower` of changes (`changed`) and of the end it decides (`end`, as an `onEnd` listener)
   * until the stream is `closed`. One object of the server's per stream, no listener functions.
   */
  follow?(follower: StreamFollower): void;
  /** The stream ended. */
  closed(): void;
}
