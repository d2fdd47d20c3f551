/** The kinds of token the control plane issues (spec 4.8). */
export const TOKEN_TYPES = ['user', 'dataplane', 'zone', 'zone-ingress'] as const;

/** One kind of token; also the last segment of its endpoint `/tokens/<type>`. */
export type TokenType = (typeof TOKEN_TYPES)[number];

/** Where a token type's secrets live: global secrets, or the secrets of one mesh (data plane tokens). */
export interface KeyPlace {
  /** `GlobalSecret` or `Secret`. */
  kind: 'GlobalSecret' | 'Secret';
  mesh?: string;
}

/** The secret kind and mesh that hold a token type's signing keys and revocations. */
export function keyPlace(type: TokenType, mesh?: string): KeyPlace {
  return type === 'dataplane' ? { kind: 'Secret', mesh } : { kind: 'GlobalSecret' };
}

/** The signing key names of a type without the serial: `<prefix>-N` is key number N. */
export function signingKeyPrefix(type: TokenType, mesh?: string): string {
  return type === 'dataplane' ? `dataplane-token-signing-key-${mesh}` : `${type}-token-signing-key`;
}

/** The name of signing key number `serial`. */
export function signingKeyName(type: TokenType, serial: number, mesh?: string): string {
  return `${signingKeyPrefix(type, mesh)}-${serial}`;
}

/** The serial of a signing key secret name of this type, or undefined when the name is not one. */
export function signingKeySerial(type: TokenType, name: string, mesh?: string): number | undefined {
  const prefix = `${signingKeyPrefix(type, mesh)}-`;
  if (!name.startsWith(prefix)) return undefined;
  const rest = name.slice(prefix.length);
  if (!/^[1-9]\d{0,8}$/.test(rest)) return undefined;
  return Number(rest);
}

/** The secret whose data lists the revoked token ids of a type (base64 of `id1,id2,...`). */
export function revocationsName(type: TokenType, mesh?: string): string {
  return type === 'dataplane' ? `dataplane-token-revocations-${mesh}` : `${type}-token-revocations`;
}

/** Whether a secret decides which tokens of a type hold: one of its signing keys, or its revocation list. */
export function isTokenSecret(type: TokenType, kind: string, name: string, mesh?: string): boolean {
  const place = keyPlace(type, mesh);
  if (kind !== place.kind || (place.kind === 'GlobalSecret' && mesh !== undefined)) return false;
  return name === revocationsName(type, mesh) || signingKeySerial(type, name, mesh) !== undefined;
}

/** Token ids in a revocation secret's data: base64 of ids separated by commas or white space. */
export function parseRevocations(data: string): Set<string> {
  const text = Buffer.from(data, 'base64').toString('utf8');
  return new Set(
    text
      .split(/[\s,]+/)
      .map((id) => id.trim())
      .filter((id) => id !== ''),
  );
}
