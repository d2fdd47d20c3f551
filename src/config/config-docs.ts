import { configKeyTable, type ConfigKeyRow } from './config-keys.js';

/** How a default reads in a table: strings as they are (`""` when empty), other values as JSON. */
export function defaultText(row: Pick<ConfigKeyRow, 'default'>): string {
  const value = row.default;
  if (typeof value === 'string') return value === '' ? '""' : value;
  return JSON.stringify(value);
}

const INTRO = `# Configuration

<!-- Generated from src/config/schema.ts by \`npm run docs:config\`; do not edit by hand. -->

mesh-cp reads its settings from defaults, then a YAML file (\`mesh-cp run --config FILE\`), then
environment variables: each key has one, \`MESH_\` and the key path in upper snake case
(\`apiServer.port\` is \`MESH_API_SERVER_PORT\`). Lists take a JSON array or a comma-separated list,
maps a JSON object, booleans \`true\`, \`false\`, \`1\` or \`0\`. An unknown key or variable, or a bad
value, stops start-up with a message that names it. \`GET /config\` answers the effective settings,
secrets masked. \`mesh-cp config-keys\` prints this table (\`--format table|tsv|json|markdown\`).

**Inert** keys are accepted and shown in \`GET /config\` (clients of the reference API read them),
but mesh-cp does not act on them: the feature they set is not part of mesh-cp, or is another
key's here. Setting one to a value other than its default logs a warning at start naming it.

**Listeners** bind \`bindAddress\` (default \`0.0.0.0\`, every IPv4 address; \`::\` for every
address): \`apiServer\`, \`apiServer.https\`, \`diagnostics\`, \`xdsServer\` and
\`multizone.global.kds\` each have one. An address that is not one of this machine's stops
start-up (exit 2) naming the key.

**The xDS address of a data plane bootstrap** (\`GET /meshes/{mesh}/dataplanes/{name}/bootstrap\`)
is made part by part. Host: \`bootstrapServer.params.xdsHost\`, else the host of
\`xdsServer.advertisedAddress\`, else \`general.advertisedHostname\`. Port:
\`bootstrapServer.params.xdsPort\` when not 0, else the port of \`xdsServer.advertisedAddress\`,
else \`xdsServer.grpcPort\` (the port actually bound when that is 0).
`;

/** A table cell: pipes escaped, text in code spans where asked. */
function cell(text: string, code = false): string {
  const escaped = text.replace(/\|/g, '\\|');
  return code ? `\`${escaped}\`` : escaped;
}

/** docs/config.md: the introduction, then every key with its default, env name and meaning. */
export function configDocsMarkdown(): string {
  const rows = configKeyTable().map(
    (row) =>
      `| ${cell(row.path, true)} | ${cell(defaultText(row), true)} | ${cell(row.env, true)} | ` +
      `${row.inert ? '**inert**: ' : ''}${cell(row.meaning)} |`,
  );
  return `${INTRO}\n| Key | Default | Env | Meaning |\n| --- | --- | --- | --- |\n${rows.join('\n')}\n`;
}
