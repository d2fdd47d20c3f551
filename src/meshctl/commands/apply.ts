import type { Command } from 'commander';
import type { CliContext } from '../cli-context.js';

/** Placeholder until the apply commands land. */
export function registerApply(_program: Command, _cli: CliContext): void {}
