import { createReadStream, existsSync, renameSync, rmSync, createWriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Writable } from 'node:stream';
import { stringify } from 'yaml';
import { resourcesAt, writeSnapshotAt } from '../app/log-state.js';
import { loadConfig } from '../config/load.js';
import type { LogAdmin } from '../events/log-admin.js';
import type { ToolTarget } from './tool-store.js';
import { openToolStore } from './tool-store.js';
import { registry } from '../resources/registry.js';
import { AppError } from '../util/errors.js';
import { counted } from '../util/plural.js';

/** Exit codes of the log tools: damage found, or the tool could not run (arguments, config, data dir). */
const DAMAGED = 1;
const CANNOT_RUN = 2;

interface DataOptions {
  data?: string;
  config?: string;
}

class ToolExit extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The log of a tool: `--data DIR` (LevelDB), else the config's store as `run` opens it (config
 * loaded as `run` does): `store.level.path`, or the PostgreSQL log of `store.postgres`.
 */
function target(opts: DataOptions): ToolTarget {
  if (opts.data) return { type: 'level', path: opts.data };
  let config;
  try {
    config = loadConfig({ file: opts.config, env: process.env });
  } catch (err) {
    throw new ToolExit(CANNOT_RUN, err instanceof AppError ? err.details : String(err));
  }
  if (config.store.type === 'postgres') return { type: 'postgres', postgres: config.store.postgres };
  if (config.store.type !== 'level') {
    throw new ToolExit(
      CANNOT_RUN,
      `store.type is ${config.store.type}: there is no data dir; pass --data DIR`,
    );
  }
  return { type: 'level', path: config.store.level.path };
}

async function open(opts: DataOptions, existing: boolean): Promise<LogAdmin> {
  try {
    return await openToolStore(target(opts), existing);
  } catch (err) {
    if (err instanceof ToolExit) throw err;
    throw new ToolExit(CANNOT_RUN, err instanceof AppError ? err.details : String(err));
  }
}

/** Runs a tool: its errors become a message on stderr and an exit code, never a stack trace. */
function tool<A extends unknown[]>(fn: (...args: A) => Promise<void>): (...args: A) => Promise<void> {
  return async (...args) => {
    try {
      await fn(...args);
    } catch (err) {
      const code = err instanceof ToolExit ? err.code : CANNOT_RUN;
      const message = err instanceof ToolExit || err instanceof AppError ? err.message : String(err);
      process.stderr.write(`mesh-cp log: ${message}\n`);
      process.exitCode = code;
    }
  };
}

/** Writes to a stream, waiting when its buffer is full. */
function writeTo(out: Writable, text: string): Promise<void> {
  return out.write(text) ? Promise.resolve() : new Promise((resolve) => out.once('drain', resolve));
}

async function verify(opts: DataOptions): Promise<void> {
  const store = await open(opts, true);
  try {
    const check = await store.verify();
    const out = (line: string) => process.stdout.write(`${line}\n`);
    out(store.label);
    out(`head: ${check.head}`);
    if (!check.ok) {
      out(`DAMAGED at revision ${check.revision}: ${check.reason}`);
      if (check.revision > 1) out(`entries 1..${check.revision - 1} are sound`);
      process.exitCode = DAMAGED;
      return;
    }
    const reader = await store.reader();
    for (const listing of await reader.snapshots.list()) {
      try {
        await reader.snapshots.read(listing.revision);
        out(`snapshot at revision ${listing.revision}: OK`);
      } catch (err) {
        // A snapshot is an optimisation: start-up skips a damaged one, so this is not log damage.
        out(
          `snapshot at revision ${listing.revision}: damaged, start-up ignores it (${(err as Error).message})`,
        );
      }
    }
    out(`OK: ${counted(check.head, 'entry', 'entries')}, hash chain and history index sound`);
  } finally {
    await store.close();
  }
}

async function replay(opts: DataOptions & { toRevision?: string }): Promise<void> {
  const store = await open(opts, true);
  try {
    const reader = await store.reader();
    const head = reader.head();
    let revision = head;
    if (opts.toRevision !== undefined) {
      const raw = opts.toRevision;
      if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > head) {
        throw new ToolExit(CANNOT_RUN, `--to-revision must be a revision between 1 and the head ${head}`);
      }
      revision = Number(raw);
    }
    const resources = await resourcesAt(registry, reader, revision);
    for (const [i, r] of resources.entries()) {
      await writeTo(process.stdout, `${i > 0 ? '---\n' : ''}${stringify(r)}`);
    }
    process.stderr.write(
      `state at revision ${revision} (head ${head}): ${counted(resources.length, 'resource')}\n`,
    );
  } finally {
    await store.close();
  }
}

async function exportLog(opts: DataOptions & { out?: string }): Promise<void> {
  // `--out -` is standard output, as `import -` is standard input.
  const file = opts.out === '-' ? undefined : opts.out;
  const store = await open(opts, true);
  const partial = file ? `${file}.partial` : undefined;
  // Owner only: an export holds every secret's data, signing keys included (docs/security.md).
  const out: Writable = partial ? createWriteStream(partial, { mode: 0o600 }) : process.stdout;
  try {
    const result = await store.exportLog((line) => writeTo(out, `${line}\n`));
    if (partial)
      await new Promise<void>((resolve, reject) =>
        out.end((err?: Error | null) => (err ? reject(err) : resolve())),
      );
    if (!result.ok) {
      if (partial) rmSync(partial, { force: true });
      throw new ToolExit(
        DAMAGED,
        `DAMAGED at revision ${result.revision}: ${result.reason}; export stopped${partial ? ', nothing written' : ''}`,
      );
    }
    if (partial && file) renameSync(partial, file);
    process.stderr.write(
      `exported ${counted(result.head, 'entry', 'entries')} (head ${result.head})${file ? ` to ${file}` : ''}\n`,
    );
  } finally {
    if (partial && existsSync(partial)) rmSync(partial, { force: true });
    await store.close();
  }
}

async function importLog(file: string, opts: DataOptions): Promise<void> {
  if (file !== '-' && !existsSync(file)) throw new ToolExit(CANNOT_RUN, `no such file: ${file}`);
  const store = await open(opts, false);
  try {
    const input = file === '-' ? process.stdin : createReadStream(file, 'utf8');
    // The iterator is taken at once: readline drops the lines (and the end) it reads before one
    // exists, and the PostgreSQL import awaits its queries before it reads the first line.
    const iterator = createInterface({ input, crlfDelay: Infinity })[Symbol.asyncIterator]();
    const lines: AsyncIterable<string> = { [Symbol.asyncIterator]: () => iterator };
    let result;
    try {
      result = await store.importLog(lines);
    } catch (err) {
      throw new ToolExit(CANNOT_RUN, err instanceof AppError ? err.details : String(err));
    }
    if (!result.ok) {
      throw new ToolExit(
        DAMAGED,
        `DAMAGED at line ${result.line ?? '?'} (revision ${result.revision}): ${result.reason}; nothing imported`,
      );
    }
    process.stderr.write(
      `imported ${counted(result.head, 'entry', 'entries')} (head ${result.head}) into ${store.where}\n`,
    );
  } finally {
    await store.close();
  }
}

async function snapshot(opts: DataOptions & { delete?: boolean }): Promise<void> {
  const store = await open(opts, true);
  try {
    if (!store.snapshots) {
      throw new ToolExit(CANNOT_RUN, `snapshots are kept in LevelDB only for now; ${store.where} has none`);
    }
    const reader = await store.reader();
    if (opts.delete) {
      const n = await reader.snapshots.retain([]);
      process.stderr.write(`deleted ${counted(n, 'snapshot')}; the log is untouched\n`);
      return;
    }
    if (reader.head() === 0) throw new ToolExit(CANNOT_RUN, `the log in ${store.where} is empty`);
    const resources = await writeSnapshotAt(registry, reader, reader.head());
    process.stderr.write(
      `snapshot written at revision ${reader.head()} (${counted(resources, 'resource')})\n`,
    );
  } finally {
    await store.close();
  }
}

/** The log tools, for `log-commands.ts` (which loads this module only when one of them runs). */
export const logTools = {
  verify: tool(verify),
  replay: tool(replay),
  exportLog: tool(exportLog),
  importLog: tool(importLog),
  snapshot: tool(snapshot),
};
