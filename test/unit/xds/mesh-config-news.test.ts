import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import type { LogEntry, WireResource } from '../../../src/events/types.js';
import { gatewayMatcher } from '../../../src/policies/gateway-matcher.js';
import { createMatchView, type MatchView } from '../../../src/policies/match-view.js';
import { createResourceViews } from '../../../src/projections/resource-views.js';
import { registry } from '../../../src/resources/registry.js';
import { onMeshChange, xdsSources } from '../../../src/runtime/xds-sources.js';
import { createMeshConfigSource } from '../../../src/xds/mesh-config-source.js';
import { dataplaneLookup } from '../../../src/xds/node-identity.js';
import { LISTENER } from '../../../src/xds/type-urls.js';
import { SVC } from '../../helpers/policies.js';

const MESH = 'default';
const T = '2026-01-01T00:00:00.000Z';
let revision = 0;

function entry(kind: string, name: string, fields: Record<string, unknown>): LogEntry {
  const mesh = kind === 'Mesh' ? undefined : MESH;
  const resource: WireResource = {
    type: kind,
    ...(mesh ? { mesh } : {}),
    name,
    creationTime: T,
    modificationTime: 't',
    ...fields,
  };
  return {
    revision: ++revision,
    time: 't',
    kind,
    ...(mesh ? { mesh } : {}),
    name,
    operation: 'create',
    resource,
    actor: { name: 'x', groups: [], address: 'x' },
    origin: 'local',
    prevHash: '',
    hash: '',
  } as LogEntry;
}

const node = (name: string) => ({
  id: `${MESH}.${name}`,
  cluster: '',
  metadata: {},
  user_agent_name: '',
  user_agent_version: '',
  client_features: [],
});

describe('the mesh config source hands the match view news to the streams it names', () => {
  it('one subscription for all streams; a change that names one proxy reaches its stream only', async () => {
    const views = createResourceViews(registry);
    const matches = createMatchView(views, gatewayMatcher);
    let subscriptions = 0;
    const counted: MatchView<unknown> = {
      ...matches,
      onProxiesChanged: (l) => {
        subscriptions++;
        return matches.onProxiesChanged(l);
      },
    };
    views.apply([entry('Mesh', MESH, { creationTime: T })]);
    const dp = (name: string, svc: string, i: number) =>
      entry('Dataplane', name, {
        creationTime: T,
        networking: { address: `10.0.0.${i}`, inbound: [{ port: 9000, tags: { [SVC]: svc } }] },
      });
    const clients = Array.from({ length: 20 }, (_, i) => `client-${i}`);
    views.apply([dp('backend', 'b', 200), ...clients.map((n, i) => dp(n, `c-${i}`, i + 1))]);
    await matches.buildAll();
    const source = createMeshConfigSource({
      lookup: dataplaneLookup(views),
      checkToken: async () => ({ ok: true }),
      sources: xdsSources(views, matches),
      matches: counted,
      onMeshChange: onMeshChange(views),
    });
    const told = new Map<string, number>();
    const handles = [];
    for (const name of clients) {
      const h = await source.open(node(name), new grpc.Metadata());
      h.onChange(() => told.set(name, (told.get(name) ?? 0) + 1));
      h.resources(LISTENER, ['b']);
      handles.push(h);
    }
    expect(subscriptions).toBe(1);
    // A Timeout whose sources are client-3's service: only client-3's config may change.
    views.apply([
      entry('Timeout', 't1', {
        creationTime: T,
        sources: [{ match: { [SVC]: 'c-3' } }],
        destinations: [{ match: { [SVC]: 'b' } }],
        conf: { http: { requestTimeout: '1s' } },
      }),
    ]);
    expect([...told]).toEqual([['client-3', 1]]);
    for (const h of handles) h.closed?.();
  });
  it('a stream that follows the source is told as listeners are, and no longer once it closed', async () => {
    const views = createResourceViews(registry);
    const matches = createMatchView(views, gatewayMatcher);
    views.apply([entry('Mesh', MESH, { creationTime: T })]);
    const dp = (name: string, svc: string, i: number) =>
      entry('Dataplane', name, {
        creationTime: T,
        networking: { address: `10.0.0.${i}`, inbound: [{ port: 9000, tags: { [SVC]: svc } }] },
      });
    views.apply([dp('backend', 'b', 200), dp('client-1', 'c-1', 1), dp('client-2', 'c-2', 2)]);
    await matches.buildAll();
    const source = createMeshConfigSource({
      lookup: dataplaneLookup(views),
      checkToken: async () => ({ ok: true }),
      sources: xdsSources(views, matches),
      matches,
      onMeshChange: onMeshChange(views),
    });
    const timeout = (name: string, client: string) =>
      entry('Timeout', name, {
        creationTime: T,
        sources: [{ match: { [SVC]: client } }],
        destinations: [{ match: { [SVC]: 'b' } }],
        conf: { http: { requestTimeout: '1s' } },
      });
    const told: string[] = [];
    const open = async (name: string) => {
      const h = await source.open(node(name), new grpc.Metadata());
      if (!h.follow) throw new Error('the mesh config source can be followed');
      h.follow({ changed: () => told.push(name), end: () => told.push(`${name} ended`) });
      h.resources(LISTENER, ['b']);
      return h;
    };
    const one = await open('client-1');
    const two = await open('client-2');
    // A listener beside the follower hears the same news.
    let heard = 0;
    two.onChange(() => heard++);
    views.apply([timeout('t1', 'c-1')]);
    expect(told).toEqual(['client-1']);
    one.resources(LISTENER, ['b']);
    views.apply([timeout('t2', 'c-2')]);
    expect(told).toEqual(['client-1', 'client-2']);
    expect(heard).toBe(1);
    // client-2 has no config cached now: it hears every change, as client-1 closing (its dialled
    // services leave the match view), the follower and the listener alike.
    one.closed();
    expect(told).toEqual(['client-1', 'client-2', 'client-2']);
    expect(heard).toBe(2);
    two.closed();
    views.apply([timeout('t3', 'c-1'), timeout('t4', 'c-2')]);
    expect(told).toEqual(['client-1', 'client-2', 'client-2']);
    expect(heard).toBe(2);
  });
});
