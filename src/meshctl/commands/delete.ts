import type { Command } from 'commander';
import type { CliContext } from '../cli-context.js';

/** Placeholder until the delete commands land. */
export function registerDelete(_program: Command, _cli: CliContext): void {}
