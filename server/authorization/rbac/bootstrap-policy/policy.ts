// kube's default ClusterRoles and ClusterRoleBindings (plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go),
// as Kubernetes 1.36 renders them at its default feature gates: the facts were read from kube's
// rendered testdata (cluster-roles.yaml, cluster-role-bindings.yaml; see
// test/fixtures/README.md for which revision) and are checked against it by
// test/unit/authorization/rbac/bootstrap-policy.test.ts. Rules keep kube's order (the order of
// policy.go, which the aggregated roles and the reconciliation append to); the roles are listed by name.
import { aggregateFrom, clusterRole, clusterRoleBinding, groups, rule, serviceAccounts, users, type ClusterRole, type ClusterRoleBinding } from './builders.ts';

export const Read = ['get', 'list', 'watch'];
export const ReadWrite = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'];
export const Write = ['create', 'update', 'patch', 'delete', 'deletecollection'];
export const ReadUpdate = ['get', 'list', 'watch', 'update', 'patch'];

export const legacyGroup = '';
export const appsGroup = 'apps';
export const authenticationGroup = 'authentication.k8s.io';
export const authorizationGroup = 'authorization.k8s.io';
export const autoscalingGroup = 'autoscaling';
export const batchGroup = 'batch';
export const certificatesGroup = 'certificates.k8s.io';
export const coordinationGroup = 'coordination.k8s.io';
export const discoveryGroup = 'discovery.k8s.io';
export const extensionsGroup = 'extensions';
export const policyGroup = 'policy';
export const rbacGroup = 'rbac.authorization.k8s.io';
export const storageGroup = 'storage.k8s.io';
export const resMetricsGroup = 'metrics.k8s.io';
export const customMetricsGroup = 'custom.metrics.k8s.io';
export const externalMetricsGroup = 'external.metrics.k8s.io';
export const networkingGroup = 'networking.k8s.io';
export const eventsGroup = 'events.k8s.io';
export const nodeGroup = 'node.k8s.io';
export const resourceGroup = 'resource.k8s.io';
export const admissionRegistrationGroup = 'admissionregistration.k8s.io';

/** kube's eventsRule(): events in the core and events.k8s.io groups. */
export const eventsRule = () => rule('create', 'update', 'patch').groups(legacyGroup, eventsGroup).resources('events');

/** The users and groups kube binds (k8s.io/apiserver's user package). */
export const SystemPrivilegedGroup = 'system:masters';
export const MonitoringGroup = 'system:monitoring';
export const NodesGroup = 'system:nodes';
export const AllAuthenticated = 'system:authenticated';
export const AllUnauthenticated = 'system:unauthenticated';
export const AllServiceAccountsGroup = 'system:serviceaccounts';
export const KubeProxy = 'system:kube-proxy';
export const KubeControllerManager = 'system:kube-controller-manager';
export const KubeScheduler = 'system:kube-scheduler';

const AGGREGATE_TO_ADMIN = 'rbac.authorization.k8s.io/aggregate-to-admin';
const AGGREGATE_TO_EDIT = 'rbac.authorization.k8s.io/aggregate-to-edit';
const AGGREGATE_TO_VIEW = 'rbac.authorization.k8s.io/aggregate-to-view';

/** policy.go NodeRules(): what system:node grants (the Node authorizer narrows it per node). */
export function nodeRules() {
  return [
    rule('create').groups(authenticationGroup).resources('tokenreviews'),
    rule('create').groups(authorizationGroup).resources('subjectaccessreviews', 'localsubjectaccessreviews'),
    rule(...Read).groups(legacyGroup).resources('services'),
    rule('create', 'get', 'list', 'watch').groups(legacyGroup).resources('nodes'),
    rule('update', 'patch').groups(legacyGroup).resources('nodes/status'),
    rule('update', 'patch').groups(legacyGroup).resources('nodes'),
    rule('create', 'update', 'patch').groups(legacyGroup).resources('events'),
    rule(...Read).groups(legacyGroup).resources('pods'),
    rule('create', 'delete').groups(legacyGroup).resources('pods'),
    rule('update', 'patch').groups(legacyGroup).resources('pods/status'),
    rule('create').groups(legacyGroup).resources('pods/eviction'),
    rule('get', 'list', 'watch').groups(legacyGroup).resources('secrets', 'configmaps'),
    rule('get').groups(legacyGroup).resources('persistentvolumeclaims', 'persistentvolumes'),
    rule('get').groups(legacyGroup).resources('endpoints'),
    rule('create', 'get', 'list', 'watch').groups(certificatesGroup).resources('certificatesigningrequests'),
    rule('get', 'create', 'update', 'patch', 'delete').groups(coordinationGroup).resources('leases'),
    rule('get').groups(storageGroup).resources('volumeattachments'),
    rule('create').groups(legacyGroup).resources('serviceaccounts/token'),
    rule('get', 'update', 'patch').groups(legacyGroup).resources('persistentvolumeclaims/status'),
    rule('get', 'watch', 'list').groups(storageGroup).resources('csidrivers'),
    rule('get', 'create', 'update', 'patch', 'delete').groups(storageGroup).resources('csinodes'),
    rule('get', 'list', 'watch').groups(nodeGroup).resources('runtimeclasses'),
    // DynamicResourceAllocation (on by default)
    rule('get').groups(resourceGroup).resources('resourceclaims'),
    rule('deletecollection').groups(resourceGroup).resources('resourceslices'),
  ];
}

/** The certificates approver roles (policy.go's signer approvers). */
const approver = (signer: string) => clusterRole({ name: `system:certificates.k8s.io:${signer.slice('kubernetes.io/'.length)}-approver`, rules: [rule('approve').groups(certificatesGroup).resources('signers').names(signer)] });

export function clusterRoles(): ClusterRole[] {
  return [
    // a namespace admin: edit plus granting permissions, by aggregation
    clusterRole({ name: 'admin', aggregationRule: aggregateFrom(AGGREGATE_TO_ADMIN) }),
    // a "root" role which can do absolutely anything
    clusterRole({ name: 'cluster-admin', rules: [rule('*').groups('*').resources('*'), rule('*').urls('*')] }),
    clusterRole({ name: 'edit', labels: { [AGGREGATE_TO_ADMIN]: 'true' }, aggregationRule: aggregateFrom(AGGREGATE_TO_EDIT) }),
    clusterRole({
      name: 'system:aggregate-to-admin',
      labels: { [AGGREGATE_TO_ADMIN]: 'true' },
      rules: [
        rule('create').groups(authorizationGroup).resources('localsubjectaccessreviews'),
        rule(...ReadWrite).groups(rbacGroup).resources('roles', 'rolebindings'),
      ],
    }),
    clusterRole({
      name: 'system:aggregate-to-edit',
      labels: { [AGGREGATE_TO_EDIT]: 'true' },
      rules: [
        // read on escalating resources
        rule(...Read).groups(legacyGroup).resources('pods/attach', 'pods/proxy', 'pods/exec', 'pods/portforward', 'secrets', 'services/proxy'),
        rule('impersonate').groups(legacyGroup).resources('serviceaccounts'),
        rule(...Write).groups(legacyGroup).resources('pods', 'pods/attach', 'pods/proxy', 'pods/exec', 'pods/portforward'),
        rule('create').groups(legacyGroup).resources('pods/eviction'),
        rule(...Write).groups(legacyGroup).resources('replicationcontrollers', 'replicationcontrollers/scale', 'serviceaccounts', 'services', 'services/proxy', 'persistentvolumeclaims', 'configmaps', 'secrets', 'events'),
        rule('create').groups(legacyGroup).resources('serviceaccounts/token'),
        rule(...Write).groups(appsGroup).resources('statefulsets', 'statefulsets/scale', 'daemonsets', 'deployments', 'deployments/scale', 'deployments/rollback', 'replicasets', 'replicasets/scale'),
        rule(...Write).groups(autoscalingGroup).resources('horizontalpodautoscalers'),
        rule(...Write).groups(batchGroup).resources('jobs', 'cronjobs'),
        rule(...Write).groups(extensionsGroup).resources('daemonsets', 'deployments', 'deployments/scale', 'deployments/rollback', 'ingresses', 'replicasets', 'replicasets/scale', 'replicationcontrollers/scale', 'networkpolicies'),
        rule(...Write).groups(policyGroup).resources('poddisruptionbudgets'),
        rule(...Write).groups(networkingGroup).resources('networkpolicies', 'ingresses'),
        rule(...ReadWrite).groups(coordinationGroup).resources('leases'),
      ],
    }),
    clusterRole({
      name: 'system:aggregate-to-view',
      labels: { [AGGREGATE_TO_VIEW]: 'true' },
      rules: [
        rule(...Read).groups(legacyGroup).resources('pods', 'replicationcontrollers', 'replicationcontrollers/scale', 'serviceaccounts', 'services', 'services/status', 'endpoints', 'persistentvolumeclaims', 'persistentvolumeclaims/status', 'configmaps'),
        rule(...Read).groups(legacyGroup).resources('limitranges', 'resourcequotas', 'bindings', 'events', 'pods/status', 'resourcequotas/status', 'namespaces/status', 'replicationcontrollers/status', 'pods/log'),
        // read on namespaces at the namespace scope is read on *this* namespace
        rule(...Read).groups(legacyGroup).resources('namespaces'),
        rule(...Read).groups(discoveryGroup).resources('endpointslices'),
        rule(...Read).groups(appsGroup).resources('controllerrevisions', 'statefulsets', 'statefulsets/status', 'statefulsets/scale', 'daemonsets', 'daemonsets/status', 'deployments', 'deployments/status', 'deployments/scale', 'replicasets', 'replicasets/status', 'replicasets/scale'),
        rule(...Read).groups(autoscalingGroup).resources('horizontalpodautoscalers', 'horizontalpodautoscalers/status'),
        rule(...Read).groups(batchGroup).resources('jobs', 'cronjobs', 'cronjobs/status', 'jobs/status'),
        rule(...Read).groups(extensionsGroup).resources('daemonsets', 'daemonsets/status', 'deployments', 'deployments/scale', 'deployments/status', 'ingresses', 'ingresses/status', 'replicasets', 'replicasets/scale', 'replicasets/status', 'replicationcontrollers/scale', 'networkpolicies'),
        rule(...Read).groups(policyGroup).resources('poddisruptionbudgets', 'poddisruptionbudgets/status'),
        rule(...Read).groups(networkingGroup).resources('ingresses', 'ingresses/status', 'networkpolicies'),
      ],
    }),
    // authentication and authorization delegation (non-mutating creates)
    clusterRole({ name: 'system:auth-delegator', rules: [rule('create').groups(authenticationGroup).resources('tokenreviews'), rule('create').groups(authorizationGroup).resources('subjectaccessreviews')] }),
    // what a "normal" user may learn about themselves
    clusterRole({
      name: 'system:basic-user',
      rules: [rule('create').groups(authorizationGroup).resources('selfsubjectaccessreviews', 'selfsubjectrulesreviews'), rule('create').groups(authenticationGroup).resources('selfsubjectreviews')],
    }),
    // CSR creation (the csrapprover auto-approves for holders)
    clusterRole({ name: 'system:certificates.k8s.io:certificatesigningrequests:nodeclient', rules: [rule('create').groups(certificatesGroup).resources('certificatesigningrequests/nodeclient')] }),
    clusterRole({ name: 'system:certificates.k8s.io:certificatesigningrequests:selfnodeclient', rules: [rule('create').groups(certificatesGroup).resources('certificatesigningrequests/selfnodeclient')] }),
    approver('kubernetes.io/kube-apiserver-client'),
    approver('kubernetes.io/kube-apiserver-client-kubelet'),
    approver('kubernetes.io/kubelet-serving'),
    approver('kubernetes.io/legacy-unknown'),
    // enough to see the server is ready and discover its API versions
    clusterRole({ name: 'system:discovery', rules: [rule('get').urls('/livez', '/readyz', '/healthz', '/version', '/version/', '/openapi', '/openapi/*', '/api', '/api/*', '/apis', '/apis/*')] }),
    clusterRole({ name: 'system:heapster', rules: [rule(...Read).groups(legacyGroup).resources('events', 'pods', 'nodes', 'namespaces'), rule(...Read).groups(extensionsGroup).resources('deployments')] }),
    // the aggregator sees every service, to know whether the ones it points to exist
    clusterRole({ name: 'system:kube-aggregator', rules: [rule(...Read).groups(legacyGroup).resources('services', 'endpoints')] }),
    clusterRole({
      name: 'system:kube-controller-manager',
      rules: [
        eventsRule(),
        // leader election
        rule('create').groups(coordinationGroup).resources('leases'),
        rule('get', 'update').groups(coordinationGroup).resources('leases').names('kube-controller-manager'),
        // the service accounts and tokens that give each controller its own identity
        rule('create').groups(legacyGroup).resources('secrets', 'serviceaccounts'),
        rule('delete').groups(legacyGroup).resources('secrets'),
        rule('get').groups(legacyGroup).resources('namespaces', 'secrets', 'serviceaccounts', 'configmaps'),
        rule('update').groups(legacyGroup).resources('secrets', 'serviceaccounts'),
        // delegated authentication and authorization
        rule('create').groups(authenticationGroup).resources('tokenreviews'),
        rule('create').groups(authorizationGroup).resources('subjectaccessreviews'),
        // the shared informers
        rule('list', 'watch').groups('*').resources('*'),
        rule('create').groups(legacyGroup).resources('serviceaccounts/token'),
      ],
    }),
    clusterRole({ name: 'system:kube-dns', rules: [rule('list', 'watch').groups(legacyGroup).resources('endpoints', 'services')] }),
    clusterRole({
      name: 'system:kube-scheduler',
      rules: [
        eventsRule(),
        // leader election
        rule('create').groups(coordinationGroup).resources('leases'),
        rule('get', 'update', 'list', 'watch').groups(coordinationGroup).resources('leases').names('kube-scheduler'),
        rule(...ReadWrite).groups(coordinationGroup).resources('leasecandidates'),
        // fundamental resources
        rule(...Read).groups(legacyGroup).resources('nodes'),
        rule('get', 'list', 'watch', 'delete').groups(legacyGroup).resources('pods'),
        rule('create').groups(legacyGroup).resources('pods/binding', 'bindings'),
        rule('patch', 'update').groups(legacyGroup).resources('pods/status'),
        // things that select pods
        rule(...Read).groups(legacyGroup).resources('services', 'replicationcontrollers'),
        rule(...Read).groups(appsGroup, extensionsGroup).resources('replicasets'),
        rule(...Read).groups(appsGroup).resources('statefulsets'),
        // things that pods use or apply to
        rule(...Read).groups(policyGroup).resources('poddisruptionbudgets'),
        rule(...Read).groups(legacyGroup).resources('persistentvolumeclaims', 'persistentvolumes'),
        // delegated authentication and authorization
        rule('create').groups(authenticationGroup).resources('tokenreviews'),
        rule('create').groups(authorizationGroup).resources('subjectaccessreviews'),
        // volume limits
        rule(...Read).groups(storageGroup).resources('csinodes'),
        rule(...Read).groups(storageGroup).resources('volumeattachments'),
        // namespace selectors of pod affinity
        rule(...Read).groups(legacyGroup).resources('namespaces'),
        rule(...Read).groups(storageGroup).resources('csidrivers'),
        rule(...Read).groups(storageGroup).resources('csistoragecapacities'),
        // DynamicResourceAllocation (on by default)
        rule(...Read).groups(resourceGroup).resources('deviceclasses'),
        rule(...ReadUpdate).groups(resourceGroup).resources('resourceclaims'),
        rule(...ReadUpdate).groups(resourceGroup).resources('resourceclaims/status'),
        rule(...ReadUpdate).groups(legacyGroup).resources('pods/finalizers'),
        rule(...Read).groups(resourceGroup).resources('resourceslices'),
      ],
    }),
    clusterRole({
      name: 'system:kubelet-api-admin',
      rules: [
        // the kubelet API: allowed on /api/v1/nodes/{name}/proxy and the node's sub-paths
        rule(...Read).groups(legacyGroup).resources('nodes'),
        rule('proxy').groups(legacyGroup).resources('nodes'),
        rule('*').groups(legacyGroup).resources('nodes/proxy', 'nodes/metrics', 'nodes/stats', 'nodes/log'),
      ],
    }),
    clusterRole({ name: 'system:monitoring', rules: [rule('get').urls('/healthz', '/healthz/*', '/livez', '/livez/*', '/metrics', '/metrics/slis', '/readyz', '/readyz/*')] }),
    clusterRole({ name: 'system:node', rules: nodeRules() }),
    clusterRole({ name: 'system:node-bootstrapper', rules: [rule('create', 'get', 'list', 'watch').groups(certificatesGroup).resources('certificatesigningrequests')] }),
    clusterRole({ name: 'system:node-problem-detector', rules: [rule('get').groups(legacyGroup).resources('nodes'), rule('patch').groups(legacyGroup).resources('nodes/status'), eventsRule()] }),
    clusterRole({
      name: 'system:node-proxier',
      rules: [
        rule('list', 'watch').groups(legacyGroup).resources('services', 'endpoints'),
        rule('get', 'list', 'watch').groups(legacyGroup).resources('nodes'),
        eventsRule(),
        rule('list', 'watch').groups(discoveryGroup).resources('endpointslices'),
      ],
    }),
    clusterRole({
      name: 'system:persistent-volume-provisioner',
      rules: [
        rule('get', 'list', 'watch', 'create', 'delete').groups(legacyGroup).resources('persistentvolumes'),
        // update to annotate and add the volume's name
        rule('get', 'list', 'watch', 'update').groups(legacyGroup).resources('persistentvolumeclaims'),
        rule(...Read).groups(storageGroup).resources('storageclasses'),
        // watching provisioning success and failure events
        rule('watch').groups(legacyGroup).resources('events'),
        eventsRule(),
      ],
    }),
    // insensitive cluster information, for everyone
    clusterRole({ name: 'system:public-info-viewer', rules: [rule('get').urls('/livez', '/readyz', '/healthz', '/version', '/version/')] }),
    clusterRole({
      name: 'system:service-account-issuer-discovery',
      rules: [rule('get').urls('/.well-known/openid-configuration', '/.well-known/openid-configuration/', '/openid/v1/jwks', '/openid/v1/jwks/')],
    }),
    clusterRole({
      name: 'system:volume-scheduler',
      rules: [
        rule(...ReadUpdate).groups(legacyGroup).resources('persistentvolumes'),
        rule(...Read).groups(storageGroup).resources('storageclasses'),
        rule(...ReadUpdate).groups(legacyGroup).resources('persistentvolumeclaims'),
      ],
    }),
    clusterRole({ name: 'view', labels: { [AGGREGATE_TO_EDIT]: 'true' }, aggregationRule: aggregateFrom(AGGREGATE_TO_VIEW) }),
  ];
}

export function clusterRoleBindings(): ClusterRoleBinding[] {
  return [
    clusterRoleBinding('cluster-admin', groups(SystemPrivilegedGroup)),
    clusterRoleBinding('system:monitoring', groups(MonitoringGroup)),
    clusterRoleBinding('system:discovery', groups(AllAuthenticated)),
    clusterRoleBinding('system:basic-user', groups(AllAuthenticated)),
    clusterRoleBinding('system:public-info-viewer', groups(AllAuthenticated, AllUnauthenticated)),
    clusterRoleBinding('system:node-proxier', users(KubeProxy)),
    clusterRoleBinding('system:kube-controller-manager', users(KubeControllerManager)),
    clusterRoleBinding('system:kube-dns', serviceAccounts('kube-system', 'kube-dns')),
    clusterRoleBinding('system:kube-scheduler', users(KubeScheduler)),
    clusterRoleBinding('system:volume-scheduler', users(KubeScheduler)),
    // system:node to the system:nodes group is deprecated since the Node authorizer (1.7): bound to nobody
    clusterRoleBinding('system:node', []),
    clusterRoleBinding('system:service-account-issuer-discovery', groups(AllServiceAccountsGroup)),
  ];
}
