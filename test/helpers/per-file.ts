/**
 * Run before each test file of the files that share a process (vitest `setupFiles`): what a file
 * may expect to find fresh, made fresh.
 */
import { restartTestKeys } from './signing-keys.js';

restartTestKeys();
