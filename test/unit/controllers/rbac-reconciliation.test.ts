// kube's RBAC reconciliation (pkg/registry/rbac/reconciliation) and rule coverage
// (pkg/registry/rbac/validation policy_comparator.go), case by case as kube's own tests pose them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { breakdownRule, covers, reconcileRole, reconcileRoleBinding, type RbacObject } from '../../../server/controllers/rbac-reconciliation.ts';

const role = (rules: RbacObject['rules'], extra: Partial<RbacObject> = {}, meta: Partial<RbacObject['metadata']> = {}): RbacObject => ({ metadata: { name: 'r', ...meta }, rules, ...extra });

test('BreakdownRule: one rule per group, resource, verb and name; URLs per verb', () => {
  assert.deepEqual(breakdownRule({ apiGroups: ['', 'apps'], resources: ['pods'], verbs: ['get', 'list'], resourceNames: ['a'] }), [
    { apiGroups: [''], resources: ['pods'], verbs: ['get'], resourceNames: ['a'] },
    { apiGroups: [''], resources: ['pods'], verbs: ['list'], resourceNames: ['a'] },
    { apiGroups: ['apps'], resources: ['pods'], verbs: ['get'], resourceNames: ['a'] },
    { apiGroups: ['apps'], resources: ['pods'], verbs: ['list'], resourceNames: ['a'] },
  ]);
  assert.deepEqual(breakdownRule({ nonResourceURLs: ['/a', '/b'], verbs: ['get'] }), [{ nonResourceURLs: ['/a'], verbs: ['get'] }, { nonResourceURLs: ['/b'], verbs: ['get'] }]);
});

test('Covers: stars, */subresource, resource names, URL prefixes', () => {
  assert.equal(covers([{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }], [{ apiGroups: ['x'], resources: ['y/z'], verbs: ['q'], resourceNames: ['n'] }]).covered, true);
  assert.equal(covers([{ apiGroups: [''], resources: ['*/scale'], verbs: ['get'] }], [{ apiGroups: [''], resources: ['deployments/scale'], verbs: ['get'] }]).covered, true);
  assert.equal(covers([{ apiGroups: [''], resources: ['*/scale'], verbs: ['get'] }], [{ apiGroups: [''], resources: ['deployments'], verbs: ['get'] }]).covered, false);
  // an owner limited to names does not cover all names
  assert.deepEqual(covers([{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'], resourceNames: ['a'] }], [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }]).uncovered, [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }]);
  assert.equal(covers([{ nonResourceURLs: ['/healthz/*'], verbs: ['get'] }], [{ nonResourceURLs: ['/healthz/etcd'], verbs: ['get'] }]).covered, true);
  assert.equal(covers([{ nonResourceURLs: ['/healthz/*'], verbs: ['get'] }], [{ nonResourceURLs: ['/livez'], verbs: ['get'] }]).covered, false);
});

test('a role: missing labels, annotations and rules are added, the existing ones kept', () => {
  const expected = role([{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }], {}, { labels: { a: '1' }, annotations: { u: 'true' } });
  const existing = role([{ apiGroups: ['x'], resources: ['y'], verbs: ['z'] }, { apiGroups: [''], resources: ['pods'], verbs: ['get'] }], {}, { labels: { a: 'mine', b: '2' }, resourceVersion: '5' });
  const result = reconcileRole(existing, expected);
  assert.equal(result.operation, 'update');
  assert.equal(result.protected, false);
  assert.deepEqual(result.object.metadata, { name: 'r', labels: { a: 'mine', b: '2' }, annotations: { u: 'true' }, resourceVersion: '5' });
  assert.deepEqual(result.object.rules, [...existing.rules!, { apiGroups: [''], resources: ['pods'], verbs: ['list'] }]);
  assert.deepEqual(result.missingRules, [{ apiGroups: [''], resources: ['pods'], verbs: ['list'] }]);
  // nothing missing: nothing to do, whatever extra the role holds
  assert.equal(reconcileRole(result.object, expected).operation, 'none');
  assert.equal(reconcileRole(undefined, expected).operation, 'create');
});

test('autoupdate "false" marks the result protected', () => {
  const existing = role([], {}, { annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'false' } });
  const result = reconcileRole(existing, role([{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }]));
  assert.equal(result.protected, true);
  assert.equal(result.operation, 'update');
});

test('aggregation rules: missing selectors appended; an unexpected one removed', () => {
  const sel = (v: string) => ({ matchLabels: { k: v } });
  const result = reconcileRole(role(undefined, { aggregationRule: { clusterRoleSelectors: [sel('mine')] } }), role(undefined, { aggregationRule: { clusterRoleSelectors: [sel('kube')] } }));
  assert.deepEqual(result.object.aggregationRule, { clusterRoleSelectors: [sel('mine'), sel('kube')] });
  const removed = reconcileRole(role([], { aggregationRule: { clusterRoleSelectors: [sel('x')] } }), role([]));
  assert.equal(removed.operation, 'update');
  assert.equal(removed.object.aggregationRule, undefined);
});

test('a binding: missing subjects appended; another roleRef is a recreate', () => {
  const u = (name: string) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name });
  const ref = { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' };
  const expected: RbacObject = { metadata: { name: 'b' }, roleRef: ref, subjects: [u('a'), u('b')] };
  const result = reconcileRoleBinding({ metadata: { name: 'b' }, roleRef: ref, subjects: [u('c'), u('a')] }, expected);
  assert.equal(result.operation, 'update');
  assert.deepEqual(result.object.subjects, [u('c'), u('a'), u('b')]);
  assert.deepEqual(result.missingSubjects, [u('b')]);
  assert.equal(reconcileRoleBinding({ metadata: { name: 'b' }, roleRef: { ...ref, name: 'edit' }, subjects: [] }, expected).operation, 'recreate');
});
