import * as grpc from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { AppError } from '../util/errors.js';
import { printable } from '../util/printable.js';
import type { GlobalSession, SessionMessages } from './global-session.js';
import { toStreamEnd } from './grpc-errors.js';
import type { PeerStream, StreamEnd, StreamTimers } from './peer-stream.js';
import { createPeerStream } from './peer-stream.js';
import type { Hello, ReceivedMessage, SyncStream } from './sync-protocol.js';

/** What Global's sync server does for each {@link GlobalStream}. */
export interface GlobalStreamServer {
  timers: StreamTimers;
  logger?: Logger;
  /** Checks the Hello and readies what its session needs; rejects with why the stream is refused. */
  admit(hello: Hello, tokenZone: string): Promise<void>;
  /** The zone's session for the Hello: the open one of its session id, or a new one. */
  sessionFor(hello: Hello, url: string): GlobalSession;
  /** Logs why the stream is refused and ends it with the status of `err`. */
  refuse(end: (e: StreamEnd) => void, err: unknown, where: { url: string; zone?: string }): void;
}

/** Where a {@link GlobalStream} is; see the class comment for what moves it. */
export type GlobalStreamState = 'awaiting-hello' | 'admitting' | 'open' | 'ended';

/** A refusal of a message the stream does not take. */
const refused = (details: string): AppError => new AppError('BAD_REQUEST', 'Refused', details);

/** How a refusal names a message: `a batch`, `an ack`. */
const named = (m: ReceivedMessage): string =>
  m.body === undefined ? 'a message with no body' : `${m.body === 'ack' ? 'an' : 'a'} ${m.body}`;

/** A message of a kind the stream does not carry once it is open. */
function outOfPlace(m: ReceivedMessage, direction: 'down' | 'up'): AppError {
  return refused(
    direction === 'down'
      ? `${named(m)} is not a message of the Global→zone stream: a zone sends only acks and proxy views on it`
      : `${named(m)} is not a message of the zone→Global stream: a zone sends only batches and proxy status on it`,
  );
}

/** A message that came between a stream's Hello and Global's Welcome. */
function tooEarly(m: ReceivedMessage): AppError {
  const what = named(m);
  return refused(
    `${what} arrived before Global's Welcome: a zone sends nothing on a stream but its Hello until Global answers with a Welcome`,
  );
}

/**
 * Global's end of one authenticated stream of a zone, of either direction (`down`: Global→zone,
 * `up`: zone→Global): its Hello, then the direction's messages, handed to the zone's session.
 *
 * States and what moves them:
 * - `awaiting-hello`: the first message must be a Hello (anything else closes the stream with
 *   INVALID_ARGUMENT), within the idle timeout (else DEADLINE_EXCEEDED). Hello → `admitting`.
 * - `admitting`: the Hello is checked, the Zone made at its first connection, the log caught up;
 *   then the zone's session takes the stream and sends the Welcome → `open`. A message now is
 *   refused (too early), a failed check refuses the stream. The stream stays here if its session
 *   ended while Global's cursor of the zone was read.
 * - `open`: the direction's messages go to the session; one the stream does not carry closes it.
 * - `ended`, from any state: the stream ended, whichever side ended it; its session ends with it.
 *
 * Events, each handled in one method: `onMessage` (an undecodable message is refused in every
 * state), `admitted`, `onHelloTimeout`, `onEnd`.
 */
export class GlobalStream {
  private state: GlobalStreamState = 'awaiting-hello';
  private hello: Hello | undefined;
  private session: GlobalSession | undefined;
  private messages: SessionMessages | undefined;
  private readonly stream: PeerStream;
  private readonly helloTimer: NodeJS.Timeout;

  constructor(
    private readonly direction: 'down' | 'up',
    call: SyncStream,
    private readonly url: string,
    /** The zone the call's token is for. */
    private readonly tokenZone: string,
    private readonly server: GlobalStreamServer,
  ) {
    this.stream = createPeerStream(call, {
      timers: server.timers,
      onMessage: (m) => this.onMessage(m),
      onEnd: (end) => this.onEnd(end),
    });
    this.helloTimer = setTimeout(() => this.onHelloTimeout(), server.timers.idleTimeoutMs);
    this.helloTimer.unref();
  }

  /** A message of the zone, whatever the state (pings never come here). */
  private onMessage(m: ReceivedMessage): void {
    const { stream, url, server } = this;
    if (m.body === 'undecodable') {
      const end = {
        code: grpc.status.INVALID_ARGUMENT,
        details: `a message that is not a SyncMessage of proto/sync.proto (${m.undecodable ?? 'no details'})`,
      };
      this.closeOutOfPlace(end);
      return;
    }
    switch (this.state) {
      case 'open':
        // The session ends with the stream (and says so); the log line says which message did it.
        if (!(this.messages as SessionMessages)(m))
          this.closeOutOfPlace(toStreamEnd(outOfPlace(m, this.direction)));
        return;
      case 'admitting':
        // Between the Hello and Global's Welcome a zone has nothing to send (pings aside): whatever
        // comes is out of order, and is refused rather than lost without a word.
        server.refuse((e) => stream.close(e), tooEarly(m), { url, zone: this.hello?.zone });
        return;
      case 'awaiting-hello':
        if (m.body !== 'hello' || !m.hello) {
          stream.close({ code: grpc.status.INVALID_ARGUMENT, details: 'the first message must be a Hello' });
          return;
        }
        this.state = 'admitting';
        this.hello = m.hello;
        this.admit(m.hello);
        return;
      case 'ended':
        return;
    }
  }

  /** The Hello's checks, then the session takes the stream; a failure refuses the stream. */
  private admit(h: Hello): void {
    const { stream, url, server } = this;
    server
      .admit(h, this.tokenZone)
      .then(async () => {
        if (this.state === 'ended') return;
        const session = server.sessionFor(h, url);
        this.session = session;
        this.admitted(
          this.direction === 'down' ? session.attachDown(stream, h) : await session.attachUp(stream, h),
        );
      })
      .catch((err: unknown) => {
        if (this.state !== 'ended') server.refuse((e) => stream.close(e), err, { url, zone: h.zone });
      });
  }

  /** The session took the stream and sent its Welcome (no messages: it did not, see `admitting`). */
  private admitted(messages: SessionMessages | undefined): void {
    if (this.state !== 'admitting' || messages === undefined) return;
    this.messages = messages;
    this.state = 'open';
  }

  /** The idle timeout since the stream opened: a zone that sent no Hello is cut off. */
  private onHelloTimeout(): void {
    if (this.state === 'awaiting-hello')
      this.stream.close({ code: grpc.status.DEADLINE_EXCEEDED, details: 'no Hello received' });
  }

  /** The stream ended, whichever side ended it: so does its session. */
  private onEnd(end: StreamEnd): void {
    this.state = 'ended';
    clearTimeout(this.helloTimer);
    if (this.session)
      this.session.end(
        `${this.direction === 'down' ? 'Global→zone' : 'zone→Global'} stream ended: ${end.details}`,
      );
  }

  /** Ends the stream over a message it does not carry, with a log line naming the zone. */
  private closeOutOfPlace(end: StreamEnd): void {
    this.server.logger?.warn(
      { zone: printable(this.tokenZone), url: this.url, reason: end.details },
      'a zone sent a message out of place',
    );
    this.stream.close(end);
  }
}
