// ServiceAccount admission (kube's plugin/pkg/admission/serviceaccount): a pod gets `default`
// when it names no ServiceAccount, a pod naming a missing one is 403 with kube's message and
// leaves nothing behind, a pod without imagePullSecrets takes its ServiceAccount's, mirror pods
// name none and get no token; NamespaceLifecycle still answers first (404 for a missing
// namespace). The projected kube-api-access-<5> volume and its mounts, per automountServiceAccountToken.
// kubernetes.io/enforce-mountable-secrets limits pods (and ephemeral containers) to the Secrets a
// ServiceAccount lists, in kube's words.
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
  assert.equal(ok.json().spec.volumes, undefined);
  assert.equal(ok.json().spec.containers[0].volumeMounts, undefined);
  const named = await s.request('POST', '/api/v1/namespaces/default/pods', { body: pod('static-sa', { nodeName: 'n1', serviceAccountName: 'default' }, mirror) });
  assert.equal(named.status, 403);
  assert.equal(named.json().message, 'pods "static-sa" is forbidden: a mirror pod may not reference service accounts');
  const secret = await s.request('POST', '/api/v1/namespaces/default/pods', { body: pod('static-secret', { nodeName: 'n1', volumes: [{ name: 'v', secret: { secretName: 's' } }] }, mirror) });
  assert.equal(secret.status, 403);
  assert.equal(secret.json().message, 'pods "static-secret" is forbidden: a mirror pod may not reference secrets');
});

test('a mirror pod may reference no Secret at all: env, envFrom and imagePullSecrets count as kube counts them', async () => {
  const mirror = { annotations: { 'kubernetes.io/config.mirror': 'abc' } };
  const specs: [string, Record<string, unknown>][] = [
    ['static-env', { containers: [{ name: 'c', image: 'nginx', env: [{ name: 'X', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }] }] }],
    ['static-envfrom', { initContainers: [{ name: 'i', image: 'nginx', envFrom: [{ secretRef: { name: 's' } }] }] }],
    ['static-pull', { imagePullSecrets: [{ name: 'registry' }] }],
    ['static-projected', { volumes: [{ name: 'v', projected: { sources: [{ secret: { name: 's' } }] } }] }],
  ];
  for (const [name, spec] of specs) {
    const r = await s.request('POST', '/api/v1/namespaces/default/pods', { body: pod(name, { nodeName: 'n1', ...spec }, mirror) });
    assert.equal(r.status, 403, name);
    assert.equal(r.json().message, `pods "${name}" is forbidden: a mirror pod may not reference secrets`);
    assert.equal((await s.request('GET', `/api/v1/namespaces/default/pods/${name}`)).status, 404);
  }
});

test('kubernetes.io/enforce-mountable-secrets: a pod may use only the Secrets its ServiceAccount lists', async () => {
  await kubectlOk(['create', 'ns', 'mountable']);
  const sa = {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: 'locked', namespace: 'mountable', annotations: { 'kubernetes.io/enforce-mountable-secrets': 'true' } },
    secrets: [{ name: 'allowed' }],
    imagePullSecrets: [{ name: 'registry' }],
  };
  await kubectlOk(['create', '-f', '-'], JSON.stringify(sa));
  const create = (name: string, spec: Record<string, unknown>) => s.request('POST', '/api/v1/namespaces/mountable/pods', { body: pod(name, { serviceAccountName: 'locked', ...spec }) });
  const secretEnv = (secret: string) => [{ name: 'TOKEN', valueFrom: { secretKeyRef: { name: secret, key: 'k' } } }];

  const ok = await create('uses-allowed', { volumes: [{ name: 'v', secret: { secretName: 'allowed' } }], containers: [{ name: 'c', image: 'nginx', env: secretEnv('allowed'), envFrom: [{ secretRef: { name: 'allowed' } }] }] });
  assert.equal(ok.status, 201, ok.text);
  // The pod took the ServiceAccount's imagePullSecrets, which it lists.
  assert.deepEqual(ok.json().spec.imagePullSecrets, [{ name: 'registry' }]);

  const refusals: [string, Record<string, unknown>, string][] = [
    ['volume', { volumes: [{ name: 'v', secret: { secretName: 'other' } }] }, 'volume with secret.secretName="other" is not allowed because service account locked does not reference that secret'],
    ['env', { containers: [{ name: 'app', image: 'nginx', env: secretEnv('other') }] }, 'container app with envVar TOKEN referencing secret.secretName="other" is not allowed because service account locked does not reference that secret'],
    ['envfrom', { containers: [{ name: 'app', image: 'nginx', envFrom: [{ secretRef: { name: 'other' } }] }] }, 'container app with envFrom referencing secret.secretName="other" is not allowed because service account locked does not reference that secret'],
    ['init-env', { initContainers: [{ name: 'setup', image: 'nginx', env: secretEnv('other') }] }, 'init container setup with envVar TOKEN referencing secret.secretName="other" is not allowed because service account locked does not reference that secret'],
    ['pull', { imagePullSecrets: [{ name: 'registry' }, { name: 'elsewhere' }] }, 'imagePullSecrets[1].name="elsewhere" is not allowed because service account locked does not reference that imagePullSecret'],
  ];
  for (const [name, spec, why] of refusals) {
    const r = await create(name, spec);
    assert.equal(r.status, 403, name);
    assert.equal(r.json().message, `pods "${name}" is forbidden: ${why}`);
    assert.equal((await s.request('GET', `/api/v1/namespaces/mountable/pods/${name}`)).status, 404);
  }

  // Without the annotation (or with it "false"), the same pod is admitted.
  await kubectlOk(['annotate', 'serviceaccount', 'locked', '-n', 'mountable', '--overwrite', 'kubernetes.io/enforce-mountable-secrets=false']);
  assert.equal((await create('volume', refusals[0][1])).status, 201);
});

test('an ephemeral container is held to the ServiceAccount\'s mountable secrets too', async () => {
  await kubectlOk(['create', 'ns', 'debugging']);
  const sa = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'locked', namespace: 'debugging', annotations: { 'kubernetes.io/enforce-mountable-secrets': 'T' } }, secrets: [{ name: 'allowed' }] };
  await kubectlOk(['create', '-f', '-'], JSON.stringify(sa));
  const created = await s.request('POST', '/api/v1/namespaces/debugging/pods', { body: pod('target', { serviceAccountName: 'locked' }) });
  assert.equal(created.status, 201, created.text);
  const withDebugger = (secret: string) => ({ ...created.json(), spec: { ...created.json().spec, ephemeralContainers: [{ name: 'debugger', image: 'busybox', envFrom: [{ secretRef: { name: secret } }] }] } });
  const refused = await s.request('PUT', '/api/v1/namespaces/debugging/pods/target/ephemeralcontainers', { body: withDebugger('other') });
  assert.equal(refused.status, 403, refused.text);
  assert.equal(refused.json().message, 'pods "target" is forbidden: ephemeral container debugger with envFrom referencing secret.secretName="other" is not allowed because service account locked does not reference that secret');
  assert.equal((await s.request('GET', '/api/v1/namespaces/debugging/pods/target')).json().spec.ephemeralContainers, undefined);
  const allowed = await s.request('PUT', '/api/v1/namespaces/debugging/pods/target/ephemeralcontainers', { body: withDebugger('allowed') });
  assert.equal(allowed.status, 200, allowed.text);
  assert.equal(allowed.json().spec.ephemeralContainers[0].name, 'debugger');
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

const TOKEN_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
/** names.SimpleNameGenerator: 5 characters of utilrand's alphabet. */
const API_ACCESS_NAME = /^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/;
/** kube's TokenVolumeSource, as the API returns it. */
const TOKEN_VOLUME_SOURCE = {
  defaultMode: 420,
  sources: [
    { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
    { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
    { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
  ],
};

async function createPod(body: unknown) {
  const r = await s.request('POST', '/api/v1/namespaces/default/pods', { body });
  assert.equal(r.status, 201, r.text);
  return r.json();
}

test('kubectl run: the pod gets the projected kube-api-access volume, mounted read-only in every container', async () => {
  await kubectlOk(['run', 'api-user', '--image=nginx', '-n', 'default']);
  const p = JSON.parse(await kubectlOk(['get', 'pod', 'api-user', '-n', 'default', '-o', 'json']));
  assert.equal(p.spec.volumes.length, 1);
  const [volume] = p.spec.volumes;
  assert.match(volume.name, API_ACCESS_NAME);
  assert.deepEqual(volume.projected, TOKEN_VOLUME_SOURCE);
  assert.deepEqual(p.spec.containers[0].volumeMounts, [{ name: volume.name, readOnly: true, mountPath: TOKEN_PATH }]);

  // Init containers too; a container that mounts something of its own at the path keeps it.
  const created = await createPod(
    pod('multi', {
      initContainers: [{ name: 'init', image: 'busybox' }],
      containers: [
        { name: 'plain', image: 'nginx', volumeMounts: [{ name: 'data', mountPath: '/data' }] },
        { name: 'own-token', image: 'nginx', volumeMounts: [{ name: 'mine', mountPath: TOKEN_PATH }] },
      ],
      volumes: [{ name: 'data', emptyDir: {} }, { name: 'mine', secret: { secretName: 'my-token' } }],
    }),
  );
  const added = created.spec.volumes[2];
  assert.equal(created.spec.volumes.length, 3);
  assert.match(added.name, API_ACCESS_NAME);
  assert.deepEqual(added.projected, TOKEN_VOLUME_SOURCE);
  const mount = { name: added.name, readOnly: true, mountPath: TOKEN_PATH };
  assert.deepEqual(created.spec.initContainers[0].volumeMounts, [mount]);
  assert.deepEqual(created.spec.containers[0].volumeMounts, [{ name: 'data', mountPath: '/data' }, mount]);
  assert.deepEqual(created.spec.containers[1].volumeMounts, [{ name: 'mine', mountPath: TOKEN_PATH }]);
  // Two pods, two generated names (SimpleNameGenerator per pod).
  assert.notEqual(added.name, volume.name);
});

test('every container mounting the path of its own: no volume added', async () => {
  const created = await createPod(pod('all-own', { containers: [{ name: 'c', image: 'nginx', volumeMounts: [{ name: 'mine', mountPath: TOKEN_PATH }] }], volumes: [{ name: 'mine', emptyDir: {} }] }));
  assert.deepEqual(created.spec.volumes, [{ name: 'mine', emptyDir: {} }]);
});

test('a pod that already has a kube-api-access volume (a copied pod) keeps it and is not given a second', async () => {
  const first = await createPod(pod('original'));
  const copy = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'copy' }, spec: { containers: first.spec.containers, volumes: first.spec.volumes } };
  const created = await createPod(copy);
  assert.deepEqual(created.spec.volumes, first.spec.volumes);
  assert.deepEqual(created.spec.containers[0].volumeMounts, first.spec.containers[0].volumeMounts);

  // A kube-api-access-* volume is the one mounted, whatever it holds (kube goes by the name).
  const named = await createPod(pod('named', { containers: [{ name: 'c', image: 'nginx' }, { name: 'd', image: 'nginx' }], volumes: [{ name: 'kube-api-access-mine', emptyDir: {} }] }));
  assert.deepEqual(named.spec.volumes, [{ name: 'kube-api-access-mine', emptyDir: {} }]);
  for (const c of named.spec.containers) assert.deepEqual(c.volumeMounts, [{ name: 'kube-api-access-mine', readOnly: true, mountPath: TOKEN_PATH }]);
});

test('automountServiceAccountToken: the pod decides, else its ServiceAccount', async () => {
  const sa = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'no-mount', namespace: 'default' }, automountServiceAccountToken: false };
  await kubectlOk(['create', '-f', '-'], JSON.stringify(sa));
  const saOff = await createPod(pod('sa-off', { serviceAccountName: 'no-mount' }));
  assert.equal(saOff.spec.volumes, undefined);
  assert.equal(saOff.spec.containers[0].volumeMounts, undefined);
  const podOn = await createPod(pod('pod-on', { serviceAccountName: 'no-mount', automountServiceAccountToken: true }));
  assert.match(podOn.spec.volumes[0].name, API_ACCESS_NAME);
  assert.equal(podOn.spec.containers[0].volumeMounts[0].mountPath, TOKEN_PATH);
  const podOff = await createPod(pod('pod-off', { automountServiceAccountToken: false }));
  assert.equal(podOff.spec.serviceAccountName, 'default');
  assert.equal(podOff.spec.volumes, undefined);
});

test('only creates are admitted: an update keeps the volume as the pod has it', async () => {
  const created = await createPod(pod('updated'));
  const patched = await s.request('PATCH', '/api/v1/namespaces/default/pods/updated', { body: { metadata: { labels: { a: 'b' } } }, headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(patched.status, 200, patched.text);
  assert.deepEqual(patched.json().spec.volumes, created.spec.volumes);
  assert.deepEqual(patched.json().spec.containers, created.spec.containers);
});

test('the kubelet TokenRequest for the volume: bound to the pod, 3607 s asked, extended with warnafter', async () => {
  const created = await createPod(pod('kubelet-view'));
  const ask = created.spec.volumes[0].projected.sources[0].serviceAccountToken;
  const r = await s.request('POST', '/api/v1/namespaces/default/serviceaccounts/default/token', {
    body: { spec: { expirationSeconds: ask.expirationSeconds, boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'kubelet-view', uid: created.metadata.uid } } },
  });
  assert.equal(r.status, 201, r.text);
  const claims = JSON.parse(Buffer.from(r.json().status.token.split('.')[1], 'base64url').toString());
  assert.equal(claims.sub, 'system:serviceaccount:default:default');
  assert.deepEqual(claims['kubernetes.io'].pod, { name: 'kubelet-view', uid: created.metadata.uid });
  assert.equal(claims['kubernetes.io'].warnafter - claims.iat, 3607);
  assert.equal(claims.exp - claims.iat, 365 * 24 * 3600);
});
