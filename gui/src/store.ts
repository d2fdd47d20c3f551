import { useEffect, useState } from 'preact/hooks';
import type { PointInTime, Schema } from './api/client.js';
import { ApiError, getJson, request, setPointInTime, token } from './api/client.js';
import type { LogEvent, StatusEvent, StreamState } from './api/events.js';
import { watchEvents, watchStatus } from './api/events.js';

/** A role the caller holds, for every mesh or only some (`GET /_identity`). */
export interface Grant {
  role: 'admin' | 'writer' | 'reader' | 'none';
  meshes?: string[];
}

/** Who the caller is to the API. */
export interface Caller {
  name: string;
  groups: string[];
  via: 'token' | 'client-certificate' | 'loopback' | 'anonymous';
  grants: Grant[];
}

/** Everything the views share. */
export interface AppState {
  caller?: Caller;
  info?: Schema<'Info'>;
  catalogue?: Schema<'PolicyCatalogue'>['policies'];
  /** `apiServer.readOnly` or a kubernetes environment: nothing can be written. */
  serverReadOnly: boolean;
  /** The mesh the mesh-scoped views show. */
  mesh: string;
  pointInTime: PointInTime;
  live: StreamState;
  /** The newest revision seen (from reads or the live stream). */
  revision?: number;
  /** The last log entry seen live; views that show what it changed read again. */
  lastEvent?: LogEvent;
  /** The last proxy seen going online or offline; views that show its status read again. */
  lastStatus?: StatusEvent;
}

let state: AppState = { serverReadOnly: false, mesh: 'default', pointInTime: null, live: 'connecting' };
const listeners = new Set<() => void>();

/** The shared state now. */
export const getState = (): AppState => state;

/** Changes the shared state and re-renders its users. */
export function update(patch: Partial<AppState>): void {
  state = { ...state, ...patch };
  for (const l of listeners) l();
}

/** The shared state, re-rendering the component when it changes. */
export function useAppState(): AppState {
  const [, setTick] = useState(0);
  useEffect(() => {
    const l = () => setTick((t) => t + 1);
    listeners.add(l);
    return () => void listeners.delete(l);
  }, []);
  return state;
}

/** True when the caller may write in `mesh` (or, with no mesh, everywhere): admin or writer. */
export function mayWrite(caller: Caller | undefined, mesh?: string): boolean {
  return (caller?.grants ?? []).some(
    (g) =>
      (g.role === 'admin' || g.role === 'writer') &&
      (g.meshes === undefined || (mesh !== undefined && g.meshes.includes(mesh))),
  );
}

/** True when the caller may read secrets (admins only). */
export function mayReadSecrets(caller: Caller | undefined): boolean {
  return (caller?.grants ?? []).some((g) => g.role === 'admin' && g.meshes === undefined);
}

const ZONE_KINDS = new Set(['Dataplane', 'ZoneIngress', 'ZoneEgress']);

/**
 * True when the server takes writes of `kind` at all: not read-only, and the kind is written where
 * the GUI runs (zones write their proxies, Global everything else; the catalogue says for policies).
 */
export function serverWrites(s: AppState, kind: string): boolean {
  if (s.serverReadOnly) return false;
  const entry = s.catalogue?.find((p) => p.name === kind);
  if (entry) return !entry.readOnly;
  if (s.info?.mode === 'zone') return ZONE_KINDS.has(kind);
  if (s.info?.mode === 'global') return !ZONE_KINDS.has(kind);
  return true;
}

/** Whether the GUI offers to write `kind` in `mesh`: the server takes it and the caller may. */
export function canWrite(s: AppState, kind: string, mesh?: string): boolean {
  return s.pointInTime === null && serverWrites(s, kind) && mayWrite(s.caller, mesh);
}

/** Loads who the caller is and what the server is; on a token change too. */
export async function loadSession(): Promise<void> {
  let res: Response;
  try {
    res = await request('/_identity', { timeless: true });
  } catch (err) {
    // A kept token that expired or was revoked: forget it and carry on without it.
    if (!(err instanceof ApiError && err.status === 401 && token.get())) throw err;
    token.clear();
    res = await request('/_identity', { timeless: true });
  }
  const caller = (await res.json()) as Caller;
  // The live stream starts after the revision this session first saw, so nothing written since is missed.
  const seen = Number(res.headers.get('x-mesh-revision'));
  update({ caller, ...(state.revision === undefined && seen > 0 ? { revision: seen } : {}) });
  const [info, catalogue, config] = await Promise.all([
    getJson<Schema<'Info'>>('/', { timeless: true }).catch(() => undefined),
    getJson<Schema<'PolicyCatalogue'>>('/policies', { timeless: true }).catch(() => undefined),
    getJson<Record<string, unknown>>('/config', { timeless: true }).catch(() => undefined),
  ]);
  const api = (config?.apiServer ?? {}) as { readOnly?: boolean };
  update({
    info,
    catalogue: catalogue?.policies,
    serverReadOnly: api.readOnly === true || config?.environment === 'kubernetes',
  });
}

let stopLive: (() => void) | undefined;
let stopStatus: (() => void) | undefined;

/**
 * Follows the audit log, and proxies going online and offline, live while the GUI shows the
 * present; stops while it shows the past. The proxies' status is not in the log: it has its own
 * stream, and since that one replays nothing, views read again when it comes back after a loss.
 */
export function followLive(): void {
  stopLive?.();
  stopStatus?.();
  stopLive = undefined;
  stopStatus = undefined;
  if (state.pointInTime !== null) return;
  stopLive = watchEvents({
    after: state.revision,
    onEvent: (e) => update({ lastEvent: e, revision: e.revision }),
    onState: (live) => update({ live }),
  });
  // A caller who may not read proxies is refused the stream: then it is not asked for again.
  if (!(state.caller?.grants ?? []).some((g) => g.role !== 'none' && g.meshes === undefined)) return;
  let lost = false;
  stopStatus = watchStatus({
    onStatus: (s) => update({ lastStatus: s }),
    onState: (st) => {
      if (st === 'lost') lost = true;
      if (st === 'live' && lost) {
        lost = false;
        update({ lastStatus: { mesh: '', name: '', online: false } });
      }
    },
  });
}

/** Shows every view as of `p` (null: now), and follows the log again when back to now. */
export function travelTo(p: PointInTime): void {
  setPointInTime(p);
  update({ pointInTime: p });
  followLive();
}
