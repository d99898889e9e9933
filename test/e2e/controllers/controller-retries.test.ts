// The in-process controllers retry every key on its own (server/controllers/workqueue.ts): deletions
// held up for different reasons at the same time all finish once their causes go, without a
// restart. (Before the shared work queue, one retry timer per controller meant a second failing
// namespace cancelled the first one's retry, which then stayed Terminating until a restart.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useTestServer } from '../../helpers/server.ts';
import { installRuleCrd, ruleCrd } from '../../helpers/cel-crd.ts';

const s = useTestServer();

/** Polls until cond holds; fails after a generous deadline (nothing here is timed). */
async function eventually(what: string, cond: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`${what}: not so after ${ms} ms`);
}

const json = (body: unknown) => ({ raw: JSON.stringify(body), headers: { 'content-type': 'application/merge-patch+json' } });
const gone = (path: string) => async () => (await s.request('GET', path)).status === 404;

test('namespaces and a CRD held up for different reasons are each retried, and all go once their causes do', async () => {
  // Three deletions that cannot finish yet: a namespace whose ConfigMap a finalizer holds, a
  // namespace whose pod a node is still running (it goes when the kubelet deletes it), and a CRD
  // whose custom object a finalizer holds.
  for (const name of ['held-by-finalizer', 'held-by-pod']) {
    assert.equal((await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name } } })).status, 201);
  }
  const cm = { metadata: { name: 'held', finalizers: ['example.com/hold'] }, data: { a: '1' } };
  assert.equal((await s.request('POST', '/api/v1/namespaces/held-by-finalizer/configmaps', { body: cm })).status, 201);
  const pod = { metadata: { name: 'running' }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'nginx' }] } };
  assert.equal((await s.request('POST', '/api/v1/namespaces/held-by-pod/pods', { body: pod })).status, 201);
  const holds = await installRuleCrd(s, ruleCrd('retry.example.com', 'holds', 'Hold', { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }));
  const HOLD = `${holds}/h`;
  assert.equal((await s.request('POST', holds, { body: { apiVersion: 'retry.example.com/v1', kind: 'Hold', metadata: { name: 'h', finalizers: ['example.com/hold'] } } })).status, 201);

  assert.equal((await s.request('DELETE', '/api/v1/namespaces/held-by-finalizer')).status, 200);
  assert.equal((await s.request('DELETE', '/api/v1/namespaces/held-by-pod')).status, 200);
  assert.equal((await s.request('DELETE', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/holds.retry.example.com')).status, 200);

  // Each controller has looked and found its deletion blocked: the objects are marked, their owners stay.
  await eventually('the held ConfigMap marked', async () => !!(await s.request('GET', '/api/v1/namespaces/held-by-finalizer/configmaps/held')).json().metadata.deletionTimestamp);
  await eventually('the running pod marked', async () => !!(await s.request('GET', '/api/v1/namespaces/held-by-pod/pods/running')).json().metadata.deletionTimestamp);
  await eventually('the held custom object marked', async () => !!(await s.request('GET', HOLD)).json().metadata.deletionTimestamp);
  for (const ns of ['held-by-finalizer', 'held-by-pod']) {
    const r = await s.request('GET', `/api/v1/namespaces/${ns}`);
    assert.equal(r.status, 200);
    assert.equal(r.json().status.phase, 'Terminating');
  }
  assert.equal((await s.request('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/holds.retry.example.com')).status, 200);

  // The causes go, the first one first; every deletion then finishes.
  assert.equal((await s.request('PATCH', '/api/v1/namespaces/held-by-finalizer/configmaps/held', json({ metadata: { finalizers: null } }))).status, 200);
  assert.equal((await s.request('PATCH', HOLD, json({ metadata: { finalizers: null } }))).status, 200);
  assert.equal((await s.request('DELETE', '/api/v1/namespaces/held-by-pod/pods/running', { body: { gracePeriodSeconds: 0 } })).status, 200);
  await eventually('namespace held-by-finalizer gone', gone('/api/v1/namespaces/held-by-finalizer'));
  await eventually('namespace held-by-pod gone', gone('/api/v1/namespaces/held-by-pod'));
  await eventually('the CRD gone', gone('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/holds.retry.example.com'));
});
