// MutatingAdmissionPolicy through HTTPS, as kube-apiserver's plugin mutates: a policy and binding
// applied with kubectl change what a token user and a service account create — an
// ApplyConfiguration merged as server-side apply merges, a JSONPatch — with params from a
// ConfigMap and matchConditions; an ApplyConfiguration that would replace an atomic struct refuses
// the request with kube's message (and stores nothing) under failurePolicy Fail, and is skipped
// under Ignore; with reinvocationPolicy IfNeeded a policy sees what a later one changed; a dry run
// is mutated and stores nothing.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, manifestWriter, type TestServer } from '../../helpers/server.ts';
import { requester, type Credentials, type Json } from '../../helpers/identities.ts';

const dir = mkdtempSync(join(tmpdir(), 'hearth-map-'));
const AR = '/apis/admissionregistration.k8s.io/v1';
const DEPLOYMENTS = '/apis/apps/v1/namespaces/team/deployments';
const BOB: Credentials = { token: 'bob-token' };
let s: TestServer;
let robot: Credentials;
const requestAs = requester(() => s);
const manifest = manifestWriter('hearth-map-manifests-');

before(async () => {
  const tokens = join(dir, 'tokens.csv');
  writeFileSync(tokens, 'bob-token,bob,bob-uid,"developers"\n');
  s = await startTestServer({ options: { tokenAuthFile: tokens } });
  await admin('POST', '/api/v1/namespaces', { metadata: { name: 'team' } });
  await admin('POST', '/api/v1/namespaces/team/serviceaccounts', { metadata: { name: 'robot' } });
  await admin('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/team/roles', { metadata: { name: 'deployer' }, rules: [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['create', 'get'] }] });
  await admin('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/team/rolebindings', {
    metadata: { name: 'deployers' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'deployer' },
    subjects: [
      { kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'developers' },
      { kind: 'ServiceAccount', name: 'robot', namespace: 'team' },
    ],
  });
  const token = await admin('POST', '/api/v1/namespaces/team/serviceaccounts/robot/token', { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } });
  robot = { token: String((token.status as Json).token) };
});

after(async () => {
  await s?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function admin(method: string, path: string, body?: unknown): Promise<Json> {
  const r = await s.request(method, path, { body });
  assert.ok(r.status >= 200 && r.status < 300, `${method} ${path}: ${r.status} ${r.text}`);
  return r.json() as Json;
}

const deployment = (name: string, replicas = 1, labels: Record<string, string> = {}) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, labels },
  spec: { replicas, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
});

const RULES = { resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments'] }] };
const policy = (name: string, spec: Json) => ({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingAdmissionPolicy', metadata: { name }, spec: { matchConstraints: RULES, reinvocationPolicy: 'Never', ...spec } });
const binding = (name: string, policyName: string, spec: Json = {}) => ({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingAdmissionPolicyBinding', metadata: { name }, spec: { policyName, ...spec } });
const applyConfiguration = (expression: string) => ({ patchType: 'ApplyConfiguration', applyConfiguration: { expression } });
const jsonPatch = (expression: string) => ({ patchType: 'JSONPatch', jsonPatch: { expression } });

async function kubectlApply(name: string, ...objs: unknown[]): Promise<void> {
  const r = await s.kubectl(['apply', '-f', manifest(name, { apiVersion: 'v1', kind: 'List', items: objs })]);
  assert.equal(r.code, 0, r.stderr);
}

async function remove(...paths: string[]): Promise<void> {
  for (const p of paths) await s.request('DELETE', p);
}

const labels = (o: Json) => (o.metadata as Json).labels as Record<string, string> | undefined;
const annotations = (o: Json) => (o.metadata as Json).annotations as Record<string, string> | undefined;

test('an ApplyConfiguration and a JSONPatch change what a token user and a service account create', async () => {
  await kubectlApply(
    'labeller',
    policy('labeller', {
      mutations: [
        applyConfiguration("Object{metadata: Object.metadata{labels: {'owner': request.userInfo.username.split(':')[0]}}, spec: Object.spec{template: Object.spec.template{spec: Object.spec.template.spec{containers: [Object.spec.template.spec.containers{name: 'c', imagePullPolicy: 'Always'}]}}}}"),
        jsonPatch("[JSONPatch{op: 'add', path: '/metadata/annotations', value: {'mutated-by': 'labeller'}}]"),
      ],
    }),
    binding('labeller-binding', 'labeller'),
  );
  try {
    for (const [who, name, owner] of [[BOB, 'by-bob', 'bob'], [robot, 'by-robot', 'system']] as const) {
      const r = await requestAs(who, 'POST', DEPLOYMENTS, deployment(name, 1, { app: name }));
      assert.equal(r.status, 201, r.text);
      const stored = await admin('GET', `${DEPLOYMENTS}/${name}`);
      assert.deepEqual(labels(stored), { app: name, owner });
      assert.deepEqual(annotations(stored), { 'mutated-by': 'labeller' });
      const container = (((((stored.spec as Json).template as Json).spec as Json).containers as Json[])[0]);
      assert.equal(container.image, 'nginx');
      assert.equal(container.imagePullPolicy, 'Always');
    }
    // A dry run is mutated too, and stores nothing.
    const dry = await requestAs(BOB, 'POST', `${DEPLOYMENTS}?dryRun=All`, deployment('dry'));
    assert.equal(dry.status, 201);
    assert.equal(annotations(dry.json)?.['mutated-by'], 'labeller');
    assert.equal((await s.request('GET', `${DEPLOYMENTS}/dry`)).status, 404);
  } finally {
    await remove(`${AR}/mutatingadmissionpolicybindings/labeller-binding`, `${AR}/mutatingadmissionpolicies/labeller`);
  }
});

test('params from a ConfigMap and matchConditions decide the mutation', async () => {
  await admin('POST', '/api/v1/namespaces/team/configmaps', { metadata: { name: 'defaults' }, data: { replicas: '3' } });
  await kubectlApply(
    'scaler',
    policy('scaler', {
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
      matchConditions: [{ name: 'unscaled', expression: 'object.spec.replicas == 1' }],
      mutations: [applyConfiguration('Object{spec: Object.spec{replicas: int(params.data.replicas)}}')],
    }),
    binding('scaler-binding', 'scaler', { paramRef: { name: 'defaults', parameterNotFoundAction: 'Deny' } }),
  );
  try {
    assert.equal((await requestAs(BOB, 'POST', DEPLOYMENTS, deployment('one'))).status, 201);
    assert.equal(((await admin('GET', `${DEPLOYMENTS}/one`)).spec as Json).replicas, 3);
    assert.equal((await requestAs(BOB, 'POST', DEPLOYMENTS, deployment('two', 2))).status, 201);
    assert.equal(((await admin('GET', `${DEPLOYMENTS}/two`)).spec as Json).replicas, 2);
  } finally {
    await remove(`${AR}/mutatingadmissionpolicybindings/scaler-binding`, `${AR}/mutatingadmissionpolicies/scaler`, '/api/v1/namespaces/team/configmaps/defaults');
  }
});

test('an ApplyConfiguration replacing an atomic struct refuses with kube\'s message under Fail, and is skipped under Ignore', async () => {
  const mutations = [applyConfiguration("Object{spec: Object.spec{selector: Object.spec.selector{matchLabels: {'app': 'x'}}}}")];
  await kubectlApply('atomic', policy('atomic', { mutations }), binding('atomic-binding', 'atomic'));
  try {
    const r = await requestAs(robot, 'POST', DEPLOYMENTS, deployment('atomic-one'));
    assert.equal(r.status, 403, r.text);
    const message = "policy 'atomic' with binding 'atomic-binding' denied request: error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: .spec.selector";
    assert.deepEqual(r.json, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: 'Invalid', details: { name: 'atomic-one', group: 'apps', kind: 'deployments', causes: [{ message }] }, code: 403 });
    assert.equal((await s.request('GET', `${DEPLOYMENTS}/atomic-one`)).status, 404);
    await kubectlApply('atomic-ignore', policy('atomic', { failurePolicy: 'Ignore', mutations }));
    assert.equal((await requestAs(robot, 'POST', DEPLOYMENTS, deployment('atomic-two'))).status, 201);
    assert.deepEqual(((await admin('GET', `${DEPLOYMENTS}/atomic-two`)).spec as Json).selector, { matchLabels: { app: 'atomic-two' } });
  } finally {
    await remove(`${AR}/mutatingadmissionpolicybindings/atomic-binding`, `${AR}/mutatingadmissionpolicies/atomic`);
  }
});

test('with reinvocationPolicy IfNeeded a policy runs again after a later one changed the object; with Never it does not', async () => {
  const seer = (reinvocationPolicy: string) =>
    policy('a-seer', {
      reinvocationPolicy,
      mutations: [applyConfiguration("Object{metadata: Object.metadata{annotations: {'saw-b': string(has(object.metadata.labels) && 'b' in object.metadata.labels)}}}")],
    });
  await kubectlApply('reinvoke', seer('IfNeeded'), binding('a-seer-binding', 'a-seer'), policy('b-labeller', { mutations: [applyConfiguration("Object{metadata: Object.metadata{labels: {'b': 'yes'}}}")] }), binding('b-labeller-binding', 'b-labeller'));
  try {
    assert.equal((await requestAs(BOB, 'POST', DEPLOYMENTS, deployment('reinvoked'))).status, 201);
    assert.equal(annotations(await admin('GET', `${DEPLOYMENTS}/reinvoked`))?.['saw-b'], 'true');
    await kubectlApply('never', seer('Never'));
    assert.equal((await requestAs(BOB, 'POST', DEPLOYMENTS, deployment('not-reinvoked'))).status, 201);
    const stored = await admin('GET', `${DEPLOYMENTS}/not-reinvoked`);
    assert.equal(annotations(stored)?.['saw-b'], 'false');
    assert.equal(labels(stored)?.b, 'yes');
  } finally {
    await remove(`${AR}/mutatingadmissionpolicybindings/a-seer-binding`, `${AR}/mutatingadmissionpolicies/a-seer`, `${AR}/mutatingadmissionpolicybindings/b-labeller-binding`, `${AR}/mutatingadmissionpolicies/b-labeller`);
  }
});

test('a mutating policy whose mutation does not compile, or has no reinvocationPolicy, is refused with kube\'s messages', async () => {
  const r = await s.request('POST', `${AR}/mutatingadmissionpolicies`, { body: { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingAdmissionPolicy', metadata: { name: 'broken' }, spec: { matchConstraints: RULES, mutations: [applyConfiguration('Object{spec: nope}')] } } });
  assert.equal(r.status, 422, r.text);
  const causes = (r.json().details.causes as Json[]).map((c) => `${String(c.field)}: ${String(c.message).split('\n')[0]}`);
  assert.deepEqual(causes, [
    "spec.mutations[0].applyConfiguration.expression: Invalid value: \"Object{spec: nope}\": compilation failed: ERROR: <input>:1:14: undeclared reference to 'nope' (in container '')",
    'spec.reinvocationPolicy: Required value',
  ]);
});
