// Keeps the Node authorizer's graph current (kube's plugin/pkg/auth/authorizer/node/graph_populator.go):
// each change to a pod, PersistentVolume, VolumeAttachment or ResourceSlice, with the object as it
// was before, becomes the graph's add or delete. server.ts feeds it the store's objects at start
// and then the commit stream, so that a decision never reads storage.
import { NodeGraph } from './graph.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const obj = (v: unknown): Obj => (isObj(v) ? v : {});
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.map(obj) : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** The kinds the graph is made from, by qualified resource ("resource.group"; the core group's by resource). */
export type GraphResource = 'pods' | 'persistentvolumes' | 'volumeattachments.storage.k8s.io' | 'resourceslices.resource.k8s.io';

/** resourceclaim.PodStatusEqual: the same claims generated for the same entries. */
function claimStatusesEqual(a: unknown, b: unknown): boolean {
  const x = list(a);
  const y = list(b);
  if (x.length !== y.length) return false;
  return x.every((s, i) => s.name === y[i].name && s.resourceClaimName === y[i].resourceClaimName);
}

/**
 * updatePod: only a pod bound to a node is in the graph. A pod's references are immutable once
 * bound, so a change is applied only when the node or uid differ, an ephemeral container was
 * added, or its generated ResourceClaims changed.
 */
function updatePod(graph: NodeGraph, pod: Obj, old: Obj | undefined): void {
  const nodeName = str(obj(pod.spec).nodeName);
  if (!nodeName) return;
  if (old) {
    const oldSpec = obj(old.spec);
    const spec = obj(pod.spec);
    const newEphemeral = list(spec.ephemeralContainers).length > list(oldSpec.ephemeralContainers).length;
    const sameBinding = nodeName === str(oldSpec.nodeName) && str(obj(pod.metadata).uid) === str(obj(old.metadata).uid);
    if (sameBinding && !newEphemeral && claimStatusesEqual(obj(old.status).resourceClaimStatuses, obj(pod.status).resourceClaimStatuses)) return;
  }
  graph.addPod(pod);
}

/**
 * One committed change: `object` as written (the last state for a deletion), `previous` as it
 * was before an update.
 */
export function applyGraphChange(graph: NodeGraph, resource: GraphResource, deleted: boolean, object: Obj, previous?: Obj): void {
  const name = str(obj(object.metadata).name);
  switch (resource) {
    case 'pods':
      if (!deleted) updatePod(graph, object, previous);
      else if (str(obj(object.spec).nodeName)) graph.deletePod(name, str(obj(object.metadata).namespace));
      return;
    case 'persistentvolumes':
      if (deleted) graph.deletePV(name);
      else graph.addPV(object);
      return;
    case 'volumeattachments.storage.k8s.io': {
      const nodeName = str(obj(object.spec).nodeName);
      if (deleted) graph.deleteVolumeAttachment(name);
      // An update that keeps the node changes nothing.
      else if (!previous || str(obj(previous.spec).nodeName) !== nodeName) graph.addVolumeAttachment(name, nodeName);
      return;
    }
    case 'resourceslices.resource.k8s.io':
      // spec.nodeName is immutable: an update changes nothing.
      if (deleted) graph.deleteResourceSlice(name);
      else if (!previous) graph.addResourceSlice(name, str(obj(object.spec).nodeName));
      return;
  }
}
