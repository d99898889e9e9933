// What every namespace gets from the controllers kube-controller-manager runs and hearth runs
// in-process: the `default` ServiceAccount (serviceaccount-controller) and the `kube-root-ca.crt`
// ConfigMap with the cluster CA (root-ca-cert-publisher), at start for the namespaces there are
// and on create for new ones, made again when deleted, the ConfigMap set back when changed, and
// nothing made in a namespace being terminated. Waits are watches, never sleeps.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import tls from 'node:tls';
import https from 'node:https';
import { X509Certificate } from 'node:crypto';
import * as k8s from '@kubernetes/client-node';
import { useTestServer, type TestServer } from '../../helpers/server.ts';

const s = useTestServer();

const DESCRIPTION =
  'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.';
/** How long a wait may take before the watch ends and the test fails (generous: the machine may be loaded). */
const WATCH_SECONDS = 60;
const SYSTEM_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

/** What the tests read of a ServiceAccount or ConfigMap. */
interface Obj {
  metadata: { name: string; namespace: string; uid: string; resourceVersion: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  data?: Record<string, string>;
}

/** Waits (a watch: its initial ADDED events, then changes) until the object exists and `ok` holds for it; returns it. */
async function waitFor(server: TestServer, collection: string, name: string, ok: (o: Obj) => boolean = () => true): Promise<Obj> {
  let found: Obj | undefined;
  const { status, events } = await server.watch(`${collection}?watch=1&timeoutSeconds=${WATCH_SECONDS}&fieldSelector=metadata.name%3D${encodeURIComponent(name)}`, (evs) => {
    const last = evs[evs.length - 1];
    if ((last.type === 'ADDED' || last.type === 'MODIFIED') && ok(last.object)) found = last.object;
    return found !== undefined;
  });
  assert.equal(status, 200, JSON.stringify(events));
  if (!found) assert.fail(`${collection}/${name}: the watch ended before it was so`);
  return found;
}

const sa = (ns: string) => `/api/v1/namespaces/${ns}/serviceaccounts`;
const cms = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;

/** Waits until the object is gone: absent now, or a watch from the version read sees it deleted. */
async function waitGone(collection: string, name: string): Promise<void> {
  const r = await s.request('GET', `${collection}/${name}`);
  if (r.status === 404) return;
  assert.equal(r.status, 200, r.text);
  const rv = r.json().metadata.resourceVersion;
  const { status, events } = await s.watch(`${collection}?watch=1&timeoutSeconds=${WATCH_SECONDS}&resourceVersion=${rv}&fieldSelector=metadata.name%3D${encodeURIComponent(name)}`, (evs) => evs.some((e) => e.type === 'DELETED'));
  assert.equal(status, 200, JSON.stringify(events));
  assert.ok(events.some((e) => e.type === 'DELETED'), `${collection}/${name}: the watch ended before it went`);
}

async function kubectlOk(args: string[], input?: string): Promise<string> {
  const r = await s.kubectl(args, { input });
  assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/** The serving certificate the server presents on its HTTPS port. */
function servingCertificate(): Promise<X509Certificate> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port: s.port, rejectUnauthorized: false }, () => {
      const raw = socket.getPeerCertificate().raw;
      socket.destroy();
      resolve(new X509Certificate(raw));
    });
    socket.on('error', reject);
  });
}

test('the namespaces there at start have the default ServiceAccount and kube-root-ca.crt', async () => {
  for (const ns of SYSTEM_NAMESPACES) {
    await waitFor(s, sa(ns), 'default');
    await waitFor(s, cms(ns), 'kube-root-ca.crt');
    const out = JSON.parse(await kubectlOk(['get', 'serviceaccount', 'default', '-n', ns, '-o', 'json']));
    assert.equal(out.metadata.name, 'default');
    assert.equal(out.metadata.namespace, ns);
  }
});

test('kubectl create ns: the default ServiceAccount and kube-root-ca.crt appear, holding the CA that signed the serving certificate', async () => {
  await kubectlOk(['create', 'ns', 'identity-new']);
  await waitFor(s, sa('identity-new'), 'default');
  await waitFor(s, cms('identity-new'), 'kube-root-ca.crt');

  const names = await kubectlOk(['get', 'sa', 'default', '-n', 'identity-new', '-o', 'name']);
  assert.equal(names.trim(), 'serviceaccount/default');
  const cm = JSON.parse(await kubectlOk(['get', 'cm', 'kube-root-ca.crt', '-n', 'identity-new', '-o', 'json', '--show-managed-fields']));
  assert.deepEqual(Object.keys(cm.data), ['ca.crt']);
  assert.equal(cm.metadata.annotations['kubernetes.io/description'], DESCRIPTION);
  // Written as kube-controller-manager writes it.
  assert.deepEqual(
    cm.metadata.managedFields.map((m: { manager: string; operation: string; fieldsV1: unknown }) => [m.manager, m.operation, m.fieldsV1]),
    [['kube-controller-manager', 'Update', { 'f:data': { '.': {}, 'f:ca.crt': {} }, 'f:metadata': { 'f:annotations': { '.': {}, 'f:kubernetes.io/description': {} } } }]],
  );

  // The CA is the one the serving certificate chains to, and a client trusting only it connects.
  const ca = new X509Certificate(cm.data['ca.crt']);
  assert.ok(ca.ca);
  const serving = await servingCertificate();
  assert.ok(serving.checkIssued(ca), 'the serving certificate was not issued by the published CA');
  assert.ok(serving.verify(ca.publicKey), 'the serving certificate is not signed by the published CA');
  assert.equal(cm.data['ca.crt'], s.pki.caCertPem);
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: s.url, caData: Buffer.from(cm.data['ca.crt']).toString('base64') }],
    users: [{ name: 'u', certData: Buffer.from(s.pki.adminCertPem).toString('base64'), keyData: Buffer.from(s.pki.adminKeyPem).toString('base64') }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  const viaPublishedCa = await kc.makeApiClient(k8s.CoreV1Api).readNamespacedServiceAccount({ name: 'default', namespace: 'identity-new' });
  assert.equal(viaPublishedCa.metadata?.name, 'default');
});

test('a deleted default ServiceAccount and kube-root-ca.crt are made again', async () => {
  await kubectlOk(['create', 'ns', 'identity-del']);
  const oldSa = await waitFor(s, sa('identity-del'), 'default');
  const oldCm = await waitFor(s, cms('identity-del'), 'kube-root-ca.crt');

  await kubectlOk(['delete', 'sa', 'default', '-n', 'identity-del']);
  await kubectlOk(['delete', 'cm', 'kube-root-ca.crt', '-n', 'identity-del']);
  const newSa = await waitFor(s, sa('identity-del'), 'default', (o) => o.metadata.uid !== oldSa.metadata.uid);
  const newCm = await waitFor(s, cms('identity-del'), 'kube-root-ca.crt', (o) => o.metadata.uid !== oldCm.metadata.uid);
  assert.notEqual(newSa.metadata.uid, oldSa.metadata.uid);
  assert.equal(newCm.data?.['ca.crt'], s.pki.caCertPem);
  assert.equal(newCm.metadata.annotations?.['kubernetes.io/description'], DESCRIPTION);

  // Through another client too: client-node deletes, the controller makes it again.
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(s.kubeconfigPath);
  await kc.makeApiClient(k8s.CoreV1Api).deleteNamespacedServiceAccount({ name: 'default', namespace: 'identity-del' });
  await waitFor(s, sa('identity-del'), 'default', (o) => o.metadata.uid !== newSa.metadata.uid);
});

test('kube-root-ca.crt edited: its data and description are set back, what else the user added stays', async () => {
  await kubectlOk(['create', 'ns', 'identity-edit']);
  await waitFor(s, cms('identity-edit'), 'kube-root-ca.crt');

  // The data changed and a key added: both set back to exactly {ca.crt}.
  const patch = JSON.stringify({ data: { 'ca.crt': 'not a CA', extra: 'x' }, metadata: { labels: { mine: 'yes' } } });
  await kubectlOk(['patch', 'cm', 'kube-root-ca.crt', '-n', 'identity-edit', '--type', 'merge', '-p', patch]);
  const restored = await waitFor(s, cms('identity-edit'), 'kube-root-ca.crt', (o) => o.data?.['ca.crt'] === s.pki.caCertPem);
  assert.deepEqual(restored.data, { 'ca.crt': s.pki.caCertPem });
  assert.equal(restored.metadata.labels?.mine, 'yes');

  // The description removed (another annotation added): it comes back, the other one stays.
  const annotations = JSON.stringify({ metadata: { annotations: { 'kubernetes.io/description': null, 'example.com/note': 'kept' } } });
  await kubectlOk(['patch', 'cm', 'kube-root-ca.crt', '-n', 'identity-edit', '--type', 'merge', '-p', annotations]);
  const described = await waitFor(s, cms('identity-edit'), 'kube-root-ca.crt', (o) => !!o.metadata.annotations?.['kubernetes.io/description']);
  assert.equal(described.metadata.annotations?.['kubernetes.io/description'], DESCRIPTION);
  assert.equal(described.metadata.annotations?.['example.com/note'], 'kept');

  // A replace with only the data emptied: set back too.
  const current = JSON.parse(await kubectlOk(['get', 'cm', 'kube-root-ca.crt', '-n', 'identity-edit', '-o', 'json']));
  current.data = {};
  await kubectlOk(['replace', '-f', '-'], JSON.stringify(current));
  await waitFor(s, cms('identity-edit'), 'kube-root-ca.crt', (o) => o.data?.['ca.crt'] === s.pki.caCertPem);
});

test('a namespace being terminated gets neither made again, and its deletion finishes', async () => {
  await kubectlOk(['create', 'ns', 'identity-term']);
  await waitFor(s, sa('identity-term'), 'default');
  await waitFor(s, cms('identity-term'), 'kube-root-ca.crt');
  // A ConfigMap a finalizer holds keeps the namespace Terminating while everything else goes.
  const held = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'held', namespace: 'identity-term', finalizers: ['example.com/hold'] } };
  await kubectlOk(['create', '-f', '-'], JSON.stringify(held));
  await kubectlOk(['delete', 'ns', 'identity-term', '--wait=false']);
  // The namespace controller deletes both.
  await waitGone(sa('identity-term'), 'default');
  await waitGone(cms('identity-term'), 'kube-root-ca.crt');
  // Both controllers take the namespace up again (an update of it), then a new namespace: each
  // works through its keys in order with one worker, so once the new namespace has both, the
  // terminating one has been looked at since its content went.
  await kubectlOk(['label', 'ns', 'identity-term', 'touched=yes']);
  await kubectlOk(['create', 'ns', 'identity-after']);
  await waitFor(s, sa('identity-after'), 'default');
  await waitFor(s, cms('identity-after'), 'kube-root-ca.crt');
  assert.equal((await s.request('GET', `${sa('identity-term')}/default`)).status, 404);
  assert.equal((await s.request('GET', `${cms('identity-term')}/kube-root-ca.crt`)).status, 404);

  // The hold released, the namespace goes: nothing the controllers made keeps it.
  await kubectlOk(['patch', 'cm', 'held', '-n', 'identity-term', '--type', 'merge', '-p', '{"metadata":{"finalizers":null}}']);
  await waitGone('/api/v1/namespaces', 'identity-term');
});

test('an anonymous client that trusts only the published CA reaches the server, and may not read the ConfigMap', async () => {
  const cm = await waitFor(s, cms('default'), 'kube-root-ca.crt');
  const status = (path: string) =>
    new Promise<number>((resolve, reject) => {
      const req = https.get(`${s.url}${path}`, { ca: cm.data?.['ca.crt'], agent: false }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
    });
  // What a pod does with the mounted ca.crt before it has a token: TLS verifies against it.
  assert.equal(await status('/version'), 200);
  assert.equal(await status(`${cms('default')}/kube-root-ca.crt`), 403);
});
