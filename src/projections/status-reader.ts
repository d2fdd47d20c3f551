/** A proxy or zone subscription as shown in insights (spec 2.5, 2.12, decisions §2). */
export type Subscription = Record<string, unknown> & {
  id: string;
  connectTime?: string;
  disconnectTime?: string;
};

/** Runtime insight of one proxy or zone: subscriptions plus kind-specific fields (mTLS, …). */
export type Insight = Record<string, unknown> & { subscriptions?: Subscription[] };

/** What projections read from the runtime status store; `src/status/` implements it. */
export interface StatusReader {
  dataplaneInsight(mesh: string, name: string): Insight | undefined;
  zoneInsight(name: string): Insight | undefined;
  zoneIngressInsight(name: string): Insight | undefined;
  zoneEgressInsight(name: string): Insight | undefined;
  /** Registers a listener told which proxy's status changed (mesh '' and no name: a zone's, so all). */
  onChange(listener: (mesh: string, name?: string) => void): void;
}

/** Online when one subscription has a connectTime and no disconnectTime (decisions §6). */
export function isOnline(insight: Insight | undefined): boolean {
  return (insight?.subscriptions ?? []).some(
    (s) => s.connectTime !== undefined && s.disconnectTime === undefined,
  );
}
