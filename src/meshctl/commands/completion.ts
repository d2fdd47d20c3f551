import type { Command } from 'commander';
import type { CliContext } from '../cli-context.js';

/** Placeholder until the completion commands land. */
export function registerCompletion(_program: Command, _cli: CliContext): void {}
