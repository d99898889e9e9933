// The Node authorizer's graph (server/authorization/node/graph.ts, after kube's graph.go and
// graph_test.go): what a pod on a node references is reachable from that node only, through every
// kind of reference kube's pod visitors know; a pod's edges are replaced when it is re-added and
// gone when it is deleted, with the vertices only it held; PVs reach their claim's node; mirror
// pods reach nothing; and the populator's updates follow graph_populator.go.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NodeGraph, pvKubeletSecretNames, type VertexType } from '../../../../server/authorization/node/graph.ts';
import { visitPodConfigMapNames, visitPodSecretNames } from '../../../../server/util/pod-references.ts';
import { applyGraphChange } from '../../../../server/authorization/node/graph-populator.ts';
import { nodeAuthorizer } from '../../../../server/authorization/node/authorizer.ts';
import type { AuthorizationAttributes } from '../../../../server/authorization/authorizer.ts';

type Obj = Record<string, unknown>;

function pod(name: string, nodeName: string, spec: Obj = {}, extra: Obj = {}): Obj {
  return { metadata: { name, namespace: 'ns', uid: `uid-${name}`, ...(extra.metadata as Obj) }, spec: { nodeName, ...spec }, ...(extra.status ? { status: extra.status } : {}) };
}

const reaches = (g: NodeGraph, node: string, type: VertexType, name: string, namespace = 'ns') => g.hasPathFrom(node, type, namespace, name).found;

test('a pod reaches its node, and what it references reaches that node only', () => {
  const g = new NodeGraph();
  g.addPod(pod('p1', 'n1', { serviceAccountName: 'sa', volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'claim' } }, { name: 'cm', configMap: { name: 'cm1' } }, { name: 's', secret: { secretName: 's1' } }] }));
  g.addPod(pod('p2', 'n2'));
  for (const [type, name] of [['pod', 'p1'], ['serviceAccount', 'sa'], ['pvc', 'claim'], ['configmap', 'cm1'], ['secret', 's1']] as [VertexType, string][]) {
    assert.ok(reaches(g, 'n1', type, name), `${type} ${name} reaches n1`);
    assert.ok(!reaches(g, 'n2', type, name), `${type} ${name} does not reach n2`);
  }
  assert.deepEqual(g.hasPathFrom('n2', 'secret', 'ns', 's1'), { found: false, error: "node 'n2' cannot get secret ns/s1, no relationship to this object was found in the node authorizer graph" });
  assert.deepEqual(g.hasPathFrom('n3', 'secret', 'ns', 's1'), { found: false, error: "unknown node 'n3' cannot get secret ns/s1" });
  assert.deepEqual(g.hasPathFrom('n1', 'secret', 'ns', 'other'), { found: false, error: "node 'n1' cannot get unknown secret ns/other" });
  // Same name, other namespace: another object.
  assert.ok(!reaches(g, 'n1', 'secret', 's1', 'elsewhere'));
});

test("kube's pod visitors: pull secrets, env, envFrom of every container kind, and each volume source", () => {
  const spec: Obj = {
    imagePullSecrets: [{ name: 'pull' }, { name: '' }],
    initContainers: [{ name: 'i', envFrom: [{ secretRef: { name: 'init-envfrom' } }, { configMapRef: { name: 'init-cm-envfrom' } }] }],
    containers: [{ name: 'c', env: [{ name: 'A', valueFrom: { secretKeyRef: { name: 'env-secret', key: 'k' } } }, { name: 'B', valueFrom: { configMapKeyRef: { name: 'env-cm', key: 'k' } } }, { name: 'C', value: 'plain' }] }],
    ephemeralContainers: [{ name: 'e', envFrom: [{ secretRef: { name: 'ephemeral-secret' } }] }],
    volumes: [
      { name: 'p', projected: { sources: [{ secret: { name: 'projected-secret' } }, { configMap: { name: 'projected-cm' } }, { serviceAccountToken: { path: 't' } }] } },
      { name: 'csi', csi: { driver: 'd', nodePublishSecretRef: { name: 'csi-secret' } } },
      { name: 'cephfs', cephfs: { monitors: ['m'], secretRef: { name: 'cephfs-secret' } } },
      { name: 'rbd', rbd: { monitors: ['m'], image: 'i', secretRef: { name: 'rbd-secret' } } },
      { name: 'iscsi', iscsi: { targetPortal: 't', iqn: 'q', lun: 0, secretRef: { name: 'iscsi-secret' } } },
      { name: 'flex', flexVolume: { driver: 'd', secretRef: { name: 'flex-secret' } } },
      { name: 'azure', azureFile: { secretName: 'azure-secret', shareName: 's' } },
      { name: 'cm', configMap: { name: 'volume-cm' } },
    ],
  };
  const names = (visit: typeof visitPodSecretNames) => {
    const out: string[] = [];
    visit({ spec }, (n) => out.push(n));
    return out;
  };
  assert.deepEqual(names(visitPodSecretNames), ['pull', 'init-envfrom', 'env-secret', 'ephemeral-secret', 'projected-secret', 'csi-secret', 'cephfs-secret', 'rbd-secret', 'iscsi-secret', 'flex-secret', 'azure-secret']);
  assert.deepEqual(names(visitPodConfigMapNames), ['init-cm-envfrom', 'env-cm', 'projected-cm', 'volume-cm']);
});

test('ephemeral volumes and ResourceClaims: the names kube derives', () => {
  const g = new NodeGraph();
  g.addPod(pod('p', 'n1', { volumes: [{ name: 'scratch', ephemeral: { volumeClaimTemplate: { spec: {} } } }], resourceClaims: [{ name: 'gpu', resourceClaimName: 'shared-gpu' }, { name: 'tpl', resourceClaimTemplateName: 't' }, { name: 'pending', resourceClaimTemplateName: 't' }] }, { status: { resourceClaimStatuses: [{ name: 'tpl', resourceClaimName: 'p-tpl-abc' }], extendedResourceClaimStatus: { resourceClaimName: 'p-extended' } } }));
  assert.ok(reaches(g, 'n1', 'pvc', 'p-scratch'));
  assert.ok(reaches(g, 'n1', 'resourceclaim', 'shared-gpu'));
  assert.ok(reaches(g, 'n1', 'resourceclaim', 'p-tpl-abc'));
  assert.ok(reaches(g, 'n1', 'resourceclaim', 'p-extended'));
  // The claim still to be generated has no name yet, so no vertex.
  assert.equal(g.size, 6);
});

test("a deleted pod takes its edges and the vertices only it held; a shared secret stays for the other node's pod", () => {
  const g = new NodeGraph();
  g.addPod(pod('p1', 'n1', { volumes: [{ name: 's', secret: { secretName: 'shared' } }, { name: 'o', secret: { secretName: 'only-p1' } }] }));
  g.addPod(pod('p2', 'n2', { volumes: [{ name: 's', secret: { secretName: 'shared' } }] }));
  assert.ok(reaches(g, 'n1', 'secret', 'shared') && reaches(g, 'n2', 'secret', 'shared'));
  g.deletePod('p1', 'ns');
  assert.ok(!reaches(g, 'n1', 'secret', 'shared'));
  assert.ok(reaches(g, 'n2', 'secret', 'shared'));
  assert.ok(!g.hasVertex('secret', 'ns', 'only-p1'));
  assert.ok(!g.hasVertex('pod', 'ns', 'p1'));
  // n1 had no other pod: its vertex went with p1's edge.
  assert.ok(!g.hasVertex('node', '', 'n1'));
  g.deletePod('p2', 'ns');
  assert.equal(g.size, 0);
});

test("re-adding a pod replaces its edges; a mirror pod reaches its node and nothing else", () => {
  const g = new NodeGraph();
  g.addPod(pod('p', 'n1', { volumes: [{ name: 's', secret: { secretName: 'old' } }] }));
  g.addPod(pod('p', 'n1', { volumes: [{ name: 's', secret: { secretName: 'new' } }] }));
  assert.ok(!g.hasVertex('secret', 'ns', 'old'));
  assert.ok(reaches(g, 'n1', 'secret', 'new'));
  g.addPod(pod('static', 'n1', { volumes: [{ name: 's', secret: { secretName: 'mirror-secret' } }], serviceAccountName: 'sa' }, { metadata: { annotations: { 'kubernetes.io/config.mirror': 'hash' } } }));
  assert.ok(reaches(g, 'n1', 'pod', 'static'));
  assert.ok(!g.hasVertex('secret', 'ns', 'mirror-secret'));
  assert.ok(!g.hasVertex('serviceAccount', 'ns', 'sa'));
});

test('a bound PV reaches the node of a pod using its claim, with the kubelet-visible secrets only', () => {
  const g = new NodeGraph();
  const pv = {
    metadata: { name: 'pv1' },
    spec: { claimRef: { namespace: 'ns', name: 'claim' }, csi: { driver: 'd', volumeHandle: 'h', controllerPublishSecretRef: { namespace: 'sys', name: 'controller' }, nodeStageSecretRef: { namespace: 'sys', name: 'stage' } } },
  };
  assert.deepEqual(pvKubeletSecretNames(pv), [['sys', 'stage']]);
  assert.deepEqual(pvKubeletSecretNames({ spec: { claimRef: { namespace: 'ns' }, rbd: { secretRef: { name: 'rbd' } } } }), [['ns', 'rbd']]);
  g.addPV(pv);
  assert.ok(!reaches(g, 'n1', 'pv', 'pv1', ''), 'no pod uses the claim yet');
  g.addPod(pod('p', 'n1', { volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'claim' } }] }));
  assert.ok(reaches(g, 'n1', 'pv', 'pv1', ''));
  assert.ok(reaches(g, 'n1', 'secret', 'stage', 'sys'));
  assert.ok(!g.hasVertex('secret', 'sys', 'controller'));
  g.deletePV('pv1');
  assert.ok(!g.hasVertex('pv', '', 'pv1'));
  assert.ok(reaches(g, 'n1', 'pvc', 'claim'));
});

test('the populator: unbound pods are left out, binding adds, a status update changes nothing, deletion removes', () => {
  const g = new NodeGraph();
  const unbound = pod('p', '', { volumes: [{ name: 's', secret: { secretName: 's' } }] });
  applyGraphChange(g, 'pods', false, unbound);
  assert.equal(g.size, 0);
  const bound = pod('p', 'n1', { volumes: [{ name: 's', secret: { secretName: 's' } }] });
  applyGraphChange(g, 'pods', false, bound, unbound);
  assert.ok(reaches(g, 'n1', 'secret', 's'));
  // An ephemeral container added by `kubectl debug` brings its references.
  const debugged = pod('p', 'n1', { volumes: [{ name: 's', secret: { secretName: 's' } }], ephemeralContainers: [{ name: 'dbg', envFrom: [{ configMapRef: { name: 'debug-cm' } }] }] });
  applyGraphChange(g, 'pods', false, debugged, bound);
  assert.ok(reaches(g, 'n1', 'configmap', 'debug-cm'));
  applyGraphChange(g, 'pods', true, debugged);
  assert.equal(g.size, 0);
  applyGraphChange(g, 'volumeattachments.storage.k8s.io', false, { metadata: { name: 'va' }, spec: { nodeName: 'n1' } });
  assert.ok(reaches(g, 'n1', 'volumeattachment', 'va', ''));
  applyGraphChange(g, 'volumeattachments.storage.k8s.io', true, { metadata: { name: 'va' }, spec: { nodeName: 'n1' } });
  assert.equal(g.size, 0);
});

test("the authorizer's decisions and kube's reasons", () => {
  const g = new NodeGraph();
  g.addPod(pod('p1', 'n1', { serviceAccountName: 'sa', volumes: [{ name: 's', secret: { secretName: 's1' } }] }));
  const z = nodeAuthorizer(g);
  const n1 = { name: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] };
  const ask = (over: Partial<AuthorizationAttributes>, user = n1) =>
    z.authorize({ user, verb: 'get', isResourceRequest: true, path: '', apiGroup: '', apiVersion: 'v1', resource: 'secrets', subresource: '', namespace: 'ns', name: 's1', ...over });
  assert.deepEqual(ask({}), { decision: 'allow', reason: '' });
  assert.deepEqual(ask({ name: 'nope' }), { decision: 'noopinion', reason: "no relationship found between node 'n1' and this object" });
  assert.deepEqual(ask({ verb: 'list', name: '' }), { decision: 'noopinion', reason: 'No Object name found' });
  assert.deepEqual(ask({ verb: 'update' }), { decision: 'noopinion', reason: 'can only read resources of this type' });
  assert.deepEqual(ask({}, { name: 'system:node:n1', groups: ['system:authenticated'] }), { decision: 'noopinion', reason: '' });
  assert.deepEqual(ask({}, { name: 'system:node:', groups: ['system:nodes'] }), { decision: 'noopinion', reason: 'unknown node for user "system:node:"' });
  assert.deepEqual(ask({ resource: 'serviceaccounts', subresource: 'token', verb: 'create', name: 'sa' }), { decision: 'allow', reason: '' });
  assert.deepEqual(ask({ resource: 'pods', verb: 'list', name: '', fieldSelectorRequirements: [{ field: 'spec.nodeName', op: '=', value: 'n1' }] }), { decision: 'allow', reason: '' });
  assert.deepEqual(ask({ resource: 'pods', verb: 'list', name: '', fieldSelectorRequirements: [{ field: 'spec.nodeName', op: '!=', value: 'n1' }] }), { decision: 'noopinion', reason: 'can only list/watch pods with spec.nodeName field selector' });
  assert.deepEqual(ask({ resource: 'nodes', namespace: '', name: 'n2' }), { decision: 'noopinion', reason: "node 'n1' cannot read 'n2', only its own Node object" });
  assert.deepEqual(ask({ resource: 'nodes', namespace: '', verb: 'list', name: '' }), { decision: 'noopinion', reason: "node 'n1' cannot read all nodes, only its own Node object" });
  assert.deepEqual(ask({ resource: 'leases', apiGroup: 'coordination.k8s.io', namespace: 'kube-node-lease', name: 'n2', verb: 'update' }), { decision: 'noopinion', reason: 'can only access node lease with the same name as the requesting node' });
  // ResourceSlices: by the graph, or listed with their spec.nodeName selector.
  g.addResourceSlice('slice-n1', 'n1');
  const slices = { apiGroup: 'resource.k8s.io', resource: 'resourceslices', namespace: '' };
  assert.deepEqual(ask({ ...slices, name: 'slice-n1' }), { decision: 'allow', reason: '' });
  assert.deepEqual(ask({ ...slices, verb: 'list', name: '', fieldSelectorRequirements: [{ field: 'spec.nodeName', op: '=', value: 'n1' }] }), { decision: 'allow', reason: '' });
  assert.deepEqual(ask({ ...slices, verb: 'list', name: '' }), { decision: 'noopinion', reason: 'can only list/watch/deletecollection resourceslices with nodeName field selector' });
  // Not subdivided: NodeRules (services are readable, deployments are not).
  assert.deepEqual(ask({ resource: 'services', verb: 'list', name: '' }), { decision: 'allow', reason: '' });
  assert.deepEqual(ask({ resource: 'deployments', apiGroup: 'apps', verb: 'list', name: '' }), { decision: 'noopinion', reason: '' });
  assert.deepEqual(z.rulesFor!(n1, 'ns'), { resourceRules: [], nonResourceRules: [], incomplete: true, evaluationError: 'node authorizer does not support user rule resolution' });
});
