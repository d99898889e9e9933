// PodTopologyLabels (kube's plugin/pkg/admission/podtopologylabels; its feature gate is on by
// default since 1.35): a pod bound to a node gets the node's `topology.k8s.io/zone` and
// `topology.k8s.io/region` labels. On a Binding they go onto the Binding's labels, which the
// binding then copies onto the pod; on a pod created with spec.nodeName, onto the pod, never
// overwriting a label it has. Creates only; a node that does not exist gives nothing.
import type { AdmissionPlugin } from './types.ts';

/** kube's defaultConfig: the labels copied (kube-apiserver offers no flag to change them). */
export const POD_TOPOLOGY_LABELS: readonly string[] = ['topology.k8s.io/zone', 'topology.k8s.io/region'];

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export function podTopologyLabels(getNode: (name: string) => unknown): AdmissionPlugin {
  /** The node's topology labels, or undefined when it has none (or does not exist). */
  const topologyOf = (nodeName: string): Record<string, string> | undefined => {
    const node = getNode(nodeName);
    const labels = isObj(node) && isObj(node.metadata) && isObj(node.metadata.labels) ? node.metadata.labels : undefined;
    if (!labels) return undefined;
    let found: Record<string, string> | undefined;
    for (const key of POD_TOPOLOGY_LABELS) if (typeof labels[key] === 'string') (found ??= {})[key] = labels[key];
    return found;
  };
  /** Adds the labels an object lacks (mergeLabels: existing keys kept). */
  const merge = (obj: Obj, add: Record<string, string>) => {
    const meta = isObj(obj.metadata) ? obj.metadata : (obj.metadata = {});
    const labels = isObj(meta.labels) ? meta.labels : (meta.labels = {});
    for (const [k, v] of Object.entries(add)) if (!(k in labels)) labels[k] = v;
  };
  return {
    name: 'PodTopologyLabels',
    admit(a) {
      if (a.operation !== 'CREATE' || a.info.resource !== 'pods' || a.info.group !== '' || !isObj(a.object)) return;
      if (a.subresource === 'binding') {
        const target = a.object.target;
        // (the scheduler sets only the kind of a binding's target)
        if (!isObj(target) || target.kind !== 'Node' || typeof target.name !== 'string') return;
        const add = topologyOf(target.name);
        if (add) merge(a.object, add);
      } else if (a.subresource === '') {
        const spec = a.object.spec;
        if (!isObj(spec) || typeof spec.nodeName !== 'string' || spec.nodeName === '') return;
        const add = topologyOf(spec.nodeName);
        if (add) merge(a.object, add);
      }
    },
  };
}
