import type { Command } from 'commander';
import { Argument } from 'commander';
import type { Query } from '../api-client.js';
import type { CliContext, OutputFormat, Table } from '../cli-context.js';
import { UsageError, parseOutputFormat } from '../cli-context.js';
import { emptyListText } from '../empty-list.js';
import type { KindInfo } from '../kind-table.js';
import { KIND_TABLE } from '../kind-table.js';
import { findKind } from '../kinds.js';
import type { ListBody, Resource } from '../resource-table.js';
import { formatTags, nextOffset } from '../resource-table.js';
import { age } from '../table.js';
import { positiveInt, repeatable, tagQuery } from './get.js';

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

/** Sum of a counter over the subscriptions of an insight. */
const sumOf = (insight: unknown, counter: string): number =>
  arr(obj(insight).subscriptions).reduce((n, s) => n + Number(obj(obj(s.status).total)[counter] ?? 0), 0);

/** Zone ingresses or egresses with their insight (kumactl's columns, plus zone and address). */
function zoneProxiesTable(field: 'zoneIngress' | 'zoneEgress'): (items: Resource[], now: number) => Table {
  return (items, now) => ({
    headers: [
      'NAME',
      'ZONE',
      'ADDRESS',
      'STATUS',
      'LAST CONNECTED AGO',
      'LAST UPDATED AGO',
      'TOTAL UPDATES',
      'TOTAL ERRORS',
    ],
    rows: items.map((r) => {
      const proxy = obj(r[field]);
      const net = obj(proxy.networking);
      const insight = r[`${field}Insight`];
      const sub = lastSubscription(insight);
      const online = arr(obj(insight).subscriptions).some(
        (x) => x.connectTime !== undefined && x.disconnectTime === undefined,
      );
      const host = net.advertisedAddress ?? net.address;
      const port = net.advertisedAddress !== undefined ? net.advertisedPort : net.port;
      return [
        str(r.name),
        str(proxy.zone),
        host === undefined ? '-' : `${String(host)}${port === undefined ? '' : `:${String(port)}`}`,
        online ? 'Online' : 'Offline',
        ago(sub?.connectTime, now),
        ago(obj(sub?.status).lastUpdateTime, now),
        String(sumOf(insight, 'responsesSent')),
        String(sumOf(insight, 'responsesRejected')),
      ];
    }),
  });
}

/** What `inspect <what>` lists: the endpoint, whether it is per mesh, what it holds, and its table. */
const VIEWS: Record<
  string,
  { path: string; mesh: boolean; noun: string; table: (items: Resource[], now: number) => Table }
> = {
  dataplanes: { path: 'dataplanes+insights', mesh: true, noun: 'data plane proxies', table: dataplanesTable },
  services: { path: 'service-insights', mesh: true, noun: 'services', table: servicesTable },
  zones: { path: 'zones+insights', mesh: false, noun: 'zones', table: zonesTable },
  meshes: { path: 'mesh-insights', mesh: false, noun: 'meshes', table: meshesTable },
  zoneingresses: {
    path: 'zoneingresses+insights',
    mesh: false,
    noun: 'zone ingresses',
    table: zoneProxiesTable('zoneIngress'),
  },
  zoneegresses: {
    path: 'zoneegressoverviews',
    mesh: false,
    noun: 'zone egresses',
    table: zoneProxiesTable('zoneEgress'),
  },
};

/** Other spellings of the views (kumactl's `zone-ingresses`). */
const VIEW_ALIASES: Record<string, string> = {
  'zone-ingresses': 'zoneingresses',
  'zone-egresses': 'zoneegresses',
};

/** The endpoint of each `inspect dataplane NAME --type`; zone proxies have the last three. */
const PROXY_TYPES: Record<string, string> = {
  policies: 'policies',
  rules: 'rules',
  'config-dump': 'xds',
  stats: 'stats',
  clusters: 'clusters',
};

/** The proxies `inspect <kind> NAME` shows one of: the URL of their views and their name in words. */
const PROXIES: Record<
  string,
  { words: string; base: (mesh: string, name: string) => string; types: string[] }
> = {
  Dataplane: {
    words: 'dataplane',
    base: (mesh, name) => `/meshes/${encodeURIComponent(mesh)}/dataplanes/${encodeURIComponent(name)}`,
    types: Object.keys(PROXY_TYPES),
  },
  ZoneIngress: {
    words: 'zone ingress',
    base: (_mesh, name) => `/zoneingresses/${encodeURIComponent(name)}`,
    types: ['config-dump', 'stats', 'clusters'],
  },
  ZoneEgress: {
    words: 'zone egress',
    base: (_mesh, name) => `/zoneegresses/${encodeURIComponent(name)}`,
    types: ['config-dump', 'stats', 'clusters'],
  },
};

/** The words `inspect` takes first, for help, errors and completion. */
export function inspectSubjects(): string[] {
  const policies = KIND_TABLE.filter((k) => k.isPolicy).map((k) => k.path);
  return [...Object.keys(VIEWS), 'dataplane', 'zoneingress', 'zoneegress', ...policies];
}

/** The `--type` values of `inspect <word> NAME`, for completion. */
export function inspectTypes(word: string): string[] {
  const kind = findKind(word);
  return kind && PROXIES[kind.kind] ? PROXIES[kind.kind].types : [];
}

/** Options of `meshctl inspect`. */
interface InspectOptions {
  mesh: string;
  allMeshes?: boolean;
  output: string;
  tag: string[];
  gateway?: boolean | string;
  status?: string;
  size?: number;
  offset?: string;
  type?: string;
  revision?: string;
  at?: string;
}

/** `?revision=` or `?at=` of a read as of a point in time (the server checks them and says what is wrong). */
function pointInTime(o: InspectOptions): Query {
  if (o.revision !== undefined && o.at !== undefined) {
    throw new UsageError('--revision and --at name one point in time: give one of them');
  }
  return { revision: o.revision, at: o.at };
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

async function inspectProxy(cli: CliContext, kind: KindInfo, name: string, o: InspectOptions): Promise<void> {
  const proxy = PROXIES[kind.kind];
  const type = o.type ?? (kind.kind === 'Dataplane' ? 'policies' : 'config-dump');
  if (!proxy.types.includes(type)) {
    const list = proxy.types;
    throw new UsageError(`--type must be ${list.slice(0, -1).join(', ')} or ${list.at(-1)}, not "${type}"`);
  }
  const text = type === 'stats' || type === 'clusters';
  if (text && o.output !== 'table') {
    throw new UsageError(`--type ${type} is text in Envoy's admin format: -o does not apply`);
  }
  const api = await cli.api();
  const res = await api.request<Obj | string>('GET', `${proxy.base(o.mesh, name)}/${PROXY_TYPES[type]}`, {
    accept: text ? 'text/plain' : 'application/json',
    query: pointInTime(o),
  });
  const asOf = res.headers['x-mesh-revision'];
  if ((o.revision !== undefined || o.at !== undefined) && asOf !== undefined) {
    cli.stderr.write(
      `As of revision ${String(asOf)}${o.at !== undefined ? ` (the last at or before ${o.at})` : ''}\n`,
    );
  }
  if (text) {
    const where = kind.scope === 'mesh' ? ` in mesh "${o.mesh}"` : '';
    if (res.text === '') cli.stderr.write(`${proxy.words} "${name}"${where} has no ${type}\n`);
    else cli.stdout.write(res.text);
    return;
  }
  const body = obj(res.body);
  // A configuration dump is JSON unless asked otherwise, as Envoy's admin answers it.
  const format: OutputFormat =
    type === 'config-dump' && o.output === 'table' ? 'json' : parseOutputFormat(o.output);
  const table = type === 'rules' ? rulesTable(body) : policiesTable(body);
  if (format === 'table' && !table) {
    await cli.printYaml(body);
    return;
  }
  await cli.print(format, body, () => table as Table);
}

/** An attachment of a policy to a sidecar, as kumactl words it: `inbound 10.0.0.1:8080:80 (web)`. */
function attachmentText(a: Obj): string {
  if (a.type === 'dataplane') return 'dataplane';
  if (a.type === 'service') return `service ${str(a.name)}`;
  return `${str(a.type)} ${str(a.name)}${a.service ? ` (${str(a.service)})` : ''}`;
}

/** Where a policy reaches a gateway proxy: `listener HTTP:8080 host * route r1`. */
function listenerText(l: Obj): string[] {
  return arr(l.hosts).flatMap((h) =>
    arr(h.routes).map(
      (r) => `listener ${str(l.protocol)}:${str(l.port)} host ${str(h.hostName)} route ${str(r.route)}`,
    ),
  );
}

/** `inspect <policy kind> NAME`: the proxies a policy affects (spec 2.20), one row each. */
async function inspectPolicy(
  cli: CliContext,
  word: string,
  kind: KindInfo,
  name: string,
  o: InspectOptions,
): Promise<void> {
  const format = parseOutputFormat(o.output);
  const api = await cli.api();
  const path = `/meshes/${encodeURIComponent(o.mesh)}/${kind.path}/${encodeURIComponent(name)}/dataplanes`;
  const res = await api.request<ListBody>('GET', path, {
    query: { size: o.size, offset: o.offset, ...pointInTime(o) },
  });
  if (format === 'table' && res.body.items.length === 0) {
    cli.stderr.write(
      emptyListText({
        noun: `data plane proxies affected by ${kind.kind} "${name}"`,
        mesh: o.mesh,
        offset: o.offset,
        total: res.body.total,
      }),
    );
    return;
  }
  await cli.print(format, res.body, () => {
    const table: Table = {
      headers: ['MESH', 'DATAPLANE', 'KIND', 'ATTACHMENTS'],
      rows: res.body.items.map((item) => {
        const dp = obj(item.dataplane);
        const where = [
          ...arr(item.attachments).map(attachmentText),
          ...arr(item.listeners).flatMap(listenerText),
        ];
        return [str(dp.mesh), str(dp.name), str(item.kind), where.join(', ') || '-'];
      }),
    };
    const offset = nextOffset(res.body.next);
    if (offset !== undefined) {
      const flags = [
        ...(o.mesh !== 'default' ? [`--mesh ${o.mesh}`] : []),
        ...(o.size !== undefined ? [`--size ${o.size}`] : []),
      ];
      table.footer = ['Rest of the list: meshctl inspect', word, name, ...flags, `--offset ${offset}`].join(
        ' ',
      );
    }
    return table;
  });
}

/** The usage error of a first word `inspect` does not take. */
function notInspectable(what: string): UsageError {
  return new UsageError(
    `inspect takes ${Object.keys(VIEWS).join(', ')}; dataplane, zoneingress or zoneegress NAME; ` +
      `or a policy kind and NAME (traffic-permission NAME, …); not "${what}"`,
  );
}

async function inspectList(cli: CliContext, what: string, o: InspectOptions): Promise<void> {
  const view = VIEWS[what];
  const format = parseOutputFormat(o.output);
  const dpOnly = (flag: string): void => {
    if (what !== 'dataplanes') throw new UsageError(`${flag} applies to inspect dataplanes only`);
  };
  const tags = tagQuery(o.tag);
  if (tags.length > 0) dpOnly('--tag');
  if (o.gateway !== undefined) dpOnly('--gateway');
  if (o.status !== undefined) dpOnly('--status');
  if (o.allMeshes && !view.mesh)
    throw new UsageError(`${what} are not in a mesh: -A applies to dataplanes and services`);
  const query: Query = {
    tag: tags,
    gateway: o.gateway === true ? 'true' : o.gateway,
    status: o.status,
    size: o.size,
    offset: o.offset,
    ...pointInTime(o),
  };
  const api = await cli.api();
  const path =
    view.mesh && !o.allMeshes ? `/meshes/${encodeURIComponent(o.mesh)}/${view.path}` : `/${view.path}`;
  const res = await api.request<ListBody>('GET', path, { query });
  if (format === 'table' && res.body.items.length === 0) {
    const gateway =
      o.gateway === undefined
        ? []
        : o.gateway === 'false'
          ? ['that are not gateways']
          : [`that are ${o.gateway === true || o.gateway === 'true' ? '' : `${o.gateway} `}gateways`];
    cli.stderr.write(
      emptyListText({
        noun: view.noun,
        mesh: view.mesh ? o.mesh : undefined,
        allMeshes: o.allMeshes,
        tags: o.tag,
        qualifiers: [...gateway, ...(o.status !== undefined ? [`that are ${o.status}`] : [])],
        offset: o.offset,
        total: res.body.total,
      }),
    );
    return;
  }
  await cli.print(format, res.body, () => {
    const table = view.table(res.body.items, Date.now());
    const offset = nextOffset(res.body.next);
    if (offset !== undefined) {
      const flags = [
        ...(o.allMeshes ? ['-A'] : view.mesh && o.mesh !== 'default' ? [`--mesh ${o.mesh}`] : []),
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

/** `meshctl inspect <list>`, `inspect dataplane|zoneingress|zoneegress NAME --type …` and `inspect <policy> NAME`. */
export function registerInspect(program: Command, cli: CliContext): void {
  program
    .command('inspect')
    .description(
      'status of proxies, services, zones and meshes; what applies to one proxy; which proxies a policy affects',
    )
    .addArgument(
      new Argument(
        '<what>',
        `${Object.keys(VIEWS).join(', ')}; dataplane, zoneingress or zoneegress (with a NAME); or a policy kind (with a NAME)`,
      ),
    )
    .argument('[name]', 'the proxy or the policy')
    .option('-m, --mesh <mesh>', 'the mesh', 'default')
    .option('-A, --all-meshes', 'inspect dataplanes and services of every mesh')
    .option('-o, --output <format>', 'output format: table, yaml or json', 'table')
    .option('--tag <key=value>', 'only proxies with this tag (repeatable)', repeatable, [])
    .option('--gateway [type]', 'only gateway proxies (or: false, builtin, delegated)')
    .option('--status <status>', 'only proxies that are online, offline or partially_degraded')
    .option(
      '--type <type>',
      'with dataplane NAME: policies, rules, config-dump, stats or clusters; zone proxies: the last three',
      undefined,
    )
    .option('--size <n>', 'page size', positiveInt('size'))
    .option('--offset <k>', 'where the page starts (from "Rest of the list")')
    .option(
      '--revision <R>',
      'as of log revision R (status is runtime: a past list shows every proxy offline)',
    )
    .option('--at <time>', 'as of a time (RFC 3339): the last revision at or before it')
    .addHelpText(
      'after',
      `
Examples:
  $ meshctl inspect dataplanes -A --tag mesh.io/service=web
  $ meshctl inspect dataplane web-1 --mesh demo --type clusters
  $ meshctl inspect dataplane web-1 --at 2026-11-28T14:05:00Z --type config-dump
  $ meshctl inspect zoneingresses
  $ meshctl inspect traffic-permission allow-all-default`,
    )
    .action(async (what: string, name: string | undefined, o: InspectOptions) => {
      const view = VIEW_ALIASES[what] ?? what;
      if (name === undefined) {
        if (!VIEWS[view]) {
          const kind = findKind(what);
          if (kind && (PROXIES[kind.kind] || kind.isPolicy)) {
            throw new UsageError(
              `inspect ${what} takes a NAME (inspect ${Object.keys(VIEWS).join('|')} list)`,
            );
          }
          throw notInspectable(what);
        }
        if (o.type !== undefined) throw new UsageError('--type goes with inspect dataplane NAME');
        return inspectList(cli, view, o);
      }
      const kind = findKind(what);
      if (o.allMeshes) throw new UsageError('-A goes with the lists (inspect dataplanes, services)');
      if (kind && PROXIES[kind.kind]) return inspectProxy(cli, kind, name, o);
      if (o.type !== undefined) throw new UsageError('--type goes with inspect dataplane NAME');
      if (kind?.isPolicy) return inspectPolicy(cli, what, kind, name, o);
      throw notInspectable(what);
    });
}
