// The built-in kinds' field sets for field selectors, by qualified resource: the other half of
// the kinds' registry (kube's per-kind GetAttrs and field-label conversions). Kept apart from
// index.ts so that selectors.ts can look fields up here while kinds use selectors.ts's label
// selectors: no module this file imports may import selectors.ts (apps/index.ts does, so apps'
// field set is apps/fields.ts; check:layers reports the circle otherwise).
import type { KindFields } from '../strategy.ts';
import { replicaSetFieldSet } from './apps/fields.ts';
import { jobFieldSet } from './batch/fields.ts';
import { certificateSigningRequestFieldSet, clusterTrustBundleFieldSet, podCertificateRequestFieldSet } from './certificates/index.ts';
import { secretFieldSet } from './core/config.ts';
import { namespaceFieldSet } from './core/namespaces.ts';
import { nodeFieldSet } from './core/nodes.ts';
import { podFieldSet } from './core/pods/fields.ts';
import { replicationControllerFieldSet } from './core/replicationcontrollers.ts';
import { serviceFieldSet } from './core/services/fields.ts';
import { coreEventFieldSet, eventsV1FieldSet } from './events/fields.ts';
import { resourceSliceFieldSet } from './resource/index.ts';

const KINDS: Record<string, KindFields> = {
  pods: podFieldSet,
  nodes: nodeFieldSet,
  replicationcontrollers: replicationControllerFieldSet,
  events: coreEventFieldSet,
  namespaces: namespaceFieldSet,
  secrets: secretFieldSet,
  services: serviceFieldSet,
  'events.events.k8s.io': eventsV1FieldSet,
  'replicasets.apps': replicaSetFieldSet,
  'jobs.batch': jobFieldSet,
  'certificatesigningrequests.certificates.k8s.io': certificateSigningRequestFieldSet,
  'clustertrustbundles.certificates.k8s.io': clusterTrustBundleFieldSet,
  'podcertificaterequests.certificates.k8s.io': podCertificateRequestFieldSet,
  'resourceslices.resource.k8s.io': resourceSliceFieldSet,
};

/** The field set of a built-in kind with fields of its own, by group and resource. */
export function kindFieldsOf(group: string, resource: string): KindFields | undefined {
  return KINDS[group ? `${resource}.${group}` : resource];
}

/** API groups served by kube-apiserver itself; any other group is CRD-backed. */
const BUILTIN_GROUPS = new Set([
  '',
  'admissionregistration.k8s.io',
  'apiextensions.k8s.io',
  'apiregistration.k8s.io',
  'apps',
  'authentication.k8s.io',
  'authorization.k8s.io',
  'autoscaling',
  'batch',
  'certificates.k8s.io',
  'coordination.k8s.io',
  'discovery.k8s.io',
  'events.k8s.io',
  'extensions',
  'flowcontrol.apiserver.k8s.io',
  'internal.apiserver.k8s.io',
  'networking.k8s.io',
  'node.k8s.io',
  'policy',
  'rbac.authorization.k8s.io',
  'resource.k8s.io',
  'scheduling.k8s.io',
  'storage.k8s.io',
  'storagemigration.k8s.io',
]);

/** Whether kube-apiserver serves this API group itself (rather than a CRD). */
export function isBuiltinGroup(group: string): boolean {
  return BUILTIN_GROUPS.has(group);
}
