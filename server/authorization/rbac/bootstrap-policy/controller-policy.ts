// The roles of kube-controller-manager's controllers (plugin/pkg/auth/authorizer/rbac/bootstrappolicy/controller_policy.go):
// each `system:controller:<name>` ClusterRole is bound to the kube-system ServiceAccount <name> that
// the controller runs as with --use-service-account-credentials (addControllerRole). As Kubernetes
// 1.36 renders them at its default feature gates (testdata controller-roles.yaml,
// controller-role-bindings.yaml; the `watch` verbs kube added beside `list` for WatchList clients,
// and selinux-warning-controller, from controller_policy.go), in kube's rule order, listed by name.
import { clusterRole, clusterRoleBinding, rule, serviceAccounts, type ClusterRole, type ClusterRoleBinding, type RuleBuilder } from './builders.ts';
import {
  admissionRegistrationGroup, appsGroup, authorizationGroup, autoscalingGroup, batchGroup, certificatesGroup, customMetricsGroup,
  discoveryGroup, eventsRule, extensionsGroup, externalMetricsGroup, legacyGroup, networkingGroup, policyGroup, rbacGroup, resMetricsGroup, resourceGroup, storageGroup,
} from './policy.ts';

/** controller_policy.go saRolePrefix. */
export const CONTROLLER_ROLE_PREFIX = 'system:controller:';

const controller = (name: string, rules: RuleBuilder[]) => clusterRole({ name: CONTROLLER_ROLE_PREFIX + name, rules });

export function controllerRoles(): ClusterRole[] {
  return [
    controller('attachdetach-controller', [
      rule('list', 'watch').groups(legacyGroup).resources('persistentvolumes', 'persistentvolumeclaims'),
      rule('get', 'list', 'watch').groups(legacyGroup).resources('nodes'),
      rule('patch', 'update').groups(legacyGroup).resources('nodes/status'),
      rule('list', 'watch').groups(legacyGroup).resources('pods'),
      eventsRule(),
      rule('get', 'create', 'delete', 'list', 'watch').groups(storageGroup).resources('volumeattachments'),
      rule('get', 'watch', 'list').groups(storageGroup).resources('csidrivers'),
      rule('get', 'watch', 'list').groups(storageGroup).resources('csinodes'),
    ]),
    controller('certificate-controller', [
      rule('get', 'list', 'watch', 'delete').groups(certificatesGroup).resources('certificatesigningrequests'),
      rule('update').groups(certificatesGroup).resources('certificatesigningrequests/status', 'certificatesigningrequests/approval'),
      rule('approve').groups(certificatesGroup).resources('signers').names('kubernetes.io/kube-apiserver-client-kubelet'),
      rule('sign').groups(certificatesGroup).resources('signers').names('kubernetes.io/legacy-unknown', 'kubernetes.io/kube-apiserver-client', 'kubernetes.io/kube-apiserver-client-kubelet', 'kubernetes.io/kubelet-serving'),
      rule('create').groups(authorizationGroup).resources('subjectaccessreviews'),
      eventsRule(),
    ]),
    // escalate: it writes roles holding rules it does not hold itself
    controller('clusterrole-aggregation-controller', [rule('escalate', 'get', 'list', 'watch', 'update', 'patch').groups(rbacGroup).resources('clusterroles')]),
    controller('cronjob-controller', [
      rule('get', 'list', 'watch', 'update').groups(batchGroup).resources('cronjobs'),
      rule('get', 'list', 'watch', 'create', 'update', 'delete', 'patch').groups(batchGroup).resources('jobs'),
      rule('update').groups(batchGroup).resources('cronjobs/status'),
      rule('update').groups(batchGroup).resources('cronjobs/finalizers'),
      rule('list', 'watch', 'delete').groups(legacyGroup).resources('pods'),
      eventsRule(),
    ]),
    controller('daemon-set-controller', [
      rule('get', 'list', 'watch').groups(extensionsGroup, appsGroup).resources('daemonsets'),
      rule('update').groups(extensionsGroup, appsGroup).resources('daemonsets/status'),
      rule('update').groups(extensionsGroup, appsGroup).resources('daemonsets/finalizers'),
      rule('list', 'watch').groups(legacyGroup).resources('nodes'),
      rule('list', 'watch', 'create', 'delete', 'patch').groups(legacyGroup).resources('pods'),
      rule('create').groups(legacyGroup).resources('pods/binding'),
      rule('get', 'list', 'watch', 'create', 'delete', 'update', 'patch').groups(appsGroup).resources('controllerrevisions'),
      eventsRule(),
    ]),
    controller('deployment-controller', [
      rule('get', 'list', 'watch', 'update').groups(extensionsGroup, appsGroup).resources('deployments'),
      rule('update').groups(extensionsGroup, appsGroup).resources('deployments/status'),
      rule('update').groups(extensionsGroup, appsGroup).resources('deployments/finalizers'),
      rule('get', 'list', 'watch', 'create', 'update', 'patch', 'delete').groups(appsGroup, extensionsGroup).resources('replicasets'),
      // update pods to add a controllerRef when one is missing
      rule('get', 'list', 'watch', 'update').groups(legacyGroup).resources('pods'),
      eventsRule(),
    ]),
    controller('disruption-controller', [
      rule('get', 'list', 'watch').groups(extensionsGroup, appsGroup).resources('deployments'),
      rule('get', 'list', 'watch').groups(appsGroup, extensionsGroup).resources('replicasets'),
      rule('get', 'list', 'watch').groups(legacyGroup).resources('replicationcontrollers'),
      rule('get', 'list', 'watch').groups(policyGroup).resources('poddisruptionbudgets'),
      rule('get', 'list', 'watch').groups(appsGroup).resources('statefulsets'),
      rule('update').groups(policyGroup).resources('poddisruptionbudgets/status'),
      rule('patch', 'update').groups(legacyGroup).resources('pods/status'),
      rule('get').groups('*').resources('*/scale'),
      eventsRule(),
    ]),
    controller('endpoint-controller', [
      rule('get', 'list', 'watch').groups(legacyGroup).resources('services', 'pods'),
      rule('get', 'list', 'watch', 'create', 'update', 'delete').groups(legacyGroup).resources('endpoints'),
      rule('create').groups(legacyGroup).resources('endpoints/restricted'),
      eventsRule(),
    ]),
    controller('endpointslice-controller', [
      rule('get', 'list', 'watch').groups(legacyGroup).resources('services', 'pods', 'nodes'),
      // the OwnerReferencesPermissionEnforcement admission plugin asks for update on services/finalizers
      rule('update').groups(legacyGroup).resources('services/finalizers'),
      rule('get', 'list', 'watch', 'create', 'update', 'delete').groups(discoveryGroup).resources('endpointslices'),
      eventsRule(),
    ]),
    controller('endpointslicemirroring-controller', [
      rule('get', 'list', 'watch').groups(legacyGroup).resources('services', 'endpoints'),
      rule('update').groups(legacyGroup).resources('services/finalizers'),
      rule('update').groups(legacyGroup).resources('endpoints/finalizers'),
      rule('get', 'list', 'watch', 'create', 'update', 'delete').groups(discoveryGroup).resources('endpointslices'),
      eventsRule(),
    ]),
    controller('ephemeral-volume-controller', [
      rule('get', 'list', 'watch').groups(legacyGroup).resources('pods'),
      rule('update').groups(legacyGroup).resources('pods/finalizers'),
      rule('get', 'list', 'watch', 'create').groups(legacyGroup).resources('persistentvolumeclaims'),
      eventsRule(),
    ]),
    controller('expand-controller', [
      rule('get', 'list', 'watch', 'update', 'patch').groups(legacyGroup).resources('persistentvolumes'),
      rule('update', 'patch').groups(legacyGroup).resources('persistentvolumeclaims/status'),
      rule('get', 'list', 'watch').groups(legacyGroup).resources('persistentvolumeclaims'),
      eventsRule(),
      // glusterfs
      rule('get').groups(legacyGroup).resources('services'),
    ]),
    controller('generic-garbage-collector', [rule('get', 'list', 'watch', 'patch', 'update', 'delete').groups('*').resources('*'), eventsRule()]),
    controller('horizontal-pod-autoscaler', [
      rule('get', 'list', 'watch').groups(autoscalingGroup).resources('horizontalpodautoscalers'),
      rule('update').groups(autoscalingGroup).resources('horizontalpodautoscalers/status'),
      rule('get', 'update').groups('*').resources('*/scale'),
      rule('list', 'watch').groups(legacyGroup).resources('pods'),
      // the resource metrics API
      rule('list', 'watch').groups(resMetricsGroup).resources('pods'),
      // the custom and external metrics APIs
      rule('get', 'list', 'watch').groups(customMetricsGroup).resources('*'),
      rule('get', 'list', 'watch').groups(externalMetricsGroup).resources('*'),
      eventsRule(),
    ]),
    controller('job-controller', [
      rule('get', 'list', 'watch', 'update', 'patch').groups(batchGroup).resources('jobs'),
      rule('update').groups(batchGroup).resources('jobs/status'),
      rule('update').groups(batchGroup).resources('jobs/finalizers'),
      rule('list', 'watch', 'create', 'delete', 'patch').groups(legacyGroup).resources('pods'),
      eventsRule(),
    ]),
    controller('legacy-service-account-token-cleaner', [
      rule('get').groups(legacyGroup).resources('configmaps').names('kube-apiserver-legacy-service-account-token-tracking'),
      rule('patch', 'delete').groups(legacyGroup).resources('secrets'),
    ]),
    controller('namespace-controller', [
      rule('get', 'list', 'watch', 'delete').groups(legacyGroup).resources('namespaces'),
      rule('update').groups(legacyGroup).resources('namespaces/finalize', 'namespaces/status'),
      rule('get', 'list', 'watch', 'delete', 'deletecollection').groups('*').resources('*'),
    ]),
    controller('node-controller', [
      rule('get', 'list', 'watch', 'update', 'delete', 'patch').groups(legacyGroup).resources('nodes'),
      rule('patch', 'update').groups(legacyGroup).resources('nodes/status'),
      // pods/status: marking pods of an unreachable node not ready
      rule('patch', 'update').groups(legacyGroup).resources('pods/status'),
      rule('list', 'watch', 'get', 'delete').groups(legacyGroup).resources('pods'),
      eventsRule(),
    ]),
    controller('persistent-volume-binder', [
      rule('get', 'list', 'watch', 'update', 'create', 'delete').groups(legacyGroup).resources('persistentvolumes'),
      rule('update').groups(legacyGroup).resources('persistentvolumes/status'),
      rule('get', 'list', 'watch', 'update').groups(legacyGroup).resources('persistentvolumeclaims'),
      rule('update').groups(legacyGroup).resources('persistentvolumeclaims/status'),
      rule('list', 'watch', 'get', 'create', 'delete').groups(legacyGroup).resources('pods'),
      // the storage classes provisioning reads
      rule('get', 'list', 'watch').groups(storageGroup).resources('storageclasses'),
      rule('list', 'watch').groups(legacyGroup).resources('nodes'),
      eventsRule(),
      rule('watch').groups(legacyGroup).resources('events'),
      // glusterfs
      rule('get').groups(legacyGroup).resources('services'),
    ]),
    controller('pod-garbage-collector', [
      rule('list', 'watch', 'delete').groups(legacyGroup).resources('pods'),
      rule('get', 'list', 'watch').groups(legacyGroup).resources('nodes'),
      rule('patch').groups(legacyGroup).resources('pods/status'),
    ]),
    controller('pv-protection-controller', [rule('get', 'list', 'watch', 'update').groups(legacyGroup).resources('persistentvolumes'), eventsRule()]),
    controller('pvc-protection-controller', [
      rule('get', 'list', 'watch', 'update').groups(legacyGroup).resources('persistentvolumeclaims'),
      rule('list', 'watch', 'get').groups(legacyGroup).resources('pods'),
      eventsRule(),
    ]),
    controller('replicaset-controller', [
      rule('get', 'list', 'watch', 'update').groups(appsGroup, extensionsGroup).resources('replicasets'),
      rule('update').groups(appsGroup, extensionsGroup).resources('replicasets/status'),
      rule('update').groups(appsGroup, extensionsGroup).resources('replicasets/finalizers'),
      rule('list', 'watch', 'patch', 'create', 'delete').groups(legacyGroup).resources('pods'),
      eventsRule(),
    ]),
    controller('replication-controller', [
      // 1.0 controllers needed get, update, so without these old controllers break on new servers
      rule('get', 'list', 'watch', 'update').groups(legacyGroup).resources('replicationcontrollers'),
      rule('update').groups(legacyGroup).resources('replicationcontrollers/status'),
      rule('update').groups(legacyGroup).resources('replicationcontrollers/finalizers'),
      rule('list', 'watch', 'patch', 'create', 'delete').groups(legacyGroup).resources('pods'),
      eventsRule(),
    ]),
    // DynamicResourceAllocation (on by default)
    controller('resource-claim-controller', [
      rule('get', 'list', 'watch').groups(legacyGroup).resources('pods'),
      rule('update').groups(legacyGroup).resources('pods/finalizers'),
      rule('get', 'list', 'watch', 'create', 'delete').groups(resourceGroup).resources('resourceclaims'),
      rule('update', 'patch').groups(resourceGroup).resources('resourceclaims', 'resourceclaims/status'),
      rule('update', 'patch').groups(legacyGroup).resources('pods/status'),
      eventsRule(),
    ]),
    controller('resourcequota-controller', [
      // quota can count quota on anything for reconciliation, so it needs full viewing powers
      rule('list', 'watch').groups('*').resources('*'),
      rule('update').groups(legacyGroup).resources('resourcequotas/status'),
      eventsRule(),
    ]),
    controller('root-ca-cert-publisher', [rule('create', 'update').groups(legacyGroup).resources('configmaps'), eventsRule()]),
    controller('route-controller', [rule('list', 'watch').groups(legacyGroup).resources('nodes'), rule('patch').groups(legacyGroup).resources('nodes/status'), eventsRule()]),
    // SELinuxChangePolicy (beta, on by default since 1.33)
    controller('selinux-warning-controller', [
      eventsRule(),
      rule('get', 'list', 'watch').groups(legacyGroup).resources('persistentvolumes'),
      rule('get', 'list', 'watch').groups(legacyGroup).resources('persistentvolumeclaims'),
      rule('get', 'list', 'watch').groups(legacyGroup).resources('pods'),
      rule('get', 'list', 'watch').groups(storageGroup).resources('csidrivers'),
    ]),
    controller('service-account-controller', [rule('create').groups(legacyGroup).resources('serviceaccounts'), eventsRule()]),
    // MultiCIDRServiceAllocator (GA, on by default)
    controller('service-cidrs-controller', [
      rule('get', 'list', 'watch', 'patch', 'update').groups(networkingGroup).resources('servicecidrs'),
      rule('patch', 'update').groups(networkingGroup).resources('servicecidrs/finalizers'),
      rule('patch', 'update').groups(networkingGroup).resources('servicecidrs/status'),
      rule('get', 'list', 'watch').groups(networkingGroup).resources('ipaddresses'),
      eventsRule(),
    ]),
    controller('service-controller', [
      rule('get', 'list', 'watch').groups(legacyGroup).resources('services'),
      rule('patch', 'update').groups(legacyGroup).resources('services/status'),
      rule('list', 'watch').groups(legacyGroup).resources('nodes'),
      eventsRule(),
    ]),
    controller('statefulset-controller', [
      rule('list', 'watch').groups(legacyGroup).resources('pods'),
      rule('get', 'list', 'watch').groups(appsGroup).resources('statefulsets'),
      rule('update').groups(appsGroup).resources('statefulsets/status'),
      rule('update').groups(appsGroup).resources('statefulsets/finalizers'),
      rule('get', 'create', 'delete', 'update', 'patch').groups(legacyGroup).resources('pods'),
      rule('get', 'create', 'delete', 'update', 'patch', 'list', 'watch').groups(appsGroup).resources('controllerrevisions'),
      rule('get', 'create', 'list', 'watch').groups(legacyGroup).resources('persistentvolumeclaims'),
      eventsRule(),
      // StatefulSetAutoDeletePVC
      rule('update', 'delete').groups(legacyGroup).resources('persistentvolumeclaims'),
      rule('update').groups(legacyGroup).resources('pods/finalizers'),
    ]),
    controller('ttl-after-finished-controller', [rule('get', 'list', 'watch', 'delete').groups(batchGroup).resources('jobs'), eventsRule()]),
    controller('ttl-controller', [rule('update', 'patch', 'list', 'watch').groups(legacyGroup).resources('nodes'), eventsRule()]),
    controller('validatingadmissionpolicy-status-controller', [
      rule('get', 'list', 'watch').groups(admissionRegistrationGroup).resources('validatingadmissionpolicies'),
      rule('get', 'patch', 'update').groups(admissionRegistrationGroup).resources('validatingadmissionpolicies/status'),
      eventsRule(),
    ]),
    // VolumeAttributesClass (GA, on by default)
    controller('volumeattributesclass-protection-controller', [
      rule('list', 'watch', 'get').groups(legacyGroup).resources('persistentvolumeclaims'),
      rule('list', 'watch', 'get').groups(legacyGroup).resources('persistentvolumes'),
      rule('get', 'list', 'watch', 'update').groups(storageGroup).resources('volumeattributesclasses'),
      eventsRule(),
    ]),
  ];
}

/** addControllerRole's binding: each controller role to the kube-system ServiceAccount named after it. */
export function controllerRoleBindings(): ClusterRoleBinding[] {
  return controllerRoles().map((r) => clusterRoleBinding(r.metadata.name, serviceAccounts('kube-system', r.metadata.name.slice(CONTROLLER_ROLE_PREFIX.length))));
}

