/**
 * Which refused streams (of the xDS and sync ports) get a log line: one per caller address per interval. A caller that is
 * refused again and again (a misconfigured proxy in a restart loop, or someone probing the port
 * without a token) writes one line, then, on its first refusal after the interval, one more that
 * counts the lines left out (`suppressed`); a sweep every interval logs the count of callers that
 * went quiet. The addresses kept are bounded: past `maxPeers`, new ones share one entry.
 */

/** What to do with one refusal: log it (with the count of those left out before it), or not. */
export type RefusalVerdict = { log: true; suppressed: number } | { log: false };

/** The rate limit of refusal log lines. */
export interface RefusalLog {
  /** A refusal of a stream from `peer` (`host:port`; the port is not part of the key). */
  refused(peer: string): RefusalVerdict;
  /** Callers whose interval is over with lines left out: forgets them and returns their counts. */
  sweep(): Array<{ peer: string; suppressed: number }>;
}

/** The address part of a gRPC peer (`1.2.3.4:5`, `[::1]:5`, `ipv4:1.2.3.4:5`). */
export function peerHost(peer: string): string {
  const bare = peer.replace(/^ipv[46]:/, '');
  const bracketed = /^\[([^\]]*)\]:\d+$/.exec(bare);
  if (bracketed) return bracketed[1] as string;
  const plain = /^([^:]*):\d+$/.exec(bare);
  return plain ? (plain[1] as string) : bare;
}

/** A refusal log limited to one line per peer address per `intervalMs`, over `now`. */
export function createRefusalLog(opts: {
  intervalMs: number;
  now: () => Date;
  maxPeers?: number;
}): RefusalLog {
  const maxPeers = opts.maxPeers ?? 10_000;
  const peers = new Map<string, { since: number; suppressed: number }>();
  const OTHERS = 'other addresses';
  return {
    refused(peer) {
      const now = opts.now().getTime();
      let key = peerHost(peer);
      if (!peers.has(key) && peers.size >= maxPeers) key = OTHERS;
      const seen = peers.get(key);
      if (seen === undefined || now - seen.since >= opts.intervalMs) {
        peers.set(key, { since: now, suppressed: 0 });
        return { log: true, suppressed: seen?.suppressed ?? 0 };
      }
      seen.suppressed++;
      return { log: false };
    },
    sweep() {
      const now = opts.now().getTime();
      const quiet: Array<{ peer: string; suppressed: number }> = [];
      for (const [peer, seen] of peers) {
        if (now - seen.since < opts.intervalMs) continue;
        peers.delete(peer);
        if (seen.suppressed > 0) quiet.push({ peer, suppressed: seen.suppressed });
      }
      return quiet;
    },
  };
}
