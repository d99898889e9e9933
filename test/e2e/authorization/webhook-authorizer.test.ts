// The webhook authorizer (--authorization-mode=Webhook with --authorization-webhook-*, and
// --authorization-config's webhook section), through HTTPS with kubectl and raw requests from
// token users, against a real SubjectAccessReview webhook on loopback (its own CA, a client
// certificate required). The webhook answers by user, so the tests see what kube's authorizer
// sends (v1beta1 and v1 bodies), what it makes of the answers (allow, deny, no opinion, both), its
// order with RBAC, its decision cache, an outage under each failure policy, matchConditions, rule
// listing, and the configuration file's reload.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import https from 'node:https';
import YAML from 'yaml';
import { startTestServer, KUBECTL, type TestServer } from '../../helpers/server.ts';
import { runHearth } from '../../helpers/hearth-process.ts';
import { startAuthorizationWebhook, reviewStatus, type AuthorizationWebhook, type Loose } from '../../helpers/authz-webhook.ts';
import { renderKubeconfig } from '../../../server/pki/kubeconfig.ts';
import { logMessage } from '../../helpers/log-lines.ts';

const dir = mkdtempSync(join(tmpdir(), 'hearth-authz-webhook-test-'));
const tokenFile = join(dir, 'tokens.csv');
writeFileSync(
  tokenFile,
  ['alice-token,alice,alice-uid,"dev"', 'bob-token,bob,bob-uid', 'carol-token,carol,carol-uid', 'dave-token,dave,dave-uid', 'erin-token,erin,erin-uid,"skip-webhook"'].join('\n') + '\n',
);

/** The webhook's policy: alice may do anything, bob is suspended, dave gets a contradictory answer; the rest are not its business. */
function answer(review: Loose): [number, unknown] {
  const user = String(review.spec?.user ?? '');
  switch (user) {
    case 'alice':
      return [200, reviewStatus(review, { allowed: true, reason: 'alice is on the allow-list' })];
    case 'bob':
      return [200, reviewStatus(review, { allowed: false, denied: true, reason: 'bob is suspended' })];
    case 'dave':
      return [200, reviewStatus(review, { allowed: true, denied: true, reason: 'make up your mind' })];
    case 'erin':
      return [200, reviewStatus(review, { allowed: false, denied: true, reason: 'erin should never be asked about' })];
    default:
      return [200, reviewStatus(review, { allowed: false, reason: 'not my business' })];
  }
}

let webhook: AuthorizationWebhook;
/** Webhook,RBAC by flags: v1beta1, NoOpinion on failure. */
let s: TestServer;
const logs: string[] = [];

/** What RBAC gives: view in `default` to bob, carol and erin (never to alice or dave). */
async function bindView(server: TestServer): Promise<void> {
  const r = await server.request('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings', {
    body: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'viewers' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
      subjects: ['bob', 'carol', 'erin'].map((name) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name })),
    },
  });
  assert.equal(r.status, 201, r.text);
}

before(async () => {
  webhook = await startAuthorizationWebhook(answer);
  s = await startTestServer({
    options: { authorizationModes: ['Webhook', 'RBAC'], authorizationWebhookConfigFile: webhook.writeKubeconfig('webhook.kubeconfig'), tokenAuthFile: tokenFile, log: (l) => logs.push(logMessage(l)) },
  });
  await bindView(s);
});
after(async () => {
  await s?.stop();
  await webhook?.close();
  rmSync(dir, { recursive: true, force: true });
});

function kubectlAs(server: TestServer, token: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const kubeconfig = join(dir, `kubectl-${token}-${server.port}`);
  writeFileSync(kubeconfig, renderKubeconfig({ server: server.url, caCertPem: server.pki.caCertPem, token, userName: 'token-user' }));
  return new Promise((resolve) => {
    execFile(KUBECTL, ['--kubeconfig', kubeconfig, ...args], { timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** A request with this bearer token and no client certificate. */
function requestAs(server: TestServer, token: string, method: string, path: string, body?: unknown): Promise<{ status: number; text: string; json: () => Loose }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (payload) Object.assign(headers, { 'content-type': 'application/json', 'content-length': String(payload.length) });
    const req = https.request(`${server.url}${path}`, { method, headers, ca: server.pki.caCertPem, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, text, json: () => JSON.parse(text) as Loose });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** Polls `check` until it holds (bounded: the reload is seen within a few of its short intervals). */
async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`never happened: ${what}`);
}

test('a user the webhook allows and RBAC does not: kubectl get works, and kube\'s v1beta1 SubjectAccessReview was sent', async () => {
  const r = await kubectlAs(s, 'alice-token', ['get', 'pods', '-n', 'default', '-o', 'name']);
  assert.equal(r.code, 0, r.stderr);
  const sent = webhook.reviewsOf('alice').find((x) => x.review.spec?.resourceAttributes?.resource as unknown === 'pods')!;
  assert.ok(sent, 'the webhook was asked');
  assert.equal(sent.path, '/authorize');
  assert.equal(sent.clientCN, 'hearth-admin', 'the kubeconfig\'s client certificate');
  assert.match(String(sent.userAgent), /^kube-apiserver\/v\d+\.\d+\.\d+ \(/);
  // v1beta1 (the flag's default) names the groups `group`; empty fields are left out as Go's omitempty does.
  assert.deepEqual(sent.review, {
    kind: 'SubjectAccessReview',
    apiVersion: 'authorization.k8s.io/v1beta1',
    metadata: { creationTimestamp: null },
    spec: { resourceAttributes: { namespace: 'default', verb: 'list', version: 'v1', resource: 'pods' }, user: 'alice', group: ['dev', 'system:authenticated'], uid: 'alice-uid' },
    status: { allowed: false },
  });
  // A non-resource request: nonResourceAttributes.
  const version = await requestAs(s, 'alice-token', 'GET', '/version');
  assert.equal(version.status, 200);
  // (/version is public-info, but Webhook comes first and is asked.)
  const nonResource = webhook.reviewsOf('alice').find((x) => x.review.spec?.nonResourceAttributes !== undefined)!;
  assert.deepEqual(nonResource.review.spec.nonResourceAttributes, { path: '/version', verb: 'get' });
});

test('the decision cache: two identical requests within the TTL reach the webhook once', async () => {
  const asked = () => webhook.reviewsOf('alice').filter((x) => (x.review.spec?.resourceAttributes?.resource as unknown) === 'configmaps').length;
  assert.equal(asked(), 0);
  for (let i = 0; i < 2; i++) assert.equal((await requestAs(s, 'alice-token', 'GET', '/api/v1/namespaces/default/configmaps')).status, 200);
  assert.equal(asked(), 1, 'the second answer came from the cache');
  // Another request is another key.
  assert.equal((await requestAs(s, 'alice-token', 'GET', '/api/v1/namespaces/kube-system/configmaps')).status, 200);
  assert.equal(asked(), 2);
});

test('Webhook before RBAC: its denial wins even where RBAC allows, and the 403 carries its reason', async () => {
  const r = await requestAs(s, 'bob-token', 'GET', '/api/v1/namespaces/default/pods');
  assert.equal(r.status, 403, r.text);
  assert.equal(r.json().message as unknown, 'pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "default": bob is suspended');
  const k = await kubectlAs(s, 'bob-token', ['get', 'pods', '-n', 'default']);
  assert.notEqual(k.code, 0);
  assert.match(k.stderr, /bob is suspended/);
  // A SubjectAccessReview shows the same decision.
  const sar = await s.request('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
    body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: 'bob', resourceAttributes: { namespace: 'default', verb: 'list', resource: 'pods' } } },
  });
  assert.equal(sar.status, 201, sar.text);
  assert.deepEqual(sar.json().status, { allowed: false, denied: true, reason: 'bob is suspended' });
});

test('no opinion from the webhook falls through to RBAC; RBAC\'s refusal carries the webhook\'s reason', async () => {
  const pods = await kubectlAs(s, 'carol-token', ['get', 'pods', '-n', 'default', '-o', 'name']);
  assert.equal(pods.code, 0, pods.stderr);
  assert.ok(webhook.reviewsOf('carol').length >= 1, 'the webhook was asked first');
  const secrets = await requestAs(s, 'carol-token', 'GET', '/api/v1/namespaces/default/secrets');
  assert.equal(secrets.status, 403, secrets.text);
  assert.equal(secrets.json().message as unknown, 'secrets is forbidden: User "carol" cannot list resource "secrets" in API group "" in the namespace "default": not my business');
});

test('allowed and denied at once: kube\'s error, a 500; in a SubjectAccessReview, denied with evaluationError', async () => {
  const r = await requestAs(s, 'dave-token', 'GET', '/api/v1/namespaces/default/pods');
  assert.equal(r.status, 500, r.text);
  assert.deepEqual(r.json(), {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'Internal error occurred: webhook subject access review returned both allow and deny response',
    reason: 'InternalError',
    details: { causes: [{ message: 'webhook subject access review returned both allow and deny response' }] },
    code: 500,
  });
  const sar = await s.request('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
    body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: 'dave', resourceAttributes: { namespace: 'default', verb: 'list', resource: 'pods' } } },
  });
  assert.deepEqual(sar.json().status, { allowed: false, denied: true, reason: 'make up your mind', evaluationError: 'webhook subject access review returned both allow and deny response' });
});

test('kubectl auth can-i --list with a webhook: the rules RBAC lists, marked incomplete as kube does', async () => {
  const review = await requestAs(s, 'carol-token', 'POST', '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: { namespace: 'default' } });
  assert.equal(review.status, 201, review.text);
  const status = review.json().status;
  assert.equal(status.incomplete as unknown, true);
  assert.equal(status.evaluationError as unknown, 'webhook authorizer does not support user rule resolution');
  assert.ok((status.resourceRules as unknown as { resources?: string[] }[]).some((r) => r.resources?.includes('pods')), 'view\'s rules are listed');
  const k = await kubectlAs(s, 'carol-token', ['auth', 'can-i', '--list', '-n', 'default']);
  assert.equal(k.code, 0, k.stderr);
  assert.match(k.stdout, /pods/);
});

test('the webhook down, failurePolicy NoOpinion (the flags\'): RBAC still decides; nothing allowing is kube\'s 500 with the call\'s error', async () => {
  const port = webhook.port;
  await webhook.down();
  try {
    // carol: RBAC's view allows services (not asked before, so not cached).
    const carol = await requestAs(s, 'carol-token', 'GET', '/api/v1/namespaces/default/services');
    assert.equal(carol.status, 200, carol.text);
    // alice has no RBAC: the webhook's error is the answer.
    const alice = await requestAs(s, 'alice-token', 'GET', '/api/v1/namespaces/default/services');
    assert.equal(alice.status, 500, alice.text);
    const error = `Post "https://127.0.0.1:${port}/authorize": dial tcp 127.0.0.1:${port}: connect: connection refused`;
    assert.equal(alice.json().message as unknown, `Internal error occurred: ${error}`);
    assert.ok(logs.includes(`Failed to make webhook authorizer request: ${error}`), logs.join('\n'));
    // A SubjectAccessReview reports it as evaluationError.
    const sar = await s.request('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: 'alice', resourceAttributes: { namespace: 'default', verb: 'watch', resource: 'services' } } },
    });
    assert.deepEqual(sar.json().status, { allowed: false, evaluationError: error });
    // The admin is unaffected (system:masters comes first).
    assert.equal((await s.request('GET', '/api/v1/namespaces/default/services')).status, 200);
  } finally {
    await webhook.listen();
  }
  // Back on the same port: failures were not cached.
  assert.equal((await requestAs(s, 'alice-token', 'GET', '/api/v1/namespaces/default/services')).status, 200);
});

// ---- --authorization-config: v1, matchConditions, failurePolicy Deny, reload ----

function configWith(webhookKubeconfig: string, extra: Record<string, unknown> = {}): string {
  return YAML.stringify({
    apiVersion: 'apiserver.config.k8s.io/v1',
    kind: 'AuthorizationConfiguration',
    authorizers: [
      {
        type: 'Webhook',
        name: 'allow-list',
        webhook: {
          timeout: '3s',
          subjectAccessReviewVersion: 'v1',
          matchConditionSubjectAccessReviewVersion: 'v1',
          failurePolicy: 'Deny',
          connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: webhookKubeconfig },
          matchConditions: [{ expression: "!('skip-webhook' in request.groups)" }, { expression: "!has(request.resourceAttributes) || request.resourceAttributes.namespace != 'kube-public'" }],
          ...extra,
        },
      },
      { type: 'RBAC', name: 'rbac' },
    ],
  });
}

test('--authorization-config: v1 bodies, matchConditions that skip the webhook, failurePolicy Deny, and the file\'s reload', async () => {
  const configFile = join(dir, 'authz-config.yaml');
  const kubeconfig = webhook.writeKubeconfig('webhook-v1.kubeconfig');
  writeFileSync(configFile, configWith(kubeconfig));
  const v1Logs: string[] = [];
  const v1 = await startTestServer({ options: { authorizationConfigFile: configFile, authorizationConfigReloadIntervalMs: 100, tokenAuthFile: tokenFile, log: (l) => v1Logs.push(logMessage(l)) } });
  try {
    await bindView(v1);
    const before = webhook.received.length;
    const alice = await requestAs(v1, 'alice-token', 'GET', '/api/v1/namespaces/default/endpoints');
    assert.equal(alice.status, 200, alice.text);
    const sent = webhook.received.slice(before).find((x) => String(x.review.spec?.user) === 'alice')!;
    // v1 names the groups `groups`.
    assert.deepEqual(sent.review, {
      kind: 'SubjectAccessReview',
      apiVersion: 'authorization.k8s.io/v1',
      metadata: { creationTimestamp: null },
      spec: { resourceAttributes: { namespace: 'default', verb: 'list', version: 'v1', resource: 'endpoints' }, user: 'alice', groups: ['dev', 'system:authenticated'], uid: 'alice-uid' },
      status: { allowed: false },
    });

    // erin is in skip-webhook: the condition is false, the webhook is never asked, RBAC's view decides.
    const erin = await kubectlAs(v1, 'erin-token', ['get', 'pods', '-n', 'default', '-o', 'name']);
    assert.equal(erin.code, 0, erin.stderr);
    assert.equal(webhook.reviewsOf('erin').length, 0, 'matchConditions kept the webhook out');
    // kube-public: the second condition is false for everyone.
    const beforePublic = webhook.received.length;
    assert.equal((await requestAs(v1, 'alice-token', 'GET', '/api/v1/namespaces/kube-public/pods')).status, 403);
    assert.equal(webhook.received.length, beforePublic);

    // The webhook down with failurePolicy Deny: even carol, whom RBAC would allow, is refused (kube: a 500 with the error).
    const port = webhook.port;
    await webhook.down();
    try {
      const carol = await requestAs(v1, 'carol-token', 'GET', '/api/v1/namespaces/default/pods');
      assert.equal(carol.status, 500, carol.text);
      assert.equal(carol.json().message as unknown, `Internal error occurred: Post "https://127.0.0.1:${port}/authorize": dial tcp 127.0.0.1:${port}: connect: connection refused`);
      // erin is not the webhook's: RBAC decides, the outage does not matter.
      assert.equal((await requestAs(v1, 'erin-token', 'GET', '/api/v1/namespaces/default/pods')).status, 200);
    } finally {
      await webhook.listen();
    }

    // An invalid rewrite is logged and the old chain stays.
    writeFileSync(configFile, configWith(kubeconfig, { failurePolicy: 'Sometimes' }));
    await eventually('the invalid file is read', async () => v1Logs.some((l) => l.startsWith('reloading authorization config: ')));
    assert.ok(v1Logs.includes('reloading authorization config: authorizers[0].failurePolicy: Unsupported value: "Sometimes": supported values: "NoOpinion", "Deny"'), v1Logs.join('\n'));
    assert.equal((await requestAs(v1, 'alice-token', 'GET', '/api/v1/namespaces/default/replicationcontrollers')).status, 200);
    // So does one that drops a type the server started with (kube: missing required types).
    writeFileSync(configFile, YAML.stringify({ apiVersion: 'apiserver.config.k8s.io/v1', kind: 'AuthorizationConfiguration', authorizers: [{ type: 'AlwaysDeny', name: 'alwaysdeny' }] }));
    await eventually('the file without RBAC is refused', async () => v1Logs.includes('reloading authorization config: missing required types: [RBAC]'));

    // A valid rewrite without the webhook: alice loses what only the webhook gave her.
    writeFileSync(configFile, YAML.stringify({ apiVersion: 'apiserver.config.k8s.io/v1', kind: 'AuthorizationConfiguration', authorizers: [{ type: 'RBAC', name: 'rbac' }] }));
    await eventually('alice is refused once RBAC alone decides', async () => (await requestAs(v1, 'alice-token', 'GET', '/api/v1/namespaces/default/pods')).status === 403);
    assert.ok(v1Logs.includes('reloaded authz config'), v1Logs.join('\n'));
    const bob = await requestAs(v1, 'bob-token', 'GET', '/api/v1/namespaces/default/pods');
    assert.equal(bob.status, 200, 'bob\'s suspension was the webhook\'s, which is gone');
  } finally {
    await v1.stop();
  }
});

test('flags and files kube refuses stop the start with kube\'s words, nothing written', async () => {
  const kubeconfig = webhook.writeKubeconfig('webhook-flags.kubeconfig');
  const cases: [string[], number, RegExp][] = [
    [['--authorization-webhook-config-file', kubeconfig], 1, /^hearth: cannot specify --authorization-webhook-config-file without mode Webhook$/m],
    [['--authorization-mode', 'Webhook,RBAC', '--authorization-webhook-config-file', kubeconfig, '--authorization-webhook-version', 'v3'], 1, /^hearth: invalid authorization config: unsupported webhook authorizer version "v3", supported versions are \[v1 v1beta1\]$/m],
    [['--authorization-mode', 'Webhook', '--authorization-webhook-config-file', join(dir, 'missing.kubeconfig')], 1, new RegExp(`^hearth: invalid authorization config: stat ${join(dir, 'missing.kubeconfig')}: no such file or directory$`, 'm')],
    [['--authorization-webhook-cache-authorized-ttl', 'soon'], 2, /invalid argument "soon" for "--authorization-webhook-cache-authorized-ttl" flag: time: invalid duration "soon"/],
  ];
  const inCluster = join(dir, 'in-cluster.yaml');
  writeFileSync(inCluster, YAML.stringify({ apiVersion: 'apiserver.config.k8s.io/v1', kind: 'AuthorizationConfiguration', authorizers: [{ type: 'Webhook', name: 'w', webhook: { timeout: '3s', subjectAccessReviewVersion: 'v1', failurePolicy: 'NoOpinion', connectionInfo: { type: 'InClusterConfig' } } }] }));
  cases.push([['--authorization-config', inCluster], 1, /^hearth: invalid authorization config: authorizer "w": connectionInfo type InClusterConfig is not allowed for kube-apiserver, nor for hearth/m]);
  cases.push([['--authorization-config', inCluster, '--authorization-webhook-version', 'v1'], 1, /^hearth: --authorization-config can not be specified when --authorization-mode or --authorization-webhook-\* flags are defined$/m]);
  const badTimeout = join(dir, 'bad-timeout.yaml');
  writeFileSync(badTimeout, configWith(kubeconfig, { timeout: '45s', matchConditions: [{ expression: 'request.user' }] }));
  cases.push([
    ['--authorization-config', badTimeout],
    1,
    /^hearth: \[authorizers\[0\]\.timeout: Invalid value: "45s": must be > 0s and <= 30s, authorizers\[0\]\.matchConditions\[0\]\.expression: Invalid value: "request\.user": must evaluate to bool but got string\]$/m,
  ]);
  for (const [args, code, message] of cases) {
    const dataDir = join(dir, `never-${Math.random().toString(36).slice(2)}`);
    const r = await runHearth(['--data-dir', dataDir, '--secure-port', '0', ...args]);
    assert.equal(r.code, code, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    assert.match(r.stderr, message);
    assert.ok(!existsSync(dataDir), 'nothing written');
  }
});
