// ValidatingAdmissionPolicy through HTTPS, as kube-apiserver's plugin answers: a policy and its
// binding applied with kubectl refuse a Deployment with kube's message (kubectl prints it) for
// everyone — the admin, a namespaced token user, a client-certificate user, a service account —
// and leave nothing behind; params from a ConfigMap and from a custom resource;
// parameterNotFoundAction Deny and Allow; each validation action (Deny's reason and code, Warn's
// header kubectl prints, Audit admitting without either); messageExpression, variables and
// matchConditions; a policy whose expressions do not compile refused with kube's message; and the
// type checking the status controller writes back; the `authorizer` variable asking the chain.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, manifestWriter, type TestServer } from '../../helpers/server.ts';
import { requester, type Credentials, type Json } from '../../helpers/identities.ts';
import { issueClientCertificate } from '../../../server/pki/certificates.ts';

const dir = mkdtempSync(join(tmpdir(), 'hearth-vap-'));
const AR = '/apis/admissionregistration.k8s.io/v1';
const DEPLOYMENTS = '/apis/apps/v1/namespaces/team/deployments';
const BOB: Credentials = { token: 'bob-token' };
let s: TestServer;
let alice: Credentials;
let robot: Credentials;
const requestAs = requester(() => s);
const manifest = manifestWriter('hearth-vap-manifests-');

before(async () => {
  const tokens = join(dir, 'tokens.csv');
  writeFileSync(tokens, 'bob-token,bob,bob-uid,"developers"\n');
  s = await startTestServer({ options: { tokenAuthFile: tokens } });
  const issued = await issueClientCertificate(s.pki, { commonName: 'alice', organizations: ['developers'] });
  alice = { cert: issued.certPem, key: issued.keyPem! };
  await admin('POST', '/api/v1/namespaces', { metadata: { name: 'team', labels: { env: 'prod' } } });
  await admin('POST', '/api/v1/namespaces/team/serviceaccounts', { metadata: { name: 'robot' } });
  // bob, alice and robot may write Deployments in team.
  await admin('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/team/roles', { metadata: { name: 'deployer' }, rules: [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['create', 'get', 'delete'] }] });
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

const deployment = (name: string, replicas: number, labels: Record<string, string> = {}) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, labels },
  spec: { replicas, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
});

const DEPLOYMENT_RULES = { resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['deployments'] }] };
const policy = (name: string, spec: Json) => ({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: { name }, spec: { matchConstraints: DEPLOYMENT_RULES, ...spec } });
const binding = (name: string, policyName: string, spec: Json) => ({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: { name }, spec: { policyName, ...spec } });

/** Applies objects with kubectl as the admin. */
async function kubectlApply(name: string, ...objs: unknown[]): Promise<void> {
  const file = manifest(name, { apiVersion: 'v1', kind: 'List', items: objs });
  const r = await s.kubectl(['apply', '-f', file]);
  assert.equal(r.code, 0, r.stderr);
}

async function remove(...paths: string[]): Promise<void> {
  for (const p of paths) await s.request('DELETE', p);
}

async function gone(path: string): Promise<void> {
  assert.equal((await s.request('GET', path)).status, 404, `${path} was stored`);
}

test('a policy and binding applied with kubectl refuse a Deployment for everyone with kube\'s message, storing nothing', async () => {
  await kubectlApply('max-replicas', policy('max-replicas', { validations: [{ expression: 'object.spec.replicas <= 5' }] }), binding('max-replicas-binding', 'max-replicas', { validationActions: ['Deny'] }));
  const message = "ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-binding' denied request: failed expression: object.spec.replicas <= 5";
  try {
    const k = await s.kubectl(['create', 'deployment', 'nginx', '--image=nginx', '--replicas=6', '-n', 'team']);
    assert.notEqual(k.code, 0);
    assert.match(k.stderr, new RegExp(`deployments\\.apps "nginx" is forbidden: ${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    await gone(`${DEPLOYMENTS}/nginx`);
    for (const who of [BOB, alice, robot]) {
      const r = await requestAs(who, 'POST', DEPLOYMENTS, deployment('web', 6));
      assert.equal(r.status, 422, r.text);
      assert.deepEqual(r.json, {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: `deployments.apps "web" is forbidden: ${message}`,
        reason: 'Invalid',
        details: { name: 'web', group: 'apps', kind: 'deployments', causes: [{ message }] },
        code: 422,
      });
      await gone(`${DEPLOYMENTS}/web`);
    }
    // Within the limit it is stored, for a user and for the admin.
    assert.equal((await requestAs(BOB, 'POST', DEPLOYMENTS, deployment('small', 2))).status, 201);
    assert.equal((await s.request('POST', DEPLOYMENTS, { body: deployment('small-admin', 5) })).status, 201);
  } finally {
    await remove(`${AR}/validatingadmissionpolicybindings/max-replicas-binding`, `${AR}/validatingadmissionpolicies/max-replicas`, `${DEPLOYMENTS}/small`, `${DEPLOYMENTS}/small-admin`);
  }
});

test('Deny uses the validation\'s reason and code; messageExpression, variables and matchConditions shape the refusal', async () => {
  await kubectlApply(
    'shaped',
    policy('shaped', {
      matchConditions: [{ name: 'labelled', expression: "has(object.metadata.labels) && 'tier' in object.metadata.labels" }],
      variables: [{ name: 'tier', expression: 'object.metadata.labels.tier' }, { name: 'limit', expression: "variables.tier == 'gold' ? 10 : 2" }],
      validations: [{ expression: 'object.spec.replicas <= variables.limit', messageExpression: "'tier ' + variables.tier + ' allows ' + string(variables.limit) + ' replicas, not ' + string(object.spec.replicas)", reason: 'Forbidden' }],
    }),
    binding('shaped-binding', 'shaped', { validationActions: ['Deny'] }),
  );
  try {
    const r = await requestAs(alice, 'POST', DEPLOYMENTS, deployment('silver', 3, { tier: 'silver' }));
    assert.equal(r.status, 403, r.text);
    assert.equal(r.json.reason, 'Forbidden');
    assert.equal(r.json.message, "deployments.apps \"silver\" is forbidden: ValidatingAdmissionPolicy 'shaped' with binding 'shaped-binding' denied request: tier silver allows 2 replicas, not 3");
    assert.equal((await requestAs(alice, 'POST', DEPLOYMENTS, deployment('gold', 3, { tier: 'gold' }))).status, 201);
    // No tier label: the match condition leaves the policy out.
    assert.equal((await requestAs(alice, 'POST', DEPLOYMENTS, deployment('untiered', 7))).status, 201);
  } finally {
    await remove(`${AR}/validatingadmissionpolicybindings/shaped-binding`, `${AR}/validatingadmissionpolicies/shaped`, `${DEPLOYMENTS}/gold`, `${DEPLOYMENTS}/untiered`);
  }
});

test('Warn adds the warning kubectl prints and admits; Audit admits with no warning', async () => {
  await kubectlApply('warned', policy('warned', { validations: [{ expression: 'object.spec.replicas <= 1', message: 'keep it to one replica' }] }), binding('warned-binding', 'warned', { validationActions: ['Warn'] }), binding('audited-binding', 'warned', { validationActions: ['Audit'] }));
  try {
    const k = await s.kubectl(['create', 'deployment', 'warned', '--image=nginx', '--replicas=3', '-n', 'team']);
    assert.equal(k.code, 0, k.stderr);
    assert.equal(k.stderr.trim(), "Warning: Validation failed for ValidatingAdmissionPolicy 'warned' with binding 'warned-binding': keep it to one replica");
    const r = await requestAs(robot, 'POST', DEPLOYMENTS, deployment('warned-too', 2));
    assert.equal(r.status, 201);
  } finally {
    await remove(`${AR}/validatingadmissionpolicybindings/warned-binding`, `${AR}/validatingadmissionpolicybindings/audited-binding`, `${AR}/validatingadmissionpolicies/warned`, `${DEPLOYMENTS}/warned`, `${DEPLOYMENTS}/warned-too`);
  }
});

test('params from a ConfigMap: a missing one refuses with Deny and admits with Allow', async () => {
  const p = policy('cm-limit', {
    paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
    validations: [{ expression: 'object.spec.replicas <= int(params.data.max)', messageExpression: "'at most ' + params.data.max + ' replicas'" }],
  });
  await kubectlApply('cm-limit', p, binding('cm-limit-binding', 'cm-limit', { validationActions: ['Deny'], paramRef: { name: 'limits', namespace: 'team', parameterNotFoundAction: 'Deny' } }));
  try {
    const missing = await requestAs(BOB, 'POST', DEPLOYMENTS, deployment('p1', 1));
    assert.equal(missing.status, 422, missing.text);
    assert.equal(missing.json.message, "deployments.apps \"p1\" is forbidden: ValidatingAdmissionPolicy 'cm-limit' with binding 'cm-limit-binding' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction");
    await admin('POST', '/api/v1/namespaces/team/configmaps', { metadata: { name: 'limits' }, data: { max: '3' } });
    assert.equal((await requestAs(BOB, 'POST', DEPLOYMENTS, deployment('p1', 3))).status, 201);
    const over = await requestAs(BOB, 'POST', DEPLOYMENTS, deployment('p2', 4));
    assert.equal(over.status, 422);
    assert.equal(over.json.message, "deployments.apps \"p2\" is forbidden: ValidatingAdmissionPolicy 'cm-limit' with binding 'cm-limit-binding' denied request: at most 3 replicas");
    // A binding whose param is missing with Allow does not apply.
    await kubectlApply('cm-allow', binding('cm-limit-binding', 'cm-limit', { validationActions: ['Deny'], paramRef: { name: 'absent', parameterNotFoundAction: 'Allow' } }));
    assert.equal((await requestAs(BOB, 'POST', DEPLOYMENTS, deployment('p3', 9))).status, 201);
  } finally {
    await remove(`${AR}/validatingadmissionpolicybindings/cm-limit-binding`, `${AR}/validatingadmissionpolicies/cm-limit`, '/api/v1/namespaces/team/configmaps/limits', `${DEPLOYMENTS}/p1`, `${DEPLOYMENTS}/p3`);
  }
});

test('params from a custom resource, selected by label', async () => {
  await admin('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
    metadata: { name: 'replicalimits.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Cluster',
      names: { plural: 'replicalimits', singular: 'replicalimit', kind: 'ReplicaLimit', listKind: 'ReplicaLimitList' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { max: { type: 'integer' } } } } } } }],
    },
  });
  // The CRD is served once established.
  for (let i = 0; i < 100 && (await s.request('GET', '/apis/example.com/v1/replicalimits')).status !== 200; i++) await new Promise((r) => setTimeout(r, 50));
  await admin('POST', '/apis/example.com/v1/replicalimits', { apiVersion: 'example.com/v1', kind: 'ReplicaLimit', metadata: { name: 'prod', labels: { env: 'prod' } }, spec: { max: 2 } });
  await kubectlApply(
    'crd-limit',
    policy('crd-limit', { paramKind: { apiVersion: 'example.com/v1', kind: 'ReplicaLimit' }, validations: [{ expression: 'object.spec.replicas <= params.spec.max', messageExpression: "'limit ' + params.metadata.name + ' allows ' + string(params.spec.max)" }] }),
    binding('crd-limit-binding', 'crd-limit', { validationActions: ['Deny'], paramRef: { selector: { matchLabels: { env: 'prod' } }, parameterNotFoundAction: 'Deny' } }),
  );
  try {
    const r = await requestAs(robot, 'POST', DEPLOYMENTS, deployment('crd-over', 3));
    assert.equal(r.status, 422, r.text);
    assert.equal(r.json.message, "deployments.apps \"crd-over\" is forbidden: ValidatingAdmissionPolicy 'crd-limit' with binding 'crd-limit-binding' denied request: limit prod allows 2");
    assert.equal((await requestAs(robot, 'POST', DEPLOYMENTS, deployment('crd-ok', 2))).status, 201);
  } finally {
    await remove(`${AR}/validatingadmissionpolicybindings/crd-limit-binding`, `${AR}/validatingadmissionpolicies/crd-limit`, `${DEPLOYMENTS}/crd-ok`);
  }
});

test('the authorizer variable asks the authorizer chain about the requester: only who may scale may ask for more than 3 replicas', async () => {
  await kubectlApply(
    'scalers-only',
    policy('scalers-only', {
      validations: [{ expression: "object.spec.replicas <= 3 || authorizer.requestResource.subresource('scale').check('update').allowed()", message: 'only those who may scale deployments may ask for more than 3 replicas', reason: 'Forbidden' }],
    }),
    binding('scalers-only-binding', 'scalers-only', { validationActions: ['Deny'] }),
  );
  try {
    const r = await requestAs(BOB, 'POST', DEPLOYMENTS, deployment('big-bob', 4));
    assert.equal(r.status, 403, r.text);
    assert.equal(r.json.message, "deployments.apps \"big-bob\" is forbidden: ValidatingAdmissionPolicy 'scalers-only' with binding 'scalers-only-binding' denied request: only those who may scale deployments may ask for more than 3 replicas");
    // The admin (system:masters) may scale.
    assert.equal((await s.request('POST', DEPLOYMENTS, { body: deployment('big-admin', 4) })).status, 201);
    // So may robot once a Role lets it.
    await admin('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/team/roles', { metadata: { name: 'scaler' }, rules: [{ apiGroups: ['apps'], resources: ['deployments/scale'], verbs: ['update'] }] });
    await admin('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/team/rolebindings', { metadata: { name: 'robot-scales' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'scaler' }, subjects: [{ kind: 'ServiceAccount', name: 'robot', namespace: 'team' }] });
    assert.equal((await requestAs(robot, 'POST', DEPLOYMENTS, deployment('big-robot', 4))).status, 201);
  } finally {
    await remove(`${AR}/validatingadmissionpolicybindings/scalers-only-binding`, `${AR}/validatingadmissionpolicies/scalers-only`, `${DEPLOYMENTS}/big-admin`, `${DEPLOYMENTS}/big-robot`);
  }
});

test('a policy whose expression does not compile is refused with kube\'s message; a type error is written back to its status', async () => {
  const bad = await s.request('POST', `${AR}/validatingadmissionpolicies`, { body: policy('bad', { failurePolicy: 'Fail', validations: [{ expression: 'object.spec.replicas <=' }] }) });
  assert.equal(bad.status, 422, bad.text);
  assert.match(bad.json().message, /^ValidatingAdmissionPolicy\.admissionregistration\.k8s\.io "bad" is invalid: spec\.validations\[0\]\.expression: Invalid value: "object\.spec\.replicas <=": compilation failed: ERROR: <input>:1:/);
  await gone(`${AR}/validatingadmissionpolicies/bad`);

  await admin('POST', `${AR}/validatingadmissionpolicies`, policy('typo', { validations: [{ expression: 'object.spec.replicass > 0' }] }));
  try {
    let status: Json | undefined;
    for (let i = 0; i < 100 && (status?.observedGeneration as number | undefined) !== 1; i++) {
      status = (await admin('GET', `${AR}/validatingadmissionpolicies/typo`)).status as Json | undefined;
      if ((status?.observedGeneration as number | undefined) !== 1) await new Promise((r) => setTimeout(r, 50));
    }
    assert.deepEqual(status, {
      observedGeneration: 1,
      typeChecking: { expressionWarnings: [{ fieldRef: 'spec.validations[0].expression', warning: "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replicass'\n | object.spec.replicass > 0\n | ...........^\n" }] },
    });
    const managers = ((await admin('GET', `${AR}/validatingadmissionpolicies/typo`)).metadata as Json).managedFields as Json[];
    assert.ok(managers.some((m) => m.manager === 'validatingadmissionpolicy-status-controller' && m.operation === 'Apply' && m.subresource === 'status'), JSON.stringify(managers));
  } finally {
    await remove(`${AR}/validatingadmissionpolicies/typo`);
  }
});
