import type { ResourceDescriptor } from '../resources/descriptor.js';
import { AppError } from '../util/errors.js';

/** The settings that decide whether the API may write a kind. */
export interface WriteSettings {
  mode: 'standalone' | 'global' | 'zone';
  environment: 'universal' | 'kubernetes';
  readOnly: boolean;
}

/** Why the API may not write this kind, or undefined when it may (decisions §4: 405 reasons). */
export function writeRefusal(desc: ResourceDescriptor, s: WriteSettings): string | undefined {
  if (desc.derived) return `${desc.wireType} is derived by the control plane and cannot be written`;
  if (s.environment === 'kubernetes') {
    return 'the control plane runs in the kubernetes environment: change resources through custom resources';
  }
  if (s.readOnly) return 'the API server is read-only (apiServer.readOnly is true)';
  if (s.mode === 'global' && desc.zoneOwned) {
    return `${desc.wireType} is owned by zones: write it on the zone control plane`;
  }
  if (s.mode === 'zone' && !desc.zoneOwned) {
    return `${desc.wireType} is managed by the global control plane: write it on Global`;
  }
  return undefined;
}

/** Throws 405 when the API may not write this kind. */
export function assertWritable(desc: ResourceDescriptor, s: WriteSettings): void {
  const reason = writeRefusal(desc, s);
  if (reason) throw new AppError('METHOD_NOT_ALLOWED', 'Method not allowed', reason);
}
