import type { Multizone } from './multizone.js';

/** A zone's `GET /` also says which Global it follows and whether it is connected now. */
export function exposeGlobalLink(info: object, multizone: () => Multizone | undefined): void {
  Object.defineProperty(info, 'zone', { enumerable: true, get: () => multizone()?.link?.() });
}

/** A zone's `GET /config` says whether it is connected to Global now (`multizone.zone.connected`). */
export function withGlobalLink(
  masked: Record<string, unknown>,
  multizone: Multizone | undefined,
): Record<string, unknown> {
  const link = multizone?.link?.();
  const zone = (masked.multizone as { zone?: Record<string, unknown> } | undefined)?.zone;
  if (link && zone) zone.connected = link.connected;
  return masked;
}
