import type { Command } from 'commander';
import { Argument } from 'commander';
import type { Query } from '../api-client.js';
import type { CliContext, OutputFormat, Table } from '../cli-context.js';
import { UsageError, parseOutputFormat } from '../cli-context.js';
import type { ListBody, Resource } from '../resource-table.js';
import { formatTags, nextOffset } from '../resource-table.js';
import { age } from '../table.js';
import { positiveInt } from './get.js';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (typeof v === 'object' && v !== null ? (v as Obj) : {});
const arr = (v: unknown): Obj[] => (Array.isArray(v) ? (v as Obj[]) : []);
const str = (v: unknown): string => (v === undefined || v === null ? '-' : String(v));

/** The last subscription of an insight, the one that tells the current state. */
const lastSubscription = (insight: unknown): Obj | undefined => arr(obj(insight).subscriptions).at(-1);

/** Online when a subscription is open (decisions §6); partially degraded when an inbound is not ready. */
function proxyStatus(overview: Resource): string {
  const online = arr(obj(overview.dataplaneInsight).subscriptions).some(
    (s) => s.connectTime !== undefined && s.disconnectTime === undefined,
  );
  if (!online) return 'Offline';
  const inbounds = arr(obj(obj(overview.dataplane).networking).inbound);
  return inbounds.some((i) => obj(i.health).ready === false) ? 'Partially degraded' : 'Online';
}

/** `never` for a missing time, else its age. */
const ago = (time: unknown, now: number): string => (typeof time === 'string' ? age(time, now) : 'never');

/** Data plane proxies with their insight: mesh, name, tags, status, connection and certificate. */
function dataplanesTable(items: Resource[], now: number): Table {
  return {
    headers: [
      'MESH',
      'NAME',
      'TAGS',
      'STATUS',
      'LAST CONNECTED AGO',
      'LAST UPDATED AGO',
      'TOTAL UPDATES',
      'CERT REGENERATED AGO',
      'CERT EXPIRATION',
      'CERT REGENERATIONS',
      'CERT BACKEND',
    ],
    rows: items.map((r) => {
      const networking = obj(obj(r.dataplane).networking);
      const tags = [...arr(networking.inbound).map((i) => obj(i.tags)), obj(obj(networking.gateway).tags)];
      const sub = lastSubscription(r.dataplaneInsight);
      const status = obj(sub?.status);
      const mtls = obj(obj(r.dataplaneInsight).mTLS);
      return [
        str(r.mesh),
        str(r.name),
        formatTags(tags as Array<Record<string, string>>),
        proxyStatus(r),
        ago(sub?.connectTime, now),
        ago(status.lastUpdateTime, now),
        str(obj(status.total).responsesSent ?? 0),
        ago(mtls.lastCertificateRegeneration, now),
        typeof mtls.certificateExpirationTime === 'string' ? mtls.certificateExpirationTime : 'never',
        str(mtls.certificateRegenerations ?? 0),
        str(mtls.issuedBackend),
      ];
    }),
  };
}

function servicesTable(items: Resource[]): Table {
  return {
    headers: ['MESH', 'SERVICE', 'TYPE', 'STATUS', 'DATAPLANES'],
    rows: items.map((r) => {
      const dp = obj(r.dataplanes);
      return [
        str(r.mesh),
        str(r.name),
        str(r.serviceType),
        str(r.status),
        `${str(dp.online ?? 0)}/${str(dp.total ?? 0)}`,
      ];
    }),
  };
}

function zonesTable(items: Resource[], now: number): Table {
  return {
    headers: ['NAME', 'ENABLED', 'STATUS', 'LAST CONNECTED AGO', 'LAST UPDATED AGO', 'ZONE-CP VERSION'],
    rows: items.map((r) => {
      const sub = lastSubscription(r.zoneInsight);
      const online = sub !== undefined && sub.connectTime !== undefined && sub.disconnectTime === undefined;
      return [
        str(r.name),
        str(obj(r.zone).enabled ?? true),
        online ? 'Online' : 'Offline',
        ago(sub?.connectTime, now),
        ago(obj(sub?.status).lastUpdateTime, now),
        str(obj(obj(sub?.version).kumaCp).version),
      ];
    }),
  };
}

function meshesTable(items: Resource[]): Table {
  return {
    headers: ['NAME', 'SERVICES', 'DATAPLANES', 'POLICIES', 'LAST SYNC'],
    rows: items.map((r) => {
      const dp = obj(r.dataplanes);
      const policies = Object.values(obj(r.policies)).reduce<number>(
        (n, p) => n + Number(obj(p).total ?? 0),
        0,
      );
      return [
        str(r.name),
        str(obj(r.services).total ?? 0),
        `${str(dp.online ?? Number(dp.total ?? 0) - Number(dp.offline ?? 0))}/${str(dp.total ?? 0)}`,
        String(policies),
        str(r.lastSync),
      ];
    }),
  };
}

/** What `inspect <what>` lists: the endpoint, whether it is per mesh, and its table. */
const VIEWS: Record<
  string,
  { path: string; mesh: boolean; table: (items: Resource[], now: number) => Table }
> = {
  dataplanes: { path: 'dataplanes+insights', mesh: true, table: dataplanesTable },
  services: { path: 'service-insights', mesh: true, table: servicesTable },
  zones: { path: 'zones+insights', mesh: false, table: zonesTable },
  meshes: { path: 'mesh-insights', mesh: false, table: meshesTable },
};

/** The endpoint of each `inspect dataplane NAME --type`. */
const DATAPLANE_TYPES: Record<string, string> = {
  policies: 'policies',
  rules: 'rules',
  'config-dump': 'xds',
};

/** Options of `meshctl inspect`. */
interface InspectOptions {
  mesh: string;
  output: string;
  tag: string[];
  gateway?: boolean | string;
  status?: string;
  size?: number;
  offset?: string;
  type?: string;
}

/** The matched policies of a sidecar proxy, one row per attachment and policy kind. */
function policiesTable(body: Obj): Table | undefined {
  if (body.kind !== 'SidecarDataplane') return undefined;
  const rows: string[][] = [];
  for (const item of arr(body.items)) {
    for (const [type, list] of Object.entries(obj(item.matchedPolicies))) {
      rows.push([
        str(item.type),
        str(item.name),
        type,
        arr(list)
          .map((p) => str(p.name))
          .join(', '),
      ]);
    }
  }
  return { headers: ['TYPE', 'NAME', 'POLICY KIND', 'POLICIES'], rows };
}

function rulesTable(body: Obj): Table {
  return {
    headers: ['TYPE', 'NAME', 'SERVICE', 'POLICY KIND', 'SUBSET', 'ORIGINS'],
    rows: arr(body.items).map((i) => [
      str(i.type),
      str(i.name || '-'),
      str(i.service || '-'),
      str(i.policyType),
      formatTags([obj(i.subset) as Record<string, string>]) || '-',
      arr(i.origins)
        .map((o) => str(o.name))
        .join(', '),
    ]),
  };
}

async function inspectDataplane(cli: CliContext, name: string, o: InspectOptions): Promise<void> {
  const type = o.type ?? 'policies';
  const endpoint = DATAPLANE_TYPES[type];
  if (!endpoint) throw new UsageError(`--type must be policies, rules or config-dump, not "${type}"`);
  const api = await cli.api();
  const res = await api.request<Obj>(
    'GET',
    `/meshes/${encodeURIComponent(o.mesh)}/dataplanes/${encodeURIComponent(name)}/${endpoint}`,
  );
  // A configuration dump is JSON unless asked otherwise, as Envoy's admin answers it.
  const format: OutputFormat =
    type === 'config-dump' && o.output === 'table' ? 'json' : parseOutputFormat(o.output);
  const table = type === 'rules' ? rulesTable(res.body) : policiesTable(res.body);
  if (format === 'table' && !table) {
    await cli.printYaml(res.body);
    return;
  }
  await cli.print(format, res.body, () => table as Table);
}

async function inspectList(cli: CliContext, what: string, o: InspectOptions): Promise<void> {
  const view = VIEWS[what];
  if (!view) {
    throw new UsageError(
      `inspect takes dataplanes, services, zones, meshes or dataplane NAME, not "${what}"`,
    );
  }
  const format = parseOutputFormat(o.output);
  const dpOnly = (flag: string): void => {
    if (what !== 'dataplanes') throw new UsageError(`${flag} applies to inspect dataplanes only`);
  };
  const tags = o.tag.map((t) => {
    const i = t.indexOf('=');
    if (i <= 0) throw new UsageError(`--tag takes key=value, not "${t}"`);
    return `${t.slice(0, i)}:${t.slice(i + 1)}`;
  });
  if (tags.length > 0) dpOnly('--tag');
  if (o.gateway !== undefined) dpOnly('--gateway');
  if (o.status !== undefined) dpOnly('--status');
  const query: Query = {
    tag: tags,
    gateway: o.gateway === true ? 'true' : o.gateway,
    status: o.status,
    size: o.size,
    offset: o.offset,
  };
  const api = await cli.api();
  const path = view.mesh ? `/meshes/${encodeURIComponent(o.mesh)}/${view.path}` : `/${view.path}`;
  const res = await api.request<ListBody>('GET', path, { query });
  await cli.print(format, res.body, () => {
    const table = view.table(res.body.items, Date.now());
    const offset = nextOffset(res.body.next);
    if (offset !== undefined) {
      const flags = [
        ...(view.mesh && o.mesh !== 'default' ? [`--mesh ${o.mesh}`] : []),
        ...o.tag.map((t) => `--tag ${t}`),
        ...(o.gateway === true ? ['--gateway'] : o.gateway !== undefined ? [`--gateway ${o.gateway}`] : []),
        ...(o.status !== undefined ? [`--status ${o.status}`] : []),
        ...(o.size !== undefined ? [`--size ${o.size}`] : []),
      ];
      table.footer = ['Rest of the list: meshctl inspect', what, ...flags, `--offset ${offset}`].join(' ');
    }
    return table;
  });
}

/** `meshctl inspect dataplanes|services|zones|meshes` and `inspect dataplane NAME --type …`. */
export function registerInspect(program: Command, cli: CliContext): void {
  program
    .command('inspect')
    .description('status of data plane proxies, services, zones and meshes; what applies to one proxy')
    .addArgument(
      new Argument('<what>', 'dataplanes, services, zones, meshes, or dataplane (with a NAME)').choices([
        ...Object.keys(VIEWS),
        'dataplane',
      ]),
    )
    .argument('[name]', 'the data plane proxy of `inspect dataplane`')
    .option('-m, --mesh <mesh>', 'the mesh', 'default')
    .option('-o, --output <format>', 'output format: table, yaml or json', 'table')
    .option(
      '--tag <key=value>',
      'only proxies with this tag (repeatable)',
      (v: string, acc: string[]) => [...acc, v],
      [],
    )
    .option('--gateway [type]', 'only gateway proxies (or: false, builtin, delegated)')
    .option('--status <status>', 'only proxies that are online, offline or partially_degraded')
    .option('--type <type>', 'with dataplane NAME: policies, rules or config-dump', undefined)
    .option('--size <n>', 'page size', positiveInt('size'))
    .option('--offset <k>', 'where the page starts (from "Rest of the list")')
    .action(async (what: string, name: string | undefined, o: InspectOptions) => {
      if (what === 'dataplane' && name !== undefined) return inspectDataplane(cli, name, o);
      if (name !== undefined)
        throw new UsageError(`inspect ${what} takes no name (inspect dataplane NAME does)`);
      if (o.type !== undefined) throw new UsageError('--type goes with inspect dataplane NAME');
      return inspectList(cli, what, o);
    });
}
