import type { LogEntry, WireResource } from '../../src/events/types.js';

let revision = 0;

/**
 * A committed log entry of a data plane with these inbounds, for feeding views directly (revisions
 * count up across calls; times and hashes are placeholders the views do not read).
 */
export function dataplaneEntry(
  op: 'create' | 'update' | 'delete',
  mesh: string,
  name: string,
  inbound: Array<Record<string, unknown>>,
  origin = 'local',
): LogEntry {
  const resource: WireResource = {
    type: 'Dataplane',
    mesh,
    name,
    creationTime: 't',
    modificationTime: 't',
    networking: { address: '10.0.0.1', inbound },
  };
  return {
    revision: ++revision,
    time: 't',
    kind: 'Dataplane',
    mesh,
    name,
    operation: op,
    ...(op === 'delete' ? { previous: resource } : { resource }),
    actor: { name: 'x', groups: [], address: 'x' },
    origin,
    prevHash: '',
    hash: '',
  };
}
