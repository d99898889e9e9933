// hearth's bootstrap policy against kube's: every object's kind, name, namespace, labels,
// annotations, rules (in kube's order, each list as RuleOrDie sorts it), aggregationRule, roleRef
// and subjects equal those of test/fixtures/rbac-bootstrap-policy.json, normalized from kube's
// rendered testdata (test/fixtures/README.md says from which revision and how). kubeadm's bindings
// are hearth's own addition and stay out of it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { bootstrapPolicy, kubeadmPolicy, type PolicyRule } from '../../../../server/authorization/rbac/bootstrap-policy/index.ts';

interface FixtureObject {
  kind: string;
  name: string;
  namespace?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  rules?: PolicyRule[];
  aggregationRule?: unknown;
  roleRef?: unknown;
  subjects?: unknown[];
}
type Fixture = Record<'clusterRoles' | 'clusterRoleBindings' | 'controllerRoles' | 'controllerRoleBindings' | 'namespaceRoles' | 'namespaceRoleBindings', FixtureObject[]>;

const fixture: Fixture = JSON.parse(readFileSync(new URL('../../../fixtures/rbac-bootstrap-policy.json', import.meta.url), 'utf8'));

interface PolicyObject {
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  rules?: PolicyRule[];
  aggregationRule?: unknown;
  roleRef?: unknown;
  subjects?: unknown[];
}

/** One object as the fixture writes it (an aggregated role's rules, null in the testdata, as []). */
function normalized(o: PolicyObject): FixtureObject {
  const out: FixtureObject = { kind: o.kind, name: o.metadata.name, labels: o.metadata.labels ?? {}, annotations: o.metadata.annotations ?? {} };
  if (o.metadata.namespace !== undefined) out.namespace = o.metadata.namespace;
  if (o.kind === 'ClusterRole' || o.kind === 'Role') out.rules = o.rules ?? [];
  if (o.aggregationRule !== undefined) out.aggregationRule = o.aggregationRule;
  if (o.roleRef !== undefined) out.roleRef = o.roleRef;
  if (o.kind.endsWith('Binding')) out.subjects = o.subjects ?? [];
  return out;
}

const keyOf = (o: FixtureObject) => `${o.kind} ${o.namespace ?? ''}/${o.name}`;
const byKey = (list: FixtureObject[]) => new Map(list.map((o) => [keyOf(o), o]));

function compare(kind: string, ours: PolicyObject[], kubes: FixtureObject[]): void {
  const mine = byKey(ours.map(normalized));
  const theirs = byKey(kubes);
  assert.deepEqual([...mine.keys()].sort(), [...theirs.keys()].sort(), `${kind}: the same names`);
  for (const [key, expected] of theirs) assert.deepEqual(mine.get(key), expected, key);
}

const policy = bootstrapPolicy();
const isController = (o: PolicyObject) => o.metadata.name.startsWith('system:controller:');

test("kube's ClusterRoles: names, labels, annotations, rules and aggregation rules", () => {
  compare('ClusterRole', policy.clusterRoles.filter((o) => !isController(o)), fixture.clusterRoles);
});

test("kube's controller roles (system:controller:*)", () => {
  compare('controller ClusterRole', policy.clusterRoles.filter(isController), fixture.controllerRoles);
});

test("kube's ClusterRoleBindings: role references and subjects", () => {
  compare('ClusterRoleBinding', policy.clusterRoleBindings.filter((o) => !isController(o)), fixture.clusterRoleBindings);
  compare('controller ClusterRoleBinding', policy.clusterRoleBindings.filter(isController), fixture.controllerRoleBindings);
});

test("kube's kube-system and kube-public Roles and RoleBindings", () => {
  compare('Role', policy.roles, fixture.namespaceRoles);
  compare('RoleBinding', policy.roleBindings, fixture.namespaceRoleBindings);
});

test('the counts kube has: 68 ClusterRoles, 49 ClusterRoleBindings, 7 Roles, 7 RoleBindings', () => {
  assert.equal(policy.clusterRoles.length, fixture.clusterRoles.length + fixture.controllerRoles.length);
  assert.equal(policy.clusterRoleBindings.length, fixture.clusterRoleBindings.length + fixture.controllerRoleBindings.length);
  assert.deepEqual([policy.clusterRoles.length, policy.clusterRoleBindings.length, policy.roles.length, policy.roleBindings.length], [68, 49, 7, 7]);
});

test("kubeadm's bindings name no object of kube's and carry none of kube's bootstrap metadata", () => {
  const kubeadm = kubeadmPolicy();
  const kubeNames = new Set([...policy.clusterRoleBindings, ...policy.roleBindings, ...policy.roles].map((o) => `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`));
  const objects = [...kubeadm.clusterRoleBindings, ...kubeadm.roles, ...kubeadm.roleBindings];
  assert.deepEqual(objects.map((o) => o.metadata.name), ['kubeadm:kubelet-bootstrap', 'kubeadm:node-autoapprove-bootstrap', 'kubeadm:node-autoapprove-certificate-rotation', 'kubeadm:bootstrap-signer-clusterinfo', 'kubeadm:bootstrap-signer-clusterinfo']);
  for (const o of objects) {
    assert.equal(kubeNames.has(`${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`), false);
    assert.equal(o.metadata.labels, undefined);
    assert.equal(o.metadata.annotations, undefined);
  }
});

test('the builder sorts each list and refuses a rule that is neither a resource nor a URL rule', async () => {
  const { rule } = await import('../../../../server/authorization/rbac/bootstrap-policy/index.ts');
  assert.deepEqual(rule('watch', 'get').groups('b', 'a').resources('z', 'y').build(), { verbs: ['get', 'watch'], apiGroups: ['a', 'b'], resources: ['y', 'z'] });
  assert.throws(() => rule('get').build(), /either a resource rule or a non-resource URL rule/);
  assert.throws(() => rule('get').groups('').resources('pods').urls('/x').build(), /either a resource rule or a non-resource URL rule/);
  assert.throws(() => rule().groups('').resources('pods').build(), /verbs are required/);
});
