import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/control-plane.js';
import { meshctl } from '../helpers/meshctl.js';

describe('meshctl completion bash|zsh (issue 18 point 1)', () => {
  const dir = tempDir('meshctl-completion-');
  const config = join(dir.path, 'config.yaml');
  afterAll(() => dir.cleanup());

  /** What bash offers after `words` (the last one is the word being completed), with the script loaded. */
  const complete = (script: string, words: string[]): string[] => {
    const quoted = words.map((w) => `'${w}'`).join(' ');
    const r = spawnSync(
      'bash',
      [
        '-c',
        `source ${script}; COMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}; _meshctl_complete; printf '%s\\n' "\${COMPREPLY[@]}"`,
      ],
      { encoding: 'utf8' },
    );
    expect(r.stderr).toBe('');
    return r.stdout.split('\n').filter(Boolean);
  };

  it('prints a bash script that completes commands, subcommands, flags and registry kinds', async () => {
    const r = await meshctl(['completion', 'bash'], { config });
    expect(r.code).toBe(0);
    const script = join(dir.path, 'meshctl.bash');
    writeFileSync(script, r.stdout);
    expect(complete(script, ['meshctl', ''])).toEqual(
      expect.arrayContaining(['config', 'get', 'inspect', 'apply', 'delete', 'completion']),
    );
    expect(complete(script, ['meshctl', 'ap'])).toEqual(['apply']);
    expect(complete(script, ['meshctl', 'config', 'control-planes', ''])).toEqual([
      'add',
      'list',
      'switch',
      'remove',
    ]);
    expect(complete(script, ['meshctl', 'get', 'traffic-p'])).toEqual(['traffic-permissions']);
    // Flags that take a value are skipped, global ones before the command too.
    expect(complete(script, ['meshctl', '--context', 'x', 'get', '--mesh', 'demo', 'zone-i'])).toEqual([
      'zone-ingresses',
    ]);
    expect(complete(script, ['meshctl', 'get', 'meshes', '--o'])).toEqual(['--output', '--offset']);
    expect(complete(script, ['meshctl', 'inspect', ''])).toEqual([
      'dataplanes',
      'services',
      'zones',
      'meshes',
      'dataplane',
    ]);
    expect(complete(script, ['meshctl', 'delete', 'mesh', 'x', ''])).toEqual([]);
  });

  it('prints a zsh script built on the same one', async () => {
    const zsh = await meshctl(['completion', 'zsh'], { config });
    expect(zsh.code).toBe(0);
    expect(zsh.stdout.startsWith('#compdef meshctl\n')).toBe(true);
    expect(zsh.stdout).toContain('bashcompinit');
    expect(zsh.stdout).toContain('complete -F _meshctl_complete meshctl');
    const fish = await meshctl(['completion', 'fish'], { config });
    expect(fish.code).not.toBe(0);
  });
});
