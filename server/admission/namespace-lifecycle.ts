// NamespaceLifecycle: nothing is created in a namespace that does not exist (404) or is
// being terminated (403); the system namespaces cannot be deleted. kube's plugin is a mutating
// one (it implements Admit) and comes first in the order, so it answers before the object is
// validated and before ServiceAccount admission looks for a ServiceAccount in the namespace.
import type { AdmissionPlugin } from './types.ts';
import { ApiError, forbidden, notFound } from '../errors.ts';
import { admissionObjectName } from './forbidden.ts';

export const IMMORTAL_NAMESPACES = new Set(['default', 'kube-system', 'kube-public']);

export function namespaceLifecycle(getNamespace: (name: string) => { terminating: boolean } | undefined): AdmissionPlugin {
  return {
    name: 'NamespaceLifecycle',
    admit(a) {
      const { info } = a;
      if (a.operation === 'DELETE' && info.group === '' && info.resource === 'namespaces' && !a.subresource) {
        if (IMMORTAL_NAMESPACES.has(a.name)) throw forbidden('', 'namespaces', a.name, 'this namespace may not be deleted');
        return;
      }
      if (a.operation !== 'CREATE' || !info.namespaced || !a.namespace) return;
      const ns = getNamespace(a.namespace);
      if (!ns) throw notFound('', 'namespaces', a.namespace);
      if (ns.terminating) {
        const name = admissionObjectName(a);
        throw new ApiError(
          403,
          'Forbidden',
          `${info.resource}${info.group ? '.' + info.group : ''} "${name}" is forbidden: unable to create new content in namespace ${a.namespace} because it is being terminated`,
          { name, group: info.group || undefined, kind: info.resource, causes: [{ reason: 'NamespaceTerminating', message: `namespace ${a.namespace} is being terminated`, field: 'metadata.namespace' }] },
        );
      }
    },
  };
}
