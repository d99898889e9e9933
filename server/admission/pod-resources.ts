// A pod's effective requests and limits, as kube's component-helpers resource.PodRequests /
// PodLimits compute them from the spec (and LimitRanger's copy of them): the sum of the
// containers' (sidecar init containers, restartPolicy Always, included), at least what each
// ordinary init container needs alongside the sidecars started before it, cpu and memory
// overridden by pod-level resources (PodLevelResources, on in kube 1.36), plus the pod's
// overhead where quota asks for it. Status resources (in-place resize) are not read: hearth runs
// no kubelet to report them.
import { add, maxQuantity, resourceListOf, type ResourceList } from './resource-quota/resource-lists.ts';

export interface ContainerView {
  name?: unknown;
  restartPolicy?: unknown;
  resources?: { requests?: unknown; limits?: unknown };
}

export interface PodSpecView {
  containers?: ContainerView[];
  initContainers?: ContainerView[];
  resources?: { requests?: unknown; limits?: unknown };
  overhead?: unknown;
  [k: string]: unknown;
}

/** Pod-level resources kube lets override the containers' sum (IsSupportedPodLevelResource). */
const POD_LEVEL_RESOURCES = new Set(['cpu', 'memory']);

function addInto(list: ResourceList, more: ResourceList): void {
  for (const [k, v] of more) {
    const cur = list.get(k);
    list.set(k, cur ? add(cur, v) : v);
  }
}

function maxInto(list: ResourceList, more: ResourceList): void {
  for (const [k, v] of more) {
    const cur = list.get(k);
    list.set(k, cur ? maxQuantity(cur, v) : v);
  }
}

function aggregate(spec: PodSpecView, which: 'requests' | 'limits', withOverhead: boolean): ResourceList {
  const total: ResourceList = new Map();
  for (const c of spec.containers ?? []) addInto(total, resourceListOf(c.resources?.[which]));
  const sidecars: ResourceList = new Map();
  const initMax: ResourceList = new Map();
  for (const c of spec.initContainers ?? []) {
    const own = resourceListOf(c.resources?.[which]);
    let needed: ResourceList;
    if (c.restartPolicy === 'Always') {
      addInto(total, own);
      addInto(sidecars, own);
      needed = new Map(sidecars);
    } else {
      needed = new Map();
      addInto(needed, own);
      addInto(needed, sidecars);
    }
    maxInto(initMax, needed);
  }
  maxInto(total, initMax);
  for (const [k, v] of resourceListOf(spec.resources?.[which])) if (POD_LEVEL_RESOURCES.has(k)) total.set(k, v);
  if (withOverhead) {
    // Requests take all of the overhead; limits only where a limit is set.
    const overhead = resourceListOf(spec.overhead);
    if (which === 'requests') addInto(total, overhead);
    else for (const [k, v] of overhead) if (total.has(k)) total.set(k, add(total.get(k)!, v));
  }
  return total;
}

/** resource.PodRequests (withOverhead, as quota counts it) or LimitRanger's podRequests (without). */
export function podRequests(spec: PodSpecView | undefined, withOverhead: boolean): ResourceList {
  return aggregate(spec ?? {}, 'requests', withOverhead);
}

/** resource.PodLimits (withOverhead, as quota counts it) or LimitRanger's podLimits (without). */
export function podLimits(spec: PodSpecView | undefined, withOverhead: boolean): ResourceList {
  return aggregate(spec ?? {}, 'limits', withOverhead);
}
