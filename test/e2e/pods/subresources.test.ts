// pods/ephemeralcontainers (what `kubectl debug` patches) and pods/resize, as kube serves them:
// discovery and OpenAPI list both (kind Pod; get, patch, update); a write through either keeps
// only the part of the spec it owns (kube's podEphemeralContainersStrategy and podResizeStrategy),
// records a managedFields entry for its subresource and bumps the generation; kube's validation
// (ValidatePodEphemeralContainersUpdate, the ephemeral-container rules of ValidatePodSpec,
// ValidatePodResize) refuses the rest with 422 in kube's words, leaving the pod as it was.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useTestServer } from '../../helpers/server.ts';

const s = useTestServer();

const P = '/api/v1/namespaces/default/pods';
const KUBECTL_1_27 = '/usr/lib/google-cloud-sdk/bin/kubectl.1.27';
const KUBECTL_1_33 = '/usr/lib/google-cloud-sdk/bin/kubectl.1.33';
const SMP = { 'content-type': 'application/strategic-merge-patch+json' };
const MERGE = { 'content-type': 'application/merge-patch+json' };

type Obj = Record<string, any>;

const resources = (cpu: string, memory: string) => ({ requests: { cpu, memory }, limits: { cpu: `${parseInt(cpu) * 2}m`, memory } });

async function createPod(name: string, spec: Obj = {}, metadata: Obj = {}): Promise<Obj> {
  const body = { apiVersion: 'v1', kind: 'Pod', metadata: { name, ...metadata }, spec: { containers: [{ name: 'app', image: 'nginx', resources: resources('100m', '64Mi') }], ...spec } };
  const r = await s.request('POST', P, { body });
  assert.equal(r.status, 201, r.text);
  return r.json();
}

const debugger_ = (name: string, extra: Obj = {}) => ({ name, image: 'busybox', targetContainerName: 'app', ...extra });

/** A strategic merge patch of the ephemeralcontainers subresource adding `containers`, as kubectl debug sends one. */
function addEphemeral(pod: string, ...containers: Obj[]) {
  return s.request('PATCH', `${P}/${pod}/ephemeralcontainers`, { raw: JSON.stringify({ spec: { ephemeralContainers: containers } }), headers: SMP });
}

/** The pod's resourceVersion now: a refused write must leave it where it was. */
async function rvOf(pod: string): Promise<string> {
  return (await s.request('GET', `${P}/${pod}`)).json().metadata.resourceVersion;
}

function assertInvalid(r: { status: number; text: string; json(): any }, message: string, causes?: Array<[string, string, string]>) {
  assert.equal(r.status, 422, r.text);
  const status = r.json();
  assert.equal(status.reason, 'Invalid');
  assert.equal(status.message, message);
  if (causes) assert.deepEqual(status.details.causes.map((c: any) => [c.reason, c.field, c.message]), causes);
}

test('discovery, aggregated discovery and OpenAPI serve pods/ephemeralcontainers and pods/resize as kube does', async () => {
  const v1 = (await s.request('GET', '/api/v1')).json();
  for (const name of ['pods/ephemeralcontainers', 'pods/resize']) {
    const sub = v1.resources.find((r: any) => r.name === name);
    assert.deepEqual({ kind: sub.kind, verbs: sub.verbs, namespaced: sub.namespaced }, { kind: 'Pod', verbs: ['get', 'patch', 'update'], namespaced: true }, name);
  }
  const aggregated = (await s.request('GET', '/api', { headers: { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' } })).json();
  const pods = aggregated.items[0].versions[0].resources.find((r: any) => r.resource === 'pods');
  const subs = Object.fromEntries(pods.subresources.map((x: any) => [x.subresource, x]));
  assert.deepEqual(subs.ephemeralcontainers, { subresource: 'ephemeralcontainers', responseKind: { group: '', version: '', kind: 'Pod' }, verbs: ['get', 'patch', 'update'] });
  assert.deepEqual(subs.resize, { subresource: 'resize', responseKind: { group: '', version: '', kind: 'Pod' }, verbs: ['get', 'patch', 'update'] });
  const paths = (await s.request('GET', '/openapi/v2')).json().paths;
  const ephemeral = paths['/api/v1/namespaces/{namespace}/pods/{name}/ephemeralcontainers'];
  assert.deepEqual([ephemeral.get.operationId, ephemeral.patch.operationId, ephemeral.put.operationId], ['readCoreV1NamespacedPodEphemeralcontainers', 'patchCoreV1NamespacedPodEphemeralcontainers', 'replaceCoreV1NamespacedPodEphemeralcontainers']);
  assert.equal(paths['/api/v1/namespaces/{namespace}/pods/{name}/resize'].patch.operationId, 'patchCoreV1NamespacedPodResize');
});

test('kubectl debug --target (1.27 and 1.33) adds an ephemeral container through the subresource, with its own managedFields entry', async () => {
  await createPod('debugged');
  for (const [binary, name] of [[KUBECTL_1_27, 'dbg-127'], [KUBECTL_1_33, 'dbg-133']]) {
    const r = await s.kubectl(['debug', 'debugged', '--image=busybox', '--target=app', '--profile=general', `--container=${name}`], { binary });
    assert.equal(r.code, 0, r.stderr);
  }
  const pod = (await s.request('GET', `${P}/debugged/ephemeralcontainers`)).json();
  assert.equal(pod.kind, 'Pod');
  const added = pod.spec.ephemeralContainers;
  assert.deepEqual(added.map((c: any) => c.name), ['dbg-127', 'dbg-133']);
  for (const c of added) {
    assert.equal(c.image, 'busybox');
    assert.equal(c.targetContainerName, 'app');
    // Defaulted as every container is.
    assert.equal(c.terminationMessagePolicy, 'File');
  }
  // The general profile asks for SYS_PTRACE on the debugger.
  for (const c of added) assert.deepEqual(c.securityContext, { capabilities: { add: ['SYS_PTRACE'] } });
  const entries = pod.metadata.managedFields.filter((m: any) => m.subresource === 'ephemeralcontainers');
  assert.equal(entries.length, 2, JSON.stringify(pod.metadata.managedFields));
  for (const e of entries) {
    assert.equal(e.operation, 'Update');
    assert.deepEqual(Object.keys(e.fieldsV1), ['f:spec']);
    assert.deepEqual(Object.keys(e.fieldsV1['f:spec']), ['f:ephemeralContainers']);
  }
  // kube's updatePodGeneration: each spec change counts.
  assert.equal(pod.metadata.generation, 3);
  // kubectl shows the containers as it finds them.
  const described = await s.kubectl(['get', 'pod', 'debugged', '-o', 'jsonpath={.spec.ephemeralContainers[*].targetContainerName}']);
  assert.equal(described.stdout, 'app app');
});

test('a write to ephemeralcontainers keeps only spec.ephemeralContainers; the rest of the request is dropped', async () => {
  const created = await createPod('only-ephemeral', {}, { labels: { tier: 'web' } });
  const patch = { metadata: { labels: { tier: 'changed', extra: 'x' } }, spec: { containers: [{ name: 'app', image: 'httpd' }], activeDeadlineSeconds: 5, ephemeralContainers: [debugger_('dbg')] }, status: { phase: 'Running' } };
  const r = await s.request('PATCH', `${P}/only-ephemeral/ephemeralcontainers`, { raw: JSON.stringify(patch), headers: SMP });
  assert.equal(r.status, 200, r.text);
  const pod = r.json();
  assert.deepEqual(pod.metadata.labels, { tier: 'web' });
  assert.equal(pod.spec.containers[0].image, 'nginx');
  assert.equal(pod.spec.activeDeadlineSeconds, undefined);
  assert.equal(pod.status.phase, 'Pending');
  assert.deepEqual(pod.spec.ephemeralContainers.map((c: any) => c.name), ['dbg']);
  assert.equal(pod.metadata.uid, created.metadata.uid);
  // A PUT of the subresource works the same way.
  pod.spec.ephemeralContainers.push(debugger_('dbg2'));
  pod.metadata.labels = { other: 'y' };
  const put = await s.request('PUT', `${P}/only-ephemeral/ephemeralcontainers`, { body: pod });
  assert.equal(put.status, 200, put.text);
  assert.deepEqual(put.json().spec.ephemeralContainers.map((c: any) => c.name), ['dbg', 'dbg2']);
  assert.deepEqual(put.json().metadata.labels, { tier: 'web' });
});

test('ephemeral containers may be neither changed nor removed once added; the pod itself may not touch them', async () => {
  await createPod('keep');
  assert.equal((await addEphemeral('keep', debugger_('dbg'))).status, 200);
  const rv = await rvOf('keep');
  // Changed: kube's message with a diff of the container after it.
  const changed = await s.request('PATCH', `${P}/keep/ephemeralcontainers`, { raw: JSON.stringify({ spec: { ephemeralContainers: [{ name: 'dbg', image: 'alpine' }] } }), headers: SMP });
  assert.equal(changed.status, 422, changed.text);
  const cause = changed.json().details.causes[0];
  assert.equal(cause.field, 'spec.ephemeralContainers');
  assert.match(cause.message, /^Forbidden: existing ephemeral containers "dbg" may not be changed\n/);
  assert.match(cause.message, /Image: "alpine"/);
  // Removed: a merge patch replaces the list.
  const removed = await s.request('PATCH', `${P}/keep/ephemeralcontainers`, { raw: JSON.stringify({ spec: { ephemeralContainers: [debugger_('other')] } }), headers: MERGE });
  assertInvalid(removed, 'Pod "keep" is invalid: spec.ephemeralContainers: Forbidden: existing ephemeral containers "dbg" may not be removed\n');
  // Through the pod itself: a spec change ValidatePodUpdate forbids.
  const viaPod = await s.request('PATCH', `${P}/keep`, { raw: JSON.stringify({ spec: { ephemeralContainers: [debugger_('sneaky')] } }), headers: SMP });
  assert.equal(viaPod.status, 422, viaPod.text);
  assert.match(viaPod.json().message, /spec: Forbidden: pod updates may not change fields other than/);
  assert.equal(await rvOf('keep'), rv);
});

test('the ephemeral container rules of ValidatePodSpec, in kube order and words', async () => {
  await createPod('rules', { volumes: [{ name: 'data', emptyDir: {} }] });
  const rv = await rvOf('rules');
  const r = await addEphemeral(
    'rules',
    {
      name: 'app',
      image: ' busybox',
      targetContainerName: 'missing',
      ports: [{ containerPort: 80 }],
      resources: { limits: { cpu: '1' } },
      readinessProbe: { exec: { command: ['true'] } },
      lifecycle: { preStop: { exec: { command: ['true'] } } },
      volumeMounts: [{ name: 'data', mountPath: '/data', subPath: 'x' }],
    },
    { name: 'second', image: 'busybox', restartPolicy: 'Always' },
  );
  assertInvalid(r, 'Pod "rules" is invalid: [spec.ephemeralContainers[0].image: Invalid value: " busybox": must not have leading or trailing whitespace, spec.ephemeralContainers[0].name: Duplicate value: "app", spec.ephemeralContainers[0].targetContainerName: Not found: "missing", spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container, spec.ephemeralContainers[0].resources: Forbidden: cannot be set for an Ephemeral Container, spec.ephemeralContainers[0].readinessProbe: Forbidden: cannot be set for an Ephemeral Container, spec.ephemeralContainers[0].lifecycle: Forbidden: cannot be set for an Ephemeral Container, spec.ephemeralContainers[0].volumeMounts[0].subPath: Forbidden: cannot be set for an Ephemeral Container, spec.ephemeralContainers[1].restartPolicy: Forbidden: cannot be set for an Ephemeral Container]');
  // A mount of a volume the pod lacks is the common container check's.
  const mount = await addEphemeral('rules', debugger_('m', { volumeMounts: [{ name: 'nope', mountPath: '/x' }] }));
  assertInvalid(mount, 'Pod "rules" is invalid: spec.ephemeralContainers[0].volumeMounts[0].name: Not found: "nope"');
  assert.equal(await rvOf('rules'), rv);
  // A mount of the pod's volume without subPath is fine.
  assert.equal((await addEphemeral('rules', debugger_('ok', { volumeMounts: [{ name: 'data', mountPath: '/data' }] }))).status, 200);
});

test('ephemeral containers: not on create, not in templates, not in static pods; a dry run writes nothing', async () => {
  const create = await s.request('POST', P, { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'born-with' }, spec: { containers: [{ name: 'app', image: 'nginx' }], ephemeralContainers: [debugger_('dbg')] } } });
  assertInvalid(create, 'Pod "born-with" is invalid: spec.ephemeralContainers: Forbidden: cannot be set on create');
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'tmpl' },
    spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'app', image: 'nginx' }], ephemeralContainers: [debugger_('dbg')] } } },
  };
  const d = await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: deployment });
  assertInvalid(d, 'Deployment.apps "tmpl" is invalid: spec.template.spec.ephemeralContainers: Forbidden: ephemeral containers not allowed in pod template');

  await createPod('mirror', { nodeName: 'node-1' }, { annotations: { 'kubernetes.io/config.mirror': 'abc' } });
  const mirror = await addEphemeral('mirror', debugger_('dbg'));
  assertInvalid(mirror, 'Pod "mirror" is invalid: []: Forbidden: static pods do not support ephemeral containers', [['FieldValueForbidden', '[]', 'Forbidden: static pods do not support ephemeral containers']]);

  await createPod('dry');
  const rv = await rvOf('dry');
  const dry = await s.request('PATCH', `${P}/dry/ephemeralcontainers?dryRun=All`, { raw: JSON.stringify({ spec: { ephemeralContainers: [debugger_('dbg')] } }), headers: SMP });
  assert.equal(dry.status, 200, dry.text);
  assert.deepEqual(dry.json().spec.ephemeralContainers.map((c: any) => c.name), ['dbg']);
  const after = (await s.request('GET', `${P}/dry`)).json();
  assert.equal(after.metadata.resourceVersion, rv);
  assert.equal(after.spec.ephemeralContainers, undefined);
});

test('kubectl patch --subresource resize (1.33) changes a container\'s cpu and memory, nothing else, under its own managedFields entry', async () => {
  await createPod('resized');
  const patch = JSON.stringify({ spec: { containers: [{ name: 'app', image: 'httpd', resources: { requests: { cpu: '150m', memory: '96Mi' }, limits: { cpu: '300m', memory: '96Mi' } } }] } });
  const r = await s.kubectl(['patch', 'pod', 'resized', '--subresource', 'resize', '-p', patch], { binary: KUBECTL_1_33 });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.trim(), 'pod/resized patched');
  const pod = (await s.request('GET', `${P}/resized/resize`)).json();
  assert.deepEqual(pod.spec.containers[0].resources, { limits: { cpu: '300m', memory: '96Mi' }, requests: { cpu: '150m', memory: '96Mi' } });
  // The image is not the resize's to change.
  assert.equal(pod.spec.containers[0].image, 'nginx');
  assert.equal(pod.metadata.generation, 2);
  const entry = pod.metadata.managedFields.find((m: any) => m.subresource === 'resize');
  assert.ok(entry, JSON.stringify(pod.metadata.managedFields));
  assert.equal(entry.operation, 'Update');
  // The same change through the pod itself is refused, as kube refuses it.
  const direct = await s.request('PATCH', `${P}/resized`, { raw: JSON.stringify({ spec: { containers: [{ name: 'app', resources: { requests: { cpu: '120m' } } }] } }), headers: SMP });
  assert.equal(direct.status, 422, direct.text);
});

test('ValidatePodResize: the QoS class stays, requests and limits are not removed, only cpu and memory change; refusals write nothing', async () => {
  await createPod('qos');
  const rv = await rvOf('qos');
  const resize = (container: Obj, type = SMP) => s.request('PATCH', `${P}/qos/resize`, { raw: JSON.stringify({ spec: { containers: [{ name: 'app', ...container }] } }), headers: type });
  // Requests equal to limits make the Burstable pod Guaranteed.
  const guaranteed = await resize({ resources: { requests: { cpu: '200m', memory: '64Mi' }, limits: { cpu: '200m', memory: '64Mi' } } });
  assertInvalid(guaranteed, 'Pod "qos" is invalid: spec: Invalid value: "Burstable": Pod QOS Class may not change as a result of resizing');
  // A merge patch replacing the resources drops a request (requests default to limits: the one without a limit).
  await createPod('requests', { containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '200m' } } }] });
  const removed = await s.request('PATCH', `${P}/requests/resize`, { raw: JSON.stringify({ spec: { containers: [{ name: 'app', resources: { requests: { cpu: '100m' }, limits: { cpu: '200m' } } }] } }), headers: MERGE });
  assertInvalid(removed, 'Pod "requests" is invalid: spec.containers[0].resources.requests: Forbidden: resource requests cannot be removed');
  const storage = await resize({ resources: { requests: { 'ephemeral-storage': '1Gi' } } });
  assertInvalid(storage, 'Pod "qos" is invalid: spec: Forbidden: only cpu and memory resources are mutable');
  const policy = await resize({ resizePolicy: [{ resourceName: 'memory', restartPolicy: 'RestartContainer' }] });
  assertInvalid(policy, 'Pod "qos" is invalid: spec: Forbidden: only cpu and memory resources are mutable');
  // A resize that names a container the pod lacks is a change of containers.
  const renamed = await s.request('PATCH', `${P}/qos/resize`, { raw: JSON.stringify([{ op: 'replace', path: '/spec/containers/0/name', value: 'other' }]), headers: { 'content-type': 'application/json-patch+json' } });
  assertInvalid(renamed, 'Pod "qos" is invalid: spec: Forbidden: only cpu and memory resources are mutable');
  assert.equal(await rvOf('qos'), rv);
});

test('ValidatePodResize: static and Windows pods, and pods on a node that does not report resources, are not resized', async () => {
  await createPod('static-resize', {}, { annotations: { 'kubernetes.io/config.mirror': 'abc' } });
  const body = JSON.stringify({ spec: { containers: [{ name: 'app', resources: { requests: { cpu: '120m' } } }] } });
  assertInvalid(await s.request('PATCH', `${P}/static-resize/resize`, { raw: body, headers: SMP }), 'Pod "static-resize" is invalid: []: Forbidden: static pods cannot be resized');
  await createPod('windows', { os: { name: 'windows' } });
  assertInvalid(await s.request('PATCH', `${P}/windows/resize`, { raw: body, headers: SMP }), 'Pod "windows" is invalid: []: Forbidden: windows pods cannot be resized');
  await createPod('old-node');
  const status = { status: { containerStatuses: [{ name: 'app', image: 'nginx', imageID: '', ready: true, restartCount: 0, state: { running: { startedAt: '2025-01-01T00:00:00Z' } } }] } };
  assert.equal((await s.request('PATCH', `${P}/old-node/status`, { raw: JSON.stringify(status), headers: MERGE })).status, 200);
  assertInvalid(await s.request('PATCH', `${P}/old-node/resize`, { raw: body, headers: SMP }), 'Pod "old-node" is invalid: spec: Forbidden: Pod running on node without support for resize');
});

test('resizePolicy values are validated on every container, as validateContainerCommon does', async () => {
  const body = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'policy' },
    spec: {
      restartPolicy: 'Never',
      containers: [{ name: 'app', image: 'nginx', resizePolicy: [{ resourceName: 'cpu', restartPolicy: 'RestartContainer' }, { resourceName: 'cpu', restartPolicy: 'NotRequired' }, { resourceName: 'gpu', restartPolicy: 'Sometimes' }] }],
    },
  };
  const r = await s.request('POST', P, { body });
  assertInvalid(r, 'Pod "policy" is invalid: [spec.containers[0].resizePolicy: Invalid value: "RestartContainer": must be \'NotRequired\' when `restartPolicy` is \'Never\', spec.containers[0].resizePolicy[1]: Duplicate value: "cpu", spec.containers[0].resizePolicy: Unsupported value: "gpu": supported values: "cpu", "memory", spec.containers[0].resizePolicy: Unsupported value: "Sometimes": supported values: "NotRequired", "RestartContainer", spec.containers[0].resizePolicy: Invalid value: "Sometimes": must be \'NotRequired\' when `restartPolicy` is \'Never\']');
});
