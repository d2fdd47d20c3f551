/**
 * What `meshctl apply --dry-run` says a set would do to proxies, from the answer's `impact`: one
 * line per proxy with the policies added, removed or changed at each attachment and the xDS
 * resources that change ("web-1: outbound backend: Timeout to-backend added; Listener backend
 * changed"), and with `--diff` each resource's diff under it.
 */
import type { Impact, ProxyImpact } from './wire-types.js';
import { counted } from '../util/plural.js';

/** Where a policy applies on the proxy, as a person names it. */
function attachmentLabel(a: ProxyImpact['attachments'][number]): string {
  if (a.type === 'dataplane') return 'the proxy';
  if (a.type === 'gateway') return 'the gateway';
  return `${a.type} ${a.service || a.name}`;
}

/** One proxy's line: its attachments' policy changes, then its resource changes. */
function proxyLine(p: ProxyImpact): string {
  const parts: string[] = [];
  if (p.proxy) parts.push(`proxy ${p.proxy}`);
  const byAttachment = new Map<string, string[]>();
  for (const a of p.attachments) {
    const label = attachmentLabel(a);
    const list = byAttachment.get(label) ?? [];
    for (const n of a.added) list.push(`${a.policyKind} ${n} added`);
    for (const n of a.removed) list.push(`${a.policyKind} ${n} removed`);
    for (const n of a.replaced) list.push(`${a.policyKind} ${n} changed`);
    byAttachment.set(label, list);
  }
  for (const [label, changes] of byAttachment) parts.push(`${label}: ${changes.join(', ')}`);
  if (p.resources.length > 0)
    parts.push(`xDS ${p.resources.map((r) => `${r.type} ${r.name} ${r.change}`).join(', ')}`);
  const where = p.zone ? ` in zone ${p.zone}` : '';
  return `  ${p.mesh}/${p.name} (${p.kind}${where}): ${parts.join('; ')}`;
}

/** The summary's lines (each ending in a newline); `diff`: each changed resource's diff too. */
export function impactSummary(impact: Impact, diff: boolean): string {
  if (impact.total === 0) return 'no proxy would change\n';
  let out = `${counted(impact.total, 'proxy', 'proxies')} would change:\n`;
  for (const p of impact.items) {
    out += `${proxyLine(p)}\n`;
    if (!diff) continue;
    for (const r of p.resources) if (r.diff) out += r.diff.endsWith('\n') ? r.diff : `${r.diff}\n`;
  }
  const more = impact.total - impact.items.length;
  if (more > 0)
    out += `  … and ${counted(more, 'more proxy', 'more proxies')} (the first ${impact.items.length} are listed)\n`;
  return out;
}
