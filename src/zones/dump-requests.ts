import { AppError, type ErrorCode } from '../util/errors.js';
import type { DumpRequest, DumpResponse } from './sync-protocol.js';

/** A view of a zone's proxy as the zone answered it. */
export interface DumpReply {
  contentType: string;
  body: Buffer;
}

/** Global's open requests to zones for proxy views, correlated by id. */
export interface DumpRequests {
  /**
   * Sends a request with `send` and resolves with the zone's answer; rejects with the zone's own
   * error, or UNAVAILABLE naming the zone at the timeout or when its session ends first.
   */
  ask(zone: string, send: (req: DumpRequest) => void, req: Omit<DumpRequest, 'id'>): Promise<DumpReply>;
  /** A response came from the zone. */
  answered(zone: string, res: DumpResponse): void;
  /** The zone's session ended: its open requests fail. */
  dropZone(zone: string, reason: string): void;
  close(): void;
}

interface Pending {
  zone: string;
  resolve(r: DumpReply): void;
  reject(err: AppError): void;
  timer: NodeJS.Timeout;
}

/** An error code a zone may send back; anything else is INTERNAL. */
const ZONE_CODES: ReadonlySet<string> = new Set<ErrorCode>([
  'NOT_FOUND',
  'BAD_REQUEST',
  'FORBIDDEN',
  'UNAVAILABLE',
  'INTERNAL',
]);

/** Creates the request table; `timeoutMs` is how long a zone has to answer. */
export function createDumpRequests(timeoutMs: number): DumpRequests {
  const pending = new Map<number, Pending>();
  let next = 0;

  const fail = (id: number, err: AppError): void => {
    const p = pending.get(id);
    if (!p) return;
    pending.delete(id);
    clearTimeout(p.timer);
    p.reject(err);
  };

  return {
    ask(zone, send, req) {
      const id = ++next;
      return new Promise<DumpReply>((resolve, reject) => {
        const timer = setTimeout(
          () =>
            fail(
              id,
              new AppError(
                'UNAVAILABLE',
                'Zone did not answer',
                `zone "${zone}" did not answer within ${timeoutMs} ms`,
              ),
            ),
          timeoutMs,
        );
        timer.unref();
        pending.set(id, { zone, resolve, reject, timer });
        send({ id, ...req });
      });
    },
    answered(zone, res) {
      const p = pending.get(res.id);
      // Only the zone that was asked may answer.
      if (!p || p.zone !== zone) return;
      if (res.errorCode !== '') {
        const code = ZONE_CODES.has(res.errorCode) ? (res.errorCode as ErrorCode) : 'INTERNAL';
        fail(res.id, new AppError(code, res.errorTitle, res.errorDetails));
        return;
      }
      pending.delete(res.id);
      clearTimeout(p.timer);
      p.resolve({ contentType: res.contentType, body: res.body });
    },
    dropZone(zone, reason) {
      for (const [id, p] of [...pending]) {
        if (p.zone !== zone) continue;
        fail(
          id,
          new AppError(
            'UNAVAILABLE',
            'Zone not connected',
            `zone "${zone}" disconnected before answering: ${reason}`,
          ),
        );
      }
    },
    close() {
      for (const id of [...pending.keys()])
        fail(id, new AppError('UNAVAILABLE', 'Global is stopping', 'Global is stopping'));
    },
  };
}
