// PodTopologyLabels (on by default, as in kube 1.36): the scheduler's Binding carries the node's
// topology.k8s.io zone and region labels onto the pod; a pod created on a node gets them without
// losing its own; a bound pod's status.nominatedNodeName is cleared. The scheduler here is kube's
// own identity (system:kube-scheduler, bound by the bootstrap policy), a token user.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { requester, dig } from '../../helpers/identities.ts';

const dir = mkdtempSync(join(tmpdir(), 'hearth-topology-'));
const tokenFile = join(dir, 'tokens.csv');
writeFileSync(tokenFile, 'scheduler-token,system:kube-scheduler,uid-scheduler\nalice-token,alice,uid-alice\n');
const scheduler = { token: 'scheduler-token' };
const alice = { token: 'alice-token' };
let s: TestServer;
const requestAs = requester(() => s);
before(async () => {
  s = await startTestServer({ options: { tokenAuthFile: tokenFile } });
});
after(async () => {
  await s.stop();
});

const PODS = '/api/v1/namespaces/default/pods';
const pod = (name: string, extra: Record<string, unknown> = {}, labels?: Record<string, string>) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, labels }, spec: { containers: [{ name: 'c', image: 'busybox' }], ...extra } });
async function node(name: string, labels: Record<string, string>): Promise<void> {
  const r = await s.request('POST', '/api/v1/nodes', { body: { apiVersion: 'v1', kind: 'Node', metadata: { name, labels } } });
  assert.equal(r.status, 201, r.text);
}

test('a Binding to a node carries its zone and region onto the pod, and clears the nomination', async () => {
  await node('zoned', { 'topology.k8s.io/zone': 'z1', 'topology.k8s.io/region': 'r1', 'kubernetes.io/hostname': 'zoned' });
  assert.equal((await s.request('POST', PODS, { body: pod('bound', {}, { app: 'web', 'topology.k8s.io/zone': 'mine' }) })).status, 201);
  const nominated = await s.request('PATCH', `${PODS}/bound/status`, { body: { status: { nominatedNodeName: 'zoned' } }, headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(nominated.status, 200, nominated.text);
  const bind = await requestAs(scheduler, 'POST', `${PODS}/bound/binding`, { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'bound' }, target: { apiVersion: 'v1', kind: 'Node', name: 'zoned' } });
  assert.equal(bind.status, 201, bind.text);
  const got = (await s.request('GET', `${PODS}/bound`)).json();
  // The Binding's labels go over the pod's own (kube's binding overwrites), hostname is not copied.
  assert.deepEqual(got.metadata.labels, { app: 'web', 'topology.k8s.io/zone': 'z1', 'topology.k8s.io/region': 'r1' });
  assert.equal(got.spec.nodeName, 'zoned');
  assert.equal(got.status.nominatedNodeName, undefined);
});

test('a Binding whose target names no kind, or a node without topology, copies nothing', async () => {
  await node('plain', { 'kubernetes.io/hostname': 'plain' });
  for (const [name, target] of [['no-kind', { name: 'zoned' }], ['plain-node', { kind: 'Node', name: 'plain' }], ['missing-node', { kind: 'Node', name: 'nowhere' }]] as const) {
    assert.equal((await s.request('POST', PODS, { body: pod(name) })).status, 201);
    const bind = await requestAs(scheduler, 'POST', `${PODS}/${name}/binding`, { apiVersion: 'v1', kind: 'Binding', metadata: { name }, target });
    assert.equal(bind.status, 201, bind.text);
    assert.equal(dig((await s.request('GET', `${PODS}/${name}`)).json(), 'metadata', 'labels'), undefined, name);
  }
});

test('a pod created on a node gets the topology it lacks, keeping its own', async () => {
  const r = await s.request('POST', PODS, { body: pod('placed', { nodeName: 'zoned' }, { 'topology.k8s.io/region': 'own' }) });
  assert.equal(r.status, 201, r.text);
  assert.deepEqual(r.json().metadata.labels, { 'topology.k8s.io/region': 'own', 'topology.k8s.io/zone': 'z1' });
});

test('a user without pods/binding is refused before anything is copied; with the plugin off, nothing is copied', async () => {
  assert.equal((await s.request('POST', PODS, { body: pod('alices') })).status, 201);
  const refused = await requestAs(alice, 'POST', `${PODS}/alices/binding`, { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'alices' }, target: { kind: 'Node', name: 'zoned' } });
  assert.equal(refused.status, 403);
  assert.equal(refused.json.message, 'pods "alices" is forbidden: User "alice" cannot create resource "pods/binding" in API group "" in the namespace "default"');
  assert.equal(dig((await s.request('GET', `${PODS}/alices`)).json(), 'spec', 'nodeName'), undefined);

  const off = await startTestServer({ options: { disableAdmissionPlugins: ['PodTopologyLabels'] } });
  try {
    assert.equal((await off.request('POST', '/api/v1/nodes', { body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'zoned', labels: { 'topology.k8s.io/zone': 'z1' } } } })).status, 201);
    const r = await off.request('POST', PODS, { body: pod('placed', { nodeName: 'zoned' }) });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json().metadata.labels, undefined);
  } finally {
    await off.stop();
  }
});
