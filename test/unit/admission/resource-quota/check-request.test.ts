// ResourceQuota admission's decision (kube's CheckRequest, resourcequota/controller.go) and the
// evaluators it asks (pkg/quota/v1/evaluator/core): which quotas cover a request (resources and
// scopes), kube's refusals word for word (exceeded, must specify, status unknown), what an update
// is charged, and what a pod, a service and a claim use.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkRequest, type QuotaView } from '../../../../server/admission/resource-quota/index.ts';
import { evaluatorFor, podMatchesScope } from '../../../../server/admission/resource-quota/evaluators.ts';
import { resourceListJson } from '../../../../server/admission/resource-quota/resource-lists.ts';
import type { AdmissionAttributes } from '../../../../server/admission/types.ts';
import type { ResourceInfo } from '../../../../server/schema/types.ts';
import { ApiError } from '../../../../server/errors.ts';
import { admissionAttributes } from '../../../helpers/admission.ts';
import { limitedResourcesOf } from '../../../../server/admission/resource-quota/config.ts';

function attrs(resource: string, object: unknown, extra: Partial<Pick<AdmissionAttributes, 'operation' | 'oldObject'>> = {}): AdmissionAttributes {
  const name = (object as { metadata?: { name?: string } }).metadata?.name ?? '';
  return admissionAttributes({ operation: 'CREATE', info: { group: '', version: 'v1', resource, kind: 'X', namespaced: true } as ResourceInfo, namespace: 'ns', name, object, user: { name: 'u', groups: [] }, ...extra });
}

function quota(name: string, hard: Record<string, string>, used: Record<string, string> | undefined, spec: Partial<NonNullable<QuotaView['spec']>> = {}): QuotaView {
  return { metadata: { name, namespace: 'ns', resourceVersion: '1' }, spec: { hard, ...spec }, status: { hard, ...(used ? { used } : {}) } };
}

const pod = (name: string, containers: unknown[], spec: Record<string, unknown> = {}) => ({ metadata: { name }, spec: { containers, ...spec } });
const c = (name: string, requests?: Record<string, string>, limits?: Record<string, string>) => ({ name, resources: { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) } });

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof ApiError);
    assert.equal(e.code, 403);
    return e.message;
  }
  assert.fail('not refused');
}

test('a pod within the quota is charged: used plus what it requests, for every covering quota', () => {
  const a = attrs('pods', pod('p', [c('a', { cpu: '250m', memory: '64Mi' }, { cpu: '500m', memory: '64Mi' })]));
  const quotas = [quota('compute', { pods: '5', 'requests.cpu': '1', 'limits.memory': '1Gi' }, { pods: '1', 'requests.cpu': '250m', 'limits.memory': '64Mi' }), quota('other', { secrets: '3' }, { secrets: '0' })];
  const charges = checkRequest(quotas, a, evaluatorFor('', 'pods'));
  assert.equal(charges.length, 1);
  assert.equal(charges[0].quota.metadata.name, 'compute');
  assert.deepEqual(resourceListJson(charges[0].used), { 'limits.memory': '128Mi', pods: '2', 'requests.cpu': '500m' });
});

test('exceeded: kube\'s message names only what exceeds', () => {
  const a = attrs('pods', pod('p', [c('a', { cpu: '600m' })]));
  const msg = refusal(() => checkRequest([quota('q', { pods: '5', 'requests.cpu': '1' }, { pods: '1', 'requests.cpu': '500m' })], a, evaluatorFor('', 'pods')));
  assert.equal(msg, 'pods "p" is forbidden: exceeded quota: q, requested: requests.cpu=600m, used: requests.cpu=500m, limited: requests.cpu=1');
});

test('must specify: every container and init container states the cpu and memory a quota counts', () => {
  const a = attrs('pods', { metadata: { name: 'p' }, spec: { containers: [c('b', { cpu: '1' }), c('a')], initContainers: [c('init', { memory: '1Mi' })] } });
  const msg = refusal(() => checkRequest([quota('q', { 'requests.cpu': '4', 'limits.memory': '4Gi' }, { 'requests.cpu': '0', 'limits.memory': '0' })], a, evaluatorFor('', 'pods')));
  assert.equal(msg, 'pods "p" is forbidden: failed quota: q: must specify limits.memory for: a,b,init; requests.cpu for: a,init');
});

test('status unknown: a quota the controller has not measured yet refuses what it covers', () => {
  const a = attrs('configmaps', { metadata: { name: 'cm' } });
  const msg = refusal(() => checkRequest([quota('q', { configmaps: '2', 'count/configmaps': '2' }, undefined)], a, evaluatorFor('', 'configmaps')));
  assert.equal(msg, 'configmaps "cm" is forbidden: status unknown for quota: q, resources: configmaps,count/configmaps');
});

test('an update is charged what it adds over the old object; one adding nothing is not charged', () => {
  const svc = (type: string, ports: number) => ({ metadata: { name: 's', resourceVersion: '5' }, spec: { type, ports: Array.from({ length: ports }, (_, i) => ({ port: 80 + i })) } });
  const q = quota('q', { services: '5', 'services.nodeports': '3', 'services.loadbalancers': '0' }, { services: '1', 'services.nodeports': '0', 'services.loadbalancers': '0' });
  const toNodePort = checkRequest([q], attrs('services', svc('NodePort', 2), { operation: 'UPDATE', oldObject: svc('ClusterIP', 2) }), evaluatorFor('', 'services'));
  assert.deepEqual(resourceListJson(toNodePort[0].used), { services: '1', 'services.loadbalancers': '0', 'services.nodeports': '2' });
  assert.deepEqual(checkRequest([q], attrs('services', svc('ClusterIP', 3), { operation: 'UPDATE', oldObject: svc('ClusterIP', 2) }), evaluatorFor('', 'services')), []);
  const lb = refusal(() => checkRequest([q], attrs('services', svc('LoadBalancer', 1)), evaluatorFor('', 'services')));
  assert.equal(lb, 'services "s" is forbidden: exceeded quota: q, requested: services.loadbalancers=1, used: services.loadbalancers=0, limited: services.loadbalancers=0');
});

test('scopes: BestEffort, NotBestEffort, Terminating, PriorityClass selectors, CrossNamespacePodAffinity', () => {
  const bestEffort = pod('be', [c('a')]);
  const burstable = pod('bu', [c('a', { memory: '1Mi' })], { activeDeadlineSeconds: 10, priorityClassName: 'high' });
  const s = (scopeName: string, operator = 'Exists', values?: string[]) => ({ scopeName, operator, values });
  assert.equal(podMatchesScope(s('BestEffort'), bestEffort), true);
  assert.equal(podMatchesScope(s('NotBestEffort'), burstable), true);
  assert.equal(podMatchesScope(s('Terminating'), burstable), true);
  assert.equal(podMatchesScope(s('NotTerminating'), bestEffort), true);
  assert.equal(podMatchesScope(s('PriorityClass', 'In', ['high', 'mid']), burstable), true);
  assert.equal(podMatchesScope(s('PriorityClass', 'NotIn', ['high']), burstable), false);
  assert.equal(podMatchesScope(s('PriorityClass', 'NotIn', ['high']), bestEffort), true);
  assert.equal(podMatchesScope(s('PriorityClass'), bestEffort), false);
  assert.equal(podMatchesScope(s('PriorityClass', 'DoesNotExist'), bestEffort), true);
  const affinity = pod('x', [c('a')], { affinity: { podAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1, podAffinityTerm: { namespaceSelector: {}, topologyKey: 'k' } }] } } });
  assert.equal(podMatchesScope(s('CrossNamespacePodAffinity'), affinity), true);
  assert.equal(podMatchesScope(s('CrossNamespacePodAffinity'), bestEffort), false);
  // A scoped quota covers only the pods in its scope.
  const scoped = quota('be-only', { pods: '0' }, { pods: '0' }, { scopes: ['BestEffort'] });
  assert.deepEqual(checkRequest([scoped], attrs('pods', burstable), evaluatorFor('', 'pods')), []);
  assert.equal(refusal(() => checkRequest([scoped], attrs('pods', bestEffort), evaluatorFor('', 'pods'))), 'pods "be" is forbidden: exceeded quota: be-only, requested: pods=1, used: pods=0, limited: pods=0');
  // Object counts know no scope: a scoped quota never covers them.
  assert.deepEqual(checkRequest([quota('scoped-cm', { configmaps: '0' }, { configmaps: '0' }, { scopes: ['BestEffort'] })], attrs('configmaps', { metadata: { name: 'c' } }), evaluatorFor('', 'configmaps')), []);
});

test('pod usage: init containers, sidecars, overhead, extended resources and hugepages; a finished pod counts only in count/pods', () => {
  const p = {
    metadata: { name: 'p' },
    spec: {
      containers: [c('a', { cpu: '100m', memory: '100Mi', 'example.com/gpu': '1', 'hugepages-2Mi': '4Mi' }, { cpu: '200m' })],
      initContainers: [c('init', { cpu: '500m' }), { ...c('sidecar', { cpu: '50m' }), restartPolicy: 'Always' }],
      overhead: { cpu: '10m' },
    },
  };
  assert.deepEqual(resourceListJson(evaluatorFor('', 'pods').usage(p)), {
    'count/pods': '1',
    cpu: '510m',
    'hugepages-2Mi': '4Mi',
    memory: '100Mi',
    pods: '1',
    'limits.cpu': '210m',
    'requests.cpu': '510m',
    'requests.example.com/gpu': '1',
    'requests.hugepages-2Mi': '4Mi',
    'requests.memory': '100Mi',
  });
  assert.deepEqual(resourceListJson(evaluatorFor('', 'pods').usage({ ...p, status: { phase: 'Succeeded' } })), { 'count/pods': '1' });
});

test('claims count per storage class; other resources by count/<resource>.<group>', () => {
  const claim = { metadata: { name: 'c' }, spec: { storageClassName: 'fast', resources: { requests: { storage: '5Gi' } } } };
  assert.deepEqual(resourceListJson(evaluatorFor('', 'persistentvolumeclaims').usage(claim)), {
    'count/persistentvolumeclaims': '1',
    'fast.storageclass.storage.k8s.io/persistentvolumeclaims': '1',
    'fast.storageclass.storage.k8s.io/requests.storage': '5Gi',
    persistentvolumeclaims: '1',
    'requests.storage': '5Gi',
  });
  const d = evaluatorFor('apps', 'deployments');
  assert.deepEqual(resourceListJson(d.usage({})), { 'count/deployments.apps': '1' });
  assert.deepEqual(d.matchingResources(['pods', 'count/deployments.apps']), ['count/deployments.apps']);
  assert.equal(d.handles({ operation: 'UPDATE', subresource: '' }), false);
  assert.deepEqual(resourceListJson(evaluatorFor('', 'secrets').usage({})), { 'count/secrets': '1', secrets: '1' });
});

test('limitedResources: a consumption the configuration limits needs a covering quota; a limited scope needs a quota with that scope', () => {
  const limited = limitedResourcesOf({
    apiVersion: 'apiserver.config.k8s.io/v1',
    kind: 'ResourceQuotaConfiguration',
    limitedResources: [
      { resource: 'persistentvolumeclaims', matchContains: ['.storageclass.storage.k8s.io/requests.storage'] },
      { resource: 'pods', matchScopes: [{ scopeName: 'PriorityClass', operator: 'In', values: ['cluster-services'] }] },
    ],
  });
  const claim = { metadata: { name: 'c' }, spec: { storageClassName: 'gold', resources: { requests: { storage: '1Gi' } } } };
  const claims = evaluatorFor('', 'persistentvolumeclaims');
  assert.equal(refusal(() => checkRequest([], attrs('persistentvolumeclaims', claim), claims, limited)), 'persistentvolumeclaims "c" is forbidden: insufficient quota to consume: gold.storageclass.storage.k8s.io/requests.storage');
  const gold = quota('gold', { 'gold.storageclass.storage.k8s.io/requests.storage': '10Gi' }, { 'gold.storageclass.storage.k8s.io/requests.storage': '0' });
  assert.equal(checkRequest([gold], attrs('persistentvolumeclaims', claim), claims, limited).length, 1);
  // A claim without a class consumes nothing limited.
  assert.deepEqual(checkRequest([], attrs('persistentvolumeclaims', { metadata: { name: 'd' }, spec: { resources: { requests: { storage: '1Gi' } } } }), claims, limited), []);

  const critical = pod('crit', [c('a')], { priorityClassName: 'cluster-services' });
  try {
    checkRequest([], attrs('pods', critical), evaluatorFor('', 'pods'), limited);
    assert.fail('not refused');
  } catch (e) {
    assert.ok(e instanceof ApiError);
    assert.deepEqual([e.code, e.reason, e.message], [500, '', 'insufficient quota to match these scopes: [{PriorityClass In [cluster-services]}]']);
  }
  const scoped = quota('crit', { pods: '10' }, { pods: '0' }, { scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['cluster-services'] }] } });
  assert.equal(checkRequest([scoped], attrs('pods', critical), evaluatorFor('', 'pods'), limited).length, 1);
  assert.deepEqual(checkRequest([], attrs('pods', pod('plain', [c('a')])), evaluatorFor('', 'pods'), limited), []);
});

test('the configuration is read strictly and validated, with kube\'s start-up errors', () => {
  const bad = (cfg: unknown) => assert.throws(() => limitedResourcesOf(cfg), (e: Error) => (assert.ok(e.message.startsWith('couldn\'t init admission plugin "ResourceQuota": '), e.message), true));
  assert.deepEqual(limitedResourcesOf(undefined), []);
  assert.deepEqual(limitedResourcesOf({ apiVersion: 'resourcequota.admission.k8s.io/v1beta1', kind: 'Configuration' }), []);
  assert.throws(() => limitedResourcesOf({ apiVersion: 'apiserver.config.k8s.io/v1', kind: 'ResourceQuotaConfiguration', limitedResources: [{ apiGroup: '' }] }), {
    message: 'couldn\'t init admission plugin "ResourceQuota": limitedResources[0].resource: Required value',
  });
  assert.throws(() => limitedResourcesOf({ apiVersion: 'apiserver.config.k8s.io/v1', kind: 'ResourceQuotaConfiguration', limitedResources: [{ resource: 'pods', bogus: 1 }] }), {
    message: 'couldn\'t init admission plugin "ResourceQuota": strict decoding error: unknown field "limitedResources[0].bogus"',
  });
  bad({ apiVersion: 'apiserver.config.k8s.io/v1', kind: 'Configuration' });
  bad({ apiVersion: 'v1' });
});
