import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';

/** Headers that present a user token. */
export const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

/** A remote (non-loopback) caller for `app.inject()`: neither admin by address nor anonymous-from-loopback. */
export const REMOTE = '10.20.30.40';

/** Issues a user token as the loopback admin through `POST /tokens/user`; fails the test if it is refused. */
export async function issueUserToken(
  app: FastifyInstance,
  body: { name: string; groups?: string[]; validFor?: string },
): Promise<string> {
  const res = await app.inject({
    method: 'POST',
    url: '/tokens/user',
    payload: { groups: [], validFor: '1h', ...body },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.body;
}

/** Issues a data plane token as the loopback admin through `POST /tokens/dataplane`; fails the test if it is refused. */
export async function issueDataplaneToken(
  app: FastifyInstance,
  body: Record<string, unknown>,
): Promise<string> {
  const res = await app.inject({ method: 'POST', url: '/tokens/dataplane', payload: body });
  expect(res.statusCode, res.body).toBe(200);
  return res.body;
}

/** The decoded header and payload of a JWT (no verification: for looking at what was issued). */
export function decodeJwt(token: string): {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
} {
  const [header, payload] = token.split('.');
  const decode = (part: string) =>
    JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;
  return { header: decode(header), payload: decode(payload) };
}

/** base64 of a text, as secret `data` wants it. */
export const b64 = (text: string): string => Buffer.from(text).toString('base64');
