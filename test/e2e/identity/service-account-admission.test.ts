// ServiceAccount admission, the part without tokens (kube's plugin/pkg/admission/serviceaccount):
// a pod gets `default` when it names no ServiceAccount, a pod naming a missing one is 403 with
// kube's message and leaves nothing behind, a pod without imagePullSecrets takes its
// ServiceAccount's, mirror pods name none; NamespaceLifecycle still answers first (404 for a
// missing namespace). The projected kube-api-access token volume is not added yet.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { useTestServer } from '../../helpers/server.ts';

const s = useTestServer();

const pod = (name: string, spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, ...metadata },
  spec: { containers: [{ name: 'c', image: 'nginx' }], ...spec },
});

async function kubectlOk(args: string[], input?: string): Promise<string> {
  const r = await s.kubectl(args, { input });
  assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

test('a pod created right after its namespace gets serviceAccountName default', async () => {
  // No wait for the ServiceAccount controller: admission looks `default` up again while it is made.
  await kubectlOk(['create', 'ns', 'sa-adm']);
  await kubectlOk(['run', 'first', '--image=nginx', '-n', 'sa-adm']);
  const out = JSON.parse(await kubectlOk(['get', 'pod', 'first', '-n', 'sa-adm', '-o', 'json']));
  assert.equal(out.spec.serviceAccountName, 'default');
});

test('a pod naming a missing ServiceAccount is 403 with kube message, and nothing is stored', async () => {
  const r = await s.request('POST', '/api/v1/namespaces/default/pods', { body: pod('ghostly', { serviceAccountName: 'ghost' }) });
  assert.equal(r.status, 403, r.text);
  const status = r.json();
  assert.equal(status.reason, 'Forbidden');
  assert.equal(status.message, 'pods "ghostly" is forbidden: error looking up service account default/ghost: serviceaccount "ghost" not found');
  assert.deepEqual(status.details, { name: 'ghostly', kind: 'pods' });
  assert.equal((await s.request('GET', '/api/v1/namespaces/default/pods/ghostly')).status, 404);

  // kubectl shows kube's words.
  const k = await s.kubectl(['create', '-f', '-'], { input: JSON.stringify(pod('ghostly', { serviceAccountName: 'ghost' })) });
  assert.notEqual(k.code, 0);
  assert.match(k.stderr, /Error from server \(Forbidden\): .*pods "ghostly" is forbidden: error looking up service account default\/ghost: serviceaccount "ghost" not found/);

  // A pod named from generateName is named by its prefix, as kube's admission runs before the name is made.
  const g = await s.request('POST', '/api/v1/namespaces/default/pods', { body: { ...pod(''), metadata: { generateName: 'gen-' }, spec: { serviceAccountName: 'ghost', containers: [{ name: 'c', image: 'nginx' }] } } });
  assert.equal(g.status, 403);
  assert.equal(g.json().message, 'pods "gen-" is forbidden: error looking up service account default/ghost: serviceaccount "ghost" not found');

  // Once the ServiceAccount exists, the same pod is admitted (client-node this time).
  await kubectlOk(['create', 'serviceaccount', 'ghost', '-n', 'default']);
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(s.kubeconfigPath);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const created = await core.createNamespacedPod({ namespace: 'default', body: pod('ghostly', { serviceAccountName: 'ghost' }) as k8s.V1Pod });
  assert.equal(created.spec?.serviceAccountName, 'ghost');
});

test('a pod without imagePullSecrets takes its ServiceAccount ones; its own are kept', async () => {
  const sa = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'puller', namespace: 'default' }, imagePullSecrets: [{ name: 'registry-a' }, { name: 'registry-b' }] };
  await kubectlOk(['create', '-f', '-'], JSON.stringify(sa));
  const taken = await s.request('POST', '/api/v1/namespaces/default/pods', { body: pod('pulls', { serviceAccountName: 'puller' }) });
  assert.equal(taken.status, 201, taken.text);
  assert.deepEqual(taken.json().spec.imagePullSecrets, [{ name: 'registry-a' }, { name: 'registry-b' }]);
  const own = await s.request('POST', '/api/v1/namespaces/default/pods', { body: pod('pulls-own', { serviceAccountName: 'puller', imagePullSecrets: [{ name: 'mine' }] }) });
  assert.equal(own.status, 201, own.text);
  assert.deepEqual(own.json().spec.imagePullSecrets, [{ name: 'mine' }]);
});

test('the deprecated spec.serviceAccount names the ServiceAccount when serviceAccountName is empty', async () => {
  const r = await s.request('POST', '/api/v1/namespaces/default/pods', { body: pod('old-style', { serviceAccount: 'missing-old' }) });
  assert.equal(r.status, 403);
  assert.equal(r.json().message, 'pods "old-style" is forbidden: error looking up service account default/missing-old: serviceaccount "missing-old" not found');
});

test('mirror pods: given no ServiceAccount, and refused when they name one', async () => {
  const mirror = { annotations: { 'kubernetes.io/config.mirror': 'abc' } };
  const ok = await s.request('POST', '/api/v1/namespaces/default/pods', { body: pod('static-web', { nodeName: 'n1' }, mirror) });
  assert.equal(ok.status, 201, ok.text);
  assert.equal(ok.json().spec.serviceAccountName, undefined);
  const named = await s.request('POST', '/api/v1/namespaces/default/pods', { body: pod('static-sa', { nodeName: 'n1', serviceAccountName: 'default' }, mirror) });
  assert.equal(named.status, 403);
  assert.equal(named.json().message, 'pods "static-sa" is forbidden: a mirror pod may not reference service accounts');
  const secret = await s.request('POST', '/api/v1/namespaces/default/pods', { body: pod('static-secret', { nodeName: 'n1', volumes: [{ name: 'v', secret: { secretName: 's' } }] }, mirror) });
  assert.equal(secret.status, 403);
  assert.equal(secret.json().message, 'pods "static-secret" is forbidden: a mirror pod may not reference secrets');
});

test('a pod in a namespace that does not exist is 404 from NamespaceLifecycle, not a ServiceAccount lookup', async () => {
  const r = await s.request('POST', '/api/v1/namespaces/no-such-ns/pods', { body: pod('p') });
  assert.equal(r.status, 404);
  assert.equal(r.json().message, 'namespaces "no-such-ns" not found');
});

test('anonymous may not create pods at all (authorization answers before admission)', async () => {
  const r = await s.request('POST', '/api/v1/namespaces/default/pods', { body: pod('anon', { serviceAccountName: 'ghost-anon' }), anonymous: true });
  assert.equal(r.status, 403);
  assert.doesNotMatch(r.json().message, /service account/);
});
