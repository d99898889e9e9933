// managedFields on every built-in kind and its status subresource: each fixture of
// test/fixtures/kinds/ is written as clients write it (an update, a patch, a status patch, each by
// its own field manager) and each write records the entry kube-apiserver records: the manager,
// Update, the version, the subresource, and exactly the fields it changed. A status is always
// there (a non-pointer struct kube writes however empty), so a status write never owns it whole.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useTestServer } from '../../helpers/server.ts';

const DIR = fileURLToPath(new URL('../../fixtures/kinds/', import.meta.url));
const CONDITION = { status: 'True', lastTransitionTime: '2024-05-01T10:00:00Z', reason: 'Checked', message: 'checked by the test' };

/** A status change each kind with a status subresource accepts (kube's status validation included). */
const STATUS_PATCHES: Record<string, unknown> = {
  pods: { message: 'scheduled elsewhere' },
  nodes: { capacity: { cpu: '2' } },
  persistentvolumes: { message: 'released by the test' },
  persistentvolumeclaims: { phase: 'Bound' },
  replicationcontrollers: { observedGeneration: 1 },
  resourcequotas: { hard: { pods: '10' } },
  namespaces: { conditions: [{ type: 'NamespaceDeletionDiscoveryFailure', status: 'False', reason: 'ResourcesDiscovered', message: 'All resources successfully discovered' }] },
  services: { conditions: [{ type: 'Ready', ...CONDITION }] },
  apiservices: { conditions: [{ type: 'Available', ...CONDITION }] },
  deployments: { observedGeneration: 1 },
  replicasets: { observedGeneration: 1 },
  statefulsets: { observedGeneration: 1 },
  daemonsets: { observedGeneration: 1 },
  horizontalpodautoscalers: { currentReplicas: 1 },
  cronjobs: { lastScheduleTime: '2024-05-01T10:00:00Z' },
  jobs: { active: 1 },
  certificatesigningrequests: { conditions: [{ type: 'Failed', status: 'True', reason: 'Checked', message: 'checked by the test' }] },
  ingresses: { loadBalancer: { ingress: [{ ip: '192.0.2.1' }] } },
  servicecidrs: { conditions: [{ type: 'Ready', ...CONDITION }] },
  poddisruptionbudgets: { observedGeneration: 1 },
  volumeattachments: { attached: true },
  validatingadmissionpolicies: { observedGeneration: 1 },
  customresourcedefinitions: { conditions: [{ type: 'Checked', ...CONDITION }] },
  flowschemas: { conditions: [{ type: 'Dangling', ...CONDITION, status: 'False' }] },
  prioritylevelconfigurations: { conditions: [{ type: 'Checked', ...CONDITION }] },
  resourceclaims: { allocation: { devices: { results: [{ request: 'single-gpu-claim', driver: 'driver.example.com', pool: 'node-1', device: 'gpu-0' }] } } },
};

// (without the policy status controller, which would write the status this test writes first)
const s = useTestServer({ options: { controllers: ['*', '-validatingadmissionpolicy-status-controller'] } });

interface Resource {
  group: string;
  version: string;
  resource: string;
  kind: string;
  namespaced: boolean;
  subresources?: Record<string, unknown>;
}
const RESOURCES = (JSON.parse(readFileSync(new URL('../../../schemas/resources.json', import.meta.url), 'utf8')).resources as Resource[]).filter((r) => !(r.group === 'autoscaling' && r.version === 'v1'));

function urlOf(r: Resource, name: string, subresource = ''): string {
  const base = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
  return `${base}${r.namespaced ? '/namespaces/default' : ''}/${r.resource}/${encodeURIComponent(name)}${subresource ? `/${subresource}` : ''}`;
}

const entryOf = (obj: any, manager: string) => obj.metadata.managedFields?.find((e: any) => e.manager === manager);

test('an update, a patch and a status write of every built-in kind each record their own managedFields entry, with the fields they changed', async () => {
  const applied = await s.kubectl(['apply', '-f', DIR]);
  assert.equal(applied.code, 0, applied.stderr);
  const list = JSON.parse((await s.kubectl(['get', '-f', DIR, '-o', 'json'])).stdout).items as any[];
  let statusWrites = 0;
  for (const obj of list) {
    const r = RESOURCES.find((x) => x.kind === obj.kind && (x.group ? `${x.group}/${x.version}` : x.version) === obj.apiVersion)!;
    const what = `${r.resource}/${obj.metadata.name}`;
    const name = obj.metadata.name;

    const hadLabels = !!obj.metadata.labels;
    const body = structuredClone(obj);
    body.metadata.labels = { ...obj.metadata.labels, 'test-update': 'yes' };
    const put = await s.request('PUT', `${urlOf(r, name)}?fieldManager=test-update`, { body });
    assert.equal(put.status, 200, `${what}: ${put.text}`);
    const updated = entryOf(put.json(), 'test-update');
    assert.deepEqual(updated && [updated.operation, updated.apiVersion, updated.subresource, updated.fieldsV1], ['Update', obj.apiVersion, undefined, { 'f:metadata': { 'f:labels': { ...(hadLabels ? {} : { '.': {} }), 'f:test-update': {} } } }], what);

    const patch = await s.request('PATCH', `${urlOf(r, name)}?fieldManager=test-patch`, { raw: JSON.stringify({ metadata: { annotations: { 'test-patch': 'yes' } } }), headers: { 'content-type': 'application/merge-patch+json' } });
    assert.equal(patch.status, 200, `${what}: ${patch.text}`);
    const patched = entryOf(patch.json(), 'test-patch');
    assert.deepEqual(patched && [patched.operation, patched.fieldsV1], ['Update', { 'f:metadata': { 'f:annotations': { 'f:test-patch': {} } } }], what);

    if (!r.subresources?.status) continue;
    const change = STATUS_PATCHES[r.resource];
    assert.ok(change, `a status change for ${r.resource}`);
    const status = await s.request('PATCH', `${urlOf(r, name, 'status')}?fieldManager=test-status`, { raw: JSON.stringify({ status: change }), headers: { 'content-type': 'application/merge-patch+json' } });
    assert.equal(status.status, 200, `${what}/status: ${status.text}`);
    const entry = entryOf(status.json(), 'test-status');
    assert.ok(entry, `${what}/status recorded test-status: ${JSON.stringify(status.json().metadata.managedFields)}`);
    assert.deepEqual([entry.operation, entry.subresource, Object.keys(entry.fieldsV1)], ['Update', 'status', ['f:status']], what);
    // The status was there before the write (kube writes the struct however empty): the write owns what it set in it, not the status itself.
    assert.equal('.' in entry.fieldsV1['f:status'], false, `${what}: ${JSON.stringify(entry.fieldsV1)}`);
    // Nothing the status write did is attributed to the managers of the main resource, nor the other way round.
    assert.deepEqual(entryOf(status.json(), 'test-patch')?.fieldsV1, patched.fieldsV1, what);
    statusWrites++;
  }
  assert.equal(statusWrites, Object.keys(STATUS_PATCHES).length, 'every kind with a status subresource had its status written');
});

test('a Node is created with its status and its Go zero values, so kubectl taint records kubectl-taint as kube does', async () => {
  // As kubectl's own command tests register their node (they run no kubelet).
  const dir = mkdtempSync(join(tmpdir(), 'hearth-node-'));
  try {
    const file = join(dir, 'node.json');
    writeFileSync(file, JSON.stringify({ kind: 'Node', apiVersion: 'v1', metadata: { name: '127.0.0.1', annotations: { 'save-managers': 'true' } }, status: { capacity: { memory: '1Gi' } } }));
    const created = await s.kubectl(['create', '-f', file]);
    assert.equal(created.code, 0, created.stderr);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const node = (await s.request('GET', '/api/v1/nodes/127.0.0.1')).json();
  // (TaintNodesByCondition's taint, which no manager owns: admission runs after the create's managed fields)
  assert.deepEqual(node.spec, { taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }] });
  assert.deepEqual(node.status, {
    capacity: { memory: '1Gi' },
    allocatable: { memory: '1Gi' },
    daemonEndpoints: { kubeletEndpoint: { Port: 0 } },
    nodeInfo: { machineID: '', systemUUID: '', bootID: '', kernelVersion: '', osImage: '', containerRuntimeVersion: '', kubeletVersion: '', kubeProxyVersion: '', operatingSystem: '', architecture: '' },
  });
  // The create's entry owns the annotation only: a status set through the main resource belongs to no manager (kube's reset fields).
  assert.deepEqual(node.metadata.managedFields.map((e: any) => [e.manager, e.fieldsV1]), [['kubectl-create', { 'f:metadata': { 'f:annotations': { '.': {}, 'f:save-managers': {} } } }]]);
  const taint = await s.kubectl(['taint', 'node', '127.0.0.1', 'dedicated=foo:PreferNoSchedule']);
  assert.equal(taint.code, 0, taint.stderr);
  const managers = await s.kubectl(['get', 'node', '127.0.0.1', '--show-managed-fields', '-o=jsonpath={.metadata.managedFields[*].manager}']);
  assert.match(managers.stdout, /kubectl-taint/);
  const tainted = (await s.request('GET', '/api/v1/nodes/127.0.0.1')).json();
  assert.deepEqual(entryOf(tainted, 'kubectl-taint').fieldsV1, { 'f:spec': { 'f:taints': {} } });
});
