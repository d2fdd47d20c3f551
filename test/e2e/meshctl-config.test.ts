import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { startHttpsPlane, startListeningPlane, tempDir } from '../helpers/control-plane.js';
import { meshctl, tableRows } from '../helpers/meshctl.js';

// The built CLI as a process (npm test builds dist first), against a control plane on a free port.
describe('meshctl config control-planes (contexts)', () => {
  let cp: ControlPlane;
  let address: string;
  const dir = tempDir('meshctl-config-');
  // A directory that does not exist yet: add creates it 0700.
  const config = join(dir.path, 'home', '.meshctl', 'config.yaml');
  const run = (...args: string[]) => meshctl(args, { config });

  beforeAll(async () => {
    cp = await startListeningPlane();
    address = `http://127.0.0.1:${cp.ports.api}`;
  });
  afterAll(async () => {
    await cp.close();
    dir.cleanup();
  });

  it('has a local context at http://127.0.0.1:5681 before any config exists', async () => {
    const r = await run('config', 'control-planes', 'list');
    expect(r.code).toBe(0);
    expect(tableRows(r.stdout)).toEqual([
      ['ACTIVE', 'NAME', 'ADDRESS'],
      ['*', 'local', 'http://127.0.0.1:5681'],
    ]);
    expect(existsSync(config)).toBe(false);
  });

  it('adds a control plane after checking that it answers, switches to it, and keeps the file 0600', async () => {
    const r = await run('config', 'control-planes', 'add', '--name', 'test', '--address', address);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('switched to context "test"');
    expect(statSync(config).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir.path, 'home', '.meshctl')).mode & 0o777).toBe(0o700);
    const file = parse(readFileSync(config, 'utf8')) as Record<string, unknown>;
    expect(file.currentContext).toBe('test');
    expect(file.controlPlanes).toContainEqual({ name: 'test', coordinates: { apiServer: { url: address } } });
    const list = await run('config', 'control-planes', 'list');
    expect(tableRows(list.stdout)).toEqual([
      ['ACTIVE', 'NAME', 'ADDRESS'],
      ['', 'local', 'http://127.0.0.1:5681'],
      ['*', 'test', address],
    ]);
    // The new context is the one commands use.
    const get = await run('get', 'meshes');
    expect(get.code).toBe(0);
    expect(tableRows(get.stdout)[1][0]).toBe('default');
  });

  it('refuses an address that does not answer, a name taken without --overwrite, and a bad URL', async () => {
    const dead = await run(
      'config',
      'control-planes',
      'add',
      '--name',
      'dead',
      '--address',
      'http://127.0.0.1:1',
    );
    expect(dead.code).toBe(1);
    expect(dead.stderr).toContain('cannot reach the control plane at http://127.0.0.1:1 (context "dead")');
    const taken = await run('config', 'control-planes', 'add', '--name', 'test', '--address', address);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain('already exists (use --overwrite');
    const bad = await run('config', 'control-planes', 'add', '--name', 'x', '--address', 'localhost');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('--address must be a URL');
    const file = parse(readFileSync(config, 'utf8')) as { controlPlanes: Array<{ name: string }> };
    expect(file.controlPlanes.map((c) => c.name)).toEqual(['local', 'test']);
  });

  it('adds without the check (--no-check), replaces with --overwrite, and keeps a token', async () => {
    const r = await run(
      'config',
      'control-planes',
      'add',
      '--name',
      'later',
      '--address',
      'http://127.0.0.1:1',
      '--no-check',
    );
    expect(r.code).toBe(0);
    // Commands on a context that does not answer name the address and the context.
    const get = await run('get', 'meshes');
    expect(get.code).toBe(1);
    expect(get.stderr).toMatch(
      /^Error: cannot reach the control plane at http:\/\/127\.0\.0\.1:1 \(context "later"\)/,
    );
    // The check sends the token: a token the server does not know fails the add.
    const refused = await run(
      'config',
      'control-planes',
      'add',
      '--name',
      'later',
      '--address',
      address,
      '--overwrite',
      '--auth-token',
      'abc',
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^Error: .*\(HTTP 401\)/);
    const o = await run(
      'config',
      'control-planes',
      'add',
      '--name',
      'later',
      '--address',
      address,
      '--overwrite',
      '--auth-token',
      'abc',
      '--no-check',
    );
    expect(o.code).toBe(0);
    const file = parse(readFileSync(config, 'utf8')) as {
      controlPlanes: Array<{ name: string; coordinates: { apiServer: Record<string, unknown> } }>;
    };
    expect(file.controlPlanes.find((c) => c.name === 'later')?.coordinates.apiServer).toEqual({
      url: address,
      authToken: 'abc',
    });
    // Every request sends it; the server refuses it, and meshctl says what the server said.
    const refusedGet = await run('get', 'meshes');
    expect(refusedGet.code).toBe(1);
    expect(refusedGet.stderr).toMatch(/^Error: .*\(HTTP 401\)/);
  });

  it('switches, and removes a control plane with its context', async () => {
    const s = await run('config', 'control-planes', 'switch', '--name', 'test');
    expect(s.code).toBe(0);
    const missing = await run('config', 'control-planes', 'switch', '--name', 'nope');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('there is no context "nope"');
    const rm = await run('config', 'control-planes', 'remove', '--name', 'later');
    expect(rm.code).toBe(0);
    const list = await run('config', 'control-planes', 'list');
    expect(tableRows(list.stdout).map((r) => r[1])).toEqual(['NAME', 'local', 'test']);
    const rmCurrent = await run('config', 'control-planes', 'remove', '--name', 'test');
    expect(rmCurrent.stdout).toContain('no context is current');
    const get = await run('get', 'meshes');
    expect(get.code).toBe(1);
    expect(get.stderr).toContain('no context is current');
    expect(statSync(config).mode & 0o777).toBe(0o600);
  });

  it('takes the file from --config-file and the context from --context', async () => {
    const other = join(dir.path, 'other.yaml');
    const add = await meshctl(
      ['--config-file', other, 'config', 'control-planes', 'add', '--name', 'o', '--address', address],
      { config: join(dir.path, 'unused.yaml') },
    );
    expect(add.code).toBe(0);
    expect(existsSync(other)).toBe(true);
    expect(existsSync(join(dir.path, 'unused.yaml'))).toBe(false);
    const dead = await meshctl(
      [
        '--config-file',
        other,
        'config',
        'control-planes',
        'add',
        '--name',
        'dead',
        '--address',
        'http://127.0.0.1:1',
        '--no-check',
      ],
      { config: join(dir.path, 'unused.yaml') },
    );
    expect(dead.code).toBe(0);
    const current = await meshctl(['get', 'meshes'], { config: other });
    expect(current.stderr).toContain('(context "dead")');
    const chosen = await meshctl(['--context', 'o', 'get', 'meshes'], { config: other });
    expect(chosen.stderr).toBe('');
    expect(tableRows(chosen.stdout)[1][0]).toBe('default');
    const unknown = await meshctl(['--context', 'nope', 'get', 'meshes'], { config: other });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain(`context "nope" is not in ${other}`);
  });

  it('reads a config a person wrote in YAML', async () => {
    const handWritten = join(dir.path, 'hand.yaml');
    writeFileSync(
      handWritten,
      `# mine\ncurrentContext: here\ncontexts:\n  - name: here\n    controlPlane: here\ncontrolPlanes:\n  - name: here\n    coordinates:\n      apiServer:\n        url: ${address}\n`,
    );
    const r = await meshctl(['get', 'meshes'], { config: handWritten });
    expect(r.stderr).toBe('');
    expect(tableRows(r.stdout)[1][0]).toBe('default');
  });

  it('says which file is broken', async () => {
    const broken = join(dir.path, 'broken.yaml');
    writeFileSync(broken, 'contexts: [unclosed\n');
    const r = await meshctl(['get', 'meshes'], { config: broken });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${broken}: not valid YAML`);
  });
});

describe('meshctl over HTTPS: --ca-cert and --skip-verify', () => {
  let cp: ControlPlane;
  let https: string;
  const dir = tempDir('meshctl-https-');
  const config = join(dir.path, 'config.yaml');
  const run = (...args: string[]) => meshctl(args, { config });

  beforeAll(async () => {
    cp = await startHttpsPlane(join(dir.path, 'data'));
    https = `https://127.0.0.1:${cp.ports.https}`;
  });
  afterAll(async () => {
    await cp.close();
    dir.cleanup();
  });

  it('refuses a certificate it cannot verify, and says so', async () => {
    const r = await run('config', 'control-planes', 'add', '--name', 'plain', '--address', https);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /cannot reach the control plane at https:\/\/127\.0\.0\.1:\d+ \(context "plain"\): .*certificate/,
    );
  });

  it('verifies the server with --ca-cert', async () => {
    const certFile = cp.tls?.certFile as string;
    expect(existsSync(certFile)).toBe(true);
    const r = await run(
      'config',
      'control-planes',
      'add',
      '--name',
      'ca',
      '--address',
      https,
      '--ca-cert',
      certFile,
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const get = await run('get', 'meshes');
    expect(get.stderr).toBe('');
    expect(tableRows(get.stdout)[1][0]).toBe('default');
  });

  it('skips verification with --skip-verify', async () => {
    const r = await run(
      'config',
      'control-planes',
      'add',
      '--name',
      'skip',
      '--address',
      https,
      '--skip-verify',
    );
    expect(r.code).toBe(0);
    const get = await run('get', 'meshes');
    expect(get.stderr).toBe('');
    expect(tableRows(get.stdout)[1][0]).toBe('default');
    const both = await run(
      'config',
      'control-planes',
      'add',
      '--name',
      'both',
      '--address',
      https,
      '--skip-verify',
      '--ca-cert',
      'x',
    );
    expect(both.code).toBe(1);
    expect(both.stderr).toContain('--ca-cert and --skip-verify do not go together');
  });
});
