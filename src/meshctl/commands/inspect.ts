import type { Command } from 'commander';
import type { CliContext } from '../cli-context.js';

/** Placeholder until the inspect commands land. */
export function registerInspect(_program: Command, _cli: CliContext): void {}
