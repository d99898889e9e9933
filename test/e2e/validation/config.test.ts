// ConfigMaps and Secrets as kube-apiserver handles them: stringData merged into data on every
// write and never stored; config keys, types and immutability validated with kube's wording.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { invalidCauses, useTestServer } from '../../helpers/server.ts';
import { DNS1123_SUBDOMAIN } from '../../helpers/kube-messages.ts';

const s = useTestServer();

const CM = '/api/v1/namespaces/default/configmaps';
const SECRETS = '/api/v1/namespaces/default/secrets';
const b64 = (t: string) => Buffer.from(t).toString('base64');

const causes = (method: string, path: string, body: unknown, contentType?: string) => invalidCauses(s, method, path, body, contentType ? { 'content-type': contentType } : undefined);

test('a secret\'s stringData is merged into data on create, update and patch, wins over data, is owned as data, and is never stored', async () => {
  const created = await s.request('POST', `${SECRETS}?fieldManager=maker`, { body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds' }, data: { user: b64('old'), x: b64('x') }, stringData: { user: 'admin' } } });
  assert.equal(created.status, 201, created.text);
  const sec = created.json();
  assert.deepEqual(sec.data, { user: b64('admin'), x: b64('x') });
  assert.equal(sec.stringData, undefined);
  assert.equal(sec.type, 'Opaque');
  assert.deepEqual(sec.metadata.managedFields[0].fieldsV1['f:data'], { '.': {}, 'f:user': {}, 'f:x': {} });
  assert.equal(sec.metadata.managedFields[0].fieldsV1['f:stringData'], undefined);
  const patched = await s.request('PATCH', `${SECRETS}/creds`, { body: { stringData: { pass: 'p@ss' } }, headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(patched.status, 200, patched.text);
  assert.deepEqual(patched.json().data, { pass: b64('p@ss'), user: b64('admin'), x: b64('x') });
  const stored = (await s.request('GET', `${SECRETS}/creds`)).json();
  assert.equal(stored.stringData, undefined);
  const put = await s.request('PUT', `${SECRETS}/creds`, { body: { ...stored, stringData: { x: 'y' } } });
  assert.equal(put.status, 200, put.text);
  assert.equal(put.json().data.x, b64('y'));
});

test('config keys, data/binaryData overlap, secret types and their keys', async () => {
  assert.deepEqual(await causes('POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'keys' }, data: { 'bad key': 'x', '..dots': 'y', ok: 'z' }, binaryData: { ok: b64('z') } }), [
    ['data[..dots]', `Invalid value: "..dots": must not start with '..'`],
    ['data[bad key]', `Invalid value: "bad key": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`],
    ['data[ok]', 'Invalid value: "ok": duplicate of key present in binaryData'],
  ]);
  assert.deepEqual(await causes('POST', SECRETS, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'tls' }, type: 'kubernetes.io/tls', stringData: { 'tls.crt': 'c' } }), [['data[tls.key]', 'Required value']]);
  assert.deepEqual(await causes('POST', SECRETS, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'basic' }, type: 'kubernetes.io/basic-auth' }), [
    ['data[username]', 'Required value'],
    ['data[password]', 'Required value'],
  ]);
  assert.equal((await s.request('GET', `${SECRETS}/tls`)).status, 404, 'nothing was written');
});

test('a secret\'s type never changes; immutable configmaps and secrets keep their data', async () => {
  const sec = (await s.request('POST', SECRETS, { body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'typed' }, stringData: { a: 'b' } } })).json();
  assert.deepEqual(await causes('PUT', `${SECRETS}/typed`, { ...sec, type: 'kubernetes.io/tls', data: { 'tls.crt': b64('c'), 'tls.key': b64('k') } }), [['type', 'Invalid value: "kubernetes.io/tls": field is immutable']]);
  const cm = (await s.request('POST', CM, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'frozen' }, data: { a: '1' }, immutable: true } })).json();
  assert.deepEqual(await causes('PUT', `${CM}/frozen`, { ...cm, data: { a: '2' } }), [['data', 'Forbidden: field is immutable when `immutable` is set']]);
  assert.deepEqual(await causes('PATCH', `${CM}/frozen`, { immutable: false }, 'application/merge-patch+json'), [['immutable', 'Forbidden: field is immutable when `immutable` is set']]);
  const labelled = await s.request('PATCH', `${CM}/frozen`, { body: { metadata: { labels: { ok: 'yes' } } }, headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(labelled.status, 200, 'metadata stays writable');
});

test('persistent volume claims need a supported access mode and a storage request', async () => {
  const pvc = (spec: Record<string, unknown>) => ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data' }, spec });
  const PVC = '/api/v1/namespaces/default/persistentvolumeclaims';
  assert.deepEqual(await causes('POST', PVC, pvc({})), [
    ['spec.accessModes', 'Required value: at least 1 access mode is required'],
    ['spec.resources[storage]', 'Required value'],
  ]);
  assert.deepEqual(await causes('POST', PVC, pvc({ accessModes: ['ReadWriteSometimes'], resources: { requests: { storage: '1Gi' } } })), [
    ['spec.accessModes', 'Unsupported value: "ReadWriteSometimes": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"'],
  ]);
  const ok = await s.request('POST', PVC, { body: pvc({ accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } }) });
  assert.equal(ok.status, 201, ok.text);
});

test('a persistent volume claim spec is immutable but for a volume name and class set once and a bound claim\'s request', async () => {
  const PVC = '/api/v1/namespaces/default/persistentvolumeclaims';
  // (PersistentVolumeClaimResize lets a claim grow only when its class allows expansion)
  const fast = await s.request('POST', '/apis/storage.k8s.io/v1/storageclasses', { body: { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'fast' }, provisioner: 'example.com/fast', allowVolumeExpansion: true } });
  assert.equal(fast.status, 201, fast.text);
  const created = await s.request('POST', PVC, { body: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'grow' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } } });
  assert.equal(created.status, 201, created.text);
  const patch = (body: unknown, sub = '') => s.request('PATCH', `${PVC}/grow${sub}`, { body, headers: { 'content-type': 'application/merge-patch+json' } });
  // Pending: the request may not change; a class and a volume may be set once.
  const pending = await causes('PATCH', `${PVC}/grow`, { spec: { resources: { requests: { storage: '2Gi' } } } }, 'application/merge-patch+json');
  assert.equal(pending.length, 1);
  assert.equal(pending[0][0], 'spec');
  assert.ok(pending[0][1].startsWith('Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n  core.PersistentVolumeClaimSpec{\n'), pending[0][1]);
  assert.match(pending[0][1], /\+ \tResources: \{"requests":\{"storage":"2Gi"\}\}/);
  assert.equal((await patch({ spec: { storageClassName: 'fast', volumeName: 'pv-1' } })).status, 200);
  assert.equal((await causes('PATCH', `${PVC}/grow`, { spec: { storageClassName: 'slow' } }, 'application/merge-patch+json'))[0][0], 'spec');
  assert.equal((await causes('PATCH', `${PVC}/grow`, { spec: { accessModes: ['ReadWriteMany'] } }, 'application/merge-patch+json'))[0][0], 'spec');
  // Bound (a status write, which is no spec update): the request may grow, and shrink only above the capacity.
  assert.equal((await patch({ status: { phase: 'Bound', capacity: { storage: '1Gi' } } }, '/status')).status, 200);
  const grown = await patch({ spec: { resources: { requests: { storage: '2048Mi' } } } });
  assert.equal(grown.status, 200, grown.text);
  assert.equal(grown.json().spec.resources.requests.storage, '2Gi');
  assert.deepEqual(await causes('PATCH', `${PVC}/grow`, { spec: { resources: { requests: { storage: '1Gi' } } } }, 'application/merge-patch+json'), [
    ['spec.resources.requests.storage', 'Forbidden: field can not be less than status.capacity'],
  ]);
  assert.equal((await patch({ spec: { resources: { requests: { storage: '1536Mi' } } } })).status, 200);
});

test('storage classes: a qualified provisioner, known modes; parameters, provisioner, reclaim policy and binding mode never change', async () => {
  const SC = '/apis/storage.k8s.io/v1/storageclasses';
  const sc = (name: string, extra: Record<string, unknown>) => ({ apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name }, provisioner: 'rancher.io/local-path', ...extra });
  assert.deepEqual(await causes('POST', SC, sc('bad', { provisioner: 'not a/provisioner', reclaimPolicy: 'Recycle', volumeBindingMode: 'Later', parameters: { '': 'x' } })), [
    ['provisioner', `Invalid value: "not a/provisioner": prefix part ${DNS1123_SUBDOMAIN}`],
    ['parameters', 'Invalid value: "": field can not be empty.'],
    ['reclaimPolicy', 'Unsupported value: "Recycle": supported values: "Delete", "Retain"'],
    ['volumeBindingMode', 'Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer"'],
  ]);
  const created = await s.request('POST', SC, { body: sc('local', { parameters: { nodePath: '/data' } }) });
  assert.equal(created.status, 201, created.text);
  assert.equal(created.json().reclaimPolicy, 'Delete');
  assert.deepEqual(await causes('PATCH', `${SC}/local`, { parameters: { nodePath: '/other' }, reclaimPolicy: 'Retain', volumeBindingMode: 'WaitForFirstConsumer' }, 'application/merge-patch+json'), [
    ['parameters', 'Forbidden: updates to parameters are forbidden.'],
    ['reclaimPolicy', 'Forbidden: updates to reclaimPolicy are forbidden.'],
    ['volumeBindingMode', 'Invalid value: "WaitForFirstConsumer": field is immutable'],
  ]);
  // Labels, annotations and allowVolumeExpansion may change.
  const patched = await s.request('PATCH', `${SC}/local`, { body: { metadata: { annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } }, allowVolumeExpansion: true }, headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(patched.status, 200, patched.text);
});
