import { useEffect, useRef, useState } from 'preact/hooks';
import type { AppState } from '../store.js';
import { useAppState } from '../store.js';

/** How long a view waits after a change that touches it before reading again (coalescing a burst). */
const RELOAD_DELAY_MS = 100;

/** What a view loaded: its data (kept while it is read again), its error, whether it is loading. */
export interface Loaded<T> {
  data?: T;
  error?: unknown;
  loading: boolean;
  reload: () => void;
}

/**
 * Loads a view's data, and loads it again when its inputs change, when the point in time changes,
 * when a live log entry that `affects` says matters arrives, and when a proxy goes online or
 * offline where `statusAffects` says it matters (the view updates in place: the old
 * data stays on screen until the new arrives).
 */
export function useData<T>(
  load: (signal: AbortSignal) => Promise<T>,
  inputs: unknown[],
  affects: (e: NonNullable<AppState['lastEvent']>) => boolean = () => true,
  /** Whether a proxy going online or offline changes what the view shows; absent: never. */
  statusAffects?: (s: NonNullable<AppState['lastStatus']>) => boolean,
): Loaded<T> {
  const s = useAppState();
  const [result, setResult] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  const seen = useRef(s.lastEvent);
  const seenStatus = useRef(s.lastStatus);
  const pending = useRef(false);
  const pit = JSON.stringify(s.pointInTime);
  // A burst of changes (a change set, a zone's sync, proxies starting) makes one read, not one each.
  const again = (): void => {
    if (pending.current) return;
    pending.current = true;
    setTimeout(() => {
      pending.current = false;
      setTick((t) => t + 1);
    }, RELOAD_DELAY_MS);
  };
  if (s.lastEvent !== seen.current) {
    const e = s.lastEvent;
    seen.current = e;
    if (e && affects(e)) again();
  }
  if (s.lastStatus !== seenStatus.current) {
    const st = s.lastStatus;
    seenStatus.current = st;
    // A status stream back after a loss (no name) may have missed anything: read again.
    if (st && statusAffects && (st.name === '' || statusAffects(st))) again();
  }
  useEffect(() => {
    const abort = new AbortController();
    setResult((r) => ({ ...r, loading: true }));
    load(abort.signal).then(
      (data) => !abort.signal.aborted && setResult({ data, loading: false }),
      (error: unknown) => !abort.signal.aborted && setResult({ error, loading: false }),
    );
    return () => abort.abort();
  }, [...inputs, pit, tick]);
  return { ...result, reload: () => setTick((t) => t + 1) };
}
