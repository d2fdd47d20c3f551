import { EventEmitter } from 'eventemitter3';
import type { LogEntry } from './types.js';

/** The in-process bus: durable batches go out on `committed`, in revision order. */
export type Bus = EventEmitter<{ committed: [readonly LogEntry[]] }>;

/** Creates the bus. */
export function createBus(): Bus {
  return new EventEmitter();
}
