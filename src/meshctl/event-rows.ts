import type { EventItem, HistoryItem } from './wire-types.js';

/** Who made a change, as tables show it: the actor's name, or its address when it has none. */
export function actorText(actor: HistoryItem['actor']): string {
  return actor.name || actor.address || '-';
}

/** The `mesh/name` of an audit entry (`name` for global kinds and meshes). */
export function entryName(e: Pick<EventItem, 'mesh' | 'name'>): string {
  return e.mesh === undefined ? e.name : `${e.mesh}/${e.name}`;
}

/** The columns of `meshctl history`. */
export const HISTORY_HEADERS = ['REVISION', 'TIME', 'OPERATION', 'ACTOR'];

/** A row of `meshctl history`. */
export function historyRow(e: HistoryItem): string[] {
  return [String(e.revision), e.time, e.operation, actorText(e.actor)];
}

/** The columns of `meshctl history dataplane NAME --config`: each change of its config and the write that made it. */
export const TIMELINE_HEADERS = ['REVISION', 'TIME', 'CONFIG', 'WRITE', 'ACTOR'];

/** One change of a proxy's served config (`…/xds/_history`). */
export interface TimelineItem {
  revision: number;
  time: string;
  config: string;
  write: {
    kind: string;
    mesh?: string;
    name: string;
    operation: string;
    actor: EventItem['actor'];
    changeSet?: string;
  };
}

/** A row of `meshctl history dataplane NAME --config`. */
export function timelineRow(e: TimelineItem): string[] {
  return [
    String(e.revision),
    e.time,
    e.config,
    `${e.write.kind} ${e.write.name} ${e.write.operation}`,
    actorText(e.write.actor),
  ];
}

/** The columns of `meshctl audit`. */
export const EVENT_HEADERS = ['REVISION', 'TIME', 'OPERATION', 'KIND', 'NAME', 'ACTOR'];

/** A row of `meshctl audit`, and the fields of a `meshctl watch` line. */
export function eventRow(e: EventItem): string[] {
  return [String(e.revision), e.time, e.operation, e.kind, entryName(e), actorText(e.actor)];
}

/** A page of `/_history` or `/_events` (decisions §5). */
export interface Page<T> {
  total: number;
  items: T[];
  next: string | null;
}
