import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { parseSigningKey } from '../../src/tokens/signing-key.js';
import { LISTENER } from '../../src/xds/type-urls.js';
import { decodeJwt } from '../helpers/auth.js';
import { startListeningPlane, tempDir } from '../helpers/control-plane.js';
import { meshctl } from '../helpers/meshctl.js';
import { rawAdsClient, rawNode } from '../helpers/xds.js';

/**
 * `meshctl generate …`, the built CLI as a process against a control plane on free
 * ports. Tokens are judged by the server that checks them: the API for user tokens, the xDS server
 * for data plane tokens.
 */
const SVC = 'mesh.io/service';

describe('meshctl generate', () => {
  let cp: ControlPlane;
  let address: string;
  const dir = tempDir('e2e-meshctl-generate-');
  // No config file: every command names the server with --api-address.
  const config = join(dir.path, 'meshctl-config.yaml');
  const run = (...args: string[]) => meshctl(['--api-address', address, ...args], { config });
  const call = (method: string, path: string, headers: Record<string, string> = {}, body?: unknown) =>
    fetch(`${address}${path}`, {
      method,
      headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  beforeAll(async () => {
    cp = await startListeningPlane();
    address = `http://127.0.0.1:${cp.ports.api}`;
    const put = await call(
      'PUT',
      '/meshes/default/dataplanes/web-1',
      {},
      {
        type: 'Dataplane',
        mesh: 'default',
        name: 'web-1',
        networking: { address: '127.0.0.1', inbound: [{ port: 8080, tags: { [SVC]: 'web' } }] },
      },
    );
    expect(put.status).toBe(201);
  });
  afterAll(async () => {
    await cp?.close();
    dir.cleanup();
  });

  /** Opens an ADS stream as Dataplane default.web-1 with `token`: the LDS answer, or the refusal. */
  const connect = async (token: string): Promise<{ answered: boolean; status?: grpc.StatusObject }> => {
    const client = rawAdsClient(cp.ports.xds);
    client.send({
      type_url: LISTENER,
      resource_names: ['web'],
      node: rawNode('default.web-1', { 'dataplane.token': token }),
    });
    const first = await Promise.race([client.next(5000).then(() => 'answer' as const), client.status]);
    client.close();
    return first === 'answer' ? { answered: true } : { answered: false, status: first };
  };

  it('dataplane-token prints a token alone that the xDS server accepts for that Dataplane', async () => {
    const out = await run(
      'generate',
      'dataplane-token',
      '--mesh',
      'default',
      '--name',
      'web-1',
      '--tag',
      `${SVC}=web,api`,
    );
    expect(out).toMatchObject({ code: 0, stderr: '' });
    expect(out.stdout).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(decodeJwt(out.stdout).payload).toMatchObject({
      mesh: 'default',
      name: 'web-1',
      tags: { [SVC]: ['web', 'api'] },
      type: 'dataplane',
    });
    expect(await connect(out.stdout)).toEqual({ answered: true });
  });

  it('a dataplane-token for another Dataplane is refused by the xDS server', async () => {
    const out = await run('generate', 'dataplane-token', '--name', 'web-2', '--valid-for', '1h');
    expect(out.code).toBe(0);
    const { exp, iat } = decodeJwt(out.stdout).payload as { exp: number; iat: number };
    expect(exp - iat).toBe(3600);
    const refused = await connect(out.stdout);
    expect(refused.answered).toBe(false);
    expect(refused.status?.code).toBe(grpc.status.PERMISSION_DENIED);
    expect(refused.status?.details).toContain('the token is for Dataplane "web-2"');
  });

  it('user-token prints a token the API accepts, with the groups given', async () => {
    const admin = await run(
      'generate',
      'user-token',
      '--name',
      'alice',
      '--group',
      'mesh-system:admin',
      '--valid-for',
      '1h',
    );
    expect(admin.code).toBe(0);
    expect(decodeJwt(admin.stdout).payload).toMatchObject({ name: 'alice', groups: ['mesh-system:admin'] });
    const reader = await run(
      'generate',
      'user-token',
      '--name',
      'bob',
      '--group',
      'mesh-system:reader,team-a',
      '--valid-for',
      '1h',
    );
    expect(decodeJwt(reader.stdout).payload).toMatchObject({
      name: 'bob',
      groups: ['mesh-system:reader', 'team-a'],
    });
    // Bearer tokens count even from loopback: the admin's reads secrets, the reader's may not.
    const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
    expect((await call('GET', '/global-secrets', bearer(admin.stdout))).status).toBe(200);
    expect((await call('GET', '/global-secrets', bearer(reader.stdout))).status).toBe(403);
  });

  it('zone-token and zone-ingress-token carry the zone, the scopes and the expiry', async () => {
    const zone = await run(
      'generate',
      'zone-token',
      '--zone',
      'zone-1',
      '--scope',
      'ingress',
      '--scope',
      'egress',
      '--valid-for',
      '2h',
    );
    expect(zone.code).toBe(0);
    const claims = decodeJwt(zone.stdout).payload as Record<string, unknown> & { exp: number; iat: number };
    expect(claims).toMatchObject({ zone: 'zone-1', scope: ['ingress', 'egress'] });
    expect(claims.exp - claims.iat).toBe(7200);
    const all = decodeJwt(
      (await run('generate', 'zone-token', '--zone', 'zone-1', '--valid-for', '1h')).stdout,
    );
    expect(all.payload.scope).toEqual(['cp', 'egress', 'ingress']);
    const ingress = await run('generate', 'zone-ingress-token', '--zone', 'zone-1', '--valid-for', '1h');
    expect(ingress.code).toBe(0);
    expect(decodeJwt(ingress.stdout).payload).toMatchObject({ zone: 'zone-1' });
  });

  it('signing-key prints a key that signs the user tokens issued after it is stored', async () => {
    const out = await run('generate', 'signing-key');
    expect(out.code).toBe(0);
    expect(parseSigningKey(out.stdout)?.privateKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
    const put = await call(
      'PUT',
      '/global-secrets/user-token-signing-key-2',
      {},
      {
        type: 'Secret',
        name: 'user-token-signing-key-2',
        data: out.stdout,
      },
    );
    expect(put.status).toBe(201);
    const token = await run(
      'generate',
      'user-token',
      '--name',
      'carol',
      '--group',
      'mesh-system:admin',
      '--valid-for',
      '1h',
    );
    expect(decodeJwt(token.stdout).header.kid).toBe('2');
    expect((await call('GET', '/global-secrets', { authorization: `Bearer ${token.stdout}` })).status).toBe(
      200,
    );
  });

  it('errors: the server’s title and causes, a refusal for a non-admin, and missing flags', async () => {
    const scope = await run(
      'generate',
      'zone-token',
      '--zone',
      'zone-1',
      '--scope',
      'bogus',
      '--valid-for',
      '1h',
    );
    expect(scope.code).not.toBe(0);
    expect(scope.stdout).toBe('');
    expect(scope.stderr).toContain('Error: Invalid token request');
    expect(scope.stderr).toContain('scope[0]: must be one of "cp", "egress", "ingress"');

    const validFor = await run('generate', 'user-token', '--name', 'x', '--valid-for', '0s');
    expect(validFor.stderr).toContain('validFor: must be longer than 0');

    const reader = await run(
      'generate',
      'user-token',
      '--name',
      'r',
      '--group',
      'mesh-system:reader',
      '--valid-for',
      '1h',
    );
    const refused = await run(
      '--api-token',
      reader.stdout,
      'generate',
      'user-token',
      '--name',
      'y',
      '--valid-for',
      '1h',
    );
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('(HTTP 403)');
    expect(refused.stderr).toContain('user "r"');

    const missing = await run('generate', 'zone-token', '--zone', 'zone-1');
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain("required option '--valid-for <duration>' not specified");

    const tag = await run('generate', 'dataplane-token', '--tag', 'no-equals-sign');
    expect(tag.code).not.toBe(0);
    expect(tag.stderr).toContain('--tag must be key=value');
  });
});
