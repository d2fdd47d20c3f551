/**
 * The shapes of the answers meshctl reads, as the HTTP API sends them (decisions §8: history and
 * audit items). meshctl speaks HTTP and nothing else (architecture: it imports resources and util
 * only), so the wire contract is written here rather than imported from the server's app layer.
 */

/** `{name, groups, address}` of whoever made a change. */
export interface Actor {
  name: string;
  groups?: string[];
  address?: string;
}

/** One change of one resource (`<resource URL>/_history`). */
export interface HistoryItem {
  revision: number;
  time: string;
  operation: 'create' | 'update' | 'delete';
  actor: Actor;
  resource: Record<string, unknown>;
}

/** One entry of the audit log (`/_events`): a history item with the resource it changed. */
export interface EventItem extends HistoryItem {
  kind: string;
  mesh?: string;
  name: string;
  /** The change set of the entry; absent for a single write. */
  changeSet?: string;
}

/** What a write does to one proxy (`impact.items` of a write with `?impact=`). */
export interface ProxyImpact {
  mesh: string;
  name: string;
  zone: string | null;
  kind: 'sidecar' | 'gateway' | 'proxyless';
  proxy?: 'created' | 'deleted';
  attachments: Array<{
    type: string;
    name: string;
    service: string;
    policyKind: string;
    added: string[];
    removed: string[];
    replaced: string[];
  }>;
  resources: Array<{ type: string; name: string; change: 'added' | 'removed' | 'changed'; diff?: string }>;
}

/** `impact` of a write's answer: a page of the proxies it changes, with their exact number. */
export interface Impact {
  total: number;
  items: ProxyImpact[];
  next: string | null;
}
