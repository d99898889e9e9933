// The fields a pod offers to field selectors (kube's pod GetAttrs and its field-label conversion),
// and which of them storage can match on the stored JSON without decoding it.
import { boolField as b, stringField as s, type KindFields } from '../../../strategy.ts';

function podFields(o: any): Record<string, string> {
  const spec = o?.spec ?? {};
  const status = o?.status ?? {};
  const podIPs = Array.isArray(status.podIPs) ? status.podIPs : [];
  const podIP = podIPs.length > 0 ? s(podIPs[0]?.ip) : s(status.podIP);
  return {
    'spec.nodeName': s(spec.nodeName),
    'spec.host': s(spec.nodeName), // old clients' name for spec.nodeName
    'spec.restartPolicy': s(spec.restartPolicy),
    'spec.schedulerName': s(spec.schedulerName),
    'spec.serviceAccountName': s(spec.serviceAccountName),
    'spec.hostNetwork': b(spec.hostNetwork),
    'status.phase': s(status.phase),
    'status.podIP': podIP,
    'status.nominatedNodeName': s(status.nominatedNodeName),
  };
}

export const podFieldSet: KindFields = {
  accepted: [
    'metadata.name',
    'metadata.namespace',
    'spec.nodeName',
    'spec.restartPolicy',
    'spec.schedulerName',
    'spec.serviceAccountName',
    'spec.hostNetwork',
    'status.phase',
    'status.podIP',
    'status.podIPs', // accepted, but kube never sets it in the field set: it only ever equals ""
    'status.nominatedNodeName',
    'spec.host',
  ],
  fields: podFields,
  // For the kubelet's list and watch by spec.nodeName.
  stringFieldPaths: {
    'spec.nodeName': '$.spec.nodeName',
    'spec.host': '$.spec.nodeName',
    'spec.restartPolicy': '$.spec.restartPolicy',
    'spec.schedulerName': '$.spec.schedulerName',
    'spec.serviceAccountName': '$.spec.serviceAccountName',
    'status.phase': '$.status.phase',
    'status.nominatedNodeName': '$.status.nominatedNodeName',
  },
};
