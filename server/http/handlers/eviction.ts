// POST pods/eviction: a pod's deletion, allowed only within its PodDisruptionBudgets
// (registry/kinds/core/pods/eviction.ts).
import type { ResourceCatalog } from '../../schema/catalog.ts';
import { evictPod, type EvictionTargets } from '../../registry/kinds/core/pods/eviction.ts';
import { nowTimestamp } from '../../registry/now.ts';
import { readObjectBody } from './body.ts';
import { createdStatus } from './create.ts';
import { requestContext } from './options.ts';
import { respondObject } from './shape.ts';
import type { ResourceRequest } from './request.ts';

const EVICTION = 'io.k8s.api.policy.v1.Eviction';

export async function evict({ ctx, info, ns, ri, deps }: ResourceRequest): Promise<void> {
  const rc = requestContext(ctx, 'CreateOptions');
  const eviction = await readObjectBody(ctx, info, EVICTION, rc, deps.model);
  await deps.store.admitSubresourceCreate(info, ns, ri.name, 'eviction', eviction, rc);
  await evictPod(deps.store, evictionTargets(deps.catalog), ns, ri.name, eviction, rc, nowTimestamp);
  return respondObject(ctx, info, createdStatus(), 201, rc, true);
}

/** What an eviction reads and writes: pods, and the disruption budgets that guard them. */
function evictionTargets(catalog: ResourceCatalog): EvictionTargets {
  return { pods: catalog.lookup('', 'v1', 'pods')!, budgets: catalog.lookup('policy', 'v1', 'poddisruptionbudgets')! };
}
