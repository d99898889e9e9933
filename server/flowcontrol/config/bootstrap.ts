// The FlowSchemas and PriorityLevelConfigurations every kube-apiserver starts with, as kube 1.36
// defines them (k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap/default.go: the Mandatory* and
// Suggested* variables, built by newPriorityLevelConfiguration and newFlowSchema), in
// flowcontrol.apiserver.k8s.io/v1 JSON with the defaults already in (so a stored copy compares
// equal to these). Each carries kube's `apf.kubernetes.io/autoupdate-spec: "true"`.
import type { PriorityLevelSpec } from '../types.ts';

export const FLOWCONTROL_API_VERSION = 'flowcontrol.apiserver.k8s.io/v1';
/** flowcontrol.AutoUpdateAnnotationKey. */
export const AUTO_UPDATE_ANNOTATION = 'apf.kubernetes.io/autoupdate-spec';
export const PRIORITY_LEVEL_EXEMPT = 'exempt';
export const PRIORITY_LEVEL_CATCH_ALL = 'catch-all';
export const FLOW_SCHEMA_EXEMPT = 'exempt';
export const FLOW_SCHEMA_CATCH_ALL = 'catch-all';

/** flowcontrol/v1 Subject. */
export interface Subject {
  kind: 'User' | 'Group' | 'ServiceAccount';
  user?: { name: string };
  group?: { name: string };
  serviceAccount?: { namespace: string; name: string };
}
export interface ResourcePolicyRule {
  verbs: string[];
  apiGroups: string[];
  resources: string[];
  clusterScope?: boolean;
  namespaces?: string[];
}
export interface NonResourcePolicyRule {
  verbs: string[];
  nonResourceURLs: string[];
}
export interface PolicyRulesWithSubjects {
  subjects: Subject[];
  resourceRules?: ResourcePolicyRule[];
  nonResourceRules?: NonResourcePolicyRule[];
}
/** flowcontrol/v1 FlowSchemaSpec. */
export interface FlowSchemaSpec {
  priorityLevelConfiguration: { name: string };
  matchingPrecedence: number;
  distinguisherMethod?: { type: 'ByUser' | 'ByNamespace' };
  rules?: PolicyRulesWithSubjects[];
}
export interface BootstrapFlowSchema {
  apiVersion: string;
  kind: 'FlowSchema';
  metadata: { name: string; annotations: Record<string, string> };
  spec: FlowSchemaSpec;
}
export interface BootstrapPriorityLevel {
  apiVersion: string;
  kind: 'PriorityLevelConfiguration';
  metadata: { name: string; annotations: Record<string, string> };
  spec: PriorityLevelSpec;
}

// user.SystemPrivilegedGroup, AllAuthenticated, AllUnauthenticated, NodesGroup, KubeControllerManager,
// KubeScheduler; serviceaccount.AllServiceAccountsGroup.
const SYSTEM_MASTERS = 'system:masters';
const AUTHENTICATED = 'system:authenticated';
const UNAUTHENTICATED = 'system:unauthenticated';
const NODES = 'system:nodes';
const KUBE_CONTROLLER_MANAGER = 'system:kube-controller-manager';
const KUBE_SCHEDULER = 'system:kube-scheduler';
const SERVICE_ACCOUNTS = 'system:serviceaccounts';

const groups = (...names: string[]): Subject[] => names.map((name) => ({ kind: 'Group', group: { name } }));
const users = (...names: string[]): Subject[] => names.map((name) => ({ kind: 'User', user: { name } }));
const kubeSystemServiceAccounts = (...names: string[]): Subject[] => names.map((name) => ({ kind: 'ServiceAccount', serviceAccount: { namespace: 'kube-system', name } }));
const resourceRule = (verbs: string[], apiGroups: string[], resources: string[], namespaces: string[], clusterScope: boolean): ResourcePolicyRule => ({ verbs, apiGroups, resources, clusterScope, namespaces });
const nonResourceRule = (verbs: string[], nonResourceURLs: string[]): NonResourcePolicyRule => ({ verbs, nonResourceURLs });
/** Everything: every verb, group, resource, namespace and the cluster scope, and every non-resource URL. */
const everything = (subjects: Subject[]): PolicyRulesWithSubjects => ({
  subjects,
  resourceRules: [resourceRule(['*'], ['*'], ['*'], ['*'], true)],
  nonResourceRules: [nonResourceRule(['*'], ['*'])],
});

function flowSchema(name: string, priorityLevel: string, matchingPrecedence: number, distinguisher: 'ByUser' | 'ByNamespace' | '', ...rules: PolicyRulesWithSubjects[]): BootstrapFlowSchema {
  return {
    apiVersion: FLOWCONTROL_API_VERSION,
    kind: 'FlowSchema',
    metadata: { name, annotations: { [AUTO_UPDATE_ANNOTATION]: 'true' } },
    spec: { priorityLevelConfiguration: { name: priorityLevel }, matchingPrecedence, ...(distinguisher ? { distinguisherMethod: { type: distinguisher } } : {}), rules },
  };
}

function priorityLevel(name: string, spec: PriorityLevelSpec): BootstrapPriorityLevel {
  return { apiVersion: FLOWCONTROL_API_VERSION, kind: 'PriorityLevelConfiguration', metadata: { name, annotations: { [AUTO_UPDATE_ANNOTATION]: 'true' } }, spec };
}

/** A Limited level that queues (every suggested one). */
function queuing(name: string, nominalConcurrencyShares: number, lendablePercent: number, queues: number, handSize: number, queueLengthLimit: number): BootstrapPriorityLevel {
  return priorityLevel(name, { type: 'Limited', limited: { nominalConcurrencyShares, lendablePercent, limitResponse: { type: 'Queue', queuing: { queues, handSize, queueLengthLimit } } } });
}

/** MandatoryPriorityLevelConfigurations, in kube's order. */
export const MANDATORY_PRIORITY_LEVELS: readonly BootstrapPriorityLevel[] = [
  priorityLevel(PRIORITY_LEVEL_CATCH_ALL, { type: 'Limited', limited: { nominalConcurrencyShares: 5, lendablePercent: 0, limitResponse: { type: 'Reject' } } }),
  priorityLevel(PRIORITY_LEVEL_EXEMPT, { type: 'Exempt', exempt: { nominalConcurrencyShares: 0, lendablePercent: 0 } }),
];

/** MandatoryFlowSchemas. */
export const MANDATORY_FLOW_SCHEMAS: readonly BootstrapFlowSchema[] = [
  flowSchema(FLOW_SCHEMA_EXEMPT, PRIORITY_LEVEL_EXEMPT, 1, '', everything(groups(SYSTEM_MASTERS))),
  flowSchema(FLOW_SCHEMA_CATCH_ALL, PRIORITY_LEVEL_CATCH_ALL, 10000, 'ByUser', everything(groups(UNAUTHENTICATED, AUTHENTICATED))),
];

/** SuggestedPriorityLevelConfigurations. */
export const SUGGESTED_PRIORITY_LEVELS: readonly BootstrapPriorityLevel[] = [
  queuing('system', 30, 33, 64, 6, 50),
  queuing('node-high', 40, 25, 64, 6, 50),
  queuing('leader-election', 10, 0, 16, 4, 50),
  queuing('workload-high', 40, 50, 128, 6, 50),
  queuing('workload-low', 100, 90, 128, 6, 50),
  queuing('global-default', 20, 50, 128, 6, 50),
];

/** SuggestedFlowSchemas, in kube's order. */
export const SUGGESTED_FLOW_SCHEMAS: readonly BootstrapFlowSchema[] = [
  flowSchema('system-nodes', 'system', 500, 'ByUser', everything(groups(NODES))),
  flowSchema('system-node-high', 'node-high', 400, 'ByUser', {
    subjects: groups(NODES),
    resourceRules: [resourceRule(['*'], [''], ['nodes', 'nodes/status'], ['*'], true), resourceRule(['*'], ['coordination.k8s.io'], ['leases'], ['*'], false)],
  }),
  // Probes are exempt, from anyone.
  flowSchema('probes', PRIORITY_LEVEL_EXEMPT, 2, '', { subjects: groups(UNAUTHENTICATED, AUTHENTICATED), nonResourceRules: [nonResourceRule(['get'], ['/healthz', '/readyz', '/livez'])] }),
  flowSchema('system-leader-election', 'leader-election', 100, 'ByUser', {
    subjects: [...users(KUBE_CONTROLLER_MANAGER, KUBE_SCHEDULER), ...kubeSystemServiceAccounts('*')],
    resourceRules: [resourceRule(['get', 'create', 'update'], [''], ['endpoints', 'configmaps'], ['kube-system'], false), resourceRule(['get', 'create', 'update'], ['coordination.k8s.io'], ['leases'], ['*'], false)],
  }),
  flowSchema('workload-leader-election', 'leader-election', 200, 'ByUser', {
    subjects: kubeSystemServiceAccounts('*'),
    resourceRules: [resourceRule(['get', 'create', 'update'], [''], ['endpoints', 'configmaps'], ['*'], false), resourceRule(['get', 'create', 'update'], ['coordination.k8s.io'], ['leases'], ['*'], false)],
  }),
  // The endpoints controller's writes ahead of workload-leader-election, which would catch them.
  flowSchema('endpoint-controller', 'workload-high', 150, 'ByUser', {
    subjects: [...users(KUBE_CONTROLLER_MANAGER), ...kubeSystemServiceAccounts('endpoint-controller', 'endpointslicemirroring-controller')],
    resourceRules: [resourceRule(['get', 'create', 'update'], [''], ['endpoints'], ['*'], false)],
  }),
  flowSchema('kube-controller-manager', 'workload-high', 800, 'ByNamespace', everything(users(KUBE_CONTROLLER_MANAGER))),
  flowSchema('kube-scheduler', 'workload-high', 800, 'ByNamespace', everything(users(KUBE_SCHEDULER))),
  flowSchema('kube-system-service-accounts', 'workload-high', 900, 'ByNamespace', everything(kubeSystemServiceAccounts('*'))),
  flowSchema('service-accounts', 'workload-low', 9000, 'ByUser', everything(groups(SERVICE_ACCOUNTS))),
  flowSchema('global-default', 'global-default', 9900, 'ByUser', everything(groups(UNAUTHENTICATED, AUTHENTICATED))),
];

/** The JSON of a spec as Go compares the struct (equality.Semantic): an empty list or map is nil, a false or "" is absent. */
function semanticForm(v: unknown): unknown {
  if (Array.isArray(v)) return v.length ? v.map(semanticForm) : undefined;
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) {
      const n = semanticForm((v as Record<string, unknown>)[k]);
      if (n !== undefined) out[k] = n;
    }
    return Object.keys(out).length ? out : undefined;
  }
  return v === null || v === false || v === '' ? undefined : v;
}

/** Whether two specs (JSON, defaults in) are equal as kube's apiequality.Semantic.DeepEqual finds their structs. */
export function specsEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(semanticForm(a) ?? null) === JSON.stringify(semanticForm(b) ?? null);
}
