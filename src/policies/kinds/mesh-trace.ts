import { meshTrace } from '../../resources/kinds/mesh-trace.js';
import { definePolicyKind } from '../policy-kind.js';

/** MeshTrace: every one whose targetRef selects a listener of the proxy. */
export const meshTraceKind = definePolicyKind({
  descriptor: meshTrace,
  sidecar: [{ at: 'dataplane', pick: 'targetRef' }],
  rules: { single: true, goShape: { always: { backends: 'list', sampling: 'struct', tags: 'list' } } },
});
