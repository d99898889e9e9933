// Which requests a webhook or policy applies to: kube's rules, namespace and object matchers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { admissionAttributes } from '../../helpers/admission.ts';
import { equivalentResourcesIn, matchingInvocation, namespaceSelectorMatches, objectSelectorMatches, ruleMatches } from '../../../server/admission/matching.ts';
import { labelSelectorFromObject } from '../../../server/registry/selectors.ts';
import { ResourceCatalog } from '../../../server/schema/catalog.ts';
import { ApiError } from '../../../server/errors.ts';

const catalog = ResourceCatalog.loadBuiltins();
const admin = { name: 'admin', groups: ['system:masters'] };
const info = (g: string, v: string, r: string) => catalog.lookup(g, v, r)!;
const deployment = (labels?: Record<string, string>) => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace: 'ns', labels } });
const createDeployment = admissionAttributes({ operation: 'CREATE', info: info('apps', 'v1', 'deployments'), namespace: 'ns', name: 'd', object: deployment({ app: 'web' }), user: admin });

test('a rule matches by operation, group, version, resource and subresource', () => {
  const rule = { operations: ['CREATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'] };
  assert.equal(ruleMatches(rule, createDeployment), true);
  assert.equal(ruleMatches({ ...rule, operations: ['UPDATE'] }, createDeployment), false);
  assert.equal(ruleMatches({ ...rule, operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'] }, createDeployment), true);
  assert.equal(ruleMatches({ ...rule, resources: [] }, createDeployment), false, 'no resources match nothing');
  const scale = admissionAttributes({ operation: 'UPDATE', info: info('apps', 'v1', 'deployments'), subresource: 'scale', namespace: 'ns', name: 'd', user: admin });
  assert.equal(ruleMatches({ ...rule, operations: ['UPDATE'] }, scale), false, 'deployments does not match deployments/scale');
  assert.equal(ruleMatches({ ...rule, operations: ['UPDATE'], resources: ['deployments/*'] }, scale), true);
  assert.equal(ruleMatches({ ...rule, operations: ['UPDATE'], resources: ['*/scale'] }, scale), true);
});

test('scope: a Namespace is cluster-scoped even though its requests carry its name', () => {
  const nsUpdate = admissionAttributes({ operation: 'UPDATE', info: info('', 'v1', 'namespaces'), name: 'team', user: admin });
  nsUpdate.namespace = 'team';
  const any = { operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'] };
  assert.equal(ruleMatches({ ...any, scope: 'Cluster' }, nsUpdate), true);
  assert.equal(ruleMatches({ ...any, scope: 'Namespaced' }, nsUpdate), false);
  assert.equal(ruleMatches({ ...any, scope: 'Namespaced' }, createDeployment), true);
  assert.equal(ruleMatches({ ...any, scope: 'Cluster' }, createDeployment), false);
});

test('matchPolicy Equivalent matches another served version and reports it', () => {
  const hpa = admissionAttributes({ operation: 'CREATE', info: info('autoscaling', 'v2', 'horizontalpodautoscalers'), namespace: 'ns', name: 'h', user: admin });
  const rules = [{ operations: ['CREATE'], apiGroups: ['autoscaling'], apiVersions: ['v1'], resources: ['horizontalpodautoscalers'] }];
  const equivalents = equivalentResourcesIn(catalog);
  assert.equal(matchingInvocation(rules, hpa, 'Exact', equivalents), undefined);
  assert.deepEqual(matchingInvocation(rules, hpa, 'Equivalent', equivalents), {
    resource: { group: 'autoscaling', version: 'v1', resource: 'horizontalpodautoscalers' },
    subresource: '',
    kind: { group: 'autoscaling', version: 'v1', kind: 'HorizontalPodAutoscaler' },
  });
});

test('namespaceSelector: the namespace labels, a Namespace object own, cluster-scoped always, 404 for a missing namespace', () => {
  const selector = labelSelectorFromObject({ matchLabels: { env: 'prod' } });
  const labels = (name: string) => ({ prod: { env: 'prod' }, dev: { env: 'dev' } })[name];
  assert.equal(namespaceSelectorMatches(selector, { ...createDeployment, namespace: 'prod' }, labels), true);
  assert.equal(namespaceSelectorMatches(selector, { ...createDeployment, namespace: 'dev' }, labels), false);
  assert.throws(() => namespaceSelectorMatches(selector, { ...createDeployment, namespace: 'gone' }, labels), (e: unknown) => e instanceof ApiError && e.code === 404 && e.message === 'namespaces "gone" not found');
  const newNs = admissionAttributes({ operation: 'CREATE', info: info('', 'v1', 'namespaces'), name: 'x', object: { metadata: { name: 'x', labels: { env: 'prod' } } }, user: admin });
  assert.equal(namespaceSelectorMatches(selector, newNs, labels), true);
  const node = admissionAttributes({ operation: 'CREATE', info: info('', 'v1', 'nodes'), name: 'n', object: { metadata: { name: 'n' } }, user: admin });
  assert.equal(namespaceSelectorMatches(selector, node, labels), true);
});

test('objectSelector: the object or the old object labels', () => {
  const selector = labelSelectorFromObject({ matchLabels: { app: 'web' } });
  assert.equal(objectSelectorMatches(selector, createDeployment), true);
  const relabel = admissionAttributes({ operation: 'UPDATE', info: info('apps', 'v1', 'deployments'), namespace: 'ns', name: 'd', object: deployment({ app: 'api' }), oldObject: deployment({ app: 'web' }), user: admin });
  assert.equal(objectSelectorMatches(selector, relabel), true);
  const del = admissionAttributes({ operation: 'DELETE', info: info('apps', 'v1', 'deployments'), namespace: 'ns', name: 'd', oldObject: deployment(), user: admin });
  assert.equal(objectSelectorMatches(selector, del), false);
  assert.equal(objectSelectorMatches(labelSelectorFromObject({}), del), true);
});
