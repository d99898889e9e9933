// kube's small built-in admission plugins through HTTPS and kubectl, as the admin, a namespaced
// token user (`dev`, edit in `team`) and a ServiceAccount (`team/deployer`, edit too): Priority
// (the system classes made at start, a pod's priority from its class or the global default,
// kube's refusals, one default only), DefaultTolerationSeconds, TaintNodesByCondition,
// DefaultStorageClass (the newest default), StorageObjectInUseProtection (the finalizers, and the
// protection controllers that lift them once nothing uses the claim, volume or attributes class),
// PersistentVolumeClaimResize, RuntimeClass, DefaultIngressClass, CertificateApproval and
// CertificateSigning (the signers verbs, the domain wildcard), AlwaysPullImages when enabled;
// the two toleration-seconds flags of a real hearth process.
// A second server with those plugins disabled (and other toleration seconds) shows none of their
// effects. Every refusal is kube's Status, and leaves nothing behind.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { webcrypto } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, KUBECTL, type TestServer } from '../../helpers/server.ts';
import { requester, dig, type Credentials, type IdentityResponse, type Json } from '../../helpers/identities.ts';
import { x509 } from '../../../server/pki/certificates.ts';
import { adminClient, runHearth, startHearthProcess, stopHearthProcess } from '../../helpers/hearth-process.ts';

const NS = 'team';
const dir = mkdtempSync(join(tmpdir(), 'hearth-builtin-admission-'));
const tokenFile = join(dir, 'tokens.csv');
writeFileSync(tokenFile, 'dev-token,dev,dev-uid\n');
const caFile = join(dir, 'ca.crt');
const emptyKubeconfig = join(dir, 'empty-kubeconfig');
writeFileSync(emptyKubeconfig, 'apiVersion: v1\nkind: Config\n');
const DEV: Credentials = { token: 'dev-token' };
let DEPLOYER: Credentials;

/** The plugins this file is about (all on by default but AlwaysPullImages). */
const PLUGINS = ['Priority', 'DefaultTolerationSeconds', 'TaintNodesByCondition', 'DefaultStorageClass', 'StorageObjectInUseProtection', 'PersistentVolumeClaimResize', 'RuntimeClass', 'DefaultIngressClass', 'CertificateApproval', 'CertificateSigning'];

let s: TestServer;
let off: TestServer;
before(async () => {
  [s, off] = await Promise.all([
    startTestServer({ options: { tokenAuthFile: tokenFile, authorizationModes: ['RBAC'], enableAdmissionPlugins: ['AlwaysPullImages'] } }),
    // All but DefaultTolerationSeconds off; it with other seconds, as its two flags give them.
    startTestServer({ options: { tokenAuthFile: tokenFile, authorizationModes: ['RBAC'], disableAdmissionPlugins: PLUGINS.filter((p) => p !== 'DefaultTolerationSeconds'), defaultNotReadyTolerationSeconds: 60, defaultUnreachableTolerationSeconds: 120 } }),
  ]);
  writeFileSync(caFile, s.pki.caCertPem);
  for (const server of [s, off]) {
    await admin(server, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    await admin(server, 'POST', `/api/v1/namespaces/${NS}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'deployer' } });
    await admin(server, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'edit' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' },
      subjects: [
        { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'dev' },
        { kind: 'ServiceAccount', name: 'deployer', namespace: NS },
      ],
    });
    // dev may write CSRs and their approval and status, but no signer verbs (those come later).
    await admin(server, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'csr-writer' },
      rules: [{ apiGroups: ['certificates.k8s.io'], resources: ['certificatesigningrequests', 'certificatesigningrequests/approval', 'certificatesigningrequests/status'], verbs: ['create', 'get', 'list', 'update', 'patch'] }],
    });
    await admin(server, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'csr-writer' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'csr-writer' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'dev' }],
    });
  }
  const token = await s.kubectl(['create', 'token', 'deployer', '-n', NS]);
  assert.equal(token.code, 0, token.stderr);
  DEPLOYER = { token: token.stdout.trim() };
});
after(async () => {
  await Promise.all([s?.stop(), off?.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

const as = requester(() => s);
const asOff = requester(() => off);

async function admin(server: TestServer, method: string, path: string, body?: unknown, contentType?: string): Promise<Json> {
  const r = await server.request(method, path, { body, ...(contentType ? { headers: { 'content-type': contentType } } : {}) });
  assert.ok(r.status < 300, `${method} ${path}: ${r.status} ${r.text}`);
  return r.json();
}

function kubectlAs(token: string, args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(KUBECTL, ['--server', s.url, '--certificate-authority', caFile, '--token', token, ...args], { timeout: 60_000, env: { ...process.env, KUBECONFIG: emptyKubeconfig } }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    if (input !== undefined) child.stdin!.end(input);
  });
}

function created(r: IdentityResponse): Json {
  assert.equal(r.status, 201, r.text);
  return r.json;
}

/** A 403 Status with kube's reason and this message. */
function forbidden(r: IdentityResponse, message: string): void {
  assert.equal(r.status, 403, r.text);
  assert.equal(r.json.kind, 'Status');
  assert.equal(r.json.reason, 'Forbidden');
  assert.equal(r.json.message, message);
}

const pod = (name: string, spec: Json = {}) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'nginx' }], ...spec } });
const PODS = `/api/v1/namespaces/${NS}/pods`;
const PVCS = `/api/v1/namespaces/${NS}/persistentvolumeclaims`;
const claim = (name: string, spec: Json = {}) => ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...spec } });

/** Polls (bounded) until check passes on a GET of path as the admin; returns the last answer. */
async function eventually(server: TestServer, path: string, check: (status: number, body: Json) => boolean): Promise<void> {
  let last = '';
  for (let i = 0; i < 200; i++) {
    const r = await server.request('GET', path);
    if (check(r.status, r.json())) return;
    last = `${r.status} ${r.text}`;
    await new Promise((res) => setTimeout(res, 25));
  }
  assert.fail(`${path} never got there: ${last}`);
}

test('Priority: the system classes exist; a pod gets its class value, the default one, or 0; kube refusals', async () => {
  const pcs = await s.kubectl(['get', 'priorityclasses', '-o', 'jsonpath={range .items[*]}{.metadata.name}={.value},{.preemptionPolicy};{end}']);
  assert.equal(pcs.code, 0, pcs.stderr);
  assert.equal(pcs.stdout, 'system-cluster-critical=2000000000,PreemptLowerPriority;system-node-critical=2000001000,PreemptLowerPriority;');
  // No default class: priority 0.
  const plain = created(await as(DEV, 'POST', PODS, pod('plain')));
  assert.deepEqual([dig(plain, 'spec', 'priority'), dig(plain, 'spec', 'preemptionPolicy'), dig(plain, 'spec', 'priorityClassName')], [0, 'PreemptLowerPriority', undefined]);
  const critical = created(await as(DEPLOYER, 'POST', PODS, pod('critical', { priorityClassName: 'system-node-critical' })));
  assert.equal(dig(critical, 'spec', 'priority'), 2000001000);

  forbidden(await as(DEV, 'POST', PODS, pod('ghost-class', { priorityClassName: 'ghost' })), 'pods "ghost-class" is forbidden: no PriorityClass with name ghost was found');
  const k = await kubectlAs('dev-token', ['create', '-n', NS, '-f', '-'], JSON.stringify(pod('ghost-class', { priorityClassName: 'ghost' })));
  assert.notEqual(k.code, 0);
  assert.match(k.stderr, /Error from server \(Forbidden\).*pods "ghost-class" is forbidden: no PriorityClass with name ghost was found/);
  forbidden(
    await as(DEPLOYER, 'POST', PODS, pod('own-priority', { priority: 7 })),
    'pods "own-priority" is forbidden: the integer value of priority (7) must not be provided in pod spec; priority admission controller computed 0 from the given PriorityClass name',
  );
  for (const name of ['ghost-class', 'own-priority']) assert.equal((await s.request('GET', `${PODS}/${name}`)).status, 404);

  // One global default: a pod without a class gets it, a second default is refused.
  await admin(s, 'POST', '/apis/scheduling.k8s.io/v1/priorityclasses', { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'batch' }, value: 100, globalDefault: true, preemptionPolicy: 'Never' });
  const second = await s.request('POST', '/apis/scheduling.k8s.io/v1/priorityclasses', { body: { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'second' }, value: 5, globalDefault: true } });
  assert.equal(second.status, 403, second.text);
  assert.equal(second.json().message, 'priorityclasses.scheduling.k8s.io "second" is forbidden: PriorityClass batch is already marked as default. Only one default can exist');
  assert.equal((await s.request('GET', '/apis/scheduling.k8s.io/v1/priorityclasses/second')).status, 404);
  const defaulted = created(await as(DEPLOYER, 'POST', PODS, pod('defaulted')));
  assert.deepEqual([dig(defaulted, 'spec', 'priorityClassName'), dig(defaulted, 'spec', 'priority'), dig(defaulted, 'spec', 'preemptionPolicy')], ['batch', 100, 'Never']);
  // A PUT that leaves the resolved priority out keeps it (as kube's plugin does on updates).
  const put = await as(DEPLOYER, 'PUT', `${PODS}/defaulted`, { ...defaulted, spec: { ...(defaulted.spec as Json), priority: undefined, preemptionPolicy: undefined }, metadata: { ...(defaulted.metadata as Json), labels: { a: 'b' } } });
  assert.equal(put.status, 200, put.text);
  assert.equal(dig(put.json, 'spec', 'priority'), 100);
  await admin(s, 'DELETE', '/apis/scheduling.k8s.io/v1/priorityclasses/batch');
});

test('DefaultTolerationSeconds and TaintNodesByCondition: a pod tolerates a failed node for 300 s; a new Node is not-ready', async () => {
  const p = created(await as(DEPLOYER, 'POST', PODS, pod('tolerant', { tolerations: [{ key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' }] })));
  assert.deepEqual(dig(p, 'spec', 'tolerations'), [
    { key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
  ]);
  const own = created(await as(DEV, 'POST', PODS, pod('own-tolerations', { tolerations: [{ operator: 'Exists' }] })));
  assert.deepEqual(dig(own, 'spec', 'tolerations'), [{ operator: 'Exists' }]);
  const node = await s.kubectl(['create', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'worker-1' } }) });
  assert.equal(node.code, 0, node.stderr);
  const taints = await s.kubectl(['get', 'node', 'worker-1', '-o', 'jsonpath={.spec.taints}']);
  assert.deepEqual(JSON.parse(taints.stdout), [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }]);
});

test('DefaultStorageClass, StorageObjectInUseProtection and PersistentVolumeClaimResize', async () => {
  const SCS = '/apis/storage.k8s.io/v1/storageclasses';
  const sc = (name: string, extra: Json = {}) => ({ apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name, annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } }, provisioner: 'example.com/disk', ...extra });
  await admin(s, 'POST', SCS, sc('older'));
  // creationTimestamp has seconds: the newer default is made a second later.
  await new Promise((res) => setTimeout(res, 1100));
  await admin(s, 'POST', SCS, sc('newer', { allowVolumeExpansion: true }));
  await admin(s, 'POST', SCS, { ...sc('fixed'), metadata: { name: 'fixed' } });

  const plain = created(await as(DEV, 'POST', PVCS, claim('plain')));
  assert.equal(dig(plain, 'spec', 'storageClassName'), 'newer');
  assert.deepEqual(dig(plain, 'metadata', 'finalizers'), ['kubernetes.io/pvc-protection']);
  const none = created(await as(DEPLOYER, 'POST', PVCS, claim('no-class', { storageClassName: '' })));
  assert.equal(dig(none, 'spec', 'storageClassName'), '');
  const pv = await admin(s, 'POST', '/api/v1/persistentvolumes', { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pv-1' }, spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/tmp/pv-1' } } });
  assert.deepEqual(dig(pv, 'metadata', 'finalizers'), ['kubernetes.io/pv-protection']);

  // Growing a Bound claim: only when its class allows it. (A Pending claim's request is immutable: validation refuses that first.)
  const grow = (name: string) => as(DEV, 'PATCH', `${PVCS}/${name}`, { spec: { resources: { requests: { storage: '2Gi' } } } }, 'application/merge-patch+json');
  created(await as(DEV, 'POST', PVCS, claim('fixed-claim', { storageClassName: 'fixed' })));
  for (const name of ['plain', 'fixed-claim']) await admin(s, 'PATCH', `${PVCS}/${name}/status`, { status: { phase: 'Bound', capacity: { storage: '1Gi' } } }, 'application/merge-patch+json');
  const refused = await kubectlAs('dev-token', ['patch', 'pvc', 'fixed-claim', '-n', NS, '--type=merge', '-p', '{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}']);
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /persistentvolumeclaims "fixed-claim" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize/);
  assert.equal(dig((await s.request('GET', `${PVCS}/fixed-claim`)).json(), 'spec', 'resources', 'requests', 'storage'), '1Gi');
  const grown = await grow('plain');
  assert.equal(grown.status, 200, grown.text);

  // A claim used by a scheduled pod stays while the pod does; then the controller lets it go.
  created(await as(DEV, 'POST', PODS, pod('user', { nodeName: 'worker-1', volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'plain' } }] })));
  assert.equal((await as(DEV, 'DELETE', `${PVCS}/plain`)).status, 200);
  const held = (await s.request('GET', `${PVCS}/plain`)).json();
  assert.ok(held.metadata.deletionTimestamp, 'the claim is being deleted');
  assert.deepEqual(held.metadata.finalizers, ['kubernetes.io/pvc-protection']);
  assert.equal((await as(DEV, 'DELETE', `${PODS}/user?gracePeriodSeconds=0`)).status, 200);
  await eventually(s, `${PVCS}/plain`, (status) => status === 404);
  // An unused claim and an unbound volume go at once (once the controller has seen them).
  assert.equal((await as(DEPLOYER, 'DELETE', `${PVCS}/no-class`)).status, 200);
  await eventually(s, `${PVCS}/no-class`, (status) => status === 404);
  await admin(s, 'DELETE', '/api/v1/persistentvolumes/pv-1');
  await eventually(s, '/api/v1/persistentvolumes/pv-1', (status) => status === 404);

  // A VolumeAttributesClass stays while a claim names it.
  const VACS = '/apis/storage.k8s.io/v1/volumeattributesclasses';
  const vac = await admin(s, 'POST', VACS, { apiVersion: 'storage.k8s.io/v1', kind: 'VolumeAttributesClass', metadata: { name: 'gold' }, driverName: 'example.com/disk', parameters: { iops: '1000' } });
  assert.deepEqual(dig(vac, 'metadata', 'finalizers'), ['kubernetes.io/vac-protection']);
  created(await as(DEV, 'POST', PVCS, claim('golden', { storageClassName: '', volumeAttributesClassName: 'gold' })));
  await admin(s, 'DELETE', `${VACS}/gold`);
  assert.ok(dig((await s.request('GET', `${VACS}/gold`)).json(), 'metadata', 'deletionTimestamp'), 'the class is being deleted');
  assert.equal((await as(DEV, 'DELETE', `${PVCS}/golden`)).status, 200);
  await eventually(s, `${VACS}/gold`, (status) => status === 404);
});

test('RuntimeClass: overhead and scheduling from the class; a missing class or a conflict is refused', async () => {
  await admin(s, 'POST', '/apis/node.k8s.io/v1/runtimeclasses', {
    apiVersion: 'node.k8s.io/v1',
    kind: 'RuntimeClass',
    metadata: { name: 'kata' },
    handler: 'kata',
    overhead: { podFixed: { cpu: '250m', memory: '120Mi' } },
    scheduling: { nodeSelector: { sandbox: 'kata' }, tolerations: [{ key: 'sandbox', operator: 'Exists', effect: 'NoSchedule' }] },
  });
  const p = created(await as(DEPLOYER, 'POST', PODS, pod('sandboxed', { runtimeClassName: 'kata', nodeSelector: { zone: 'a' } })));
  assert.deepEqual(dig(p, 'spec', 'overhead'), { cpu: '250m', memory: '120Mi' });
  assert.deepEqual(dig(p, 'spec', 'nodeSelector'), { sandbox: 'kata', zone: 'a' });
  // (DefaultTolerationSeconds runs before RuntimeClass in kube's order: the class's come after)
  assert.deepEqual((dig(p, 'spec', 'tolerations') as Json[]).map((t) => t.key), ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable', 'sandbox']);
  forbidden(await as(DEV, 'POST', PODS, pod('no-runtime', { runtimeClassName: 'gvisor' })), 'pods "no-runtime" is forbidden: pod rejected: RuntimeClass "gvisor" not found');
  forbidden(
    await as(DEV, 'POST', PODS, pod('conflicting', { runtimeClassName: 'kata', nodeSelector: { sandbox: 'runc' } })),
    'pods "conflicting" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = kata; pod.spec.nodeSelector[sandbox] = runc',
  );
  forbidden(await as(DEV, 'POST', PODS, pod('overhead', { overhead: { cpu: '1' } })), 'pods "overhead" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead');
  for (const name of ['no-runtime', 'conflicting', 'overhead']) assert.equal((await s.request('GET', `${PODS}/${name}`)).status, 404);
});

test('DefaultIngressClass: an Ingress without a class gets the default one', async () => {
  await admin(s, 'POST', '/apis/networking.k8s.io/v1/ingressclasses', { apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', metadata: { name: 'nginx', annotations: { 'ingressclass.kubernetes.io/is-default-class': 'true' } }, spec: { controller: 'k8s.io/ingress-nginx' } });
  const ingress = (name: string, extra: Json = {}) => ({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name, ...extra }, spec: { defaultBackend: { service: { name: 'web', port: { number: 80 } } } } });
  const INGRESSES = `/apis/networking.k8s.io/v1/namespaces/${NS}/ingresses`;
  assert.equal(dig(created(await as(DEV, 'POST', INGRESSES, ingress('web'))), 'spec', 'ingressClassName'), 'nginx');
  // The old annotation names a class too: left alone.
  assert.equal(dig(created(await as(DEPLOYER, 'POST', INGRESSES, ingress('annotated', { annotations: { 'kubernetes.io/ingress.class': 'traefik' } }))), 'spec', 'ingressClassName'), undefined);
});

/** A PKCS#10 request for CN=<cn>, base64 as spec.request holds it. */
async function csrRequest(cn: string): Promise<string> {
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
  const keys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as CryptoKeyPair;
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({ name: `CN=${cn}`, keys, signingAlgorithm: alg });
  return Buffer.from(csr.toString('pem')).toString('base64');
}

test('CertificateApproval and CertificateSigning: approve and sign need the signers verbs (or the domain wildcard)', async () => {
  const CSRS = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
  const body = { apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name: 'widget' }, spec: { request: await csrRequest('widget'), signerName: 'example.com/widgets', usages: ['client auth'] } };
  created(await as(DEV, 'POST', CSRS, body));
  const denied = await kubectlAs('dev-token', ['certificate', 'approve', 'widget']);
  assert.notEqual(denied.code, 0);
  assert.match(denied.stderr, /certificatesigningrequests\.certificates\.k8s\.io "widget" is forbidden: user not permitted to approve requests with signerName "example\.com\/widgets"/);
  assert.equal(dig((await s.request('GET', `${CSRS}/widget`)).json(), 'status', 'conditions'), undefined);

  // approve on example.com/* is enough for example.com/widgets.
  await admin(s, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'widget-approver' }, rules: [{ apiGroups: ['certificates.k8s.io'], resources: ['signers'], resourceNames: ['example.com/*'], verbs: ['approve'] }] });
  await admin(s, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'widget-approver' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'widget-approver' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'dev' }] });
  const approved = await kubectlAs('dev-token', ['certificate', 'approve', 'widget']);
  assert.equal(approved.code, 0, approved.stderr);

  // Issuing it needs sign: dev has none, the admin (system:masters) has every verb.
  const csr = (await s.request('GET', `${CSRS}/widget`)).json();
  const withCert = { ...csr, status: { ...csr.status, certificate: Buffer.from(s.pki.caCertPem).toString('base64') } };
  forbidden(await as(DEV, 'PUT', `${CSRS}/widget/status`, withCert), 'certificatesigningrequests.certificates.k8s.io "widget" is forbidden: user not permitted to sign requests with signerName "example.com/widgets"');
  assert.equal(dig((await s.request('GET', `${CSRS}/widget`)).json(), 'status', 'certificate'), undefined);
  // A status write that changes neither the certificate nor the conditions is not signing.
  const unchanged = await as(DEV, 'PUT', `${CSRS}/widget/status`, csr);
  assert.equal(unchanged.status, 200, unchanged.text);
});

test('AlwaysPullImages (enabled): every container pulls Always', async () => {
  const p = created(await as(DEV, 'POST', PODS, pod('pulls', { initContainers: [{ name: 'init', image: 'busybox', imagePullPolicy: 'IfNotPresent' }], containers: [{ name: 'c', image: 'nginx', imagePullPolicy: 'Never' }] })));
  assert.equal(dig(p, 'spec', 'initContainers', 0, 'imagePullPolicy'), 'Always');
  assert.equal(dig(p, 'spec', 'containers', 0, 'imagePullPolicy'), 'Always');
});

test('with the plugins disabled none of this happens; DefaultTolerationSeconds takes its two flags', async () => {
  const p = created(await asOff(DEV, 'POST', PODS, pod('plain', { nodeSelector: { a: 'b' }, runtimeClassName: 'missing', containers: [{ name: 'c', image: 'nginx', imagePullPolicy: 'IfNotPresent' }] })));
  assert.equal(dig(p, 'spec', 'priority'), undefined);
  assert.equal(dig(p, 'spec', 'containers', 0, 'imagePullPolicy'), 'IfNotPresent');
  assert.deepEqual(dig(p, 'spec', 'tolerations'), [
    { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 },
    { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 120 },
  ]);
  // (the system PriorityClasses are the scheduling storage's, not the plugin's)
  assert.equal((await off.request('GET', '/apis/scheduling.k8s.io/v1/priorityclasses/system-node-critical')).status, 200);
  assert.equal(dig(created(await asOff(DEV, 'POST', PODS, pod('own-priority', { priority: 7 }))), 'spec', 'priority'), 7);
  const node = await admin(off, 'POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'bare' } });
  assert.equal(dig(node, 'spec', 'taints'), undefined);
  await admin(off, 'POST', '/apis/storage.k8s.io/v1/storageclasses', { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'std', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } }, provisioner: 'example.com/disk' });
  const c = created(await asOff(DEV, 'POST', PVCS, claim('data')));
  assert.equal(dig(c, 'spec', 'storageClassName'), undefined);
  assert.equal(dig(c, 'metadata', 'finalizers'), undefined);
  await admin(off, 'PATCH', `${PVCS}/data/status`, { status: { phase: 'Bound', capacity: { storage: '1Gi' } } }, 'application/merge-patch+json');
  // (the class is set once, and growing a claim of no class is no business of a disabled plugin)
  const grown = await asOff(DEV, 'PATCH', `${PVCS}/data`, { spec: { resources: { requests: { storage: '2Gi' } } } }, 'application/merge-patch+json');
  assert.equal(grown.status, 200, grown.text);
  const CSRS = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
  const csr = created(await asOff(DEV, 'POST', CSRS, { apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name: 'w' }, spec: { request: await csrRequest('w'), signerName: 'example.com/widgets', usages: ['client auth'] } }));
  const approval = { ...csr, status: { conditions: [{ type: 'Approved', status: 'True', reason: 'Test', message: 'ok' }] } };
  const approved = await asOff(DEV, 'PUT', `${CSRS}/w/approval`, approval);
  assert.equal(approved.status, 200, approved.text);
});

test('hearth takes --default-not-ready-toleration-seconds and --default-unreachable-toleration-seconds, as kube-apiserver does', async () => {
  const refused = await runHearth(['--default-unreachable-toleration-seconds', '5m']);
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /invalid argument "5m" for "--default-unreachable-toleration-seconds" flag: strconv\.ParseInt: parsing "5m": invalid syntax/);
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-toleration-flags-'));
  const p = await startHearthProcess(dataDir, ['--default-not-ready-toleration-seconds', '30', '--default-unreachable-toleration-seconds', '45']);
  try {
    const r = await adminClient(dataDir)('POST', `${p.url}/api/v1/namespaces/default/pods`, pod('flagged'));
    assert.equal(r.status, 201, JSON.stringify(r.json));
    assert.deepEqual(
      (r.json.spec.tolerations as Json[]).map((t) => [t.key, t.tolerationSeconds]),
      [
        ['node.kubernetes.io/not-ready', 30],
        ['node.kubernetes.io/unreachable', 45],
      ],
    );
  } finally {
    await stopHearthProcess(p);
    rmSync(dataDir, { recursive: true, force: true });
  }
});
