// The scale subresource (autoscaling/v1 Scale) over a workload's spec.replicas,
// status.replicas and its label selector.
import type { ResourceInfo } from '../../../schema/types.ts';
import type { Obj } from '../../strategy.ts';
import { badRequest } from '../../../errors.ts';
import { isPlainObject } from '../../../util/json.ts';

/** A label selector (metav1.LabelSelector or a plain map, as ReplicationController uses) as a query string. */
export function selectorString(sel: unknown): string {
  if (!isPlainObject(sel)) return '';
  const isMap = !('matchLabels' in sel) && !('matchExpressions' in sel);
  const labels: Record<string, string> = isMap ? sel : sel.matchLabels ?? {};
  const parts = Object.keys(labels).sort().map((k) => `${k}=${labels[k]}`);
  if (!isMap) {
    for (const e of sel.matchExpressions ?? []) {
      const values = [...(e.values ?? [])].sort().join(',');
      switch (e.operator) {
        case 'In': parts.push(`${e.key} in (${values})`); break;
        case 'NotIn': parts.push(`${e.key} notin (${values})`); break;
        case 'Exists': parts.push(e.key); break;
        case 'DoesNotExist': parts.push(`!${e.key}`); break;
      }
    }
  }
  return parts.join(',');
}

export function scaleFromObject(info: ResourceInfo, obj: Obj): Obj {
  const meta = obj.metadata;
  const paths = info.custom?.scale;
  // Custom resources name their fields in the CRD; their selector is already a string there.
  const specReplicas = paths ? paths.specReplicas.getInt64(obj).value : obj.spec?.replicas;
  const statusReplicas = paths ? paths.statusReplicas.getInt64(obj).value : obj.status?.replicas;
  const selector = paths ? paths.labelSelector?.getString(obj).value : selectorString(obj.spec?.selector);
  const status: Record<string, unknown> = { replicas: typeof statusReplicas === 'number' ? statusReplicas : 0 };
  if (typeof selector === 'string' && selector) status.selector = selector;
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: { name: meta.name, namespace: meta.namespace, uid: meta.uid, resourceVersion: meta.resourceVersion, creationTimestamp: meta.creationTimestamp },
    spec: { replicas: typeof specReplicas === 'number' ? specReplicas : 0 },
    status,
  };
}

/** Applies a Scale's spec.replicas to the workload; the Scale's resourceVersion is a precondition. */
export function applyScaleToObject(info: ResourceInfo, cur: Obj, scale: unknown): Obj {
  if (!isPlainObject(scale)) throw badRequest('the body of the request was not a Scale object');
  if (scale.kind !== undefined && scale.kind !== 'Scale') throw badRequest(`the kind in the data (${scale.kind}) does not match the expected kind (Scale)`);
  const replicas = scale.spec?.replicas;
  if (replicas !== undefined && (!Number.isInteger(replicas) || replicas < 0)) {
    throw badRequest(`spec.replicas: Invalid value: ${JSON.stringify(replicas)}: must be greater than or equal to 0`);
  }
  const next = structuredClone(cur);
  const paths = info.custom?.scale;
  if (paths) paths.specReplicas.set(next, replicas ?? 0);
  else next.spec = { ...(next.spec ?? {}), replicas: replicas ?? 0 };
  const rv = scale.metadata?.resourceVersion;
  if (rv) next.metadata.resourceVersion = rv;
  return next;
}
