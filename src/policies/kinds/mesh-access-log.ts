import { meshAccessLog } from '../../resources/kinds/mesh-access-log.js';
import { definePolicyKind, type GoShape } from '../policy-kind.js';

const backend: GoShape = {
  nested: { tcp: { always: { format: 'struct' } }, file: { always: { format: 'struct' } } },
};

/** MeshAccessLog: every one whose targetRef selects a listener of the proxy. */
export const meshAccessLogKind = definePolicyKind({
  descriptor: meshAccessLog,
  sidecar: [{ at: 'dataplane', pick: 'targetRef' }],
  rules: { from: true, to: true, goShape: { always: { backends: 'list' }, each: { backends: backend } } },
});
