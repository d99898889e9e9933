// The pods/eviction subresource, as kube's EvictionREST serves it (what `kubectl drain` posts): a
// pod is deleted unless the one PodDisruptionBudget that selects it has no disruption left. A
// budget that allows one more has it taken (its status records the pod as disrupted) before the
// pod goes. Pods that are not running yet, finished or already going are deleted without asking
// their budget; an unready pod may go when its budget's policy says so.
import type { GenericStore, RequestContext, DeleteOptions } from '../../../store.ts';
import type { ResourceInfo } from '../../../../schema/types.ts';
import type { Obj } from '../../../strategy.ts';
import { labelSelectorFromObject } from '../../../selectors.ts';
import { ApiError, badRequest, forbidden } from '../../../../errors.ts';
import { cloneJSON, isPlainObject } from '../../../../util/json.ts';

const EVICTION_VERSIONS = ['policy/v1', 'policy/v1beta1'];
/** How often a budget that changed meanwhile is read again (kube retries on conflicts too). */
const MAX_BUDGET_RETRIES = 10;
/** kube's MaxDisruptedPodSize: evictions not yet confirmed by the disruption controller. */
const MAX_DISRUPTED_PODS = 2000;

export interface EvictionTargets {
  pods: ResourceInfo;
  budgets: ResourceInfo;
}

/** The body's checks: an Eviction of this pod, its deleteOptions as DeleteOptions. */
function deleteOptionsOf(eviction: any, name: string): DeleteOptions {
  if (!isPlainObject(eviction)) throw badRequest('the body of the request must be an Eviction');
  if (eviction.apiVersion !== undefined && !EVICTION_VERSIONS.includes(eviction.apiVersion)) {
    throw badRequest(`the API version in the data (${eviction.apiVersion}) does not match the expected API version (policy/v1)`);
  }
  const evictionName = eviction.metadata?.name;
  if (evictionName && evictionName !== name) throw badRequest('name in URL does not match name in Eviction object');
  const d = isPlainObject(eviction.deleteOptions) ? eviction.deleteOptions : {};
  const out: DeleteOptions = {};
  if (isPlainObject(d.preconditions)) out.preconditions = d.preconditions;
  if (typeof d.gracePeriodSeconds === 'number') out.gracePeriodSeconds = d.gracePeriodSeconds;
  if (typeof d.propagationPolicy === 'string') out.propagationPolicy = d.propagationPolicy;
  return out;
}

/** kube's canIgnorePDB: a pod not running yet, finished, or already being deleted. */
function ignoresBudget(pod: Obj): boolean {
  const phase = pod.status?.phase;
  return phase === 'Pending' || phase === 'Succeeded' || phase === 'Failed' || !!pod.metadata.deletionTimestamp;
}

const isReady = (pod: Obj): boolean => Array.isArray(pod.status?.conditions) && pod.status.conditions.some((c: Obj) => c?.type === 'Ready' && c.status === 'True');

/** The budgets in the pod's namespace whose selector selects it (one that does not parse selects nothing). */
function budgetsOf(store: GenericStore, budgets: ResourceInfo, pod: Obj): Obj[] {
  const labels = pod.metadata.labels ?? {};
  return store.listCurrent(budgets, pod.metadata.namespace).filter((pdb) => {
    try {
      return labelSelectorFromObject(pdb.spec?.selector).matches(labels);
    } catch {
      return false;
    }
  });
}

const num = (v: unknown): number => (typeof v === 'number' ? v : 0);

/**
 * kube's checkAndDecrement: refused (429) while the budget's status is older than its spec or
 * allows no disruption; otherwise one disruption is taken and the pod recorded as disrupted.
 */
function takeDisruption(pdb: Obj, podName: string, now: string): Obj {
  const status = pdb.status ?? {};
  const name = pdb.metadata.name;
  if (num(status.observedGeneration) < num(pdb.metadata.generation)) {
    // (no retry time: kube's details are then empty, and it sends no Retry-After)
    throw new ApiError(429, 'TooManyRequests', `Cannot evict pod as it would violate the pod's disruption budget. The disruption budget ${name} is still being processed by the server.`, {});
  }
  const allowed = num(status.disruptionsAllowed);
  if (allowed < 0) throw forbidden('policy', 'poddisruptionbudget', name, 'pdb disruptions allowed is negative');
  if (Object.keys(status.disruptedPods ?? {}).length > MAX_DISRUPTED_PODS) {
    throw forbidden('policy', 'poddisruptionbudget', name, 'DisruptedPods map too big - too many evictions not confirmed by PDB controller');
  }
  if (allowed === 0) {
    throw new ApiError(429, 'TooManyRequests', "Cannot evict pod as it would violate the pod's disruption budget.", {
      causes: [{ reason: 'DisruptionBudget', message: `The disruption budget ${name} needs ${num(status.desiredHealthy)} healthy pods and has ${num(status.currentHealthy)} currently` }],
    });
  }
  const next = cloneJSON(pdb);
  const s = (next.status ??= {});
  s.disruptionsAllowed = allowed - 1;
  if (s.disruptionsAllowed === 0) setInsufficientPods(s, now);
  s.disruptedPods = { ...(s.disruptedPods ?? {}), [podName]: now };
  return next;
}

/** UpdateDisruptionAllowedCondition at no disruption left (meta.SetStatusCondition's rules for the time). */
function setInsufficientPods(status: Obj, now: string): void {
  const conditions: Obj[] = Array.isArray(status.conditions) ? status.conditions : (status.conditions = []);
  const at = conditions.findIndex((c) => c?.type === 'DisruptionAllowed');
  const cur = at >= 0 ? conditions[at] : undefined;
  const condition = {
    type: 'DisruptionAllowed',
    status: 'False',
    observedGeneration: num(status.observedGeneration),
    lastTransitionTime: cur && cur.status === 'False' && cur.lastTransitionTime ? cur.lastTransitionTime : now,
    reason: 'InsufficientPods',
    message: cur?.message ?? '',
  };
  if (at >= 0) conditions[at] = condition;
  else conditions.push(condition);
}

/**
 * Evicts pod `name`: deletes it as its budget allows. Throws the refusal (429 while the budget
 * allows no disruption, 500 for a pod selected by several budgets); resolves once the delete is done.
 */
export async function evictPod(store: GenericStore, targets: EvictionTargets, ns: string, name: string, eviction: any, ctx: RequestContext, now: () => string): Promise<void> {
  const deleteOptions = deleteOptionsOf(eviction, name);
  for (let attempt = 0; ; attempt++) {
    const pod = store.get(targets.pods, ns, name);
    if (!ignoresBudget(pod)) {
      const budgets = budgetsOf(store, targets.budgets, pod);
      if (budgets.length > 1) throw new ApiError(500, '', 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.');
      const pdb = budgets[0];
      if (pdb) {
        const policy = pdb.spec?.unhealthyPodEvictionPolicy;
        const status = pdb.status ?? {};
        // An unready pod counts for nothing the budget guards: it may go when the policy says
        // so, or when the budget has all the healthy pods it wants.
        const unguarded = !isReady(pod) && (policy === 'AlwaysAllow' || (num(status.currentHealthy) >= num(status.desiredHealthy) && num(status.desiredHealthy) > 0));
        if (unguarded) {
          deleteOptions.preconditions ??= { resourceVersion: pod.metadata.resourceVersion };
        } else {
          const next = takeDisruption(pdb, name, now());
          if (!ctx.dryRun) {
            try {
              await store.update(targets.budgets, ns, pdb.metadata.name, next, { ...ctx, fieldManager: 'kube-apiserver', warnings: [] }, 'status');
            } catch (e) {
              // The budget changed meanwhile: decide again on the new one.
              if (e instanceof ApiError && e.code === 409 && attempt < MAX_BUDGET_RETRIES) continue;
              throw e;
            }
          }
        }
      }
    }
    await store.delete(targets.pods, ns, name, deleteOptions, ctx);
    return;
  }
}
