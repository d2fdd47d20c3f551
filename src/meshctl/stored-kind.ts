import { UsageError } from './cli-context.js';
import { kindOrFail } from './commands/get.js';
import type { KindInfo } from './kind-table.js';
import { KIND_TABLE } from './kind-table.js';

/** The stored kind a user's word names (one with history and audit entries); a usage error otherwise. */
export function storedKindOrFail(word: string): KindInfo {
  const kind = kindOrFail(word);
  if (kind.derived) {
    const stored = KIND_TABLE.filter((k) => !k.derived).map((k) => k.path);
    throw new UsageError(
      `${kind.path} is computed from other resources, not stored: it has no history; stored kinds: ${stored.join(', ')}`,
    );
  }
  return kind;
}
