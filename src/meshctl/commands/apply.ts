import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { ApiError } from '../api-client.js';
import type { CliContext } from '../cli-context.js';
import { UsageError } from '../cli-context.js';
import type { KindInfo } from '../kind-table.js';
import { kindOfType } from '../kinds.js';
import { readYaml, type YamlDocuments } from '../../util/bounded-yaml.js';
import { lineColumn, StructureLimitError } from '../../util/structure-bounds.js';
import { impactSummary } from '../impact-summary.js';
import type { Impact } from '../wire-types.js';

/** A document of an input, and where it came from. */
interface Document {
  source: string;
  /** 1-based index of the document in its source. */
  index: number;
  /** 1-based index in a list document (`items`, or a JSON array). */
  item?: number;
  value: unknown;
}

/** A failure of one document: names the source and document, then what went wrong. */
export class DocumentError extends Error {
  readonly location: string;
  readonly inner: Error;

  constructor(location: string, inner: Error) {
    super(`${location}: ${inner.message}`);
    this.name = 'DocumentError';
    this.location = location;
    this.inner = inner;
  }
}

/** Where a document is: `file, document 2, item 3`. */
export const locate = (d: Pick<Document, 'source' | 'index' | 'item'>): string =>
  `${d.source}, document ${d.index}${d.item !== undefined ? `, item ${d.item}` : ''}`;

/** Files of a directory that apply reads: YAML and JSON, in name order, subdirectories included. */
function filesOf(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesOf(p));
    else if (/\.(ya?ml|json)$/i.test(entry.name)) out.push(p);
  }
  return out;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** `key=value` pairs of `-v`. */
function parseVars(pairs: string[]): Map<string, string> {
  const vars = new Map<string, string>();
  for (const p of pairs) {
    const i = p.indexOf('=');
    if (i <= 0) throw new UsageError(`-v takes key=value, not "${p}"`);
    vars.set(p.slice(0, i), p.slice(i + 1));
  }
  return vars;
}

/** Replaces `{{ key }}` by the value of `-v key=value` (as kumactl); a key without a value is an error. */
export function substitute(text: string, vars: ReadonlyMap<string, string>, source: string): string {
  return text.replace(/\{\{\s*([^{}\s]+)\s*\}\}/g, (_m, key: string) => {
    const v = vars.get(key);
    if (v === undefined) throw new UsageError(`${source}: no value for {{ ${key} }} (give -v ${key}=…)`);
    return v;
  });
}

/** The documents of one text: YAML (several documents) or JSON; lists (`items`, arrays) are spread. */
async function documentsOf(text: string, source: string): Promise<Document[]> {
  const docs: Document[] = [];
  let all: YamlDocuments['documents'];
  try {
    // Bounded as the server's bodies are: a file nested thousands of levels deep is refused, not a stack overflow.
    all = readYaml(text).documents;
  } catch (err) {
    if (!(err instanceof StructureLimitError)) throw err;
    const { line, column } = lineColumn(text, err.offset);
    throw new DocumentError(
      source,
      new Error(`not valid YAML or JSON at line ${line}, column ${column}: ${err.message}`),
    );
  }
  all.forEach((doc, i) => {
    const at = { source, index: i + 1 };
    if (doc.errors.length > 0) {
      throw new DocumentError(locate(at), new Error(`not valid YAML or JSON: ${doc.errors[0].message}`));
    }
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) return;
    const items = Array.isArray(value)
      ? value
      : typeof value === 'object' && Array.isArray((value as { items?: unknown }).items)
        ? (value as { items: unknown[] }).items
        : undefined;
    if (items) {
      items.forEach((item, j) => docs.push({ ...at, item: j + 1, value: item }));
    } else {
      docs.push({ ...at, value });
    }
  });
  return docs;
}

/** A document checked for what a PUT or DELETE needs: its kind, mesh and name. */
export interface Target {
  doc: Document;
  kind: KindInfo;
  mesh?: string;
  name: string;
  label: string;
  body: Record<string, unknown>;
}

type Obj = Record<string, unknown>;
const objectOf = (v: unknown): Obj =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {};

/** A Kubernetes manifest (Kuma's CRDs): `apiVersion`, `kind` and `metadata`, no `type`. */
function isKubernetesManifest(v: unknown): v is Obj {
  const o = objectOf(v);
  return (
    typeof o.apiVersion === 'string' && typeof o.kind === 'string' && o.type === undefined && 'metadata' in o
  );
}

/**
 * The universal document of a Kubernetes manifest as Kuma writes them: `type` from `kind`, `name`
 * from `metadata.name`, the mesh from `mesh` or the `kuma.io/mesh` label (Kuma's default mesh
 * otherwise), and the spec's fields at the top (targetRef policies keep them under `spec`).
 * Undefined when mesh-cp has no kind of that name.
 */
function universalOf(manifest: Obj): Obj | undefined {
  const meta = objectOf(manifest.metadata);
  const label = objectOf(meta.labels)['kuma.io/mesh'];
  const mesh =
    typeof manifest.mesh === 'string' ? manifest.mesh : typeof label === 'string' ? label : undefined;
  const type = manifest.kind as string;
  const kind = kindOfType(type, mesh !== undefined) ?? kindOfType(type, true);
  if (!kind) return undefined;
  const out: Obj = { type: kind.wireType };
  if (kind.scope === 'mesh') out.mesh = mesh ?? 'default';
  out.name = meta.name;
  if (kind.nestedSpec) out.spec = manifest.spec;
  else Object.assign(out, objectOf(manifest.spec));
  return out;
}

/** The refusal of Kubernetes manifests: what mesh-cp takes instead, and these documents in it. */
async function kubernetesError(docs: Document[]): Promise<DocumentError> {
  const { stringify } = await import('../yaml-codec.js');
  const shown: string[] = [];
  const foreign: string[] = [];
  for (const d of docs) {
    const u = universalOf(d.value as Obj);
    if (u) shown.push(stringify(u));
    else foreign.push(`${locate(d)}: mesh-cp has no kind ${String((d.value as Obj).kind)}`);
  }
  const lines = [
    `a Kubernetes manifest (apiVersion, kind, metadata, spec). mesh-cp takes the universal format: ` +
      `type, name and mesh at the top level and the fields of spec beside them (targetRef policies ` +
      `keep spec); metadata, namespace and apiVersion go.`,
    ...foreign,
  ];
  if (shown.length > 0) {
    lines.push(
      shown.length === 1
        ? 'This document in the universal format (apply it as it is):'
        : `These ${shown.length} documents in the universal format (apply them as they are):`,
      `---\n${shown.join('---\n').trimEnd()}`,
    );
  }
  return new DocumentError(locate(docs[0]), new Error(lines.join('\n')));
}

function targetOf(doc: Document): Target {
  const fail = (msg: string): never => {
    throw new DocumentError(locate(doc), new Error(msg));
  };
  if (typeof doc.value !== 'object' || doc.value === null || Array.isArray(doc.value)) {
    return fail('a resource must be an object with type and name');
  }
  const body = doc.value as Record<string, unknown>;
  const { type, name, mesh } = body;
  if (typeof type !== 'string' || type === '') return fail('type is missing');
  if (typeof name !== 'string' || name === '') return fail('name is missing');
  if (mesh !== undefined && typeof mesh !== 'string') return fail('mesh must be a string');
  const kind = kindOfType(type, mesh !== undefined);
  if (!kind) return fail(`type "${type}" is not a kind that can be written`);
  if (kind.scope === 'mesh' && mesh === undefined) return fail(`a ${type} needs a mesh`);
  const m = kind.scope === 'mesh' ? (mesh as string) : undefined;
  return { doc, kind, mesh: m, name, label: `${type} ${m ? `${m}/` : ''}${name}`, body };
}

/** What the server answers to a change set, per item. */
interface SetAnswer {
  items: Array<{ operation: 'create' | 'update' | 'delete' | 'unchanged' }>;
  impact?: Impact;
}

/** Most proxies a dry run lists (the count is exact beyond it). */
const IMPACT_LISTED = 1000;

const OUTCOME = { create: 'created', update: 'updated', delete: 'deleted', unchanged: 'unchanged' } as const;

/**
 * The server's refusal of item `index` as the refusal of that document: the details and causes
 * without the item's name and index, which the document's location replaces.
 */
function itemRefusal(err: ApiError, index: number): ApiError {
  const prefix = /^item \d+ \([^)]*\): /;
  const field = `items[${index}]`;
  return new ApiError(
    err.status,
    err.title,
    err.details.replace(prefix, ''),
    err.causes.map((c) => ({
      field:
        c.field === field ? '' : c.field.startsWith(`${field}.`) ? c.field.slice(field.length + 1) : c.field,
      message: c.message,
    })),
  );
}

/** Options of `meshctl apply`. */
interface ApplyOptions {
  file: string;
  dryRun?: boolean;
  diff?: boolean;
  var: string[];
}

/**
 * Reads and checks every document of `-f` (a file, a directory or `-`), placeholders replaced, before
 * any request: a write or delete never starts on half-read input.
 */
export async function readTargets(file: string, varPairs: string[]): Promise<Target[]> {
  const vars = parseVars(varPairs);
  const sources: Array<{ source: string; text: () => Promise<string> | string }> = [];
  if (file === '-') {
    sources.push({ source: 'stdin', text: readStdin });
  } else {
    let isDir: boolean;
    try {
      isDir = statSync(file).isDirectory();
    } catch (err) {
      throw new UsageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
    }
    const files = isDir ? filesOf(file) : [file];
    if (files.length === 0) throw new UsageError(`${file} holds no .yaml, .yml or .json file`);
    for (const f of files) sources.push({ source: f, text: () => readFileSync(f, 'utf8') });
  }
  const docs: Document[] = [];
  for (const s of sources) {
    const text = substitute(await s.text(), vars, s.source);
    docs.push(...(await documentsOf(text, s.source)));
  }
  const manifests = docs.filter((d) => isKubernetesManifest(d.value));
  if (manifests.length > 0) throw await kubernetesError(manifests);
  return docs.map(targetOf);
}

/**
 * Sends every document as one change set: the server writes all of them or, when one is refused,
 * none (the refused document is named); `--dry-run` sends the same set as a dry run, so a
 * document sees the ones before it (a new mesh, then what goes in it) as the real apply would.
 */
async function apply(cli: CliContext, o: ApplyOptions): Promise<void> {
  if (o.diff && !o.dryRun) throw new UsageError('--diff shows what a dry run would change: add --dry-run');
  const targets = await readTargets(o.file, o.var);
  if (targets.length === 0) throw new UsageError('no resource to apply');
  const api = await cli.api();
  const suffix = o.dryRun ? ' (dry run)' : '';
  let answer: SetAnswer;
  try {
    const res = await api.request<SetAnswer>('POST', '/_changes', {
      body: { items: targets.map((t) => t.body) },
      // A dry run asks what the set would do to proxies too.
      query: o.dryRun
        ? { dryRun: true, impact: o.diff ? 'diff' : 'true', size: IMPACT_LISTED }
        : { dryRun: undefined },
    });
    answer = res.body;
  } catch (err) {
    const t = err instanceof ApiError && err.item ? targets[err.item.index] : undefined;
    if (t && err instanceof ApiError && err.item) {
      throw new DocumentError(`${locate(t.doc)} (${t.label})`, itemRefusal(err, err.item.index));
    }
    throw err;
  }
  targets.forEach((t, i) => {
    cli.stdout.write(`${t.label} ${OUTCOME[answer.items[i].operation]}${suffix}\n`);
  });
  if (answer.impact) cli.stdout.write(impactSummary(answer.impact, !!o.diff));
}

/** `meshctl apply -f FILE|DIR|-`: creates or updates the resources of YAML or JSON documents. */
export function registerApply(program: Command, cli: CliContext): void {
  program
    .command('apply')
    .description('create or update resources from YAML or JSON (several documents per file)')
    .requiredOption('-f, --file <path>', 'a file, a directory of .yaml/.yml/.json files, or - for stdin')
    .option('--dry-run', 'validate and tell what would change, resources and proxies; write nothing')
    .option('--diff', "with --dry-run: each proxy's xDS config diff")
    .option(
      '-v, --var <key=value>',
      'value of a {{ key }} placeholder (repeatable)',
      (v: string, acc: string[]) => [...acc, v],
      [] as string[],
    )
    .action((o: ApplyOptions) => apply(cli, o));
}
