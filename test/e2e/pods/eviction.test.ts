// pods/eviction as kube-apiserver serves it: a pod goes unless the disruption budget that selects
// it has no disruption left (429, nothing changed); an allowed eviction takes one from the budget
// and records the pod; pods not running, unready pods under AlwaysAllow and dry runs as kube has
// them; kubectl drain evicts through it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { kubectlsToTest, useTestServer } from '../../helpers/server.ts';

const s = useTestServer();

const PODS = '/api/v1/namespaces/default/pods';
const PDBS = '/apis/policy/v1/namespaces/default/poddisruptionbudgets';
const eviction = (name: string, extra: Record<string, unknown> = {}) => ({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name }, ...extra });
const evict = (name: string, body: unknown = eviction(name), query = '') => s.request('POST', `${PODS}/${name}/eviction${query}`, { body });

async function pod(name: string, app: string, opts: { running?: boolean; ready?: boolean } = { running: true, ready: true }): Promise<void> {
  const created = await s.request('POST', PODS, { body: { metadata: { name, labels: { app } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } });
  assert.equal(created.status, 201, created.text);
  if (!opts.running) return;
  // As a kubelet reports it.
  const status = { phase: 'Running', conditions: [{ type: 'Ready', status: opts.ready ? 'True' : 'False' }] };
  const r = await s.request('PATCH', `${PODS}/${name}/status`, { body: { status }, headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(r.status, 200, r.text);
}

async function budget(name: string, app: string, status: Record<string, unknown>, spec: Record<string, unknown> = {}): Promise<void> {
  const created = await s.request('POST', PDBS, { body: { metadata: { name }, spec: { minAvailable: 1, selector: { matchLabels: { app } }, ...spec } } });
  assert.equal(created.status, 201, created.text);
  // As the disruption controller reports it.
  const r = await s.request('PATCH', `${PDBS}/${name}/status`, { body: { status: { observedGeneration: 1, currentHealthy: 1, desiredHealthy: 1, expectedPods: 1, ...status } }, headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(r.status, 200, r.text);
}

test('discovery lists pods/eviction as a policy/v1 Eviction', async () => {
  const pods = (await s.request('GET', '/api/v1')).json().resources.find((r: any) => r.name === 'pods/eviction');
  assert.deepEqual(pods, { name: 'pods/eviction', singularName: '', namespaced: true, group: 'policy', version: 'v1', kind: 'Eviction', verbs: ['create'] });
});

test('a budget with no disruption left refuses the eviction (429); nothing changes', async () => {
  await pod('guarded', 'guarded');
  await budget('guarded', 'guarded', { disruptionsAllowed: 0 });
  const r = await evict('guarded');
  assert.equal(r.status, 429, r.text);
  assert.deepEqual(r.json(), {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: "Cannot evict pod as it would violate the pod's disruption budget.",
    reason: 'TooManyRequests',
    details: { causes: [{ reason: 'DisruptionBudget', message: 'The disruption budget guarded needs 1 healthy pods and has 1 currently' }] },
    code: 429,
  });
  assert.equal((await s.request('GET', `${PODS}/guarded`)).status, 200);
  assert.equal((await s.request('GET', `${PDBS}/guarded`)).json().status.disruptionsAllowed, 0);
});

test('an allowed eviction takes a disruption from the budget, records the pod and deletes it', async () => {
  await pod('allowed', 'allowed');
  await budget('allowed', 'allowed', { disruptionsAllowed: 1, currentHealthy: 2 });
  // A dry run answers as the eviction would, and changes nothing.
  const dry = await evict('allowed', eviction('allowed'), '?dryRun=All');
  assert.equal(dry.status, 201, dry.text);
  assert.equal((await s.request('GET', `${PODS}/allowed`)).status, 200);
  assert.equal((await s.request('GET', `${PDBS}/allowed`)).json().status.disruptionsAllowed, 1);

  const r = await evict('allowed');
  assert.equal(r.status, 201, r.text);
  assert.deepEqual(r.json(), { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
  assert.equal((await s.request('GET', `${PODS}/allowed`)).status, 404);
  const status = (await s.request('GET', `${PDBS}/allowed`)).json().status;
  assert.equal(status.disruptionsAllowed, 0);
  assert.deepEqual(Object.keys(status.disruptedPods), ['allowed']);
  assert.deepEqual(
    status.conditions.map((c: any) => [c.type, c.status, c.reason, c.observedGeneration]),
    [['DisruptionAllowed', 'False', 'InsufficientPods', 1]],
  );
});

test('a budget whose status is behind its spec refuses; two budgets are a 500; a bad body a 400', async () => {
  await pod('behind', 'behind');
  await budget('behind', 'behind', { disruptionsAllowed: 3, observedGeneration: 0 });
  const r = await evict('behind');
  assert.equal(r.status, 429);
  assert.equal(r.headers['retry-after'], undefined);
  assert.deepEqual(r.json(), {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: "Cannot evict pod as it would violate the pod's disruption budget. The disruption budget behind is still being processed by the server.",
    reason: 'TooManyRequests',
    details: {},
    code: 429,
  });

  await pod('twice', 'twice');
  await budget('twice-a', 'twice', { disruptionsAllowed: 1 });
  await budget('twice-b', 'twice', { disruptionsAllowed: 1 });
  const two = await evict('twice');
  assert.equal(two.status, 500);
  assert.equal(two.json().message, 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.');
  assert.equal((await s.request('GET', `${PODS}/twice`)).status, 200);

  const misnamed = await evict('twice', eviction('other'));
  assert.equal(misnamed.status, 400);
  assert.equal(misnamed.json().message, 'name in URL does not match name in Eviction object');
  assert.equal((await evict('nobody')).status, 404);
});

test('pods not running yet, and unready pods under AlwaysAllow, go without their budget', async () => {
  await pod('pending', 'pending', { running: false });
  await budget('pending', 'pending', { disruptionsAllowed: 0 });
  assert.equal((await evict('pending')).status, 201);
  assert.equal((await s.request('GET', `${PODS}/pending`)).status, 404);

  await pod('unready', 'unready', { running: true, ready: false });
  await budget('unready', 'unready', { disruptionsAllowed: 0, currentHealthy: 0 }, { unhealthyPodEvictionPolicy: 'AlwaysAllow' });
  assert.equal((await evict('unready')).status, 201);
  assert.equal((await s.request('GET', `${PODS}/unready`)).status, 404);
  // The budget was not asked: no disruption taken, no pod recorded.
  assert.equal((await s.request('GET', `${PDBS}/unready`)).json().status.disruptedPods, undefined);
});

for (const { version, path } of kubectlsToTest()) {
  test(`kubectl ${version} drain evicts a node's pods through pods/eviction`, async () => {
    const node = `drain-${version.replace('.', '')}`;
    assert.equal((await s.request('POST', '/api/v1/nodes', { body: { metadata: { name: node } } })).status, 201);
    for (const i of [1, 2]) {
      const r = await s.request('POST', PODS, { body: { metadata: { name: `${node}-${i}`, labels: { app: node } }, spec: { nodeName: node, terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: 'nginx' }] } } });
      assert.equal(r.status, 201, r.text);
    }
    const r = await s.kubectl(['drain', node, '--force', '--timeout=30s'], { binary: path });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`pod/${node}-1 evicted`));
    assert.equal((await s.request('GET', `/api/v1/nodes/${node}`)).json().spec.unschedulable, true);
    for (const i of [1, 2]) assert.equal((await s.request('GET', `${PODS}/${node}-${i}`)).status, 404);
  });
}
