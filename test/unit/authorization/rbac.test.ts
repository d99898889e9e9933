// RBAC's rule matching and policy index against kube's evaluation helpers, rule resolver and
// RBAC authorizer (pkg/apis/rbac/v1/evaluation_helpers.go, pkg/registry/rbac/validation/rule.go,
// plugin/pkg/auth/authorizer/rbac/rbac.go): what a rule matches, which bindings apply to a user,
// the reasons given, that the index follows creates, updates and deletes, and the escalation
// check's Covers, CompactRules and message (component-helpers' policy_comparator.go,
// registry/rbac/validation/policy_compact.go, ConfirmNoEscalation).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { policyRulesOf, ruleAllows, resourceMatches, nonResourceURLMatches, type PolicyRule } from '../../../server/authorization/rbac/rules.ts';
import { RbacPolicyIndex } from '../../../server/authorization/rbac/policy-index.ts';
import { rbacAuthorizer } from '../../../server/authorization/rbac/authorizer.ts';
import { compactRules, compactString, escalationError, uncoveredRules } from '../../../server/authorization/rbac/escalation.ts';
import type { AuthorizationAttributes, AuthorizationResult } from '../../../server/authorization/authorizer.ts';
import type { UserInfo } from '../../../server/authentication/user.ts';

const rule = (r: Partial<Record<keyof PolicyRule, string[]>>): PolicyRule => policyRulesOf([r])[0];

const ALICE: UserInfo = { name: 'alice', groups: ['developers', 'system:authenticated'] };

function resourceRequest(over: Partial<AuthorizationAttributes> = {}): AuthorizationAttributes {
  return { user: ALICE, verb: 'get', isResourceRequest: true, path: '', apiGroup: '', apiVersion: 'v1', resource: 'pods', subresource: '', namespace: 'dev', name: '', ...over };
}

function pathRequest(path: string, verb = 'get'): AuthorizationAttributes {
  return { user: ALICE, verb, isResourceRequest: false, path, apiGroup: '', apiVersion: '', resource: '', subresource: '', namespace: '', name: '' };
}

test('verbs, groups and resources match exactly or by *', () => {
  const r = rule({ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] });
  assert.equal(ruleAllows(resourceRequest(), r), true);
  assert.equal(ruleAllows(resourceRequest({ verb: 'delete' }), r), false);
  assert.equal(ruleAllows(resourceRequest({ apiGroup: 'apps' }), r), false);
  assert.equal(ruleAllows(resourceRequest({ resource: 'services' }), r), false);
  const all = rule({ verbs: ['*'], apiGroups: ['*'], resources: ['*'] });
  assert.equal(ruleAllows(resourceRequest({ verb: 'deletecollection', apiGroup: 'apps', resource: 'deployments', subresource: 'scale' }), all), true);
  // A rule without groups matches no group (not even the core one).
  assert.equal(ruleAllows(resourceRequest(), rule({ verbs: ['get'], resources: ['pods'] })), false);
});

test('subresources: resource/sub exactly, */sub for any resource, a bare resource never its subresources', () => {
  assert.equal(resourceMatches(rule({ resources: ['pods/log'] }), 'pods/log', 'log'), true);
  assert.equal(resourceMatches(rule({ resources: ['pods'] }), 'pods/log', 'log'), false);
  assert.equal(resourceMatches(rule({ resources: ['pods/log'] }), 'pods', ''), false);
  assert.equal(resourceMatches(rule({ resources: ['*/scale'] }), 'deployments/scale', 'scale'), true);
  assert.equal(resourceMatches(rule({ resources: ['*/scale'] }), 'deployments/status', 'status'), false);
  assert.equal(resourceMatches(rule({ resources: ['*/scale'] }), 'deployments', ''), false);
  // kube compares lengths: `*/cale` is no match for `scale`.
  assert.equal(resourceMatches(rule({ resources: ['*/cale'] }), 'deployments/scale', 'scale'), false);
});

test('resourceNames: only the names listed; an unnamed request (list, create) is not one of them', () => {
  const r = rule({ verbs: ['get', 'list'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] });
  assert.equal(ruleAllows(resourceRequest({ resource: 'configmaps', name: 'a' }), r), true);
  assert.equal(ruleAllows(resourceRequest({ resource: 'configmaps', name: 'b' }), r), false);
  assert.equal(ruleAllows(resourceRequest({ resource: 'configmaps', verb: 'list' }), r), false);
});

test('nonResourceURLs: exact, *, and a prefix before trailing stars', () => {
  assert.equal(nonResourceURLMatches(rule({ nonResourceURLs: ['/healthz'] }), '/healthz'), true);
  assert.equal(nonResourceURLMatches(rule({ nonResourceURLs: ['/healthz'] }), '/healthz/ping'), false);
  assert.equal(nonResourceURLMatches(rule({ nonResourceURLs: ['/healthz/*'] }), '/healthz/ping'), true);
  assert.equal(nonResourceURLMatches(rule({ nonResourceURLs: ['/healthz*'] }), '/healthzzz'), true);
  assert.equal(nonResourceURLMatches(rule({ nonResourceURLs: ['/api**'] }), '/apis/x'), true);
  assert.equal(nonResourceURLMatches(rule({ nonResourceURLs: ['*'] }), '/anything'), true);
  // A resource rule is no path rule, and the other way round.
  assert.equal(ruleAllows(pathRequest('/x'), rule({ verbs: ['*'], apiGroups: ['*'], resources: ['*'] })), false);
  assert.equal(ruleAllows(resourceRequest(), rule({ verbs: ['*'], nonResourceURLs: ['*'] })), false);
  assert.equal(ruleAllows(pathRequest('/x', 'post'), rule({ verbs: ['get'], nonResourceURLs: ['*'] })), false);
});

/** An index holding these objects. */
function indexOf(objects: [kind: 'Role' | 'ClusterRole' | 'RoleBinding' | 'ClusterRoleBinding', obj: object][]): RbacPolicyIndex {
  const index = new RbacPolicyIndex();
  for (const [kind, obj] of objects) index.upsert(kind, obj);
  return index;
}

const podReader = { metadata: { name: 'pod-reader' }, rules: [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] }] };
const binding = (name: string, namespace: string | undefined, roleRef: object, subjects: object[]) => ({ metadata: namespace ? { name, namespace } : { name }, roleRef, subjects });

test('a RoleBinding applies in its namespace only; a ClusterRoleBinding everywhere; reasons name them as kube does', () => {
  const index = indexOf([
    ['ClusterRole', podReader],
    ['RoleBinding', binding('rb', 'dev', { kind: 'ClusterRole', name: 'pod-reader' }, [{ kind: 'User', name: 'alice' }])],
    ['ClusterRoleBinding', binding('crb', undefined, { kind: 'ClusterRole', name: 'pod-reader' }, [{ kind: 'Group', name: 'ops' }])],
  ]);
  const rbac = rbacAuthorizer(index);
  assert.deepEqual(rbac.authorize(resourceRequest()), { decision: 'allow', reason: 'RBAC: allowed by RoleBinding "rb/dev" of ClusterRole "pod-reader" to User "alice"' });
  assert.deepEqual(rbac.authorize(resourceRequest({ namespace: 'prod' })), { decision: 'noopinion', reason: '' });
  assert.deepEqual(rbac.authorize(resourceRequest({ namespace: '' })), { decision: 'noopinion', reason: '' });
  const ops: UserInfo = { name: 'carol', groups: ['ops'] };
  assert.deepEqual(rbac.authorize(resourceRequest({ user: ops, namespace: 'prod' })), { decision: 'allow', reason: 'RBAC: allowed by ClusterRoleBinding "crb" of ClusterRole "pod-reader" to Group "ops"' });
});

test('ServiceAccount subjects: a RoleBinding\'s defaults to its namespace; a ClusterRoleBinding\'s needs one', () => {
  const index = indexOf([
    ['Role', { metadata: { name: 'r', namespace: 'dev' }, rules: podReader.rules }],
    ['RoleBinding', binding('sa-local', 'dev', { kind: 'Role', name: 'r' }, [{ kind: 'ServiceAccount', name: 'builder' }])],
    ['ClusterRoleBinding', binding('sa-no-ns', undefined, { kind: 'ClusterRole', name: 'pod-reader' }, [{ kind: 'ServiceAccount', name: 'other' }])],
    ['ClusterRole', podReader],
  ]);
  const rbac = rbacAuthorizer(index);
  const builder: UserInfo = { name: 'system:serviceaccount:dev:builder', groups: ['system:serviceaccounts', 'system:serviceaccounts:dev'] };
  assert.deepEqual(rbac.authorize(resourceRequest({ user: builder })), { decision: 'allow', reason: 'RBAC: allowed by RoleBinding "sa-local/dev" of Role "r" to ServiceAccount "builder/dev"' });
  // The same name in another namespace is another account.
  assert.equal((rbac.authorize(resourceRequest({ user: { name: 'system:serviceaccount:prod:builder', groups: [] } })) as AuthorizationResult).decision, 'noopinion');
  assert.equal((rbac.authorize(resourceRequest({ user: { name: 'system:serviceaccount::other', groups: [] }, namespace: 'x' })) as AuthorizationResult).decision, 'noopinion');
});

test('the first subject that applies is the one named; a user matched twice is visited once', () => {
  const index = indexOf([
    ['ClusterRole', podReader],
    ['RoleBinding', binding('both', 'dev', { kind: 'ClusterRole', name: 'pod-reader' }, [{ kind: 'Group', name: 'developers' }, { kind: 'User', name: 'alice' }])],
  ]);
  assert.deepEqual(rbacAuthorizer(index).authorize(resourceRequest()), { decision: 'allow', reason: 'RBAC: allowed by RoleBinding "both/dev" of ClusterRole "pod-reader" to Group "developers"' });
  assert.equal(index.rulesFor(ALICE, 'dev').rules.length, 1);
});

test('missing roles and unknown role kinds are the reason of a refusal, aggregated as kube\'s errors are', () => {
  const index = indexOf([
    ['RoleBinding', binding('to-missing-role', 'dev', { kind: 'Role', name: 'gone' }, [{ kind: 'User', name: 'alice' }])],
  ]);
  const rbac = rbacAuthorizer(index);
  assert.deepEqual(rbac.authorize(resourceRequest()), { decision: 'noopinion', reason: 'RBAC: role.rbac.authorization.k8s.io "gone" not found' });
  index.upsert('ClusterRoleBinding', binding('to-missing-cluster-role', undefined, { kind: 'ClusterRole', name: 'gone-too' }, [{ kind: 'User', name: 'alice' }]));
  assert.deepEqual(rbac.authorize(resourceRequest()), { decision: 'noopinion', reason: 'RBAC: [clusterrole.rbac.authorization.k8s.io "gone-too" not found, role.rbac.authorization.k8s.io "gone" not found]' });
  assert.equal(index.roleReferenceRules({ kind: 'Other', name: 'x' }, ''), 'unsupported role reference kind: "Other"');
  // rulesFor: no rules, the errors.
  assert.deepEqual(rbac.rulesFor!(ALICE, 'dev'), { resourceRules: [], nonResourceRules: [], incomplete: false, evaluationError: '[clusterrole.rbac.authorization.k8s.io "gone-too" not found, role.rbac.authorization.k8s.io "gone" not found]' });
});

test('the index follows updates and deletes of roles and bindings', () => {
  const index = indexOf([
    ['ClusterRole', podReader],
    ['RoleBinding', binding('rb', 'dev', { kind: 'ClusterRole', name: 'pod-reader' }, [{ kind: 'User', name: 'alice' }])],
  ]);
  const rbac = rbacAuthorizer(index);
  const decision = (a = resourceRequest()) => (rbac.authorize(a) as AuthorizationResult).decision;
  assert.equal(decision(), 'allow');
  // The binding now names bob: alice loses it (her old index entry is gone).
  index.upsert('RoleBinding', binding('rb', 'dev', { kind: 'ClusterRole', name: 'pod-reader' }, [{ kind: 'User', name: 'bob' }]));
  assert.equal(decision(), 'noopinion');
  assert.equal(decision(resourceRequest({ user: { name: 'bob', groups: [] } })), 'allow');
  // The role loses the verb.
  index.upsert('ClusterRole', { metadata: { name: 'pod-reader' }, rules: [{ verbs: ['list'], apiGroups: [''], resources: ['pods'] }] });
  assert.equal(decision(resourceRequest({ user: { name: 'bob', groups: [] } })), 'noopinion');
  assert.equal(decision(resourceRequest({ user: { name: 'bob', groups: [] }, verb: 'list' })), 'allow');
  index.remove('RoleBinding', 'dev', 'rb');
  assert.equal(decision(resourceRequest({ user: { name: 'bob', groups: [] }, verb: 'list' })), 'noopinion');
  index.remove('ClusterRole', '', 'pod-reader');
  index.upsert('ClusterRoleBinding', binding('crb', undefined, { kind: 'ClusterRole', name: 'pod-reader' }, [{ kind: 'User', name: 'bob' }]));
  assert.deepEqual(rbac.authorize(resourceRequest({ user: { name: 'bob', groups: [] }, verb: 'list' })), { decision: 'noopinion', reason: 'RBAC: clusterrole.rbac.authorization.k8s.io "pod-reader" not found' });
});

test('one user object (a connection\'s certificate, a cached token) sees every change at its next decision', () => {
  // The index keeps what a user object's bindings resolve to; any change of the four kinds is seen.
  const bob: UserInfo = { name: 'bob', groups: ['team', 'system:authenticated'] };
  const index = indexOf([['RoleBinding', binding('rb', 'dev', { kind: 'ClusterRole', name: 'pod-reader' }, [{ kind: 'Group', name: 'team' }])]]);
  const rbac = rbacAuthorizer(index);
  const authorize = (over: Partial<AuthorizationAttributes> = {}) => rbac.authorize(resourceRequest({ user: bob, ...over }));
  assert.deepEqual(authorize(), { decision: 'noopinion', reason: 'RBAC: clusterrole.rbac.authorization.k8s.io "pod-reader" not found' });
  index.upsert('ClusterRole', podReader);
  assert.deepEqual(authorize(), { decision: 'allow', reason: 'RBAC: allowed by RoleBinding "rb/dev" of ClusterRole "pod-reader" to Group "team"' });
  assert.deepEqual(authorize(), { decision: 'allow', reason: 'RBAC: allowed by RoleBinding "rb/dev" of ClusterRole "pod-reader" to Group "team"' }, 'the same answer again');
  assert.equal((authorize({ namespace: 'prod' }) as AuthorizationResult).decision, 'noopinion', 'another namespace is resolved apart');
  // A namespace that gains its first RoleBinding (until then it resolved as cluster scope does).
  index.upsert('RoleBinding', binding('rb', 'prod', { kind: 'ClusterRole', name: 'pod-reader' }, [{ kind: 'User', name: 'bob' }]));
  assert.deepEqual(authorize({ namespace: 'prod' }), { decision: 'allow', reason: 'RBAC: allowed by RoleBinding "rb/prod" of ClusterRole "pod-reader" to User "bob"' });
  assert.equal((authorize({ namespace: 'other' }) as AuthorizationResult).decision, 'noopinion');
  index.remove('RoleBinding', 'prod', 'rb');
  assert.equal((authorize({ namespace: 'prod' }) as AuthorizationResult).decision, 'noopinion');
  // A binding that names the user ahead of the group's, in cluster scope: visited first.
  index.upsert('ClusterRoleBinding', binding('crb', undefined, { kind: 'ClusterRole', name: 'pod-reader' }, [{ kind: 'User', name: 'bob' }]));
  assert.deepEqual(authorize(), { decision: 'allow', reason: 'RBAC: allowed by ClusterRoleBinding "crb" of ClusterRole "pod-reader" to User "bob"' });
  assert.equal((authorize({ namespace: 'prod' }) as AuthorizationResult).decision, 'allow');
  index.remove('ClusterRoleBinding', '', 'crb');
  index.upsert('ClusterRole', { metadata: { name: 'pod-reader' }, rules: [{ verbs: ['list'], apiGroups: [''], resources: ['pods'] }] });
  assert.equal((authorize() as AuthorizationResult).decision, 'noopinion');
  assert.equal((authorize({ verb: 'list' }) as AuthorizationResult).decision, 'allow');
  assert.equal(index.rulesFor(bob, 'dev').rules.length, 1);
  index.remove('RoleBinding', 'dev', 'rb');
  assert.deepEqual(authorize({ verb: 'list' }), { decision: 'noopinion', reason: '' });
  assert.equal(index.rulesFor(bob, 'dev').rules.length, 0);
});

test('rulesFor splits resource and non-resource rules as kube\'s RulesFor does', () => {
  const index = indexOf([
    ['ClusterRole', { metadata: { name: 'mixed' }, rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['p'] }, { verbs: ['get'], nonResourceURLs: ['/metrics'] }] }],
    ['ClusterRoleBinding', binding('crb', undefined, { kind: 'ClusterRole', name: 'mixed' }, [{ kind: 'Group', name: 'developers' }])],
  ]);
  assert.deepEqual(rbacAuthorizer(index).rulesFor!(ALICE, 'dev'), {
    resourceRules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['p'] }],
    nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/metrics'] }],
    incomplete: false,
    evaluationError: '',
  });
});

test('escalation: Covers breaks rules down and finds what no owner rule covers; CompactString prints the rest', () => {
  const owner = policyRulesOf([
    { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods', '*/status'] },
    { verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] },
    { verbs: ['get'], nonResourceURLs: ['/logs/*'] },
  ]);
  const servant = policyRulesOf([
    { verbs: ['get', 'delete'], apiGroups: [''], resources: ['pods', 'services/status'] },
    { verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a', 'b'] },
    { verbs: ['get'], apiGroups: [''], resources: ['configmaps'] },
    { verbs: ['get'], nonResourceURLs: ['/logs/x', '/metrics'] },
  ]);
  const missing = compactRules(uncoveredRules(owner, servant)).map(compactString);
  assert.deepEqual(missing.sort(), [
    '{APIGroups:[""], Resources:["configmaps"], ResourceNames:["b"], Verbs:["get"]}',
    '{APIGroups:[""], Resources:["configmaps"], Verbs:["get"]}',
    '{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}',
    '{APIGroups:[""], Resources:["services/status"], Verbs:["delete"]}',
    '{NonResourceURLs:["/metrics"], Verbs:["get"]}',
  ]);
  // A * owner covers everything.
  assert.deepEqual(uncoveredRules(policyRulesOf([{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }, { verbs: ['*'], nonResourceURLs: ['*'] }]), servant), []);
});

test('escalation: the message lists what the user lacks, sorted, as ConfirmNoEscalation words it', () => {
  const index = indexOf([
    ['ClusterRole', podReader],
    ['RoleBinding', binding('rb', 'dev', { kind: 'ClusterRole', name: 'pod-reader' }, [{ kind: 'User', name: 'alice' }])],
    ['RoleBinding', binding('broken', 'dev', { kind: 'Role', name: 'gone' }, [{ kind: 'User', name: 'alice' }])],
  ]);
  assert.equal(escalationError(index, ALICE, 'dev', policyRulesOf([{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }])), undefined);
  assert.equal(
    escalationError(index, ALICE, 'dev', policyRulesOf([{ verbs: ['watch', 'get', 'update'], apiGroups: [''], resources: ['pods', 'nodes'] }])),
    'user "alice" (groups=["developers" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n' +
      '{APIGroups:[""], Resources:["nodes"], Verbs:["watch" "get" "update"]}\n{APIGroups:[""], Resources:["pods"], Verbs:["watch" "update"]}; resolution errors: [role.rbac.authorization.k8s.io "gone" not found]',
  );
});
