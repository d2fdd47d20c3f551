import type { Registry } from '../resources/registry.js';
import type { Json } from './openapi-components.js';
import { page, ref, schemaName } from './openapi-components.js';

const strings = { type: 'string' };
const integer = { type: 'integer', minimum: 0 };
const array = (items: Json): Json => ({ type: 'array', items });
const object = (properties: Json, required: string[] = Object.keys(properties), extra: Json = {}): Json => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
  ...extra,
});
const schema = (n: string): Json => ref('schemas', n);

/** A built-in gateway's listeners, their hosts and the routes of each host, whose destinations are `destination`s. */
const gatewayListeners = (destination: Json): Json =>
  array(
    object({
      port: integer,
      protocol: strings,
      hosts: array(
        object({
          hostName: strings,
          routes: array(object({ route: strings, destinations: array(destination) })),
        }),
      ),
    }),
  );

/** The `@type` of each section of a ConfigDump, as config-dump.ts writes them. */
const ADMIN = 'type.googleapis.com/envoy.admin.v3.';

/** A ConfigDump entry of one resource: its version, the resource, when sent and its last NACK. */
const dumpEntry = (field: string, extra: Json = {}): Json =>
  object(
    {
      ...extra,
      version_info: { type: 'string', description: 'The log revision it was served at (`""`: never sent)' },
      [field]: schema('XdsResource'),
      last_updated: { type: 'string', format: 'date-time', description: 'When it was last sent' },
      error_state: schema('XdsErrorState'),
    },
    [...Object.keys(extra), 'version_info', field],
  );

/** The five sections of a ConfigDump, by `@type` (config-dump.ts). */
function configDumpSections(): Record<string, Json> {
  const typed = (section: string, properties: Json, required: string[]): Json =>
    object({ '@type': { type: 'string', const: `${ADMIN}${section}` }, ...properties }, [
      '@type',
      ...required,
    ]);
  return {
    BootstrapConfigDump: typed(
      'BootstrapConfigDump',
      {
        bootstrap: object({
          node: object({
            id: strings,
            cluster: strings,
            metadata: { type: 'object', additionalProperties: strings },
          }),
        }),
      },
      ['bootstrap'],
    ),
    ListenersConfigDump: typed(
      'ListenersConfigDump',
      {
        version_info: strings,
        dynamic_listeners: array(
          object(
            {
              name: strings,
              active_state: object(
                {
                  version_info: strings,
                  listener: schema('XdsResource'),
                  last_updated: { type: 'string', format: 'date-time' },
                },
                ['version_info', 'listener'],
              ),
              error_state: schema('XdsErrorState'),
            },
            ['name', 'active_state'],
          ),
        ),
      },
      ['version_info', 'dynamic_listeners'],
    ),
    RoutesConfigDump: typed('RoutesConfigDump', { dynamic_route_configs: array(dumpEntry('route_config')) }, [
      'dynamic_route_configs',
    ]),
    ClustersConfigDump: typed(
      'ClustersConfigDump',
      { version_info: strings, dynamic_active_clusters: array(dumpEntry('cluster')) },
      ['version_info', 'dynamic_active_clusters'],
    ),
    EndpointsConfigDump: typed(
      'EndpointsConfigDump',
      { dynamic_endpoint_configs: array(dumpEntry('endpoint_config')) },
      ['dynamic_endpoint_configs'],
    ),
  };
}

const attachmentType = { type: 'string', enum: ['dataplane', 'inbound', 'outbound', 'service'] };
const gatewayKind = { type: 'string', const: 'MeshGatewayDataplane' };
const sidecarKind = { type: 'string', const: 'SidecarDataplane' };

/** A map of policy kind to a schema for it (`item` takes the kind's schema name). */
type ByKind = (item: (kind: string) => Json) => Json;

/** The answers of a proxy's policies and rules (spec 4.9). */
function policyViewSchemas(byKind: ByKind): Json {
  return {
    ResourceKey: object({ mesh: strings, name: strings }),
    Tags: { type: 'object', description: 'Tags: key to value', additionalProperties: strings },
    XdsNotes: {
      type: 'object',
      description:
        'What a proxyless gRPC client cannot apply: by dialled service (or proxy kind), one sentence per setting',
      additionalProperties: array(strings),
    },
    MatchedPolicies: object(
      byKind((n) => array(schema(n))),
      [],
      { description: 'The policies that apply here, by kind' },
    ),
    GatewayPolicies: object(
      byKind((n) => schema(n)),
      [],
      { description: 'The one best policy of each kind, by kind' },
    ),
    SidecarDataplanePolicies: object(
      {
        total: integer,
        kind: sidecarKind,
        items: array(
          object({
            type: attachmentType,
            name: { type: 'string', description: 'The inbound, outbound or service; `""` for `dataplane`' },
            service: strings,
            matchedPolicies: schema('MatchedPolicies'),
          }),
        ),
        notes: schema('XdsNotes'),
      },
      ['total', 'kind', 'items'],
      { description: 'The policies that apply to a sidecar proxy, by attachment' },
    ),
    MeshGatewayDataplanePolicies: object(
      {
        kind: gatewayKind,
        gateway: {
          ...schema('ResourceKey'),
          description: 'The gateway that serves the proxy; empty names when none selects it',
        },
        listeners: gatewayListeners(object({ tags: schema('Tags'), policies: schema('GatewayPolicies') })),
        policies: {
          ...schema('GatewayPolicies'),
          description: 'The policies that configure the whole gateway, by kind',
        },
        notes: schema('XdsNotes'),
      },
      ['kind', 'gateway', 'listeners'],
      { description: 'The policies that apply to a built-in gateway proxy, by listener, host and route' },
    ),
    DataplanePolicies: {
      description: 'The policies that apply to a proxy: a sidecar or a built-in gateway (spec 2.20)',
      oneOf: [schema('SidecarDataplanePolicies'), schema('MeshGatewayDataplanePolicies')],
      discriminator: {
        propertyName: 'kind',
        mapping: {
          SidecarDataplane: '#/components/schemas/SidecarDataplanePolicies',
          MeshGatewayDataplane: '#/components/schemas/MeshGatewayDataplanePolicies',
        },
      },
    },
    Rule: object({
      type: { type: 'string', enum: ['clientSubset', 'destinationSubset', 'singleItem'] },
      name: { type: 'string', description: 'The listener (`from`), outbound (`to`) or `dataplane`' },
      service: strings,
      policyType: strings,
      subset: { ...schema('Tags'), description: 'The tags the rule applies to; `!value` negates' },
      conf: { description: "The merged `default` of the policy's entries (the policy kind's conf)" },
      origins: array(object({ mesh: strings, name: strings })),
    }),
    Rules: object({ total: integer, items: array(schema('Rule')) }, ['total', 'items'], {
      description: 'The targetRef rules of a proxy (spec 2.20)',
    }),
  };
}

/** The proxies a policy affects or a gateway selects. */
function affectedSchemas(): Json {
  return {
    AffectedSidecar: object({
      kind: sidecarKind,
      dataplane: schema('ResourceKey'),
      attachments: array(object({ type: attachmentType, name: strings, service: strings })),
    }),
    AffectedGateway: object({
      kind: gatewayKind,
      dataplane: schema('ResourceKey'),
      gateway: schema('ResourceKey'),
      listeners: gatewayListeners(schema('Tags')),
    }),
    AffectedDataplane: {
      description: 'A proxy a policy affects, and where',
      oneOf: [schema('AffectedSidecar'), schema('AffectedGateway')],
      discriminator: {
        propertyName: 'kind',
        mapping: {
          SidecarDataplane: '#/components/schemas/AffectedSidecar',
          MeshGatewayDataplane: '#/components/schemas/AffectedGateway',
        },
      },
    },
    AffectedDataplaneList: page(schema('AffectedDataplane'), 'proxies a policy affects (spec 2.20)'),
    GatewayDataplaneList: page(
      object({ dataplane: schema('ResourceKey') }),
      'built-in gateway proxies a mesh gateway configures (spec 2.20)',
    ),
  };
}

/** A write's impact and a proxy's config timeline. */
function impactSchemas(): Json {
  return {
    Impact: page(
      object(
        {
          mesh: strings,
          name: strings,
          zone: {
            type: ['string', 'null'],
            description: 'The zone the proxy runs in; null on a standalone control plane',
          },
          kind: { type: 'string', enum: ['sidecar', 'gateway', 'proxyless'] },
          proxy: {
            type: 'string',
            enum: ['created', 'deleted'],
            description: 'Present when the write creates or deletes the proxy itself',
          },
          attachments: array(
            object(
              {
                type: { type: 'string', enum: ['inbound', 'outbound', 'service', 'dataplane', 'gateway'] },
                name: strings,
                service: strings,
                policyKind: strings,
                added: array(strings),
                removed: array(strings),
                replaced: array(strings),
              },
              ['type', 'name', 'service', 'policyKind', 'added', 'removed', 'replaced'],
              {
                description:
                  'The policies of one kind added, removed or replaced (written anew) at one attachment',
              },
            ),
          ),
          resources: array(
            object(
              {
                type: { type: 'string', enum: ['Listener', 'Cluster', 'ClusterLoadAssignment'] },
                name: strings,
                change: { type: 'string', enum: ['added', 'removed', 'changed'] },
                diff: { type: 'string', description: 'The unified diff of its JSON (with `impact=diff`)' },
              },
              ['type', 'name', 'change'],
              { description: 'An xDS resource of its served config that changes' },
            ),
          ),
        },
        ['mesh', 'name', 'zone', 'kind', 'attachments', 'resources'],
      ),
      'proxies whose matched policies or served xDS config a write changes (would change, for a dry run), by mesh then name',
    ),
    WithImpact: {
      type: 'object',
      description: "A write's answer with `impact` asked: the answer's own fields, and the impact",
      properties: { impact: schema('Impact') },
      required: ['impact'],
      additionalProperties: true,
    },
    ConfigTimelineList: page(
      object({
        revision: { type: 'integer', minimum: 1 },
        time: { type: 'string', format: 'date-time' },
        config: { type: 'string', enum: ['created', 'changed', 'removed'] },
        write: object(
          {
            kind: strings,
            mesh: strings,
            name: strings,
            operation: { type: 'string', enum: ['create', 'update', 'delete'] },
            actor: object({ name: strings, groups: array(strings), address: strings }, [
              'name',
              'groups',
              'address',
            ]),
            changeSet: strings,
          },
          ['kind', 'name', 'operation', 'actor'],
          { description: 'The log entry at that revision: the write that changed the config' },
        ),
      }),
      "changes of a proxy's served config, oldest first",
    ),
  };
}

/** What a proxy is served (`/xds`) and its bootstrap. */
function xdsSchemas(sections: Record<string, Json>): Json {
  return {
    XdsResource: {
      type: 'object',
      description:
        'An xDS resource in proto3 JSON (Listener, RouteConfiguration, Cluster, ClusterLoadAssignment)',
      properties: { '@type': strings },
      required: ['@type'],
      additionalProperties: true,
    },
    XdsErrorState: object(
      {
        failed_configuration: {
          ...schema('XdsResource'),
          description: 'Present when the rejected one is the last sent',
        },
        last_update_attempt: { type: 'string', format: 'date-time' },
        details: { type: 'string', description: "The client's error text" },
        version_info: strings,
      },
      ['last_update_attempt', 'details', 'version_info'],
      { description: 'The last NACK of this type' },
    ),
    ConfigDump: object(
      {
        configs: array({
          oneOf: Object.keys(sections).map(schema),
          discriminator: {
            propertyName: '@type',
            mapping: Object.fromEntries(
              Object.keys(sections).map((n) => [`${ADMIN}${n}`, `#/components/schemas/${n}`]),
            ),
          },
        }),
        notes: schema('XdsNotes'),
        pointInTime: object(
          {
            revision: { type: 'integer', minimum: 1 },
            leftOut: array({ type: 'string' }),
          },
          ['revision', 'leftOut'],
          {
            description:
              'As of a past revision (`revision`, `at`): that revision, and the runtime parts the log does not hold, left out',
          },
        ),
      },
      ['configs'],
      {
        description:
          'What a proxy is served, shaped as `envoy.admin.v3.ConfigDump` (`notes` and `pointInTime` are ours)',
      },
    ),
    DataplaneBootstrap: object(
      {
        xds_servers: array(
          object({
            server_uri: { type: 'string', description: '`host:port` of the xDS server' },
            channel_creds: array(object({ type: strings })),
            server_features: array(strings),
          }),
        ),
        node: object({
          id: { type: 'string', description: '`<mesh>.<name>`' },
          locality: object({ zone: strings }, []),
          metadata: { type: 'object', additionalProperties: strings },
        }),
        server_listener_resource_name_template: strings,
      },
      undefined,
      {
        description:
          'A `GRPC_XDS_BOOTSTRAP` file for `@grpc/grpc-js-xds` (no token: add `dataplane.token` to `node.metadata`)',
      },
    ),
  };
}

/**
 * The schemas of the inspect answers (spec 2.20; built by app/inspect.ts and policies/) and of a
 * proxy's `/xds` dump and bootstrap (xds/config-dump.ts, api/xds-routes.ts). A policy in an answer
 * is the stored resource, typed by its kind's schema.
 */
export function inspectSchemas(registry: Registry): Json {
  const policies = registry.all.filter((d) => d.isPolicy);
  const byKind: ByKind = (item) => Object.fromEntries(policies.map((d) => [d.kind, item(schemaName(d))]));
  const sections = configDumpSections();
  return {
    ...sections,
    ...policyViewSchemas(byKind),
    ...affectedSchemas(),
    ...impactSchemas(),
    ...xdsSchemas(sections),
  };
}
