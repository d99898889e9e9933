// RoleBindings and ClusterRoleBindings as kube-apiserver validates them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { invalidCauses, useTestServer } from '../../helpers/server.ts';

const s = useTestServer();

const RB = '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings';
const CRB = '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings';
const binding = (kind: string, name: string, roleRef: Record<string, string>, subjects: unknown[]) => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind, metadata: { name }, roleRef, subjects });
const ref = (kind: string, name: string) => ({ apiGroup: 'rbac.authorization.k8s.io', kind, name });

const causes = (method: string, path: string, body: unknown) => invalidCauses(s, method, path, body);

test('bindings: roleRef kinds and group, subject kinds, service accounts of cluster bindings name their namespace', async () => {
  assert.deepEqual(await causes('POST', RB, binding('RoleBinding', 'b', { apiGroup: 'example.com', kind: 'Policy', name: 'r' }, [{ kind: 'Robot', name: 'x' }])), [
    ['roleRef.apiGroup', 'Unsupported value: "example.com": supported values: "rbac.authorization.k8s.io"'],
    ['roleRef.kind', 'Unsupported value: "Policy": supported values: "Role", "ClusterRole"'],
    ['subjects[0].kind', 'Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"'],
  ]);
  assert.deepEqual(await causes('POST', CRB, binding('ClusterRoleBinding', 'cb', ref('Role', 'r'), [{ kind: 'ServiceAccount', name: 'default' }])), [
    ['roleRef.kind', 'Unsupported value: "Role": supported values: "ClusterRole"'],
    ['subjects[0].namespace', 'Required value'],
  ]);
  const ok = await s.request('POST', CRB, { body: binding('ClusterRoleBinding', 'cb', ref('ClusterRole', 'view'), [{ kind: 'ServiceAccount', name: 'default', namespace: 'default' }, { kind: 'User', name: 'alice' }]) });
  assert.equal(ok.status, 201, ok.text);
  assert.equal(ok.json().subjects[1].apiGroup, 'rbac.authorization.k8s.io', 'defaulted before validation');
});

test('a binding\'s roleRef cannot change', async () => {
  const rb = (await s.request('POST', RB, { body: binding('RoleBinding', 'fixed', ref('Role', 'a'), [{ kind: 'User', name: 'bob' }]) })).json();
  assert.deepEqual(await causes('PUT', `${RB}/fixed`, { ...rb, roleRef: ref('ClusterRole', 'b') }), [
    ['roleRef', 'Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"b"}: cannot change roleRef'],
  ]);
  const subjects = await s.request('PUT', `${RB}/fixed`, { body: { ...rb, subjects: [{ kind: 'Group', name: 'devs', apiGroup: 'rbac.authorization.k8s.io' }] } });
  assert.equal(subjects.status, 200, 'subjects may change');
});
