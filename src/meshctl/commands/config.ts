import type { Command } from 'commander';
import type { CliContext } from '../cli-context.js';

/** Placeholder until the config commands land. */
export function registerConfig(_program: Command, _cli: CliContext): void {}
