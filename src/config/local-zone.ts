import type { Config } from './schema.js';

/** This control plane's zone: its name in zone mode, none standalone or on Global. */
export const localZoneOf = (config: Config): string | undefined =>
  config.mode === 'zone' ? config.multizone.zone.name : undefined;
