import { isIP } from 'node:net';
import { z } from 'zod';
import { parseDuration } from '../util/duration.js';

/** Names of resources and meshes (decisions §2): 1–253 chars of [0-9a-z._-], starting alphanumeric. */
export const RESOURCE_NAME = /^[0-9a-z][0-9a-z._-]{0,252}$/;

/** {@link RESOURCE_NAME} as a zod schema, with the message a cause gives. */
export const resourceName = z.string().regex(RESOURCE_NAME, {
  message: 'must be 1 to 253 characters of [0-9a-z._-], starting with a letter or digit',
});

const TAG_KEY = /^[a-zA-Z0-9._:/-]+$/;
const TAG_VALUE = /^[a-zA-Z0-9._:/-]+$/;

/** The service tag every inbound carries (spec 2.4). */
export const SERVICE_TAG = 'mesh.io/service';

/** A tag key: letters, digits and `._:/-`. */
export const tagKey = z
  .string()
  .regex(TAG_KEY, { message: 'tag key must be non-empty and of [a-zA-Z0-9._:/-]' });

/** A tag map of concrete values (data plane tags, external service tags). */
export const tagMap = z.record(
  tagKey,
  z.string().regex(TAG_VALUE, { message: 'tag value must be non-empty and of [a-zA-Z0-9._:/-]' }),
);

/** A tag map used to select: values may also be the wildcard `*` (spec 2.1). */
export const selectorTagMap = z.record(
  tagKey,
  z.string().refine((v) => v === '*' || TAG_VALUE.test(v), {
    message: 'tag value must be `*` or non-empty and of [a-zA-Z0-9._:/-]',
  }),
);

/** A non-empty selector map (`match` of sources, destinations and selectors). */
export const nonEmptySelectorTagMap = selectorTagMap.refine((m) => Object.keys(m).length > 0, {
  message: 'must have at least one tag',
});

/** `{match: {...}}`: one selector. */
export const selector = z.strictObject({ match: nonEmptySelectorTagMap });

/** A non-empty list of selectors. */
export const selectorList = z.array(selector).min(1, { message: 'must have at least one element' });

/** Durations as the user writes them (decisions §2): `300ms`, `5s`, `1.5s`, `10m`, `1h30m`. */
export const duration = z.string().regex(/^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/, {
  message: 'must be a duration such as 300ms, 5s, 1.5s, 10m, 1h30m',
});

/**
 * A duration that must be above zero (Kuma's rule for timeouts, intervals and back-offs). A bare
 * `0` (Go's zero duration) is read as zero, so its cause says it must be greater than 0.
 */
export const positiveDuration = z
  .string()
  .refine((v) => v === '0' || !Number.isNaN(parseDuration(v)), {
    message: 'must be a duration such as 300ms, 5s, 1.5s, 10m, 1h30m',
    abort: true,
  })
  .refine((v) => v !== '0' && parseDuration(v) > 0, { message: 'must be greater than 0' });

/** Standard base64 (with padding). */
export const base64 = z.string().regex(/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/, {
  message: 'must be valid base64',
});

/**
 * The message of a wrong-type integer. Given as a schema's `error` it applies to type issues only:
 * a schema-level `message` would also replace the messages of its later checks (`min`, `max`).
 */
const integerTypeError = (issue: { code: string }): string | undefined =>
  issue.code === 'invalid_type' ? 'must be an integer' : undefined;

/** A TCP/UDP port, 1–65535. */
export const port = z
  .number({ error: integerTypeError })
  .int({ message: 'must be an integer' })
  .min(1, { message: 'must be in the range 1-65535' })
  .max(65535, { message: 'must be in the range 1-65535' });

/** Any integer; the base of the ranged ones (stacking `min` checks would report one violation twice). */
export const integer = z.number({ error: integerTypeError }).int({ message: 'must be an integer' });

/** A non-negative integer. */
export const uint = integer.min(0);

/** An IPv4 or IPv6 address. */
export const ipAddress = z.string().refine((v) => isIP(v) !== 0, { message: 'must be a valid IP address' });

const HOSTNAME =
  /^(?=.{1,253}$)[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;

/** An IP address or a DNS hostname. */
export const hostOrIp = z
  .string()
  .refine((v) => isIP(v) !== 0 || HOSTNAME.test(v), { message: 'must be a valid hostname or IP address' });

/** A hostname as gateways match it: `*`, `*.example.com` or `example.com`. */
export const wildcardHostname = z
  .string()
  .refine((v) => v === '*' || HOSTNAME.test(v.startsWith('*.') ? v.slice(2) : v), {
    message: 'must be a hostname, optionally starting with "*.", or "*"',
  });

/** `host:port` (IPv6 hosts in brackets). */
export const hostPort = z.string().refine(
  (v) => {
    const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(v);
    if (!m) return false;
    const host = m[1] ?? m[2];
    const p = Number(m[3]);
    if (p < 1 || p > 65535) return false;
    return m[1] !== undefined ? isIP(host) === 6 : isIP(host) === 4 || HOSTNAME.test(host);
  },
  { message: 'must be host:port with a port in the range 1-65535' },
);

/** The protocol tag a destination names when a policy applies to some protocols only. */
export const PROTOCOL_TAG = 'mesh.io/protocol';

/** What a policy's selectors must name beyond tag syntax (the options of Kuma's `ValidateSelectors`). */
export interface SelectorRules {
  /** `required`: each selector names `mesh.io/service`; `only`: it names that tag and no other. */
  service?: 'required' | 'only';
  /** Each selector names `mesh.io/protocol` with one of these values. */
  protocols?: readonly string[];
  /** The list may be empty (ProxyTemplate); every other policy needs one selector at least. */
  allowEmpty?: boolean;
}

/** Causes of the keys and values of one selector, in the places Kuma's `validateTagKeyValues` puts them. */
function checkSelectorTags(
  tags: Record<string, string | null>,
  rules: SelectorRules,
  ctx: z.RefinementCtx,
): void {
  const keys = Object.keys(tags).sort();
  // A destination of service only is told it needs exactly that tag instead.
  if (keys.length === 0 && rules.service !== 'only')
    ctx.addIssue({ code: 'custom', path: [], message: 'must have at least one tag' });
  for (const key of keys) {
    if (key === '') ctx.addIssue({ code: 'custom', path: [], message: 'tag name must be non-empty' });
    else if (!TAG_KEY.test(key)) {
      ctx.addIssue({
        code: 'custom',
        path: [key],
        message: 'tag name must consist of letters, digits and ._:/-',
      });
    }
    if (rules.service === 'only' && key !== SERVICE_TAG) {
      ctx.addIssue({ code: 'custom', path: [key], message: `tag "${key}" is not allowed` });
    }
    // YAML's `key:` without a value is null: an empty value, as Kuma reads it.
    const value = tags[key] ?? '';
    if (value === '') ctx.addIssue({ code: 'custom', path: [key], message: 'tag value must be non-empty' });
    else if (value !== '*' && !TAG_VALUE.test(value)) {
      ctx.addIssue({
        code: 'custom',
        path: [key],
        message: 'tag value must be "*" or consist of letters, digits and ._:/-',
      });
    }
  }
  const hasService = tags[SERVICE_TAG] !== undefined;
  if (rules.service === 'only' && (keys.length !== 1 || !hasService)) {
    ctx.addIssue({ code: 'custom', path: [], message: `must consist of exactly one tag "${SERVICE_TAG}"` });
  }
  if (rules.service !== undefined && !hasService) {
    ctx.addIssue({ code: 'custom', path: [], message: `mandatory tag "${SERVICE_TAG}" is missing` });
  }
  if (rules.protocols !== undefined) checkProtocolTag(tags, rules.protocols, ctx);
}

/** A selector of a policy that applies to some protocols only must name one of them. */
function checkProtocolTag(
  tags: Record<string, string | null>,
  protocols: readonly string[],
  ctx: z.RefinementCtx,
): void {
  const protocol = tags[PROTOCOL_TAG];
  if (protocol === undefined) {
    ctx.addIssue({ code: 'custom', path: [], message: `protocol must be specified (tag "${PROTOCOL_TAG}")` });
  } else if (!protocols.includes(protocol ?? '')) {
    ctx.addIssue({
      code: 'custom',
      path: [PROTOCOL_TAG],
      message: `must be one of the [${protocols.join(', ')}]`,
    });
  }
}

/**
 * One tag map of a policy that selects (a `match`, TrafficRoute's `destination`): at least one tag
 * (unless the service alone is required), tag syntax, and `rules`. An absent map is an empty one.
 */
export function policySelector(rules: SelectorRules = {}) {
  return z.preprocess(
    emptyWhenAbsent(() => ({})),
    z.record(z.string(), z.string().nullable()).superRefine((tags, ctx) => {
      checkSelectorTags(tags, rules, ctx);
    }),
  );
}

/** An absent or null list or map is an empty one, as in Kuma's protobuf specs. */
const emptyWhenAbsent =
  <T>(empty: () => T) =>
  (v: unknown): unknown =>
    v ?? empty();

/**
 * A policy's list of `{match: {...}}` selectors checked as Kuma's `ValidateSelectors` checks it:
 * at least one selector (unless `allowEmpty`), at least one tag each, tag syntax, and `rules`.
 */
export function policySelectors(rules: SelectorRules = {}) {
  const list = z.array(z.strictObject({ match: policySelector(rules) }));
  return z.preprocess(
    emptyWhenAbsent(() => []),
    rules.allowEmpty ? list : list.min(1, { message: 'must have at least one element' }),
  );
}

/** `sources` and `destinations` of the policies of spec 2.6, each with the rules of its kind. */
export function sourcesDestinations(sources: SelectorRules = {}, destinations: SelectorRules = {}) {
  return { sources: policySelectors(sources), destinations: policySelectors(destinations) };
}

/**
 * The selector rules most policies of spec 2.6 share with Kuma (TrafficRoute, TrafficLog, Timeout,
 * Retry, HealthCheck, CircuitBreaker): sources name a service, destinations only a service.
 */
export const SERVICE_TO_SERVICE: readonly [SelectorRules, SelectorRules] = [
  { service: 'required' },
  { service: 'only' },
];

/** Options for cross-field checks: they run even when some fields failed, so every violation is listed (decisions §4). */
export const everyViolation = {
  when: (payload: z.core.ParsePayload): boolean => isRecord(payload.value),
};

/** True for a plain JSON object; cross-field checks use it because they also see invalid input. */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A tag map that must carry the service tag (cause on `tags["mesh.io/service"]`, as Kuma words it). */
export function withServiceTag<T extends z.ZodType<Record<string, string>>>(map: T): T {
  return map.superRefine((m: unknown, ctx) => {
    if (isRecord(m) && m[SERVICE_TAG] === undefined) {
      ctx.addIssue({ code: 'custom', path: [SERVICE_TAG], message: 'tag has to exist' });
    }
  }, everyViolation);
}

/** Concrete tags that must include `mesh.io/service` (inbounds, gateways, external services). */
export const serviceTagMap = withServiceTag(tagMap);

/** A non-empty map of concrete tags. */
export const nonEmptyTagMap = tagMap.refine((m) => Object.keys(m).length > 0, {
  message: 'must have at least one tag',
});

/** A percentage, 0–100, fractions allowed. */
export const percentage = z.number().min(0).max(100);

/** A positive integer (thresholds, counts that cannot be zero). */
export const positiveInt = integer.min(1);

/** An HTTP status code, 100–599. */
export const httpStatus = integer.min(100).max(599);

/** The key names present (not undefined) on an object. */
function presentKeys(value: Record<string, unknown>, keys: readonly string[]): string[] {
  return keys.filter((k) => value[k] !== undefined);
}

const quoted = (keys: readonly string[]): string => keys.map((k) => `"${k}"`).join(', ');

/** A cross-field check: exactly one of `keys` is set; the cause is on the object itself. */
export function exactlyOneOf(keys: readonly string[]) {
  return (value: Record<string, unknown>, ctx: z.RefinementCtx): void => {
    const set = presentKeys(value, keys);
    if (set.length === 0)
      ctx.addIssue({ code: 'custom', path: [], message: `requires one of ${quoted(keys)}` });
    else if (set.length > 1) {
      ctx.addIssue({
        code: 'custom',
        path: [],
        message: `only one of ${quoted(keys)} can be set, got ${quoted(set)}`,
      });
    }
  };
}

/** A cross-field check: at least one of `keys` is set; the cause is on the object itself. */
export function atLeastOneOf(keys: readonly string[]) {
  return (value: Record<string, unknown>, ctx: z.RefinementCtx): void => {
    if (presentKeys(value, keys).length === 0) {
      ctx.addIssue({ code: 'custom', path: [], message: `requires at least one of ${quoted(keys)}` });
    }
  };
}

/** A cross-field check: at most one of `keys` is set (a protobuf `oneof`); the cause is on the object itself. */
export function atMostOneOf(keys: readonly string[]) {
  return (value: Record<string, unknown>, ctx: z.RefinementCtx): void => {
    const set = presentKeys(value, keys);
    if (set.length > 1) {
      ctx.addIssue({
        code: 'custom',
        path: [],
        message: `only one of ${quoted(keys)} can be set, got ${quoted(set)}`,
      });
    }
  };
}

const DATA_SOURCE_KEYS = ['secret', 'inline', 'inlineString', 'file'] as const;

/** Where certificate bytes come from: exactly one of a secret name, base64 inline data, inline text, a file. */
export const dataSource = z
  .strictObject({
    secret: z.string().min(1).optional(),
    inline: base64.min(1).optional(),
    inlineString: z.string().min(1).optional(),
    file: z.string().min(1).optional(),
  })
  .superRefine(exactlyOneOf(DATA_SOURCE_KEYS), everyViolation);

/** The keys of `dataSource` that hold text of several lines (PEM). */
export const DATA_SOURCE_TEXT_KEYS = ['inlineString'] as const;

/** `{name, ...}` entries whose names must be unique: cause on the duplicate's `name`. */
export function uniqueNames(list: unknown, ctx: z.RefinementCtx, path: PropertyKey[], what: string): void {
  if (!Array.isArray(list)) return;
  const seen = new Set<unknown>();
  list.forEach((item, i) => {
    const name = isRecord(item) ? item.name : undefined;
    if (typeof name !== 'string') return;
    if (seen.has(name)) {
      ctx.addIssue({
        code: 'custom',
        path: [...path, i, 'name'],
        message: `"${name}" name is already used for another ${what}`,
      });
    }
    seen.add(name);
  });
}

/**
 * The name of a mesh's logging or tracing backend a TrafficLog or TrafficTrace uses; empty or null
 * (YAML's `backend:`) means the mesh's default backend, as in Kuma.
 */
export const backendName = z.preprocess((v) => (v === null ? undefined : v), z.string().optional());
