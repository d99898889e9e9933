// registry/printers/: the Table convertor of every kind, what kube-apiserver answers for
// `Accept: application/json;as=Table;v=v1;g=meta.k8s.io` (the HTTP layer asks tablePrinterFor and
// frames the rows). One file per group of kinds (core, workloads, networking, cluster), the shared
// cell and column helpers (columns.ts) and the CRD additionalPrinterColumns printer (crd.ts). It
// imports schema/, util/ and the registry's conversions and JSONPath, never http/.
//
// Column names/types/priorities and the way each cell is computed follow the built-in Kubernetes
// printers; kube-apiserver always generates the "wide" set of cells, and kubectl hides priority > 0
// columns unless `-o wide` is used. Every printer here therefore returns one cell per column, wide
// ones included.
import type { ResourceInfo, TablePrinter } from '../../schema/types.ts';
import { formatRFC3339 } from '../../go/time.ts';
import { parseTime, age, nameOf, col, NAME_DESC, AGE_DESC, ageCol, printer } from './columns.ts';
import {
  podPrinter,
  podTemplatePrinter,
  namespacePrinter,
  servicePrinter,
  configMapPrinter,
  secretPrinter,
  serviceAccountPrinter,
  nodePrinter,
  eventPrinter,
  endpointsPrinter,
  persistentVolumePrinter,
  persistentVolumeClaimPrinter,
  replicationControllerPrinter,
  resourceQuotaPrinter,
  componentStatusPrinter,
} from './core.ts';
import { deploymentPrinter, replicaSetPrinter, statefulSetPrinter, daemonSetPrinter, controllerRevisionPrinter, jobPrinter, cronJobPrinter, hpaPrinter } from './workloads.ts';
import { ingressPrinter, ingressClassPrinter, networkPolicyPrinter, serviceCIDRPrinter, ipAddressPrinter, endpointSlicePrinter } from './networking.ts';
import {
  pdbPrinter,
  bindingPrinter,
  storageClassPrinter,
  volumeAttributesClassPrinter,
  volumeAttachmentPrinter,
  csiNodePrinter,
  csiDriverPrinter,
  csiStorageCapacityPrinter,
  priorityClassPrinter,
  leasePrinter,
  leaseCandidatePrinter,
  runtimeClassPrinter,
  csrPrinter,
  clusterTrustBundlePrinter,
  webhookConfigPrinter,
  admissionPolicyPrinter,
  admissionPolicyBindingPrinter,
  flowSchemaPrinter,
  priorityLevelPrinter,
  apiServicePrinter,
  nameAgePrinter,
} from './cluster.ts';

/** Go's time.RFC3339 formatting (whole seconds, UTC); the zero time when unset. */
function rfc3339(v: unknown): string {
  const t = parseTime(v);
  if (t === undefined) return '0001-01-01T00:00:00Z';
  return formatRFC3339(t);
}

const defaultPrinter = printer(
  [
    col('Name', 'string', NAME_DESC, 0, 'name'),
    col('Created At', 'date', AGE_DESC),
  ],
  (o) => [nameOf(o), rfc3339(o?.metadata?.creationTimestamp)],
);

const BUILTIN_PRINTERS = new Map<string, TablePrinter>([
  // core
  ['/pods', podPrinter],
  ['/podtemplates', podTemplatePrinter],
  ['/namespaces', namespacePrinter],
  ['/services', servicePrinter],
  ['/configmaps', configMapPrinter],
  ['/secrets', secretPrinter],
  ['/serviceaccounts', serviceAccountPrinter],
  ['/nodes', nodePrinter],
  ['/events', eventPrinter],
  ['/endpoints', endpointsPrinter],
  ['/persistentvolumes', persistentVolumePrinter],
  ['/persistentvolumeclaims', persistentVolumeClaimPrinter],
  ['/replicationcontrollers', replicationControllerPrinter],
  ['/resourcequotas', resourceQuotaPrinter],
  ['/componentstatuses', componentStatusPrinter],
  // limitranges: kube-apiserver uses the default (Name, Created At) convertor
  // apps
  ['apps/deployments', deploymentPrinter],
  ['apps/replicasets', replicaSetPrinter],
  ['apps/statefulsets', statefulSetPrinter],
  ['apps/daemonsets', daemonSetPrinter],
  ['apps/controllerrevisions', controllerRevisionPrinter],
  // batch
  ['batch/jobs', jobPrinter],
  ['batch/cronjobs', cronJobPrinter],
  // autoscaling
  ['autoscaling/horizontalpodautoscalers', hpaPrinter],
  // networking
  ['networking.k8s.io/ingresses', ingressPrinter],
  ['networking.k8s.io/ingressclasses', ingressClassPrinter],
  ['networking.k8s.io/networkpolicies', networkPolicyPrinter],
  ['networking.k8s.io/servicecidrs', serviceCIDRPrinter],
  ['networking.k8s.io/ipaddresses', ipAddressPrinter],
  // discovery
  ['discovery.k8s.io/endpointslices', endpointSlicePrinter],
  // events
  ['events.k8s.io/events', eventPrinter],
  // policy
  ['policy/poddisruptionbudgets', pdbPrinter],
  // rbac: roles and clusterroles use the default convertor
  ['rbac.authorization.k8s.io/rolebindings', bindingPrinter('roleBinding')],
  ['rbac.authorization.k8s.io/clusterrolebindings', bindingPrinter('clusterRoleBinding')],
  // storage
  ['storage.k8s.io/storageclasses', storageClassPrinter],
  ['storage.k8s.io/volumeattributesclasses', volumeAttributesClassPrinter],
  ['storage.k8s.io/volumeattachments', volumeAttachmentPrinter],
  ['storage.k8s.io/csinodes', csiNodePrinter],
  ['storage.k8s.io/csidrivers', csiDriverPrinter],
  ['storage.k8s.io/csistoragecapacities', csiStorageCapacityPrinter],
  // scheduling, coordination, node
  ['scheduling.k8s.io/priorityclasses', priorityClassPrinter],
  ['coordination.k8s.io/leases', leasePrinter],
  ['coordination.k8s.io/leasecandidates', leaseCandidatePrinter],
  ['node.k8s.io/runtimeclasses', runtimeClassPrinter],
  // certificates
  ['certificates.k8s.io/certificatesigningrequests', csrPrinter],
  ['certificates.k8s.io/clustertrustbundles', clusterTrustBundlePrinter],
  // admissionregistration
  ['admissionregistration.k8s.io/mutatingwebhookconfigurations', webhookConfigPrinter],
  ['admissionregistration.k8s.io/validatingwebhookconfigurations', webhookConfigPrinter],
  [
    'admissionregistration.k8s.io/validatingadmissionpolicies',
    admissionPolicyPrinter('Validations', 'validations', 'Validations indicates the number of validation rules defined in this configuration'),
  ],
  ['admissionregistration.k8s.io/validatingadmissionpolicybindings', admissionPolicyBindingPrinter],
  [
    'admissionregistration.k8s.io/mutatingadmissionpolicies',
    admissionPolicyPrinter('Mutations', 'mutations', 'Mutation indicates the number of mutations rules defined in this configuration'),
  ],
  ['admissionregistration.k8s.io/mutatingadmissionpolicybindings', admissionPolicyBindingPrinter],
  // flowcontrol
  ['flowcontrol.apiserver.k8s.io/flowschemas', flowSchemaPrinter],
  ['flowcontrol.apiserver.k8s.io/prioritylevelconfigurations', priorityLevelPrinter],
  // apiregistration
  ['apiregistration.k8s.io/apiservices', apiServicePrinter],
  // resource
  ['resource.k8s.io/deviceclasses', nameAgePrinter],
  ['resource.k8s.io/resourceclaimtemplates', nameAgePrinter],
  // apiextensions customresourcedefinitions use the default convertor (NAME, CREATED AT)
]);

/**
 * autoscaling/v1 Scale, as the /scale subresource of built-in kinds prints it (kube's printScale;
 * its Name column has no "name" format).
 */
export const scalePrinter = printer(
  [
    col('Name', 'string', NAME_DESC),
    col('Desired', 'integer', 'replicas is the desired number of instances for the scaled object.'),
    col('Available', 'integer', 'replicas is the actual number of observed instances of the scaled object.'),
    ageCol(),
  ],
  (o, now) => [nameOf(o), o.spec?.replicas ?? 0, o.status?.replicas ?? 0, age(o, now)],
);

/**
 * The printer for a group/resource (group "" = core); the default printer for
 * anything else: columns Name (type string, format name) and Created At (type date),
 * as kube-apiserver's default table convertor.
 */
export function builtinPrinterFor(group: string, resource: string): TablePrinter {
  return BUILTIN_PRINTERS.get(`${group}/${resource}`) ?? defaultPrinter;
}

/** The Table printer of a resource's objects: its CRD version's printer columns, or its kind's printer. */
export function tablePrinterFor(info: ResourceInfo): TablePrinter {
  return info.custom ? info.custom.printer() : builtinPrinterFor(info.group, info.resource);
}
