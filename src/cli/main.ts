import { Command } from 'commander';
import { MESH_CP_VERSION } from '../app/versions.js';
import { loadConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { createLogger, stdoutDestination, textDestination } from '../runtime/logger.js';
import { loadTlsMaterial } from '../runtime/tls.js';
import { AppError } from '../util/errors.js';
import { errorChain } from '../util/error-chain.js';
import { registerConfigKeysCommand } from './config-keys-command.js';
import { registerLogCommands } from './log-commands.js';
import { startupExitCode } from './startup-exit-code.js';

const SHUTDOWN_LIMIT_MS = 5000;
/** How long an exit waits for the last log lines to be written. */
const FLUSH_LIMIT_MS = 1000;

/** How the ready line names the store: `level:<path>`, `postgres:<db>@<host>:<port>` or `memory`. */
function storeLabel(config: Config): string {
  const { type, level, postgres } = config.store;
  if (type === 'level') return `level:${level.path}`;
  if (type === 'postgres') return `postgres:${postgres.dbName}@${postgres.host}:${postgres.port}`;
  return type;
}

/** `mesh-cp run`: loads the config, starts the control plane, stops cleanly on SIGTERM/SIGINT. */
async function run(opts: { config?: string }): Promise<void> {
  let config;
  try {
    config = loadConfig({ file: opts.config, env: process.env });
  } catch (err) {
    process.stderr.write(`mesh-cp: ${err instanceof AppError ? err.details : String(err)}\n`);
    process.exit(2);
  }
  const stdout = config.log.format === 'text' ? textDestination(stdoutDestination()) : stdoutDestination();
  const logger = createLogger(config.log.level, stdout);
  // The control plane's modules load after the config is read, so that reading the HTTPS material
  // (or, at a first start, making a self-signed certificate) is under way meanwhile.
  const tls = config.apiServer.https.enabled ? loadTlsMaterial(config) : undefined;
  tls?.catch(() => undefined);
  let cp;
  try {
    const { startControlPlane } = await import('../runtime/control-plane.js');
    cp = await startControlPlane(config, { logger, tls });
  } catch (err) {
    // The message names the underlying cause (e.g. `MANIFEST-000005: No space left on device`).
    logger.fatal(
      { err: err instanceof AppError ? undefined : err },
      err instanceof AppError ? err.details : `start-up failed: ${errorChain(err)}`,
    );
    process.exit(startupExitCode(err));
  }
  const plane = cp;
  let stopping = false;
  /** Exits once the buffered log lines are written (or could not be: the reader may be gone). */
  const exit = (code: number): void => {
    setTimeout(() => process.exit(code), FLUSH_LIMIT_MS);
    stdout.flush(() => process.exit(code));
  };
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const timer = setTimeout(() => {
      logger.error('shutdown took longer than 5 s; exiting');
      exit(1);
    }, SHUTDOWN_LIMIT_MS);
    timer.unref();
    plane.close().then(
      () => {
        logger.info({ revision: plane.log.head() }, 'stopped');
        exit(0);
      },
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // After the signal handlers: whoever reads this line may stop the process at once.
  logger.info(
    {
      mode: config.mode,
      apiPort: plane.ports.api,
      httpsPort: plane.ports.https,
      diagnosticsPort: plane.ports.diagnostics,
      kdsPort: plane.ports.kds,
      xdsPort: plane.ports.xds,
      store: storeLabel(config),
      revision: plane.log.head(),
      replayed: plane.startup.replayed,
      ...(plane.startup.snapshot === undefined
        ? {}
        : { snapshot: plane.startup.snapshot, snapshotResources: plane.startup.snapshotResources }),
      startupMs: plane.startup.ms,
      ...(plane.tls ? { tls: plane.tls.source, tlsCertFile: plane.tls.certFile } : {}),
      // Where a person opens the web GUI (on this machine, or at the API's own address).
      ...(config.apiServer.gui.enabled ? { gui: guiUrl(config.apiServer.bindAddress, plane.ports.api) } : {}),
    },
    'mesh-cp ready',
  );
  // Start-up lines are written at once; from here on, lines are buffered (up to 100 ms).
  stdout.buffer();
  // The Envoy protos are parsed now, in the background, rather than by the first proxy to connect.
  plane.xds?.warm();
}

// A reader that stops early (`mesh-cp log replay | head`) is not a failure: stop quietly, as other
// command-line tools do, instead of an unhandled 'error' event and a stack trace. (`run` logs to
// file descriptor 1 through pino, not through process.stdout.)
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

const program = new Command('mesh-cp')
  .description('An event-sourced service-mesh control plane')
  .version(MESH_CP_VERSION);
program
  .command('run')
  .description('run the control plane (settings from --config FILE and MESH_* env vars)')
  .option('-c, --config <file>', 'YAML config file')
  .action(run);
registerConfigKeysCommand(program);
registerLogCommands(program);
// Not awaited at the top level: the bundle is CommonJS (scripts/build.mjs). A rejection is unhandled
// and ends the process with its stack, as an exception thrown here would.
void program.parseAsync(process.argv);

/** The URL of the web GUI for a person on this machine: localhost unless the API binds one address. */
function guiUrl(bindAddress: string, port: number): string {
  const any = bindAddress === '0.0.0.0' || bindAddress === '::';
  const host = any ? 'localhost' : bindAddress.includes(':') ? `[${bindAddress}]` : bindAddress;
  return `http://${host}:${port}/gui`;
}
