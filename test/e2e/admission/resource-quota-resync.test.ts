// The quota controller's full resync (kube-controller-manager's --resource-quota-sync-period,
// shortened here): a charge admission made for a write that then failed (a create of a name
// already taken: kube charges before storing too) is given back when every quota is measured
// again, and so is a status.used someone wrote by hand.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

const NS = 'resync';
let s: TestServer;

async function used(): Promise<unknown> {
  return (await s.request('GET', `/api/v1/namespaces/${NS}/resourcequotas/q`)).json().status?.used;
}

async function usedBecomes(want: unknown): Promise<void> {
  let seen: unknown;
  for (let i = 0; i < 400; i++) {
    seen = await used();
    if (JSON.stringify(seen) === JSON.stringify(want)) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.fail(`used stayed ${JSON.stringify(seen)}, want ${JSON.stringify(want)}`);
}

before(async () => {
  s = await startTestServer({ options: { resourceQuotaSyncPeriodMs: 300 } });
  assert.equal((await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } })).status, 201);
  assert.equal((await s.request('POST', `/api/v1/namespaces/${NS}/resourcequotas`, { body: { metadata: { name: 'q' }, spec: { hard: { 'count/secrets': '10' } } } })).status, 201);
});

after(async () => {
  await s?.stop();
});

test('an overcharge from a failed create, and a hand-written used, are measured away at the resync', async () => {
  await usedBecomes({ 'count/secrets': '0' });
  const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'one' }, stringData: { a: 'b' } };
  assert.equal((await s.request('POST', `/api/v1/namespaces/${NS}/secrets`, { body: secret })).status, 201);
  assert.deepEqual(await used(), { 'count/secrets': '1' });
  const again = await s.request('POST', `/api/v1/namespaces/${NS}/secrets`, { body: secret });
  assert.equal(again.status, 409, again.text);
  await usedBecomes({ 'count/secrets': '1' });

  const q = (await s.request('GET', `/api/v1/namespaces/${NS}/resourcequotas/q`)).json();
  const edited = await s.request('PUT', `/api/v1/namespaces/${NS}/resourcequotas/q/status`, { body: { ...q, status: { ...q.status, used: { 'count/secrets': '7' } } } });
  assert.equal(edited.status, 200, edited.text);
  await usedBecomes({ 'count/secrets': '1' });
});
