// dryRun=All on every write verb: the response is what would be stored; nothing is persisted,
// no event is emitted, the resourceVersion does not move.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { startTestServer, availableKubectls, type TestServer } from '../../helpers/server.ts';

let s: TestServer;
before(async () => {
  s = await startTestServer();
  await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'dry' } } });
  for (const n of ['a', 'b']) await s.request('POST', '/api/v1/namespaces/dry/configmaps', { body: { metadata: { name: n, labels: { x: 'y' } }, data: { v: '1' } } });
});
after(async () => {
  await s.stop();
});

const rvOf = async () => (await s.request('GET', '/api/v1/namespaces/dry/configmaps')).json().metadata.resourceVersion as string;

/** Collects the events a watch sees from rv during fn; there must be none. */
async function eventsDuring(rv: string, fn: () => Promise<void>): Promise<any[]> {
  const events: any[] = [];
  const req = https.request(`${s.url}/api/v1/namespaces/dry/configmaps?watch=1&resourceVersion=${rv}`, { ca: s.pki.caCertPem, cert: s.pki.adminCertPem, key: s.pki.adminKeyPem }, (res) => {
    res.on('data', (d) => String(d).split('\n').filter(Boolean).forEach((l) => events.push(JSON.parse(l))));
  });
  req.end();
  await new Promise((r) => setTimeout(r, 100));
  await fn();
  await new Promise((r) => setTimeout(r, 200));
  req.destroy();
  return events;
}

test('every verb with dryRun=All: realistic response, no write, no event, no resourceVersion move', async () => {
  const rv = await rvOf();
  const before = (await s.request('GET', '/api/v1/namespaces/dry/configmaps')).json();
  const events = await eventsDuring(rv, async () => {
    const c = await s.request('POST', '/api/v1/namespaces/dry/configmaps?dryRun=All', { body: { metadata: { name: 'c' }, data: { v: '1' } } });
    assert.equal(c.status, 201);
    assert.equal(c.json().metadata.name, 'c');
    assert.ok(c.json().metadata.uid && c.json().metadata.creationTimestamp);
    const dupe = await s.request('POST', '/api/v1/namespaces/dry/configmaps?dryRun=All', { body: { metadata: { name: 'a' } } });
    assert.equal(dupe.status, 409, 'conflicts are still checked');

    const cur = (await s.request('GET', '/api/v1/namespaces/dry/configmaps/a')).json();
    const u = await s.request('PUT', '/api/v1/namespaces/dry/configmaps/a?dryRun=All', { body: { ...cur, data: { v: '2' } } });
    assert.equal(u.status, 200);
    assert.equal(u.json().data.v, '2');
    const stale = await s.request('PUT', '/api/v1/namespaces/dry/configmaps/a?dryRun=All', { body: { ...cur, metadata: { ...cur.metadata, resourceVersion: '1' } } });
    assert.equal(stale.status, 409);

    for (const [type, body] of [
      ['merge-patch+json', '{"data":{"v":"3"}}'],
      ['strategic-merge-patch+json', '{"data":{"v":"3"}}'],
      ['json-patch+json', '[{"op":"replace","path":"/data/v","value":"3"}]'],
    ]) {
      const p = await s.request('PATCH', '/api/v1/namespaces/dry/configmaps/a?dryRun=All', { raw: body, headers: { 'content-type': `application/${type}` } });
      assert.equal(p.status, 200, type);
      assert.equal(p.json().data.v, '3', type);
    }
    const d = await s.request('DELETE', '/api/v1/namespaces/dry/configmaps/b?dryRun=All');
    assert.equal(d.status, 200);
    const dc = await s.request('DELETE', '/api/v1/namespaces/dry/configmaps?dryRun=All&labelSelector=x%3Dy');
    assert.equal(dc.status, 200);
    assert.equal(dc.json().items.length, 2);
    const ns = await s.request('DELETE', '/api/v1/namespaces/dry?dryRun=All');
    assert.equal(ns.status, 200);
  });
  assert.deepEqual(events, []);
  assert.equal(await rvOf(), rv);
  assert.deepEqual((await s.request('GET', '/api/v1/namespaces/dry/configmaps')).json(), before);
  assert.equal((await s.request('GET', '/api/v1/namespaces/dry')).json().status.phase, 'Active');
  assert.equal((await s.request('PATCH', '/api/v1/namespaces/dry/configmaps/a?dryRun=Maybe', { raw: '{}', headers: { 'content-type': 'application/merge-patch+json' } })).status, 400);
  assert.equal((await s.request('DELETE', '/api/v1/namespaces/dry/configmaps/a?dryRun=Maybe')).status, 400);
});

for (const { version, path } of availableKubectls()) {
  test(`kubectl ${version} --dry-run=server changes nothing`, async () => {
    const rv = await rvOf();
    for (const args of [
      ['create', 'configmap', 'k', '-n', 'dry', '--from-literal=a=b', '--dry-run=server'],
      ['label', 'configmap', 'a', '-n', 'dry', 'z=1', '--dry-run=server'],
      ['delete', 'configmap', 'a', '-n', 'dry', '--dry-run=server'],
    ]) {
      const r = await s.kubectl(args, { binary: path });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /\(server dry run\)/);
    }
    assert.equal(await rvOf(), rv);
  });
}
