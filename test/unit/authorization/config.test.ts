// --authorization-config as kube-apiserver reads it (reload.go's LoadAndValidateFile, the
// apiserver validation's ValidateAuthorizationConfiguration): the types in order from a valid
// file, kube's messages for the files it refuses, and hearth's for the types it lacks yet.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readAuthorizationConfig } from '../../../server/authorization/config.ts';

const dir = mkdtempSync(join(tmpdir(), 'hearth-authz-config-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

/** Reads a file of this text: its types, or the error's message. */
function read(text: string): string[] | string {
  const file = join(dir, `config-${n++}.yaml`);
  writeFileSync(file, text);
  try {
    return readAuthorizationConfig(file).authorizers.map((a) => a.type);
  } catch (e) {
    return (e as Error).message;
  }
}

const HEAD = 'apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\n';

test('a valid file gives its authorizer types in order, in any served version', () => {
  assert.deepEqual(read(`${HEAD}authorizers:\n- type: RBAC\n  name: rbac\n- type: AlwaysDeny\n  name: alwaysdeny\n`), ['RBAC', 'AlwaysDeny']);
  assert.deepEqual(read(`apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthorizationConfiguration\nauthorizers:\n- {type: AlwaysAllow, name: alwaysallow}\n`), ['AlwaysAllow']);
});

test('decoding: kube\'s loader messages', () => {
  assert.equal(read(''), 'authorizers: Required value: at least one authorization mode must be defined');
  assert.equal(read('apiVersion: apiserver.config.k8s.io/v1\nauthorizers: []\n'), `failed to load AuthorizationConfiguration from file: Object 'Kind' is missing in '{"apiVersion":"apiserver.config.k8s.io/v1","authorizers":[]}'`);
  assert.equal(read(`${HEAD}authorizers:\n- type: RBAC\n  name: rbac\n  extra: 1\n`), 'failed to load AuthorizationConfiguration from file: strict decoding error: unknown field "authorizers[0].extra"');
  assert.equal(read(`${HEAD}authorizers: []\n`), 'authorizers: Required value: at least one authorization mode must be defined');
  assert.match(String(read(`${HEAD.replace('/v1', '/v9')}authorizers: []\n`)), /^failed to load AuthorizationConfiguration from file: no kind "AuthorizationConfiguration" is registered for version "apiserver\.config\.k8s\.io\/v9"/);
  const missing = join(dir, 'nope.yaml');
  assert.throws(() => readAuthorizationConfig(missing), { message: `open ${missing}: no such file or directory` });
});

test('validation: kube\'s field errors', () => {
  assert.equal(read(`${HEAD}authorizers:\n- name: x\n`), 'authorizers[0].type: Required value');
  assert.equal(read(`${HEAD}authorizers:\n- type: Magic\n  name: magic\n`), 'authorizers[0].type: Unsupported value: "Magic": supported values: "ABAC", "AlwaysAllow", "AlwaysDeny", "Node", "RBAC", "Webhook"');
  assert.equal(read(`${HEAD}authorizers:\n- {type: RBAC, name: rbac}\n- {type: RBAC, name: rbac2}\n`), 'authorizers[1].type: Duplicate value: "RBAC"');
  assert.equal(read(`${HEAD}authorizers:\n- {type: RBAC}\n`), 'authorizers[0].name: Required value');
  assert.equal(read(`${HEAD}authorizers:\n- {type: RBAC, name: Not_Valid}\n`), 'authorizers[0].name: Invalid value: "Not_Valid": authorizer name is invalid: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \'-\' or \'.\', and must start and end with an alphanumeric character (e.g. \'example.com\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\')');
  assert.equal(read(`${HEAD}authorizers:\n- {type: RBAC, name: rbac, webhook: {}}\n`), 'authorizers[0].webhook: Invalid value: "non-null": may only be specified when type=Webhook');
  assert.equal(read(`${HEAD}authorizers:\n- {type: Webhook, name: w}\n- {type: RBAC, name: w}\n`), '[authorizers[0].webhook: Required value: required when type=Webhook, authorizers[1].name: Duplicate value: "w"]');
  assert.equal(read(`${HEAD}authorizers:\n- {type: RBAC, name: my-rbac}\n`), 'expected name rbac for authorizer RBAC instead of my-rbac');
});

test('types kube has and hearth does not are refused by name; Node is named node', () => {
  assert.deepEqual(read(`${HEAD}authorizers:\n- {type: Node, name: node}\n- {type: RBAC, name: rbac}\n`), ['Node', 'RBAC']);
  assert.equal(read(`${HEAD}authorizers:\n- {type: Node, name: nodes}\n`), 'expected name node for authorizer Node instead of nodes');
  assert.equal(read(`${HEAD}authorizers:\n- {type: ABAC, name: abac}\n`), 'authorizer type "ABAC" is not supported by hearth yet (supported: AlwaysAllow, AlwaysDeny, RBAC, Node, Webhook)');
});

// ---- the webhook section (ValidateWebhookConfiguration, SetDefaults_WebhookConfiguration) ----

const kubeconfig = join(dir, 'webhook.kubeconfig');
writeFileSync(kubeconfig, 'apiVersion: v1\nkind: Config\nclusters:\n- name: w\n  cluster: {server: "https://127.0.0.1:9443/authorize", insecure-skip-tls-verify: true}\ncontexts:\n- name: w\n  context: {cluster: w, user: ""}\ncurrent-context: w\n');

/** A webhook authorizer entry with these fields over a valid base. */
function webhookConfig(fields: Record<string, unknown>, drop: string[] = []): string {
  const base: Record<string, unknown> = { timeout: '3s', subjectAccessReviewVersion: 'v1', failurePolicy: 'NoOpinion', connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: kubeconfig }, ...fields };
  for (const k of drop) delete base[k];
  return `${HEAD}authorizers:\n- type: Webhook\n  name: w\n  webhook: ${JSON.stringify(base)}\n- {type: RBAC, name: rbac}\n`;
}

function readWebhook(text: string) {
  const file = join(dir, `config-${n++}.yaml`);
  writeFileSync(file, text);
  return readAuthorizationConfig(file).authorizers[0].webhook!;
}

test('a webhook section: kube\'s defaults (5m, 30s, both cached), cache*Requests false caches nothing', () => {
  const w = readWebhook(webhookConfig({}));
  assert.equal(w.name, 'w');
  assert.equal(w.client.server.href, 'https://127.0.0.1:9443/authorize');
  assert.deepEqual([w.version, w.timeoutMs, w.authorizedTtlMs, w.unauthorizedTtlMs, w.failurePolicy, w.matchConditions.length], ['v1', 3000, 300_000, 30_000, 'NoOpinion', 0]);
  const tuned = readWebhook(webhookConfig({ authorizedTTL: '1m', unauthorizedTTL: '5s', cacheUnauthorizedRequests: false, failurePolicy: 'Deny', matchConditionSubjectAccessReviewVersion: 'v1', matchConditions: [{ expression: "request.user != 'x'" }] }));
  assert.deepEqual([tuned.authorizedTtlMs, tuned.unauthorizedTtlMs, tuned.failurePolicy, tuned.matchConditions.map((c) => c.expression)], [60_000, 0, 'Deny', ["request.user != 'x'"]]);
});

test('a webhook section kube refuses: its messages, with the field paths kube gives them', () => {
  assert.equal(read(webhookConfig({}, ['timeout', 'subjectAccessReviewVersion', 'failurePolicy', 'connectionInfo'])), '[authorizers[0].timeout: Required value, authorizers[0].subjectAccessReviewVersion: Required value, authorizers[0].failurePolicy: Required value, authorizers[0].connectionInfo.type: Required value]');
  assert.equal(read(webhookConfig({ timeout: '31s' })), 'authorizers[0].timeout: Invalid value: "31s": must be > 0s and <= 30s');
  assert.equal(read(webhookConfig({ authorizedTTL: '-1m' })), 'authorizers[0].authorizedTTL: Invalid value: "-1m0s": must be > 0s');
  assert.equal(read(webhookConfig({ subjectAccessReviewVersion: 'v2' })), 'authorizers[0].subjectAccessReviewVersion: Unsupported value: "v2": supported values: "v1", "v1beta1"');
  assert.equal(read(webhookConfig({ matchConditions: [{ expression: 'true' }] })), 'authorizers[0].matchConditionSubjectAccessReviewVersion: Required value: required if match conditions are specified');
  assert.equal(read(webhookConfig({ matchConditionSubjectAccessReviewVersion: 'v1beta1' })), 'authorizers[0].matchConditionSubjectAccessReviewVersion: Unsupported value: "v1beta1": supported values: "v1"');
  assert.equal(read(webhookConfig({ failurePolicy: 'Allow' })), 'authorizers[0].failurePolicy: Unsupported value: "Allow": supported values: "NoOpinion", "Deny"');
  assert.equal(read(webhookConfig({ connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: 'relative.kubeconfig' } })), 'authorizers[0].connectionInfo.kubeConfigFile: Invalid value: "relative.kubeconfig": must be an absolute path');
  assert.equal(read(webhookConfig({ connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: join(dir, 'none') } })), `authorizers[0].connectionInfo.kubeConfigFile: Invalid value: "${join(dir, 'none')}": error loading file: stat ${join(dir, 'none')}: no such file or directory`);
  assert.equal(read(webhookConfig({ connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: dir } })), `authorizers[0].connectionInfo.kubeConfigFile: Invalid value: "${dir}": must be a regular file`);
  assert.equal(read(webhookConfig({ connectionInfo: { type: 'InClusterConfig', kubeConfigFile: kubeconfig } })), `authorizers[0].connectionInfo.kubeConfigFile: Invalid value: "${kubeconfig}": can only be set when type=KubeConfigFile`);
  assert.equal(read(webhookConfig({ matchConditionSubjectAccessReviewVersion: 'v1', matchConditions: [{ expression: ' ' }, { expression: 'true' }, { expression: 'true' }] })), '[authorizers[0].matchConditions[0].expression: Required value, authorizers[0].matchConditions[2].expression: Duplicate value: "true"]');
  const many = Array.from({ length: 65 }, (_, i) => ({ expression: `request.user != 'u${i}'` }));
  assert.equal(read(webhookConfig({ matchConditionSubjectAccessReviewVersion: 'v1', matchConditions: many })), 'authorizers[0].matchConditions: Too many: 65: must have at most 64 items');
  assert.equal(read(webhookConfig({ cacheEverything: true })), 'failed to load AuthorizationConfiguration from file: strict decoding error: unknown field "authorizers[0].webhook.cacheEverything"');
  assert.equal(read(webhookConfig({ timeout: 'soon' })), 'failed to load AuthorizationConfiguration from file: time: invalid duration "soon"');
  // Past kube's checks: InClusterConfig would have hearth call itself.
  assert.match(String(read(webhookConfig({ connectionInfo: { type: 'InClusterConfig' } }))), /^authorizer "w": connectionInfo type InClusterConfig is not allowed for kube-apiserver, nor for hearth/);
});

test('on a reload, every non-webhook type the server started with must stay (kube\'s requireNonWebhookTypes)', () => {
  const file = join(dir, 'reload.yaml');
  writeFileSync(file, `${HEAD}authorizers:\n- {type: AlwaysDeny, name: alwaysdeny}\n`);
  assert.throws(() => readAuthorizationConfig(file, new Set(['RBAC', 'AlwaysDeny'])), { message: 'missing required types: [RBAC]' });
  assert.deepEqual(readAuthorizationConfig(file, new Set(['AlwaysDeny'])).authorizers, [{ type: 'AlwaysDeny', name: 'alwaysdeny' }]);
});
