// pods/binding, as a scheduler assigns pods to nodes (kube's BindingREST): discovery and OpenAPI
// advertise it; a Binding sets spec.nodeName, adds its annotations and turns PodScheduled True,
// without a managedFields entry or a generation bump; a second binding, a gated pod, failed
// preconditions and malformed Bindings are refused and change nothing.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { encodeProtobuf } from '../../../server/http/protobuf.ts';

let s: TestServer;
let core: k8s.CoreV1Api;
before(async () => {
  s = await startTestServer();
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(s.kubeconfigPath);
  core = kc.makeApiClient(k8s.CoreV1Api);
});
after(async () => {
  await s.stop();
});

const P = '/api/v1/namespaces/default/pods';
const podBody = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'busybox' }], ...extra },
});
const binding = (name: string, node: string, meta: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'Binding', metadata: { name, ...meta }, target: { apiVersion: 'v1', kind: 'Node', name: node } });

async function createPod(name: string, extra?: Record<string, unknown>): Promise<any> {
  const r = await s.request('POST', P, { body: podBody(name, extra), headers: { 'user-agent': 'kubectl/v1.33.0 (linux/amd64) kubernetes/abc' } });
  assert.equal(r.status, 201, r.text);
  return r.json();
}

test('discovery and OpenAPI list pods/binding (create)', async () => {
  const v1 = (await s.request('GET', '/api/v1')).json();
  const sub = v1.resources.find((r: any) => r.name === 'pods/binding');
  assert.deepEqual({ kind: sub.kind, verbs: sub.verbs, namespaced: sub.namespaced }, { kind: 'Binding', verbs: ['create'], namespaced: true });
  const path = (await s.request('GET', '/openapi/v2')).json().paths['/api/v1/namespaces/{namespace}/pods/{name}/binding'];
  assert.deepEqual(Object.keys(path).sort(), ['parameters', 'post']);
  assert.equal(path.post.operationId, 'createCoreV1NamespacedPodBinding');
  assert.equal(path.post.parameters[0].schema.$ref, '#/definitions/io.k8s.api.core.v1.Binding');
  // Its options sit on the path, as kube's document has them.
  assert.deepEqual(path.parameters.map((p: any) => p.name), ['dryRun', 'fieldManager', 'fieldValidation', 'name', 'namespace', 'pretty']);
  const v3 = (await s.request('GET', '/openapi/v3/api/v1')).json().paths['/api/v1/namespaces/{namespace}/pods/{name}/binding'];
  assert.equal(v3.post.operationId, 'createCoreV1NamespacedPodBinding');
});

test('a binding assigns the pod: nodeName, annotations, PodScheduled=True; no managedFields entry or generation bump; a watcher sees it', async () => {
  const created = await createPod('bound');
  const rv = created.metadata.resourceVersion;
  const r = await s.request('POST', `${P}/bound/binding`, { body: binding('bound', 'node-1', { annotations: { 'scheduler.example.com/score': '7' } }) });
  assert.equal(r.status, 201, r.text);
  assert.deepEqual(r.json(), { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
  const pod = (await s.request('GET', `${P}/bound`)).json();
  assert.equal(pod.spec.nodeName, 'node-1');
  assert.equal(pod.metadata.annotations['scheduler.example.com/score'], '7');
  const scheduled = pod.status.conditions.find((c: any) => c.type === 'PodScheduled');
  assert.equal(scheduled.status, 'True');
  assert.match(scheduled.lastTransitionTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.equal(pod.status.phase, 'Pending');
  assert.deepEqual(pod.metadata.managedFields, created.metadata.managedFields);
  assert.equal(pod.metadata.generation, created.metadata.generation);
  const events = (await s.watch(`${P}?watch=1&resourceVersion=${rv}&fieldSelector=metadata.name%3Dbound`, (e) => e.length >= 1)).events;
  assert.deepEqual(events.map((e: any) => `${e.type} ${e.object.spec.nodeName}`), ['MODIFIED node-1']);
  // Bound already: 409, nothing written.
  const again = await s.request('POST', `${P}/bound/binding`, { body: binding('bound', 'node-2') });
  assert.equal(again.status, 409);
  assert.equal(again.json().reason, 'Conflict');
  assert.equal(again.json().message, 'Operation cannot be fulfilled on pods/binding "bound": pod bound is already assigned to node "node-1"');
  assert.equal((await s.request('GET', `${P}/bound`)).json().metadata.resourceVersion, pod.metadata.resourceVersion);
});

test('a Binding in protobuf, as client-go sends it for a scheduler', async () => {
  await createPod('by-proto');
  const raw = encodeProtobuf(binding('by-proto', 'node-4'), 'io.k8s.api.core.v1.Binding')!;
  const r = await s.request('POST', `${P}/by-proto/binding`, { raw, headers: { 'content-type': 'application/vnd.kubernetes.protobuf', accept: 'application/json' } });
  assert.equal(r.status, 201, r.text);
  assert.equal((await s.request('GET', `${P}/by-proto`)).json().spec.nodeName, 'node-4');
});

test('client-node binds a pod through createNamespacedPodBinding', async () => {
  await createPod('by-client');
  await core.createNamespacedPodBinding({ name: 'by-client', namespace: 'default', body: { metadata: { name: 'by-client' }, target: { kind: 'Node', name: 'node-3' } } });
  assert.equal((await core.readNamespacedPod({ name: 'by-client', namespace: 'default' })).spec?.nodeName, 'node-3');
});

test('refused bindings: gated pod, failed preconditions, wrong name or target, missing pod; each writes nothing', async () => {
  const gated = await createPod('gated', { schedulingGates: [{ name: 'example.com/hold' }] });
  const plain = await createPod('plain');
  const expect = async (name: string, body: unknown, code: number, reason: string, message?: string) => {
    const r = await s.request('POST', `${P}/${name}/binding`, { body });
    assert.equal(r.status, code, r.text);
    assert.equal(r.json().reason, reason);
    if (message !== undefined) assert.equal(r.json().message, message);
  };
  await expect('gated', binding('gated', 'n'), 409, 'Conflict', 'Operation cannot be fulfilled on pods/binding "gated": pod gated has non-empty .spec.schedulingGates');
  await expect('plain', binding('plain', 'n', { uid: 'not-the-uid' }), 409, 'Conflict', `Operation cannot be fulfilled on pods/binding "plain": Precondition failed: UID in precondition: not-the-uid, UID in object meta: ${plain.metadata.uid}`);
  await expect('plain', binding('plain', 'n', { resourceVersion: '1' }), 409, 'Conflict', `Operation cannot be fulfilled on pods/binding "plain": Precondition failed: ResourceVersion in precondition: 1, ResourceVersion in object meta: ${plain.metadata.resourceVersion}`);
  await expect('plain', binding('other', 'n'), 400, 'BadRequest', 'name in URL does not match name in Binding object');
  await expect('plain', { ...binding('plain', 'n'), target: { kind: 'Pod', name: 'n' } }, 422, 'Invalid', 'Binding "plain" is invalid: target.kind: Unsupported value: "Pod": supported values: "Node", "<empty>"');
  await expect('plain', { ...binding('plain', ''), target: {} }, 422, 'Invalid', 'Binding "plain" is invalid: target.name: Required value');
  await expect('missing', binding('missing', 'n'), 404, 'NotFound', 'pods "missing" not found');
  for (const [name, before] of [['gated', gated], ['plain', plain]] as const) {
    assert.equal((await s.request('GET', `${P}/${name}`)).json().metadata.resourceVersion, before.metadata.resourceVersion);
  }
  // The matching preconditions pass.
  const ok = await s.request('POST', `${P}/plain/binding`, { body: binding('plain', 'n', { uid: plain.metadata.uid, resourceVersion: plain.metadata.resourceVersion }) });
  assert.equal(ok.status, 201, ok.text);
});
