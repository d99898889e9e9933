// Where admission sits in a create, as in kube: mutating plugins see the object before the store
// names it from generateName, so a refusal names the prefix (kube's admission.NewForbidden).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

let s: TestServer;
before(async () => {
  s = await startTestServer();
});
after(async () => {
  await s.stop();
});

const json = { 'content-type': 'application/merge-patch+json' };

test('a create from generateName in a terminating namespace is refused by its prefix, and nothing is stored', async () => {
  assert.equal((await s.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'closing' } } })).status, 201);
  const held = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'held', finalizers: ['example.com/hold'] } };
  assert.equal((await s.request('POST', '/api/v1/namespaces/closing/configmaps', { body: held })).status, 201);
  assert.equal((await s.request('DELETE', '/api/v1/namespaces/closing')).status, 200);
  try {
    const r = await s.request('POST', '/api/v1/namespaces/closing/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'cm-' } } });
    assert.equal(r.status, 403, r.text);
    assert.equal(r.json().message, 'configmaps "cm-" is forbidden: unable to create new content in namespace closing because it is being terminated');
    assert.equal(r.json().details.name, 'cm-');
    const named = await s.request('POST', '/apis/apps/v1/namespaces/closing/deployments', { body: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' } } });
    assert.equal(named.json().message, 'deployments.apps "web" is forbidden: unable to create new content in namespace closing because it is being terminated');
    const left = (await s.request('GET', '/api/v1/namespaces/closing/configmaps')).json();
    assert.deepEqual(left.items.map((i: { metadata: { name: string } }) => i.metadata.name).filter((n: string) => n.startsWith('cm-')), []);
  } finally {
    assert.equal((await s.request('PATCH', '/api/v1/namespaces/closing/configmaps/held', { body: { metadata: { finalizers: null } }, headers: json })).status, 200);
  }
});
