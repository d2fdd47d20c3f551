import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { configDocsMarkdown, defaultText } from '../config/config-docs.js';
import { configKeyTable, type ConfigKeyRow } from '../config/config-keys.js';

const FORMATS = ['table', 'tsv', 'json', 'markdown'] as const;
type Format = (typeof FORMATS)[number];

/** The widest default the table shows whole (longer ones are cut; tsv and json have them). */
const TABLE_DEFAULT_WIDTH = 24;

function shortDefault(row: ConfigKeyRow): string {
  const text = defaultText(row);
  return text.length <= TABLE_DEFAULT_WIDTH ? text : `${text.slice(0, TABLE_DEFAULT_WIDTH - 1)}…`;
}

/** Aligned columns for people; the meaning of an inert key starts with `(inert)`. */
function table(rows: ConfigKeyRow[]): string {
  const lines = [['KEY', 'DEFAULT', 'ENV', 'MEANING']].concat(
    rows.map((row) => [row.path, shortDefault(row), row.env, `${row.inert ? '(inert) ' : ''}${row.meaning}`]),
  );
  const widths = [0, 1, 2].map((column) => Math.max(...lines.map((line) => line[column].length)));
  return lines
    .map((line) => line.map((text, column) => (column < 3 ? text.padEnd(widths[column]) : text)).join('  '))
    .join('\n');
}

/** One key a line: path, env, default, `inert` or empty, meaning (the first two as before). */
function tsv(rows: ConfigKeyRow[]): string {
  return rows
    .map((row) => [row.path, row.env, defaultText(row), row.inert ? 'inert' : '', row.meaning].join('\t'))
    .join('\n');
}

function render(format: Format): string {
  const rows = configKeyTable();
  switch (format) {
    case 'table':
      return `${table(rows)}\n`;
    case 'tsv':
      return `${tsv(rows)}\n`;
    case 'json':
      return `${JSON.stringify(rows, null, 2)}\n`;
    case 'markdown':
      return configDocsMarkdown();
  }
}

function parseFormat(value: string): Format {
  if (!(FORMATS as readonly string[]).includes(value)) {
    throw new InvalidArgumentError(`must be one of ${FORMATS.join(', ')}`);
  }
  return value as Format;
}

/** Adds `mesh-cp config-keys [--format table|tsv|json|markdown]`: every key, its default, env name and meaning. */
export function registerConfigKeysCommand(program: Command): void {
  program
    .command('config-keys')
    .description('list every config key with its default, environment variable and meaning')
    .option(
      '-f, --format <format>',
      `${FORMATS.join(', ')} (default: table on a terminal, else tsv)`,
      parseFormat,
    )
    .action((opts: { format?: Format }) => {
      process.stdout.write(render(opts.format ?? (process.stdout.isTTY ? 'table' : 'tsv')));
    });
}
