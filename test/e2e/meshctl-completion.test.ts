import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { startListeningPlane, tempDir } from '../helpers/control-plane.js';
import { meshctl } from '../helpers/meshctl.js';
import { tp } from '../helpers/multizone.js';
import { REPO_ROOT } from '../helpers/process.js';

/** Whether a program is on the PATH. */
/** `text` as one single-quoted shell word. */
const shellQuote = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;

/** Fails (never skips) when a shell the completion scripts are tested in is missing: `.ci/run` installs them. */
const needs = (program: string): void => {
  if (spawnSync('sh', ['-c', `command -v ${program}`]).status !== 0)
    throw new Error(`${program} is not installed: apt-get install -y ${program} (.ci/run does)`);
};

describe('meshctl completion bash|zsh|fish', () => {
  const dir = tempDir('meshctl-completion-');
  const config = join(dir.path, 'config.yaml');
  // The scripts run `meshctl __complete …`: a `meshctl` on the PATH, as `npm install -g` makes one.
  const bin = join(dir.path, 'bin');
  const env = {
    ...process.env,
    PATH: `${bin}:${process.env.PATH ?? ''}`,
    MESHCTL_CONFIG: config,
  };
  let cp: ControlPlane;
  beforeAll(async () => {
    mkdirSync(bin);
    writeFileSync(
      join(bin, 'meshctl'),
      `#!/bin/sh\nexec node ${JSON.stringify(join(REPO_ROOT, 'dist/bin/meshctl.js'))} "$@"\n`,
    );
    chmodSync(join(bin, 'meshctl'), 0o755);
    cp = await startListeningPlane();
    const base = `http://127.0.0.1:${cp.ports.api}`;
    for (const mesh of ['demo', 'shop']) {
      const res = await fetch(`${base}/meshes/${mesh}`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ type: 'Mesh', name: mesh }),
      });
      expect(res.ok).toBe(true);
    }
    const res = await fetch(`${base}/meshes/shop/traffic-permissions/tp-1`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(tp('tp-1', 'shop')),
    });
    expect(res.ok).toBe(true);
    expect(
      (await meshctl(['config', 'control-planes', 'add', '--name', 'test', '--address', base], { config }))
        .code,
    ).toBe(0);
  });
  afterAll(async () => {
    await cp?.close();
    dir.cleanup();
  });

  /**
   * Runs a shell command to its end, asynchronously: the control plane answering the completions
   * runs in this process, so a synchronous spawn would keep it from answering.
   */
  const shell = (program: string, script: string): Promise<{ stdout: string; stderr: string }> =>
    new Promise((resolve) => {
      const proc = spawn(program, ['-c', script], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      proc.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      proc.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      proc.on('close', () => resolve({ stdout, stderr }));
    });

  /** What bash offers after `words` (the last one is the word being completed), with the script loaded. */
  const complete = async (script: string, words: string[]): Promise<string[]> => {
    const quoted = words.map((w) => `'${w}'`).join(' ');
    const r = await shell(
      'bash',
      `source ${script}; COMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}; ` +
        `COMP_LINE=${shellQuote(words.join(' '))}; COMP_POINT=\${#COMP_LINE}; ` +
        `_meshctl_complete; printf '%s\\n' "\${COMPREPLY[@]}"`,
    );
    expect(r.stderr).toBe('');
    return r.stdout.split('\n').filter(Boolean);
  };

  it('prints a bash script that completes commands, subcommands, flags and registry kinds', async () => {
    const r = await meshctl(['completion', 'bash'], { config });
    expect(r.code).toBe(0);
    const script = join(dir.path, 'meshctl.bash');
    writeFileSync(script, r.stdout);
    expect(await complete(script, ['meshctl', ''])).toEqual(
      expect.arrayContaining(['config', 'get', 'inspect', 'apply', 'delete', 'completion']),
    );
    expect(await complete(script, ['meshctl', 'ap'])).toEqual(['apply']);
    expect(await complete(script, ['meshctl', 'config', 'control-planes', ''])).toEqual([
      'add',
      'list',
      'switch',
      'remove',
    ]);
    expect(await complete(script, ['meshctl', 'get', 'traffic-p'])).toEqual(['traffic-permissions']);
    // Flags that take a value are skipped, global ones before the command too.
    expect(await complete(script, ['meshctl', '--context', 'x', 'get', '--mesh', 'demo', 'zone-i'])).toEqual([
      'zone-ingresses',
    ]);
    expect(await complete(script, ['meshctl', 'get', 'meshes', '--o'])).toEqual(['--output', '--offset']);
    expect(await complete(script, ['meshctl', 'inspect', ''])).toEqual(
      expect.arrayContaining(['dataplanes', 'services', 'zones', 'meshes', 'dataplane', 'zoneingresses']),
    );
    expect(await complete(script, ['meshctl', 'inspect', 'traffic-per'])).toEqual(['traffic-permissions']);
    expect(await complete(script, ['meshctl', 'delete', 'mesh', 'x', ''])).toEqual([]);
  });

  it('completes -o values, --mesh from the server, contexts, and resource names', async () => {
    const script = join(dir.path, 'meshctl-dynamic.bash');
    writeFileSync(script, (await meshctl(['completion', 'bash'], { config })).stdout);
    expect(await complete(script, ['meshctl', 'get', 'meshes', '-o', ''])).toEqual(['table', 'yaml', 'json']);
    expect(await complete(script, ['meshctl', 'get', 'meshes', '--output', 'y'])).toEqual(['yaml']);
    expect(await complete(script, ['meshctl', 'get', 'dataplanes', '--mesh', ''])).toEqual([
      'default',
      'demo',
      'shop',
    ]);
    expect(await complete(script, ['meshctl', 'inspect', 'dataplanes', '-m', 'd'])).toEqual([
      'default',
      'demo',
    ]);
    expect(await complete(script, ['meshctl', '--context', ''])).toEqual(['local', 'test']);
    expect(await complete(script, ['meshctl', 'config', 'control-planes', 'switch', '--name', ''])).toEqual([
      'local',
      'test',
    ]);
    expect(await complete(script, ['meshctl', 'get', 'mesh', ''])).toEqual(['default', 'demo', 'shop']);
    // The mesh's default permission (made with the mesh) and the one written above.
    expect(await complete(script, ['meshctl', 'get', 'traffic-permission', '--mesh', 'shop', ''])).toEqual([
      'allow-all-shop',
      'tp-1',
    ]);
    expect(
      await complete(script, ['meshctl', 'delete', '--mesh', 'shop', 'traffic-permissions', 't']),
    ).toEqual(['tp-1']);
    expect(await complete(script, ['meshctl', 'inspect', '-m', 'shop', 'traffic-permission', 'a'])).toEqual([
      'allow-all-shop',
    ]);
    // The mesh default has no permission named so.
    expect(await complete(script, ['meshctl', 'inspect', 'traffic-permission', 't'])).toEqual([]);
    expect(await complete(script, ['meshctl', 'inspect', 'dataplane', 'web', '--type', ''])).toEqual([
      'policies',
      'rules',
      'config-dump',
      'stats',
      'clusters',
    ]);
    // A control plane that does not answer: no names, no error printed.
    expect(
      await complete(script, ['meshctl', '--api-address', 'http://127.0.0.1:1', 'get', 'mesh', '']),
    ).toEqual([]);
    // --flag=value: bash splits the word at = (and :), and replaces only what follows.
    expect(await complete(script, ['meshctl', 'get', 'dataplanes', '--mesh=s'])).toEqual(['shop']);
    expect(await complete(script, ['meshctl', 'get', 'meshes', '--output=j'])).toEqual(['json']);
    // An address with a colon before the command is one word, not three.
    const address = `http://127.0.0.1:${cp.ports.api}`;
    expect(await complete(script, ['meshctl', '--api-address', address, 'get', 'mesh', 'sh'])).toEqual([
      'shop',
    ]);
    // A file name with a space is one candidate.
    writeFileSync(join(dir.path, 'my file.yaml'), '');
    expect(await complete(script, ['meshctl', 'apply', '-f', join(dir.path, 'my')])).toEqual([
      join(dir.path, 'my file.yaml'),
    ]);
    // A file for -f.
    writeFileSync(join(dir.path, 'policy-file.yaml'), '');
    expect(await complete(script, ['meshctl', 'apply', '-f', join(dir.path, 'policy-f')])).toEqual([
      join(dir.path, 'policy-file.yaml'),
    ]);
  });

  it('prints a zsh script built on the same one', async () => {
    const zsh = await meshctl(['completion', 'zsh'], { config });
    expect(zsh.code).toBe(0);
    expect(zsh.stdout.startsWith('#compdef meshctl\n')).toBe(true);
    expect(zsh.stdout).toContain('bashcompinit');
    expect(zsh.stdout).toContain('complete -F _meshctl_complete meshctl');
  });

  // zsh runs the bash script through bashcompinit, whose compgen calls it in sh emulation.
  it('the zsh script parses in zsh and completes there', async () => {
    needs('zsh');
    const script = join(dir.path, 'meshctl.zsh');
    writeFileSync(script, (await meshctl(['completion', 'zsh'], { config })).stdout);
    const words = async (line: string[]): Promise<string[]> => {
      const quoted = line.map((w) => `'${w}'`).join(' ');
      const r = await shell(
        'zsh',
        `autoload -U compinit && compinit -u; source ${script}; ` +
          `emulate sh; COMP_WORDS=(${quoted}); COMP_CWORD=${line.length - 1}; ` +
          `COMP_LINE=${shellQuote(line.join(' '))}; COMP_POINT=\${#COMP_LINE}; ` +
          `_meshctl_complete; printf '%s\\n' "\${COMPREPLY[@]}"`,
      );
      expect(r.stderr).toBe('');
      return r.stdout.split('\n').filter(Boolean);
    };
    expect(await words(['meshctl', 'ap'])).toEqual(['apply']);
    expect(await words(['meshctl', 'get', 'dataplanes', '--mesh', 's'])).toEqual(['shop']);
    // zsh replaces the whole word: the answer keeps what comes before the =.
    expect(await words(['meshctl', 'get', 'dataplanes', '--mesh=s'])).toEqual(['--mesh=shop']);
  });

  it('prints a fish script that asks meshctl for the words', async () => {
    const fish = await meshctl(['completion', 'fish'], { config });
    expect(fish.code).toBe(0);
    expect(fish.stdout).toContain('complete -c meshctl');
    expect(fish.stdout).toContain('__complete');
    const other = await meshctl(['completion', 'tcsh'], { config });
    expect(other.code).not.toBe(0);
  });

  // fish is not everywhere: where it is, the script runs in it.
  it('completes in fish: commands, -o values and meshes from the server', async () => {
    needs('fish');
    const script = join(dir.path, 'meshctl.fish');
    writeFileSync(script, (await meshctl(['completion', 'fish'], { config })).stdout);
    const words = async (line: string): Promise<string[]> => {
      const r = await shell('fish', `source ${script}; complete -C ${JSON.stringify(line)}`);
      expect(r.stderr).toBe('');
      return r.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split('\t')[0])
        .sort();
    };
    expect(await words('meshctl ap')).toEqual(['apply']);
    expect(await words('meshctl get meshes -o ')).toEqual(['json', 'table', 'yaml']);
    expect(await words('meshctl get dataplanes --mesh ')).toEqual(['default', 'demo', 'shop']);
    expect(await words('meshctl get traffic-permission -m shop ')).toEqual(['allow-all-shop', 'tp-1']);
  });
});
