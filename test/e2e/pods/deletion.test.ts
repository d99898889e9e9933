// Pods are deleted gracefully, as kube-apiserver deletes them: a pod on a node is marked with a
// deletion time its grace period ahead and stays until a delete with a shorter period (the
// kubelet's, with 0) removes it; a pod on no node, or finished, goes at once. Watchers see the
// marks as MODIFIED and the removal as DELETED.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useTestServer } from '../../helpers/server.ts';

const s = useTestServer();

const PODS = '/api/v1/namespaces/default/pods';
const pod = (name: string, spec: Record<string, unknown> = {}) => ({ metadata: { name }, spec: { containers: [{ name: 'c', image: 'nginx' }], ...spec } });
const del = (name: string, body?: unknown) => s.request('DELETE', `${PODS}/${name}`, body === undefined ? {} : { body });

test('a pod on a node stays, marked, for its grace period; a shorter period (0, as the kubelet sends) removes it', async () => {
  assert.equal((await s.request('POST', PODS, { body: pod('bound', { nodeName: 'n1' }) })).status, 201);
  const rv = (await s.request('GET', `${PODS}/bound`)).json().metadata.resourceVersion;
  const watching = s.watch(`${PODS}?watch=1&resourceVersion=${rv}&fieldSelector=metadata.name%3Dbound`, (events) => events.some((e) => e.type === 'DELETED'));

  const before = Date.now();
  const first = await del('bound');
  assert.equal(first.status, 200, first.text);
  const marked = first.json();
  assert.equal(marked.kind, 'Pod');
  assert.equal(marked.metadata.deletionGracePeriodSeconds, 30);
  const at = Date.parse(marked.metadata.deletionTimestamp);
  assert.ok(at >= Math.floor(before / 1000) * 1000 + 29_000 && at <= Date.now() + 30_000, marked.metadata.deletionTimestamp);
  assert.equal((await s.request('GET', `${PODS}/bound`)).json().metadata.deletionGracePeriodSeconds, 30);

  // Again without a period, or with a longer one: nothing changes.
  const again = await del('bound', { gracePeriodSeconds: 60 });
  assert.equal(again.status, 200);
  assert.equal(again.json().metadata.resourceVersion, marked.metadata.resourceVersion);

  // A shorter period moves the deletion time closer.
  const shorter = (await del('bound', { gracePeriodSeconds: 10 })).json();
  assert.equal(shorter.metadata.deletionGracePeriodSeconds, 10);
  assert.equal(Date.parse(shorter.metadata.deletionTimestamp), at - 20_000);

  const last = await del('bound', { gracePeriodSeconds: 0 });
  assert.equal(last.status, 200, last.text);
  assert.equal(last.json().kind, 'Status');
  assert.equal((await s.request('GET', `${PODS}/bound`)).status, 404);
  const { events } = await watching;
  assert.deepEqual(events.map((e) => [e.type, e.object.metadata.deletionGracePeriodSeconds]), [
    ['MODIFIED', 30],
    ['MODIFIED', 10],
    ['MODIFIED', 0],
    ['DELETED', 0],
  ]);
});

test('a pod on no node, or finished, goes at once; its grace period as the request or the spec gives it', async () => {
  assert.equal((await s.request('POST', PODS, { body: pod('unbound', { terminationGracePeriodSeconds: 120 }) })).status, 201);
  const gone = await del('unbound');
  assert.equal(gone.status, 200);
  assert.equal(gone.json().status, 'Success');
  assert.equal((await s.request('GET', `${PODS}/unbound`)).status, 404);

  assert.equal((await s.request('POST', PODS, { body: pod('done', { nodeName: 'n1' }) })).status, 201);
  const finished = await s.request('PATCH', `${PODS}/done/status`, { body: { status: { phase: 'Succeeded' } }, headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(finished.status, 200, finished.text);
  assert.equal((await del('done')).json().status, 'Success');

  assert.equal((await s.request('POST', PODS, { body: pod('quick', { nodeName: 'n1', terminationGracePeriodSeconds: 5 }) })).status, 201);
  assert.equal((await del('quick')).json().metadata.deletionGracePeriodSeconds, 5);
  // A negative period is read as one second.
  assert.equal((await s.request('POST', PODS, { body: pod('negative', { nodeName: 'n1' }) })).status, 201);
  assert.equal((await s.request('DELETE', `${PODS}/negative?gracePeriodSeconds=-5`)).json().metadata.deletionGracePeriodSeconds, 1);
  // A dry run marks nothing.
  assert.equal((await s.request('POST', PODS, { body: pod('dry', { nodeName: 'n1' }) })).status, 201);
  const dry = await s.request('DELETE', `${PODS}/dry?dryRun=All`);
  assert.equal(dry.json().metadata.deletionGracePeriodSeconds, 30);
  assert.equal((await s.request('GET', `${PODS}/dry`)).json().metadata.deletionTimestamp, undefined);
});

test('other kinds are deleted at once whatever grace period is asked', async () => {
  assert.equal((await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'cm' } } })).status, 201);
  const r = await s.request('DELETE', '/api/v1/namespaces/default/configmaps/cm?gracePeriodSeconds=30');
  assert.equal(r.json().status, 'Success');
  assert.equal((await s.request('GET', '/api/v1/namespaces/default/configmaps/cm')).status, 404);
});
