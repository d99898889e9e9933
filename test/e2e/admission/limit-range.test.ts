// LimitRanger through HTTPS, as kube-apiserver's plugin answers: a namespace's LimitRange gives a
// pod's containers their default requests and limits (and says so in the
// `kubernetes.io/limit-ranger` annotation), and refuses what is outside its min, max and
// limit/request ratio per Container and per Pod, and a claim's storage outside its bounds, with
// kube's 403 and messages word for word; a refused write stores nothing; a dry run is defaulted
// too. As the admin, a namespaced user (a client certificate bound to `edit`) with kubectl, and
// a service account's token.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, KUBECTL, type TestServer } from '../../helpers/server.ts';
import { requester, dig, type Credentials, type Json } from '../../helpers/identities.ts';
import { issueClientCertificate } from '../../../server/pki/certificates.ts';
import { renderKubeconfig } from '../../../server/pki/kubeconfig.ts';

const NS = 'limits';
const dir = mkdtempSync(join(tmpdir(), 'hearth-limit-range-'));
let s: TestServer;
let dev: Credentials;
let devKubeconfig: string;
let robot: Credentials;
const requestAs = requester(() => s);

async function ok(method: string, path: string, body?: unknown): Promise<Json> {
  const r = await s.request(method, path, { body });
  assert.ok(r.status < 300, `${method} ${path}: ${r.status} ${r.text}`);
  return r.json() as Json;
}

async function until<T>(what: string, fn: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const v = await fn();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

before(async () => {
  s = await startTestServer();
  await ok('POST', '/api/v1/namespaces', { metadata: { name: NS } });
  await ok('POST', `/api/v1/namespaces/${NS}/limitranges`, {
    metadata: { name: 'bounds' },
    spec: {
      limits: [
        { type: 'Container', default: { cpu: '500m', memory: '256Mi' }, defaultRequest: { cpu: '100m' }, max: { cpu: '1' }, min: { memory: '64Mi' }, maxLimitRequestRatio: { cpu: '8' } },
        { type: 'Pod', max: { memory: '1Gi' } },
        { type: 'PersistentVolumeClaim', min: { storage: '1Gi' }, max: { storage: '5Gi' } },
      ],
    },
  });
  // dev: a client certificate with `edit` in the namespace; robot: a service account with the same.
  const issued = await issueClientCertificate(s.pki, { commonName: 'dev', organizations: ['team'] });
  dev = { cert: issued.certPem, key: issued.keyPem! };
  devKubeconfig = join(dir, 'dev.kubeconfig');
  writeFileSync(devKubeconfig, renderKubeconfig({ server: s.url, caCertPem: s.pki.caCertPem, clientCertPem: dev.cert, clientKeyPem: dev.key, userName: 'dev', namespace: NS }));
  await ok('POST', `/api/v1/namespaces/${NS}/serviceaccounts`, { metadata: { name: 'robot' } });
  await ok('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, {
    metadata: { name: 'editors' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' },
    subjects: [
      { kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'dev' },
      { kind: 'ServiceAccount', name: 'robot', namespace: NS },
    ],
  });
  const token = await ok('POST', `/api/v1/namespaces/${NS}/serviceaccounts/robot/token`, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences: [] } });
  robot = { token: dig(token, 'status', 'token') as string };
  // Pods need the namespace's default ServiceAccount (the ServiceAccount plugin).
  await until('the default ServiceAccount', async () => ((await s.request('GET', `/api/v1/namespaces/${NS}/serviceaccounts/default`)).status === 200 ? true : undefined));
});

after(async () => {
  await s?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const pod = (name: string, containers: Json[]) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers } });
const container = (name: string, resources?: Json) => ({ name, image: 'busybox', ...(resources ? { resources } : {}) });

function kubectl(args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(KUBECTL, ['--kubeconfig', devKubeconfig, ...args], { timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
    if (input !== undefined) child.stdin!.end(input);
  });
}

async function absent(resource: string, name: string): Promise<void> {
  assert.equal((await s.request('GET', `/api/v1/namespaces/${NS}/${resource}/${name}`)).status, 404, `${resource}/${name} was stored`);
}

test('kubectl create as a namespaced user: the pod gets the LimitRange defaults and kube\'s annotation', async () => {
  const r = await kubectl(['create', '-f', '-', '-o', 'json'], JSON.stringify(pod('defaulted', [container('app'), container('side', { requests: { cpu: '200m' }, limits: { memory: '128Mi' } })])));
  assert.equal(r.code, 0, r.stderr);
  const created = JSON.parse(r.stdout) as Json;
  assert.deepEqual(dig(created, 'spec', 'containers', 0, 'resources'), { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '100m', memory: '256Mi' } });
  // What the container states is kept; only what it lacks is defaulted.
  assert.deepEqual(dig(created, 'spec', 'containers', 1, 'resources'), { limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: '200m', memory: '128Mi' } });
  assert.equal(
    dig(created, 'metadata', 'annotations', 'kubernetes.io/limit-ranger'),
    'LimitRanger plugin set: cpu, memory request for container app; cpu, memory limit for container app; cpu limit for container side',
  );
  // Its QoS class is the defaulted pod's, as kube computes it after mutating admission.
  assert.equal(dig(created, 'status', 'qosClass'), 'Burstable');
  // As stored.
  const stored = await ok('GET', `/api/v1/namespaces/${NS}/pods/defaulted`);
  assert.deepEqual(dig(stored, 'spec', 'containers', 0, 'resources', 'limits'), { cpu: '500m', memory: '256Mi' });
});

test('a container over the max is refused with kube\'s 403 and message (kubectl shows it), and nothing is stored', async () => {
  const body = pod('too-big', [container('app', { limits: { cpu: '2' } })]);
  const r = await requestAs(dev, 'POST', `/api/v1/namespaces/${NS}/pods`, body);
  assert.equal(r.status, 403, r.text);
  assert.equal(r.json.reason, 'Forbidden');
  assert.equal(r.json.message, 'pods "too-big" is forbidden: maximum cpu usage per Container is 1, but limit is 2');
  assert.deepEqual(r.json.details, { name: 'too-big', kind: 'pods' });
  const k = await kubectl(['create', '-f', '-'], JSON.stringify(body));
  assert.notEqual(k.code, 0);
  assert.match(k.stderr, /Error from server \(Forbidden\): error when creating "STDIN": pods "too-big" is forbidden: maximum cpu usage per Container is 1, but limit is 2/);
  await absent('pods', 'too-big');
});

test('min, ratio and several breaches at once: kube\'s messages, aggregated as kube aggregates them', async () => {
  const small = await requestAs(robot, 'POST', `/api/v1/namespaces/${NS}/pods`, pod('small', [container('app', { requests: { memory: '32Mi' }, limits: { memory: '32Mi' } })]));
  assert.equal(small.status, 403, small.text);
  assert.equal(small.json.message, 'pods "small" is forbidden: minimum memory usage per Container is 64Mi, but request is 32Mi');

  const ratio = await requestAs(robot, 'POST', `/api/v1/namespaces/${NS}/pods`, pod('spiky', [container('app', { requests: { cpu: '100m' }, limits: { cpu: '1' } })]));
  assert.equal(ratio.status, 403, ratio.text);
  assert.equal(ratio.json.message, 'pods "spiky" is forbidden: cpu max limit to request ratio per Container is 8, but provided ratio is 10.000000');

  const both = await requestAs(dev, 'POST', `/api/v1/namespaces/${NS}/pods`, pod('both', [container('app', { requests: { cpu: '100m', memory: '32Mi' }, limits: { cpu: '2', memory: '32Mi' } })]));
  assert.equal(both.status, 403, both.text);
  assert.equal(
    both.json.message,
    'pods "both" is forbidden: [minimum memory usage per Container is 64Mi, but request is 32Mi, maximum cpu usage per Container is 1, but limit is 2, cpu max limit to request ratio per Container is 8, but provided ratio is 20.000000]',
  );
  for (const name of ['small', 'spiky', 'both']) await absent('pods', name);
});

test('the Pod limit bounds the sum of the containers', async () => {
  const r = await requestAs(dev, 'POST', `/api/v1/namespaces/${NS}/pods`, pod('wide', [container('a', { limits: { memory: '768Mi' } }), container('b', { limits: { memory: '768Mi' } })]));
  assert.equal(r.status, 403, r.text);
  assert.equal(r.json.message, 'pods "wide" is forbidden: maximum memory usage per Pod is 1Gi, but limit is 1536Mi');
  await absent('pods', 'wide');
});

test('a pod from generateName is refused under its generated name (LimitRanger refuses in the validating phase, after the name is made)', async () => {
  const r = await requestAs(dev, 'POST', `/api/v1/namespaces/${NS}/pods`, { apiVersion: 'v1', kind: 'Pod', metadata: { generateName: 'gen-' }, spec: { containers: [container('app', { limits: { cpu: '3' } })] } });
  assert.equal(r.status, 403, r.text);
  assert.match(String(r.json.message), /^pods "gen-[a-z0-9]{5}" is forbidden: maximum cpu usage per Container is 1, but limit is 3$/);
});

test('a claim\'s storage outside the PersistentVolumeClaim bounds is refused; one it already held is not checked again', async () => {
  const claim = (name: string, storage: string) => ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } } });
  const big = await requestAs(dev, 'POST', `/api/v1/namespaces/${NS}/persistentvolumeclaims`, claim('big', '10Gi'));
  assert.equal(big.status, 403, big.text);
  assert.equal(big.json.message, 'persistentvolumeclaims "big" is forbidden: maximum storage usage per PersistentVolumeClaim is 5Gi, but request is 10Gi');
  await absent('persistentvolumeclaims', 'big');
  const tiny = await requestAs(dev, 'POST', `/api/v1/namespaces/${NS}/persistentvolumeclaims`, claim('tiny', '100Mi'));
  assert.equal(tiny.status, 403, tiny.text);
  assert.equal(tiny.json.message, 'persistentvolumeclaims "tiny" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 100Mi');
  const fine = await requestAs(dev, 'POST', `/api/v1/namespaces/${NS}/persistentvolumeclaims`, claim('fine', '2Gi'));
  assert.equal(fine.status, 201, fine.text);
  // Bounds tightened later: an update that leaves the request as it was passes (kube checks only a changed one).
  await ok('POST', `/api/v1/namespaces/${NS}/limitranges`, { metadata: { name: 'tighter' }, spec: { limits: [{ type: 'PersistentVolumeClaim', max: { storage: '1Gi' } }] } });
  try {
    const labelled = await requestAs(dev, 'PATCH', `/api/v1/namespaces/${NS}/persistentvolumeclaims/fine`, { metadata: { labels: { tier: 'db' } } }, 'application/merge-patch+json');
    assert.equal(labelled.status, 200, labelled.text);
    const another = await requestAs(dev, 'POST', `/api/v1/namespaces/${NS}/persistentvolumeclaims`, claim('another', '2Gi'));
    assert.equal(another.status, 403, another.text);
    assert.equal(another.json.message, 'persistentvolumeclaims "another" is forbidden: maximum storage usage per PersistentVolumeClaim is 1Gi, but request is 2Gi');
  } finally {
    await ok('DELETE', `/api/v1/namespaces/${NS}/limitranges/tighter`);
  }
});

test('a dry run is defaulted as a create is, and stores nothing', async () => {
  const r = await requestAs(robot, 'POST', `/api/v1/namespaces/${NS}/pods?dryRun=All`, pod('dry', [container('app')]));
  assert.equal(r.status, 201, r.text);
  assert.deepEqual(dig(r.json, 'spec', 'containers', 0, 'resources', 'limits'), { cpu: '500m', memory: '256Mi' });
  assert.equal(dig(r.json, 'metadata', 'annotations', 'kubernetes.io/limit-ranger'), 'LimitRanger plugin set: cpu, memory request for container app; cpu, memory limit for container app');
  await absent('pods', 'dry');
});

test('a namespace without LimitRanges is left alone; a LimitRange applies from its creation on', async () => {
  await ok('POST', '/api/v1/namespaces', { metadata: { name: 'free' } });
  await until('free/default', async () => ((await s.request('GET', '/api/v1/namespaces/free/serviceaccounts/default')).status === 200 ? true : undefined));
  const plain = await ok('POST', '/api/v1/namespaces/free/pods', pod('plain', [container('app')]));
  assert.equal(dig(plain, 'spec', 'containers', 0, 'resources', 'limits'), undefined);
  assert.equal(dig(plain, 'metadata', 'annotations'), undefined);
  await ok('POST', '/api/v1/namespaces/free/limitranges', { metadata: { name: 'late' }, spec: { limits: [{ type: 'Container', defaultRequest: { memory: '100Mi' } }] } });
  const later = await ok('POST', '/api/v1/namespaces/free/pods', pod('later', [container('app')]));
  assert.deepEqual(dig(later, 'spec', 'containers', 0, 'resources'), { requests: { memory: '100Mi' } });
  assert.equal(dig(later, 'metadata', 'annotations', 'kubernetes.io/limit-ranger'), 'LimitRanger plugin set: memory request for container app');
});
