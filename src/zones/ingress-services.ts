import type { Logger } from 'pino';
import type { Commands } from '../app/commands.js';
import type { AvailableService, SourceItem, SyncSource } from '../app/sync-source.js';
import type { EventLog } from '../events/event-log.js';
import type { Actor } from '../events/types.js';
import type { ResourceDescriptor } from '../resources/descriptor.js';
import { zoneIngress } from '../resources/kinds/zone-ingress.js';
import { validSpec } from '../resources/validate.js';
import { AppError } from '../util/errors.js';

const SYSTEM_ACTOR: Actor = { name: 'mesh-cp', groups: ['mesh-system'], address: 'local' };

const META = new Set(['type', 'mesh', 'name', 'creationTime', 'modificationTime']);

/** The spec with `availableServices` set to `services` (left out when there are none, decisions §2). */
export function withServices(
  spec: Record<string, unknown>,
  services: readonly AvailableService[],
): Record<string, unknown> {
  const { availableServices: _old, ...rest } = spec;
  return services.length > 0 ? { ...rest, availableServices: services } : rest;
}

/** Keeps ingresses' available services current on Global. */
export interface IngressServices {
  /** For sync apply: an ingress a zone sends gets the services Global computed for that zone. */
  adjust(zone: string): (desc: ResourceDescriptor, spec: Record<string, unknown>) => Record<string, unknown>;
  close(): void;
}

/**
 * Recomputes, shortly after a zone's data planes or ingresses change, the `availableServices` of
 * that zone's ingresses from its data planes, and writes the ingresses whose list changed (origin:
 * the zone, so they stay the zone's and flow to the other zones like any ingress change).
 */
export function createIngressServices(deps: {
  log: Pick<EventLog, 'onCommit'>;
  source: SyncSource;
  commands: Commands;
  logger?: Logger;
  debounceMs?: number;
}): IngressServices {
  const debounceMs = deps.debounceMs ?? 100;
  const dirty = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const refresh = async (zone: string): Promise<void> => {
    const services = deps.source.availableServices(zone);
    const want = JSON.stringify(services);
    const ingresses: SourceItem[] = [];
    deps.source.each('ZoneIngress', (item) => {
      if (item.origin === zone) ingresses.push(item);
    });
    for (const item of ingresses) {
      if (JSON.stringify(item.resource.availableServices ?? []) === want) continue;
      const spec: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(item.resource)) if (!META.has(k)) spec[k] = v;
      // The name is the stored ingress's own, checked by the rules it was written under.
      const target = { name: item.name, nameChecked: true };
      await deps.commands.put({
        kind: 'ZoneIngress',
        name: item.name,
        spec: validSpec(zoneIngress, target, withServices(spec, services)),
        actor: SYSTEM_ACTOR,
        origin: zone,
        // Written only if the ingress is still the one read (a concurrent sync write wins).
        ifMatch: `"${item.revision}"`,
      });
    }
  };

  const flush = (): void => {
    timer = undefined;
    const zones = [...dirty];
    dirty.clear();
    for (const zone of zones) {
      refresh(zone).catch((err: unknown) => {
        if (closed) return;
        if (err instanceof AppError && err.code === 'PRECONDITION_FAILED') {
          // The ingress changed meanwhile: its own commit marks the zone again.
          dirty.add(zone);
          timer ??= setTimeout(flush, debounceMs);
          return;
        }
        deps.logger?.warn({ err, zone }, 'writing the available services of a zone ingress failed');
      });
    }
  };

  const unsubscribe = deps.log.onCommit((entries) => {
    for (const e of entries) {
      if ((e.kind === 'Dataplane' || e.kind === 'ZoneIngress') && e.origin !== 'local') dirty.add(e.origin);
    }
    if (dirty.size > 0 && !closed) timer ??= setTimeout(flush, debounceMs);
  });

  return {
    adjust: (zone) => (_desc, spec) => withServices(spec, deps.source.availableServices(zone)),
    close() {
      closed = true;
      unsubscribe();
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
  };
}
