import { isIP } from 'node:net';
import { z } from 'zod';
import { defineResource } from '../descriptor.js';
import { base64, DATA_SOURCE_TEXT_KEYS, everyViolation } from '../fragments.js';
import { isIpOrDnsName, proxyTags } from '../proxy-fields.js';

const SOURCE_KEYS = ['secret', 'inline', 'inlineString', 'file'] as const;

/**
 * Where certificate bytes come from (Kuma's DataSource, as its ValidateDataSource checks it): one
 * of a secret name, base64 inline data, inline text or a file; empty values count as none, and a
 * source with none is refused as a whole.
 */
const dataSource = z
  .strictObject({
    secret: z.string().optional(),
    inline: base64.optional(),
    inlineString: z.string().optional(),
    file: z.string().optional(),
  })
  .superRefine((ds: Record<string, unknown>, ctx) => {
    const present = SOURCE_KEYS.filter((k) => ds[k] !== undefined);
    if (present.length > 1) {
      const keys = present.map((k) => `"${k}"`).join(', ');
      ctx.addIssue({ code: 'custom', path: [], message: `only one of ${keys} can be set` });
    } else if (!present.some((k) => ds[k] !== '')) {
      ctx.addIssue({ code: 'custom', path: [], message: 'data source cannot be empty' });
    }
  }, everyViolation);

// Spec 2.8: `tls` may be empty; `caCert.inline` is base64 (the other data source forms are Kuma's).
const tls = z.strictObject({
  enabled: z.boolean().optional(),
  caCert: dataSource.optional(),
  clientCert: dataSource.optional(),
  clientKey: dataSource.optional(),
  allowRenegotiation: z.boolean().optional(),
  serverName: z.string().min(1).optional(),
});

/** `host:port` split as Go's net.SplitHostPort splits it; undefined when it cannot be. */
function splitHostPort(v: string): { host: string; port: string } | undefined {
  if (v.startsWith('[')) {
    const end = v.indexOf(']');
    if (end < 0 || v[end + 1] !== ':') return undefined;
    return { host: v.slice(1, end), port: v.slice(end + 2) };
  }
  const i = v.lastIndexOf(':');
  if (i < 0 || v.slice(0, i).includes(':')) return undefined;
  return { host: v.slice(0, i), port: v.slice(i + 1) };
}

/** The address of an external service: `host:port`, each part with its own cause (as in Kuma). */
const address = z
  .string()
  .min(1)
  .superRefine((v, ctx) => {
    if (v === '') return;
    const parts = splitHostPort(v);
    if (parts === undefined) ctx.addIssue({ code: 'custom', message: 'must be host:port' });
    const host = parts?.host ?? '';
    if (!isIpOrDnsName(host) || (v.startsWith('[') && isIP(host) !== 6))
      ctx.addIssue({ code: 'custom', message: 'host must be a valid IP address or domain name' });
    const port = Number(/^\d+$/.test(parts?.port ?? '') ? parts?.port : 0);
    if (port < 1 || port > 65535)
      ctx.addIssue({ code: 'custom', message: 'port must be in the range 1-65535' });
  });

/** ExternalService (spec 2.8): a service outside the mesh; in the catalogue, not a policy kind. */
export const externalService = defineResource({
  kind: 'ExternalService',
  scope: 'mesh',
  path: 'external-services',
  tagSets: (r) => (r.tags ? [r.tags as Record<string, string>] : []),
  spec: z.strictObject({
    networking: z.strictObject({ address, tls: tls.optional() }),
    tags: proxyTags({ service: 'map', protocol: 'known' }),
  }),
  catalogue: { displayName: 'External Services', singularDisplayName: 'External Service' },
  isPolicy: false,
  // The reference counts it in MeshInsight.policies too, and the GUI's sidebar reads it there.
  countedInMeshInsight: true,
  sync: 'down',
  crossMeshList: true,
  multiLineKeys: new Set(DATA_SOURCE_TEXT_KEYS),
});
