// The two PriorityClasses every cluster has, created at start when missing, as kube-apiserver's
// scheduling storage does in its post-start hook (pkg/registry/scheduling/rest,
// scheduling/bootstrap-system-priority-classes, with the values and descriptions of
// k8s.io/api/scheduling/v1's SystemPriorityClasses). One that exists is left as it is.
import type { GenericStore } from '../registry/store.ts';
import type { ResourceCatalog } from '../schema/catalog.ts';
import { ApiError } from '../errors.ts';
import { controllerWriteContext } from './queue-controller.ts';

/** scheduling.SystemCriticalPriority. */
const SYSTEM_CRITICAL_PRIORITY = 2000000000;
export const SYSTEM_PRIORITY_CLASSES: readonly { name: string; value: number; description: string }[] = [
  { name: 'system-node-critical', value: SYSTEM_CRITICAL_PRIORITY + 1000, description: 'Used for system critical pods that must not be moved from their current node.' },
  { name: 'system-cluster-critical', value: SYSTEM_CRITICAL_PRIORITY, description: 'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.' },
];

export async function ensureSystemPriorityClasses(store: GenericStore, catalog: ResourceCatalog): Promise<void> {
  const info = catalog.lookup('scheduling.k8s.io', 'v1', 'priorityclasses')!;
  for (const pc of SYSTEM_PRIORITY_CLASSES) {
    if (store.tryGet(info, '', pc.name)) continue;
    try {
      await store.create(info, '', { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: pc.name }, value: pc.value, description: pc.description }, controllerWriteContext());
    } catch (e) {
      // Written meanwhile by someone else: what kube accepts too.
      if (!(e instanceof ApiError && e.reason === 'AlreadyExists')) throw e;
    }
  }
}
