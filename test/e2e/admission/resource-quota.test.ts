// ResourceQuota through HTTPS, as kube-apiserver and kube-controller-manager answer: the quota
// controller fills a new quota's status (hard from spec, used measured from the namespace);
// admission refuses what would exceed it with kube's "exceeded quota" message and 403, asks
// containers for the cpu a quota counts ("must specify"), charges status.used as it admits (so
// the count is right at once), and charges nothing for a dry run; a delete gives the quota back
// (the controller measures again). Object counts of any resource (count/deployments.apps),
// services and their node ports, and scopes (BestEffort / NotBestEffort, Terminating). As the
// admin, a namespaced user (a client certificate bound to `edit`) with kubectl, and a service
// account's token.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, KUBECTL, type TestServer } from '../../helpers/server.ts';
import { requester, dig, type Credentials, type Json } from '../../helpers/identities.ts';
import { installRuleCrd, ruleCrd } from '../../helpers/cel-crd.ts';
import { issueClientCertificate } from '../../../server/pki/certificates.ts';
import { renderKubeconfig } from '../../../server/pki/kubeconfig.ts';

const NS = 'quota';
const dir = mkdtempSync(join(tmpdir(), 'hearth-resource-quota-'));
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

/** Polls (bounded) until fn gives something other than undefined. */
async function until<T>(what: string, fn: () => Promise<T | undefined>): Promise<T> {
  let last: unknown;
  for (let i = 0; i < 400; i++) {
    const v = await fn().catch((e: unknown) => ((last = e), undefined));
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
}

const quotaPath = (ns: string, name: string) => `/api/v1/namespaces/${ns}/resourcequotas/${name}`;

async function used(ns: string, name: string): Promise<Json | undefined> {
  return dig(await ok('GET', quotaPath(ns, name)), 'status', 'used') as Json | undefined;
}

/** Waits until the quota's status.used is exactly `want`. */
async function usedBecomes(ns: string, name: string, want: Json): Promise<void> {
  let seen: unknown;
  await until(`${ns}/${name} used ${JSON.stringify(want)} (last ${JSON.stringify(seen)})`, async () => {
    seen = await used(ns, name);
    try {
      assert.deepEqual(seen, want);
      return true;
    } catch {
      return undefined;
    }
  });
}

async function namespace(name: string): Promise<void> {
  await ok('POST', '/api/v1/namespaces', { metadata: { name } });
  await until(`${name}/default`, async () => ((await s.request('GET', `/api/v1/namespaces/${name}/serviceaccounts/default`)).status === 200 ? true : undefined));
}

before(async () => {
  s = await startTestServer();
  await namespace(NS);
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
  // The root CA ConfigMap is there before the quota, so the controller counts it.
  await until('kube-root-ca.crt', async () => ((await s.request('GET', `/api/v1/namespaces/${NS}/configmaps/kube-root-ca.crt`)).status === 200 ? true : undefined));
  await ok('POST', `/api/v1/namespaces/${NS}/resourcequotas`, {
    metadata: { name: 'q' },
    spec: { hard: { pods: '2', 'requests.cpu': '1', 'count/deployments.apps': '1', services: '5', 'services.nodeports': '1', configmaps: '10' } },
  });
});

after(async () => {
  await s?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const pod = (name: string, cpu?: string, extra: Json = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { ...extra, containers: [{ name: 'app', image: 'busybox', ...(cpu ? { resources: { requests: { cpu } } } : {}) }] },
});

function kubectl(args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(KUBECTL, ['--kubeconfig', devKubeconfig, ...args], { timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
    if (input !== undefined) child.stdin!.end(input);
  });
}

test('the controller fills a new quota\'s status: hard from the spec, used measured (0, and the ConfigMap already there)', async () => {
  await usedBecomes(NS, 'q', { configmaps: '1', 'count/deployments.apps': '0', pods: '0', 'requests.cpu': '0', services: '0', 'services.nodeports': '0' });
  const q = await ok('GET', quotaPath(NS, 'q'));
  assert.deepEqual(dig(q, 'status', 'hard'), { configmaps: '10', 'count/deployments.apps': '1', pods: '2', 'requests.cpu': '1', services: '5', 'services.nodeports': '1' });
  // kubectl describe shows what kube's shows.
  const d = await kubectl(['describe', 'quota', 'q']);
  assert.equal(d.code, 0, d.stderr);
  assert.match(d.stdout, /pods\s+0\s+2/);
  assert.match(d.stdout, /requests\.cpu\s+0\s+1/);
});

test('pods: must specify the cpu quota counts; charged at admission; exceeded with kube\'s message (kubectl too); a dry run charges nothing; a delete gives back', async () => {
  await usedBecomes(NS, 'q', { configmaps: '1', 'count/deployments.apps': '0', pods: '0', 'requests.cpu': '0', services: '0', 'services.nodeports': '0' });
  const bare = await requestAs(dev, 'POST', `/api/v1/namespaces/${NS}/pods`, pod('bare'));
  assert.equal(bare.status, 403, bare.text);
  assert.equal(bare.json.reason, 'Forbidden');
  assert.equal(bare.json.message, 'pods "bare" is forbidden: failed quota: q: must specify requests.cpu for: app');

  assert.equal((await requestAs(dev, 'POST', `/api/v1/namespaces/${NS}/pods`, pod('p1', '500m'))).status, 201);
  // Charged in admission: right at once, before the controller has looked.
  assert.deepEqual(await used(NS, 'q'), { configmaps: '1', 'count/deployments.apps': '0', pods: '1', 'requests.cpu': '500m', services: '0', 'services.nodeports': '0' });
  assert.equal((await requestAs(robot, 'POST', `/api/v1/namespaces/${NS}/pods`, pod('p2', '400m'))).status, 201);
  assert.deepEqual(await used(NS, 'q'), { configmaps: '1', 'count/deployments.apps': '0', pods: '2', 'requests.cpu': '900m', services: '0', 'services.nodeports': '0' });

  const third = await requestAs(robot, 'POST', `/api/v1/namespaces/${NS}/pods`, pod('p3', '50m'));
  assert.equal(third.status, 403, third.text);
  assert.equal(third.json.message, 'pods "p3" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2');
  assert.deepEqual(third.json.details, { name: 'p3', kind: 'pods' });
  const k = await kubectl(['create', '-f', '-'], JSON.stringify(pod('p3', '50m')));
  assert.notEqual(k.code, 0);
  assert.match(k.stderr, /Error from server \(Forbidden\): error when creating "STDIN": pods "p3" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2/);
  assert.equal((await s.request('GET', `/api/v1/namespaces/${NS}/pods/p3`)).status, 404);

  // A delete gives the quota back once the controller has measured again.
  const del = await kubectl(['delete', 'pod', 'p1', '--grace-period=0', '--force']);
  assert.equal(del.code, 0, del.stderr);
  await usedBecomes(NS, 'q', { configmaps: '1', 'count/deployments.apps': '0', pods: '1', 'requests.cpu': '400m', services: '0', 'services.nodeports': '0' });

  const greedy = await requestAs(dev, 'POST', `/api/v1/namespaces/${NS}/pods`, pod('greedy', '700m'));
  assert.equal(greedy.status, 403, greedy.text);
  assert.equal(greedy.json.message, 'pods "greedy" is forbidden: exceeded quota: q, requested: requests.cpu=700m, used: requests.cpu=400m, limited: requests.cpu=1');

  // A dry run is checked as a create is, and charges nothing.
  const dry = await requestAs(dev, 'POST', `/api/v1/namespaces/${NS}/pods?dryRun=All`, pod('dry', '100m'));
  assert.equal(dry.status, 201, dry.text);
  const dryOver = await requestAs(dev, 'POST', `/api/v1/namespaces/${NS}/pods?dryRun=All`, pod('dry', '2'));
  assert.equal(dryOver.status, 403, dryOver.text);
  assert.equal(dryOver.json.message, 'pods "dry" is forbidden: exceeded quota: q, requested: requests.cpu=2, used: requests.cpu=400m, limited: requests.cpu=1');
  assert.deepEqual(await used(NS, 'q'), { configmaps: '1', 'count/deployments.apps': '0', pods: '1', 'requests.cpu': '400m', services: '0', 'services.nodeports': '0' });
});

test('count/deployments.apps limits Deployments; services.nodeports counts a NodePort service\'s ports', async () => {
  const deployment = (name: string) => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: 'busybox' }] } } },
  });
  const first = await kubectl(['create', '-f', '-'], JSON.stringify(deployment('d1')));
  assert.equal(first.code, 0, first.stderr);
  const second = await requestAs(robot, 'POST', `/apis/apps/v1/namespaces/${NS}/deployments`, deployment('d2'));
  assert.equal(second.status, 403, second.text);
  assert.equal(second.json.message, 'deployments.apps "d2" is forbidden: exceeded quota: q, requested: count/deployments.apps=1, used: count/deployments.apps=1, limited: count/deployments.apps=1');
  assert.deepEqual(second.json.details, { name: 'd2', group: 'apps', kind: 'deployments' });

  const svc = (name: string, type: string) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { type, selector: { app: 'x' }, ports: [{ name: 'a', port: 80 }, { name: 'b', port: 81 }] } });
  const np = await requestAs(dev, 'POST', `/api/v1/namespaces/${NS}/services`, svc('np', 'NodePort'));
  assert.equal(np.status, 403, np.text);
  assert.equal(np.json.message, 'services "np" is forbidden: exceeded quota: q, requested: services.nodeports=2, used: services.nodeports=0, limited: services.nodeports=1');
  assert.equal((await requestAs(dev, 'POST', `/api/v1/namespaces/${NS}/services`, svc('plain', 'ClusterIP'))).status, 201);
  const u = await used(NS, 'q');
  assert.equal(dig(u, 'services'), '1');
  assert.equal(dig(u, 'services.nodeports'), '0');
  assert.equal(dig(u, 'count/deployments.apps'), '1');
  // Deleting the Deployment gives its count back.
  await ok('DELETE', `/apis/apps/v1/namespaces/${NS}/deployments/d1`);
  await until('count/deployments.apps back to 0', async () => (dig(await used(NS, 'q'), 'count/deployments.apps') === '0' ? true : undefined));
  assert.equal((await requestAs(robot, 'POST', `/apis/apps/v1/namespaces/${NS}/deployments`, deployment('d2'))).status, 201);
});

test('scopes: a BestEffort quota counts only best-effort pods, a Terminating one only pods with a deadline', async () => {
  await namespace('scoped');
  await ok('POST', '/api/v1/namespaces/scoped/resourcequotas', { metadata: { name: 'best-effort' }, spec: { hard: { pods: '1' }, scopes: ['BestEffort'] } });
  await ok('POST', '/api/v1/namespaces/scoped/resourcequotas', { metadata: { name: 'terminating' }, spec: { hard: { pods: '0' }, scopeSelector: { matchExpressions: [{ scopeName: 'Terminating', operator: 'Exists' }] } } });
  await usedBecomes('scoped', 'best-effort', { pods: '0' });
  await usedBecomes('scoped', 'terminating', { pods: '0' });
  assert.equal((await s.request('POST', '/api/v1/namespaces/scoped/pods', { body: pod('be1') })).status, 201);
  const be2 = await s.request('POST', '/api/v1/namespaces/scoped/pods', { body: pod('be2') });
  assert.equal(be2.status, 403, be2.text);
  assert.equal(be2.json().message, 'pods "be2" is forbidden: exceeded quota: best-effort, requested: pods=1, used: pods=1, limited: pods=1');
  // Not best-effort: neither quota covers it.
  assert.equal((await s.request('POST', '/api/v1/namespaces/scoped/pods', { body: pod('burstable', '100m') })).status, 201);
  const deadline = await s.request('POST', '/api/v1/namespaces/scoped/pods', { body: pod('job', '100m', { activeDeadlineSeconds: 60 }) });
  assert.equal(deadline.status, 403, deadline.text);
  assert.equal(deadline.json().message, 'pods "job" is forbidden: exceeded quota: terminating, requested: pods=1, used: pods=0, limited: pods=0');
  assert.deepEqual(await used('scoped', 'best-effort'), { pods: '1' });
});

test('concurrent creates are checked one at a time: exactly the quota is admitted, and used counts them all', async () => {
  await namespace('busy');
  await ok('POST', '/api/v1/namespaces/busy/resourcequotas', { metadata: { name: 'few' }, spec: { hard: { 'count/configmaps': '5' } } });
  await usedBecomes('busy', 'few', { 'count/configmaps': '1' });
  const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => s.request('POST', '/api/v1/namespaces/busy/configmaps', { body: { metadata: { name: `cm-${i}` }, data: { i: String(i) } } })));
  const statuses = answers.map((r) => r.status).sort();
  assert.deepEqual(statuses, [201, 201, 201, 201, ...Array(8).fill(403)], answers.map((r) => r.text).join('\n'));
  for (const r of answers.filter((x) => x.status === 403)) assert.match(r.json().message, /^configmaps "cm-\d+" is forbidden: exceeded quota: few, requested: count\/configmaps=1, used: count\/configmaps=5, limited: count\/configmaps=5$/);
  assert.deepEqual(await used('busy', 'few'), { 'count/configmaps': '5' });
  const stored = (await ok('GET', '/api/v1/namespaces/busy/configmaps')).items as unknown[];
  assert.equal(stored.length, 5);
});

test('count/<resource>.<group> counts custom resources too, measured by the controller and given back on delete', async () => {
  await installRuleCrd(s, ruleCrd('quota.example.com', 'widgets', 'Widget', { type: 'object', properties: { size: { type: 'integer' } } }));
  await namespace('crs');
  const path = '/apis/quota.example.com/v1/namespaces/crs/widgets';
  const widget = (name: string) => ({ apiVersion: 'quota.example.com/v1', kind: 'Widget', metadata: { name }, spec: { size: 1 } });
  await ok('POST', path, widget('before'));
  await ok('POST', '/api/v1/namespaces/crs/resourcequotas', { metadata: { name: 'widgets' }, spec: { hard: { 'count/widgets.quota.example.com': '2' } } });
  await usedBecomes('crs', 'widgets', { 'count/widgets.quota.example.com': '1' });
  await ok('POST', path, widget('second'));
  const third = await s.request('POST', path, { body: widget('third') });
  assert.equal(third.status, 403, third.text);
  assert.equal(third.json().message, 'widgets.quota.example.com "third" is forbidden: exceeded quota: widgets, requested: count/widgets.quota.example.com=1, used: count/widgets.quota.example.com=2, limited: count/widgets.quota.example.com=2');
  await ok('DELETE', `${path}/before`);
  await usedBecomes('crs', 'widgets', { 'count/widgets.quota.example.com': '1' });
  assert.equal((await s.request('POST', path, { body: widget('third') })).status, 201);
});
