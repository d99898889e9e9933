// ResourceQuota's limitedResources from --admission-control-config-file, through HTTPS: a claim
// on the gold storage class may be made only in a namespace whose quota covers that class's
// storage, refused elsewhere with kube's 403; a bad configuration stops the start with kube's
// error.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { requester, type Credentials } from '../../helpers/identities.ts';
import { issueClientCertificate } from '../../../server/pki/certificates.ts';

const dir = mkdtempSync(join(tmpdir(), 'hearth-quota-config-'));
let s: TestServer;
let dev: Credentials;
const requestAs = requester(() => s);

function configFile(name: string, quotaConfiguration: string): string {
  const file = join(dir, name);
  writeFileSync(
    file,
    `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: ResourceQuota
  configuration:
${quotaConfiguration.replace(/^/gm, '    ')}
`,
  );
  return file;
}

before(async () => {
  const file = configFile(
    'admission.yaml',
    `apiVersion: apiserver.config.k8s.io/v1
kind: ResourceQuotaConfiguration
limitedResources:
- resource: persistentvolumeclaims
  matchContains:
  - .storageclass.storage.k8s.io/requests.storage`,
  );
  s = await startTestServer({ options: { admissionControlConfigFile: file } });
  const issued = await issueClientCertificate(s.pki, { commonName: 'dev', organizations: ['team'] });
  dev = { cert: issued.certPem, key: issued.keyPem! };
  for (const ns of ['with-quota', 'without-quota']) {
    assert.equal((await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: ns } } })).status, 201);
    const rb = await s.request('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, {
      body: { metadata: { name: 'dev' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' }, subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'dev' }] },
    });
    assert.equal(rb.status, 201, rb.text);
  }
  const q = await s.request('POST', '/api/v1/namespaces/with-quota/resourcequotas', { body: { metadata: { name: 'gold' }, spec: { hard: { 'gold.storageclass.storage.k8s.io/requests.storage': '10Gi' } } } });
  assert.equal(q.status, 201, q.text);
});

after(async () => {
  await s?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const claim = (name: string) => ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name }, spec: { storageClassName: 'gold', accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '2Gi' } } } });

test('a limited consumption is refused where no quota covers it, and charged where one does', async () => {
  const refused = await requestAs(dev, 'POST', '/api/v1/namespaces/without-quota/persistentvolumeclaims', claim('c'));
  assert.equal(refused.status, 403, refused.text);
  assert.equal(refused.json.message, 'persistentvolumeclaims "c" is forbidden: insufficient quota to consume: gold.storageclass.storage.k8s.io/requests.storage');
  assert.equal((await s.request('GET', '/api/v1/namespaces/without-quota/persistentvolumeclaims/c')).status, 404);
  // Once the controller has measured the quota, the claim is admitted and charged.
  let created;
  for (let i = 0; i < 400; i++) {
    created = await requestAs(dev, 'POST', '/api/v1/namespaces/with-quota/persistentvolumeclaims', claim('c'));
    if (created.status !== 403 || !String(created.json.message).includes('status unknown')) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.equal(created?.status, 201, created?.text);
  const q = (await s.request('GET', '/api/v1/namespaces/with-quota/resourcequotas/gold')).json();
  assert.deepEqual(q.status.used, { 'gold.storageclass.storage.k8s.io/requests.storage': '2Gi' });
});

test('a bad ResourceQuotaConfiguration stops the start with kube\'s error', async () => {
  const file = configFile('bad.yaml', 'apiVersion: apiserver.config.k8s.io/v1\nkind: ResourceQuotaConfiguration\nlimitedResources:\n- matchContains: [x]');
  await assert.rejects(startTestServer({ options: { admissionControlConfigFile: file } }), { message: 'couldn\'t init admission plugin "ResourceQuota": limitedResources[0].resource: Required value' });
});
