// NodeRestriction's rules one by one, with kube's messages (plugin/pkg/admission/noderestriction's
// admission_test.go cases): the node identity, mirror pods and their owner, what a mirror pod may
// not reference, pod delete/status/eviction, Node labels/taints/configSource, PVC status, token
// requests and their audience, leases, CSINodes, ResourceSlices, kubelet CSRs; anyone who is not
// a node is left alone. The HTTPS path is test/e2e/authorization/node-restriction.test.ts.
import { admissionAttributes } from '../../helpers/admission.ts';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { webcrypto } from 'node:crypto';
import { nodeRestriction, nodeIdentity, apiObjectReference, forbiddenLabelsOf, type NodeRestrictionKind } from '../../../server/admission/node-restriction.ts';
import type { AdmissionAttributes } from '../../../server/admission/types.ts';
import type { ResourceInfo } from '../../../server/schema/types.ts';
import type { UserInfo } from '../../../server/authentication/user.ts';
import { ApiError } from '../../../server/errors.ts';
import { x509 } from '../../../server/pki/certificates.ts';

const MYNODE: UserInfo = { name: 'system:node:mynode', groups: ['system:nodes', 'system:authenticated'] };
const BOB: UserInfo = { name: 'bob', groups: ['system:authenticated'] };

function info(group: string, resource: string, namespaced = true): ResourceInfo {
  return { group, resource, namespaced } as ResourceInfo;
}
const PODS = info('', 'pods');
const NODES = info('', 'nodes', false);
const PVCS = info('', 'persistentvolumeclaims');
const SAS = info('', 'serviceaccounts');
const LEASES = info('coordination.k8s.io', 'leases');
const CSINODES = info('storage.k8s.io', 'csinodes', false);
const SLICES = info('resource.k8s.io', 'resourceslices', false);
const CSRS = info('certificates.k8s.io', 'certificatesigningrequests', false);
const CONFIGMAPS = info('', 'configmaps');

function pod(name: string, node: string, mirror: boolean, extra: Record<string, unknown> = {}) {
  const metadata: Record<string, unknown> = { name, namespace: 'ns', uid: `${name}-uid` };
  if (mirror) {
    metadata.annotations = { 'kubernetes.io/config.mirror': 'true' };
    metadata.ownerReferences = [{ apiVersion: 'v1', kind: 'Node', name: node, uid: `${node}-uid`, controller: true }];
  }
  return { metadata, spec: { nodeName: node, containers: [{ name: 'c', image: 'i' }], ...extra } };
}

const store: Record<string, unknown> = {
  'pods/ns/mypod': pod('mypod', 'mynode', false),
  'pods/ns/otherpod': pod('otherpod', 'othernode', false),
  'pods/ns/sapod': pod('sapod', 'mynode', false, { volumes: [{ name: 't', projected: { sources: [{ serviceAccountToken: { audience: 'foo', path: 't' } }] } }] }),
  'pods/ns/csipod': pod('csipod', 'mynode', false, { volumes: [{ name: 'v', csi: { driver: 'csi.example.com' } }] }),
  'pods/ns/pvcpod': pod('pvcpod', 'mynode', false, { volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'claim' } }] }),
  'pods/ns/missingpvcpod': pod('missingpvcpod', 'mynode', false, { volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'nope' } }] }),
  'pods/ns/ephemeralpod': pod('ephemeralpod', 'mynode', false, { volumes: [{ name: 'vol', ephemeral: { volumeClaimTemplate: {} } }] }),
  'nodes//mynode': { metadata: { name: 'mynode', uid: 'mynode-uid' } },
  'csidrivers//csi.example.com': { metadata: { name: 'csi.example.com' }, spec: { tokenRequests: [{ audience: 'vault' }] } },
  'persistentvolumeclaims/ns/claim': { spec: { volumeName: 'pv1' } },
  'persistentvolumeclaims/ns/ephemeralpod-vol': { spec: { volumeName: 'pv1' } },
  'persistentvolumes//pv1': { spec: { csi: { driver: 'csi.example.com' } } },
};
const allowedAudiences: string[] = [];
const plugin = nodeRestriction({
  get: (kind: NodeRestrictionKind, ns: string, name: string) => store[`${kind}/${ns}/${name}`],
  mayRequestAudience: (user, _ns, _sa, audience) => user.name === MYNODE.name && allowedAudiences.includes(audience),
  apiAudiences: () => ['https://kubernetes.default.svc'],
});

function attrs(operation: AdmissionAttributes['operation'], ri: ResourceInfo, name: string, object?: unknown, oldObject?: unknown, subresource = '', user = MYNODE): AdmissionAttributes {
  return admissionAttributes({ operation, info: ri, subresource, namespace: ri.resource === 'leases' ? 'kube-node-lease' : 'ns', name, object, oldObject, user });
}

/** The plugin's answer: '' when admitted, else the error's code and message. */
function run(a: AdmissionAttributes): string {
  try {
    void plugin.admit!(a);
    return '';
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    return `${e.code} ${e.message}`;
  }
}

test('the node identity: the system:node: prefix and the system:nodes group, both', () => {
  assert.deepEqual(nodeIdentity(MYNODE), { isNode: true, nodeName: 'mynode' });
  assert.deepEqual(nodeIdentity({ name: 'system:node:mynode', groups: ['system:authenticated'] }), { isNode: false, nodeName: '' });
  assert.deepEqual(nodeIdentity({ name: 'mynode', groups: ['system:nodes'] }), { isNode: false, nodeName: '' });
  assert.equal(run(attrs('CREATE', PODS, 'x', pod('x', 'mynode', false), undefined, '', { name: 'system:node:', groups: ['system:nodes'] })), '403 pods "x" is forbidden: could not determine node from user "system:node:"');
});

test('pods: only mirror pods bound to itself, owned by its Node as it is now', () => {
  assert.equal(run(attrs('CREATE', PODS, 'm', pod('m', 'mynode', true))), '');
  assert.equal(run(attrs('CREATE', PODS, 'p', pod('p', 'mynode', false))), '403 pods "p" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "mynode" can only create mirror pods');
  assert.equal(run(attrs('CREATE', PODS, 'm', pod('m', 'othernode', true))), '403 pods "m" is forbidden: node "mynode" can only create pods with spec.nodeName set to itself');
  const owned = (owner: Record<string, unknown> | undefined, extra: Record<string, unknown>[] = []) => {
    const p = pod('m', 'mynode', true);
    p.metadata.ownerReferences = owner ? [{ apiVersion: 'v1', kind: 'Node', name: 'mynode', uid: 'mynode-uid', controller: true, ...owner }, ...extra] : [];
    return run(attrs('CREATE', PODS, 'm', p));
  };
  assert.equal(owned(undefined), '403 pods "m" is forbidden: node "mynode" can only create pods with an owner reference set to itself');
  assert.equal(owned({}, [{}]), '403 pods "m" is forbidden: node "mynode" can only create pods with a single owner reference set to itself');
  assert.equal(owned({ name: 'other' }), '403 pods "m" is forbidden: node "mynode" can only create pods with an owner reference set to itself');
  assert.equal(owned({ kind: 'Pod' }), '403 pods "m" is forbidden: node "mynode" can only create pods with an owner reference set to itself');
  assert.equal(owned({ apiVersion: 'v2' }), '403 pods "m" is forbidden: node "mynode" can only create pods with an owner reference set to itself');
  assert.equal(owned({ controller: false }), '403 pods "m" is forbidden: node "mynode" can only create pods with a controller owner reference set to itself');
  assert.equal(owned({ controller: undefined }), '403 pods "m" is forbidden: node "mynode" can only create pods with a controller owner reference set to itself');
  assert.equal(owned({ blockOwnerDeletion: true }), '403 pods "m" is forbidden: node "mynode" must not set blockOwnerDeletion on an owner reference');
  assert.equal(owned({ uid: 'stale' }), '403 pods "m" is forbidden: node mynode UID mismatch: expected stale got mynode-uid');
  // Its Node not there (yet): the lister's 404.
  const lonely = nodeRestriction({ get: () => undefined, mayRequestAudience: () => false, apiAudiences: () => [] });
  assert.throws(() => lonely.admit!(attrs('CREATE', PODS, 'm', pod('m', 'mynode', true))), (e: ApiError) => e.code === 404 && e.message === 'node "mynode" not found');
});

test('pods: a mirror pod references no other API object (podutil.HasAPIObjectReference)', () => {
  const refs = (extra: Record<string, unknown>) => apiObjectReference(pod('m', 'mynode', true, extra));
  assert.equal(refs({}), undefined);
  assert.equal(refs({ volumes: [{ name: 'h', hostPath: { path: '/x' } }, { name: 'e', emptyDir: {} }, { name: 'd', projected: { sources: [{ downwardAPI: {} }] } }] }), undefined);
  assert.deepEqual(refs({ serviceAccountName: 'sa' }), { resource: 'serviceaccounts' });
  assert.deepEqual(refs({ imagePullSecrets: [{ name: 's' }] }), { resource: 'secrets' });
  assert.deepEqual(refs({ volumes: [{ name: 's', secret: { secretName: 's' } }] }), { resource: 'secrets' });
  assert.deepEqual(refs({ containers: [{ name: 'c', env: [{ name: 'E', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }] }] }), { resource: 'secrets' });
  assert.deepEqual(refs({ ephemeralContainers: [{ name: 'c', envFrom: [{ configMapRef: { name: 'cm' } }] }] }), { resource: 'configmaps' });
  assert.deepEqual(refs({ volumes: [{ name: 'c', configMap: { name: 'cm' } }] }), { resource: 'configmaps' });
  assert.deepEqual(refs({ resourceClaims: [{ name: 'r' }] }), { resource: 'resourceclaims' });
  assert.deepEqual(refs({ volumes: [{ name: 'p', persistentVolumeClaim: { claimName: 'c' } }] }), { resource: 'persistentvolumeclaims' });
  assert.deepEqual(refs({ volumes: [{ name: 'p', ephemeral: {} }] }), { resource: 'persistentvolumeclaims (via ephemeral volumes)' });
  assert.deepEqual(refs({ volumes: [{ name: 'p', csi: { driver: 'd' } }] }), { resource: 'csidrivers (via CSI volumes)' });
  assert.deepEqual(refs({ volumes: [{ name: 't', projected: { sources: [{ serviceAccountToken: { path: 't' } }] } }] }), { resource: 'serviceaccounts (via projected volumes)' });
  assert.deepEqual(refs({ volumes: [{ name: 'b', projected: { sources: [{ clusterTrustBundle: { name: 'b', path: 'p' } }] } }] }), { resource: 'clustertrustbundles' });
  assert.deepEqual(refs({ volumes: [{ name: 'x' }] }), { error: 'unknown volume type for volume  "x"' });
  const p = pod('m', 'mynode', true, { volumes: [{ name: 's', secret: { secretName: 's' } }] });
  assert.equal(run(attrs('CREATE', PODS, 'm', p)), '403 pods "m" is forbidden: node "mynode" can not create pods that reference secrets');
});

test('pods: delete, status and eviction only of pods bound to itself; no other subresource or operation', () => {
  const mine = store['pods/ns/mypod'];
  const other = store['pods/ns/otherpod'];
  assert.equal(run(attrs('DELETE', PODS, 'mypod', undefined, mine)), '');
  assert.equal(run(attrs('DELETE', PODS, 'otherpod', undefined, other)), '403 pods "otherpod" is forbidden: node "mynode" can only delete pods with spec.nodeName set to itself');
  assert.equal(run(attrs('UPDATE', PODS, 'mypod', mine, mine)), '403 pods "mypod" is forbidden: unexpected operation "UPDATE", node "mynode" can only create and delete mirror pods');
  assert.equal(run(attrs('UPDATE', PODS, 'mypod', mine, mine, 'status')), '');
  assert.equal(run(attrs('UPDATE', PODS, 'otherpod', other, other, 'status')), '403 pods "otherpod" is forbidden: node "mynode" can only update pod status for pods with spec.nodeName set to itself');
  const relabeled = { ...pod('mypod', 'mynode', false), metadata: { name: 'mypod', labels: { a: 'b' } } };
  assert.equal(run(attrs('UPDATE', PODS, 'mypod', relabeled, mine, 'status')), '403 pods "mypod" is forbidden: node "mynode" cannot update labels through pod status');
  const claimed = { ...pod('mypod', 'mynode', false), status: { resourceClaimStatuses: [{ name: 'c', resourceClaimName: 'x' }] } };
  assert.equal(run(attrs('UPDATE', PODS, 'mypod', claimed, mine, 'status')), '403 pods "mypod" is forbidden: node "mynode" cannot update resource claim statues');
  assert.equal(run(attrs('CREATE', PODS, 'mypod', {}, undefined, 'eviction')), '');
  assert.equal(run(attrs('CREATE', PODS, '', { metadata: { name: 'mypod' } }, undefined, 'eviction')), '');
  assert.equal(run(attrs('CREATE', PODS, 'otherpod', {}, undefined, 'eviction')), '403 pods "otherpod" is forbidden: node mynode can only evict pods with spec.nodeName set to itself');
  assert.equal(run(attrs('CREATE', PODS, '', {}, undefined, 'eviction')), '403 pods "Unknown" is forbidden: could not determine pod from request data');
  assert.equal(run(attrs('UPDATE', PODS, 'mypod', mine, mine, 'binding')), `403 pods "mypod" is forbidden: unexpected pod subresource "binding", only 'status' and 'eviction' are allowed`);
});

test('nodes: only its own, no configSource, no taint or owner changes, only the kubelet labels', () => {
  const node = (name: string, labels: Record<string, string> = {}, spec: Record<string, unknown> = {}) => ({ metadata: { name, labels }, spec });
  assert.equal(run(attrs('CREATE', NODES, 'mynode', node('mynode', { 'kubernetes.io/hostname': 'h', 'node.kubernetes.io/x': 'y', 'foo.kubelet.kubernetes.io/z': '1', 'example.com/a': 'b' }))), '');
  assert.equal(run(attrs('CREATE', NODES, 'othernode', node('othernode'))), '403 nodes "othernode" is forbidden: node "mynode" is not allowed to modify node "othernode"');
  assert.equal(run(attrs('DELETE', NODES, 'othernode', undefined, node('othernode'))), '403 nodes "othernode" is forbidden: node "mynode" is not allowed to modify node "othernode"');
  assert.equal(run(attrs('UPDATE', NODES, 'othernode', node('othernode'), node('othernode'), 'status')), '403 nodes "othernode" is forbidden: node "mynode" is not allowed to modify node "othernode"');
  assert.equal(
    run(attrs('CREATE', NODES, 'mynode', node('mynode', { 'node-restriction.kubernetes.io/foo': 'x', 'other.k8s.io/foo': 'x' }))),
    '403 nodes "mynode" is forbidden: node "mynode" is not allowed to set the following labels: node-restriction.kubernetes.io/foo, other.k8s.io/foo',
  );
  assert.equal(run(attrs('CREATE', NODES, 'mynode', node('mynode', {}, { configSource: { configMap: {} } }))), '403 nodes "mynode" is forbidden: node "mynode" is not allowed to create pods with a non-nil configSource');
  const forbiddenSet = { 'node-restriction.kubernetes.io/foo': 'v', 'foo.node-restriction.kubernetes.io/foo': 'v', 'other.kubernetes.io/foo': 'v', 'other.k8s.io/foo': 'v' };
  const expected = '403 nodes "mynode" is forbidden: is not allowed to modify labels: foo.node-restriction.kubernetes.io/foo, node-restriction.kubernetes.io/foo, other.k8s.io/foo, other.kubernetes.io/foo';
  assert.equal(run(attrs('UPDATE', NODES, 'mynode', node('mynode', forbiddenSet), node('mynode'))), expected);
  assert.equal(run(attrs('UPDATE', NODES, 'mynode', node('mynode'), node('mynode', forbiddenSet))), expected);
  assert.equal(run(attrs('UPDATE', NODES, 'mynode', node('mynode', { 'kubernetes.io/os': 'linux' }), node('mynode'))), '');
  const tainted = (value: string) => node('mynode', {}, { taints: [{ key: 'k', value, effect: 'NoSchedule' }] });
  assert.equal(run(attrs('UPDATE', NODES, 'mynode', tainted('A'), node('mynode'))), '403 nodes "mynode" is forbidden: node "mynode" is not allowed to modify taints');
  assert.equal(run(attrs('UPDATE', NODES, 'mynode', node('mynode'), tainted('A'))), '403 nodes "mynode" is forbidden: node "mynode" is not allowed to modify taints');
  assert.equal(run(attrs('UPDATE', NODES, 'mynode', tainted('A'), tainted('B'))), '403 nodes "mynode" is forbidden: node "mynode" is not allowed to modify taints');
  assert.equal(run(attrs('UPDATE', NODES, 'mynode', tainted('A'), tainted('A'))), '');
  const owned = { metadata: { name: 'mynode', ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'other', uid: 'x' }] }, spec: {} };
  assert.equal(run(attrs('UPDATE', NODES, 'mynode', owned, node('mynode'))), '403 nodes "mynode" is forbidden: node "mynode" is not allowed to modify ownerReferences');
  assert.equal(run(attrs('UPDATE', NODES, 'mynode', node('mynode'), owned)), '403 nodes "mynode" is forbidden: node "mynode" is not allowed to modify ownerReferences');
  const configured = (name: string) => node('mynode', {}, { configSource: { configMap: { name, namespace: 'ns', kubeletConfigKey: 'k' } } });
  assert.equal(run(attrs('UPDATE', NODES, 'mynode', configured('b'), configured('a'))), '403 nodes "mynode" is forbidden: node "mynode" is not allowed to update configSource to a new non-nil configSource');
  assert.equal(run(attrs('UPDATE', NODES, 'mynode', node('mynode'), configured('a'))), '');
  assert.deepEqual(forbiddenLabelsOf(new Set(['kubernetes.io/hostname', 'beta.kubernetes.io/arch', 'kubernetes.io/role', 'k8s.io/x', 'plain'])), ['k8s.io/x', 'kubernetes.io/role']);
});

test('persistentvolumeclaims: only status capacity and conditions (and allocated resources)', () => {
  const claim = (status: Record<string, unknown>, labels?: Record<string, string>) => ({ metadata: { name: 'c', resourceVersion: '1', labels }, spec: { volumeName: 'v' }, status });
  const old = claim({ phase: 'Bound', capacity: { storage: '10G' } });
  assert.equal(run(attrs('UPDATE', PVCS, 'c', claim({ phase: 'Bound', capacity: { storage: '15G' }, conditions: [{ type: 'Resizing' }], allocatedResources: { storage: '15G' } }), old, 'status')), '');
  assert.match(run(attrs('UPDATE', PVCS, 'c', claim({ phase: 'Lost', capacity: { storage: '10G' } }), old, 'status')), /^403 persistentvolumeclaims "c" is forbidden: node "mynode" is not allowed to update fields other than status\.quantity and status\.conditions: \.status\.phase/);
  assert.equal(run(attrs('UPDATE', PVCS, 'c', old, old)), '403 persistentvolumeclaims "c" is forbidden: may only update PVC status');
  assert.equal(run(attrs('CREATE', PVCS, 'c', old)), '403 persistentvolumeclaims "c" is forbidden: may only update PVC status');
});

test('serviceaccounts/token: bound to a pod on itself, with an audience the pod uses or that it may ask for', () => {
  const tr = (ref: Record<string, unknown> | undefined, audiences?: string[]) => ({ spec: { boundObjectRef: ref, audiences } });
  const token = (ref: Record<string, unknown> | undefined, audiences?: string[]) => run(attrs('CREATE', SAS, 'mysa', tr(ref, audiences), undefined, 'token'));
  const podRef = (name: string, uid = `${name}-uid`) => ({ apiVersion: 'v1', kind: 'Pod', name, uid });
  assert.equal(token(undefined), '403 serviceaccounts "mysa" is forbidden: node requested token not bound to a pod');
  assert.equal(token({ apiVersion: 'v1', kind: 'Secret', name: 's', uid: 'u' }), '403 serviceaccounts "mysa" is forbidden: node requested token not bound to a pod');
  assert.equal(token({ apiVersion: 'v1', kind: 'Pod', name: 'mypod' }), '403 serviceaccounts "mysa" is forbidden: node requested token with a pod binding without a uid');
  assert.throws(() => plugin.admit!(attrs('CREATE', SAS, 'mysa', tr(podRef('nopod')), undefined, 'token')), (e: ApiError) => e.code === 404 && e.message === 'pod "nopod" not found');
  assert.equal(token(podRef('mypod', 'stale')), '403 serviceaccounts "mysa" is forbidden: the UID in the bound object reference (stale) does not match the UID in record. The object might have been deleted and then recreated');
  assert.equal(token(podRef('otherpod')), '403 serviceaccounts "mysa" is forbidden: node requested token bound to a pod scheduled on a different node');
  // The audience: one at most, used by a volume of the pod (projected, CSI inline, PVC → PV → CSI, ephemeral).
  assert.equal(token(podRef('sapod'), ['foo', 'bar']), '403 serviceaccounts "mysa" is forbidden: node may only request 0 or 1 audiences');
  assert.equal(token(podRef('sapod'), ['foo']), '');
  // The API server's audience, named or not, whatever the pod mounts.
  assert.equal(token(podRef('mypod')), '');
  assert.equal(token(podRef('mypod'), ['https://kubernetes.default.svc']), '');
  assert.equal(token(podRef('sapod'), ['bar']), '403 serviceaccounts "mysa" is forbidden: audience "bar" not found in pod spec volume, system:node:mynode is not authorized to request tokens for this audience');
  assert.equal(token(podRef('csipod'), ['vault']), '');
  assert.equal(token(podRef('pvcpod'), ['vault']), '');
  assert.equal(token(podRef('ephemeralpod'), ['vault']), '');
  assert.equal(token(podRef('missingpvcpod'), ['vault']), '403 serviceaccounts "mysa" is forbidden: error validating audience "vault": persistentvolumeclaim "nope" not found');
  // Not in the pod, but the authorizer allows it (request-serviceaccounts-token-audience).
  allowedAudiences.push('registry.example.com');
  assert.equal(token(podRef('mypod'), ['registry.example.com']), '');
  allowedAudiences.length = 0;
  // Other serviceaccount writes are not this plugin's.
  assert.equal(run(attrs('CREATE', SAS, 'mysa', { metadata: { name: 'mysa' } })), '');
});

test('leases, CSINodes, ResourceSlices: only its own', () => {
  assert.equal(run(attrs('CREATE', LEASES, 'mynode', { metadata: { name: 'mynode' } })), '');
  assert.equal(run(attrs('UPDATE', LEASES, 'mynode', {}, {})), '');
  assert.equal(run(attrs('CREATE', LEASES, 'othernode', { metadata: { name: 'othernode' } })), '403 leases.coordination.k8s.io "othernode" is forbidden: can only access node lease with the same name as the requesting node');
  assert.equal(run(attrs('DELETE', LEASES, 'othernode')), '403 leases.coordination.k8s.io "othernode" is forbidden: can only access node lease with the same name as the requesting node');
  assert.equal(run({ ...attrs('CREATE', LEASES, 'mynode', { metadata: { name: 'mynode' } }), namespace: 'foo' }), '403 leases.coordination.k8s.io "mynode" is forbidden: can only access leases in the "kube-node-lease" system namespace');
  assert.equal(run(attrs('CREATE', CSINODES, 'mynode', { metadata: { name: 'mynode' } })), '');
  assert.equal(run(attrs('UPDATE', CSINODES, 'foo', {}, {})), '403 csinodes.storage.k8s.io "foo" is forbidden: can only access CSINode with the same name as the requesting node');
  assert.equal(run(attrs('CREATE', SLICES, 's', { spec: { nodeName: 'mynode' } })), '');
  assert.equal(run(attrs('CREATE', SLICES, 's', { spec: {} })), '403 resourceslices.resource.k8s.io "s" is forbidden: can only create ResourceSlice with the same NodeName as the requesting node');
  assert.equal(run(attrs('UPDATE', SLICES, 's', { spec: { nodeName: 'othernode' } }, {})), '');
  assert.equal(run(attrs('DELETE', SLICES, 's', undefined, { spec: { nodeName: 'othernode' } })), '403 resourceslices.resource.k8s.io "s" is forbidden: can only delete ResourceSlice with the same NodeName as the requesting node');
});

test('certificatesigningrequests: a kubelet CSR names this node', async () => {
  const EC = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
  const keys = (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as CryptoKeyPair;
  const request = async (cn: string) => Buffer.from((await x509.Pkcs10CertificateRequestGenerator.create({ name: `O=system:nodes, CN=${cn}`, keys, signingAlgorithm: EC })).toString('pem')).toString('base64');
  const csr = async (cn: string, signerName: string) => run(attrs('CREATE', CSRS, 'csr-1', { metadata: { name: 'csr-1' }, spec: { signerName, request: await request(cn) } }));
  assert.equal(await csr('system:node:mynode', 'kubernetes.io/kubelet-serving'), '');
  assert.equal(await csr('system:node:mynode', 'kubernetes.io/kube-apiserver-client-kubelet'), '');
  assert.equal(await csr('some-other-identity', 'kubernetes.io/kube-apiserver-client'), '');
  assert.equal(await csr('system:node:othernode', 'kubernetes.io/kubelet-serving'), '403 certificatesigningrequests.certificates.k8s.io "csr-1" is forbidden: can only create a node CSR with CN=system:node:mynode');
  const garbled = Buffer.from('-----BEGIN CERTIFICATE REQUEST-----\n-----END CERTIFICATE REQUEST-----\n').toString('base64');
  assert.match(run(attrs('CREATE', CSRS, 'csr-1', { spec: { signerName: 'kubernetes.io/kubelet-serving', request: garbled } })), /^403 certificatesigningrequests\.certificates\.k8s\.io "csr-1" is forbidden: unable to parse csr: /);
});

test('anyone who is not a node, and kinds the plugin does not restrict, pass', () => {
  assert.equal(run(attrs('CREATE', PODS, 'p', pod('p', '', false), undefined, '', BOB)), '');
  assert.equal(run(attrs('DELETE', PODS, 'otherpod', undefined, store['pods/ns/otherpod'], '', BOB)), '');
  assert.equal(run(attrs('UPDATE', NODES, 'othernode', { metadata: { labels: { 'node-restriction.kubernetes.io/x': 'y' } } }, {}, '', BOB)), '');
  assert.equal(run(attrs('CREATE', CONFIGMAPS, 'cm', {})), '');
  assert.equal(run(attrs('DELETE', CONFIGMAPS, 'cm')), '');
});
