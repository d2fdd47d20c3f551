import type { Logger } from 'pino';
import type { Commands } from '../app/commands.js';
import type { Config } from '../config/schema.js';
import type { ValidatedSpec } from '../resources/validate.js';

/** The defaults of a start: the signing keys, written once start-up is over. */
export interface StartupDefaults {
  /** Resolves once the signing keys made at first start are written (or failed, logged). */
  ready: Promise<void>;
  /** Start-up is over (or the plane closes): the signing keys may be made now. */
  startupOver(): void;
  /** The plane closes: a key still waiting for the log to come back is given up (written at the next start). */
  giveUp(): void;
}

/**
 * The start-up step that writes the defaults (not on a zone, which gets them from Global): the
 * default mesh now, and the signing keys once start-up is over.
 */
export async function writeDefaults(
  config: Config,
  commands: Pick<Commands, 'ensureDefaults'>,
  defaultMesh: ValidatedSpec,
  logger: Logger | undefined,
): Promise<StartupDefaults> {
  let ready = Promise.resolve();
  // The signing keys are generated once start-up is over (or the plane closes before that).
  let startupOver!: () => void;
  const after = new Promise<void>((resolve) => (startupOver = resolve));
  const stopKeys = new AbortController();
  if (config.mode !== 'zone') {
    const { keys } = await commands.ensureDefaults({
      createDefaultMesh: !config.defaults.skipMeshCreation,
      defaultMeshSpec: defaultMesh,
      globalKeys: true,
      after,
      stop: stopKeys.signal,
    });
    ready = keys.then(
      () => logger?.debug('signing keys ready'),
      (err: unknown) => logger?.error({ err }, 'creating the signing keys failed'),
    );
  }
  return { ready, startupOver, giveUp: () => stopKeys.abort() };
}
