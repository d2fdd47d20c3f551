import { readFileSync } from 'node:fs';
import { connect, constants } from 'node:http2';
import type { ClientHttp2Session, ClientHttp2Stream } from 'node:http2';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { CHANNEL_OPTIONS, syncClientConstructor, type SyncClient } from '../../src/zones/sync-protocol.js';

/** How the sync port ended a raw call: its gRPC status, and how many body bytes the client got written. */
export interface RawCallEnd {
  /** `grpc-status` (undefined: the stream closed without one). */
  code: number | undefined;
  details: string;
  /**
   * Bytes of the request body handed to the client's HTTP/2 session when the answer came (some of
   * them may still have been queued on this side): less than the message means Global answered
   * before it had the message whole.
   */
  written: number;
}

/** Protobuf varint of `n`. */
function varint(n: number): Buffer {
  const out: number[] = [];
  let v = n;
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
  return Buffer.from(out);
}

/**
 * The body of one SyncMessage that is a Hello whose `config` is `configBytes` bytes of "a", as
 * chunks: the gRPC frame header and the protobuf tags first, then one reused chunk of 1 MiB. The
 * message is never whole in this process (what it costs is the receiver's, not the test's).
 */
export function* hugeHello(configBytes: number): Generator<Buffer> {
  // Hello.config is field 6 (tag 0x32); SyncMessage.hello is field 1 (tag 0x0a).
  const hello = Buffer.concat([Buffer.from([0x32]), varint(configBytes)]);
  const helloLength = hello.length + configBytes;
  const message = Buffer.concat([Buffer.from([0x0a]), varint(helloLength)]);
  const total = message.length + helloLength;
  const frame = Buffer.alloc(5);
  frame.writeUInt32BE(total, 1);
  yield Buffer.concat([frame, message, hello]);
  const chunk = Buffer.alloc(1024 * 1024, 'a');
  for (let left = configBytes; left > 0; left -= chunk.length) {
    yield left >= chunk.length ? chunk : chunk.subarray(0, left);
  }
}

/** One gRPC message frame (uncompressed) around `bytes`. */
export function grpcFrame(bytes: Buffer): Buffer {
  const frame = Buffer.alloc(5);
  frame.writeUInt32BE(bytes.length, 1);
  return Buffer.concat([frame, bytes]);
}

/** A gRPC client of the sync port of `global`, trusting the certificate it made in its data dir `dir`. */
export function syncClientOf(global: ControlPlane, dir: string): SyncClient {
  const Client = syncClientConstructor();
  const ca = readFileSync(join(dir, 'tls', 'cert.pem'));
  return new Client(`127.0.0.1:${global.ports.kds}`, grpc.credentials.createSsl(ca), CHANNEL_OPTIONS);
}

/** A TLS HTTP/2 connection to the sync port that trusts `ca`. */
export function connectSync(port: number, ca: Buffer): Promise<ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const session = connect(`https://127.0.0.1:${port}`, { ca, checkServerIdentity: () => undefined });
    session.once('connect', () => resolve(session));
    session.once('error', reject);
  });
}

/**
 * Opens one call of the Sync service on `session` as a raw HTTP/2 stream (no gRPC client: the body
 * is written as given, however it is framed) with `headers` as call metadata, writes `body` chunk by
 * chunk while the stream takes it, and resolves with how the server ended the call. Writing stops
 * as soon as the server answers with a status.
 */
export function rawSyncCall(
  session: ClientHttp2Session,
  opts: {
    method?: 'GlobalToZone' | 'ZoneToGlobal';
    headers?: Record<string, string>;
    body: Iterable<Buffer>;
    /** Leave the request open once the body is written (a caller that never finishes its message). */
    keepOpen?: boolean;
  },
): Promise<RawCallEnd> {
  return new Promise((resolve) => {
    const stream: ClientHttp2Stream = session.request({
      ':method': 'POST',
      ':path': `/meshcp.sync.v1.Sync/${opts.method ?? 'ZoneToGlobal'}`,
      'content-type': 'application/grpc',
      te: 'trailers',
      ...opts.headers,
    });
    let written = 0;
    let answered = false;
    let end: { code: number | undefined; details: string } | undefined;
    const status = (headers: Record<string, unknown>) => {
      if (headers['grpc-status'] === undefined) return;
      answered = true;
      end = {
        code: Number(headers['grpc-status']),
        details: decodeURIComponent(String(headers['grpc-message'] ?? '')),
      };
      // The answer is in: stop sending (what a gRPC client does) and let the stream close.
      stream.close(constants.NGHTTP2_CANCEL);
    };
    stream.on('response', status);
    stream.on('trailers', status);
    stream.on('data', () => undefined);
    stream.on('error', () => undefined);
    stream.on('close', () => resolve({ code: end?.code, details: end?.details ?? '', written }));
    const chunks = opts.body[Symbol.iterator]();
    const pump = (): void => {
      while (!answered && !stream.destroyed) {
        const next = chunks.next();
        if (next.done) {
          if (!opts.keepOpen) stream.end();
          return;
        }
        const ok = stream.write(next.value, (err) => {
          if (!err) written += next.value.length;
        });
        if (!ok) {
          stream.once('drain', pump);
          return;
        }
      }
    };
    pump();
  });
}
