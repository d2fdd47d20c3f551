import { proxyTemplate } from '../../resources/kinds/proxy-template.js';
import { definePolicyKind } from '../policy-kind.js';

/** ProxyTemplate: the best whose selectors match the proxy. */
export const proxyTemplateKind = definePolicyKind({
  descriptor: proxyTemplate,
  sidecar: [{ at: 'dataplane', pick: 'best' }],
});
