// A pod's spec is immutable but for images, a lowered activeDeadlineSeconds, added tolerations
// and removed scheduling gates, as kube's ValidatePodUpdate rules; status writes and bindings are
// not pod updates. Nothing refused is written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { invalidCauses, useTestServer } from '../../helpers/server.ts';

const s = useTestServer();

const PODS = '/api/v1/namespaces/default/pods';
const FORBIDDEN_HEAD =
  'Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n';

async function createPod(name: string, spec: Record<string, unknown> = {}): Promise<any> {
  const r = await s.request('POST', PODS, {
    body: { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'nginx', ports: [{ containerPort: 80 }] }], ...spec } },
  });
  assert.equal(r.status, 201, r.text);
  return r.json();
}

const mergePatch = (name: string, patch: unknown) => s.request('PATCH', `${PODS}/${name}`, { body: patch, headers: { 'content-type': 'application/merge-patch+json' } });
// (kubectl's patch: containers merged by name, so what the patch leaves out stays)
const strategicPatch = (name: string, patch: unknown) => s.request('PATCH', `${PODS}/${name}`, { body: patch, headers: { 'content-type': 'application/strategic-merge-patch+json' } });

test('images, a lower activeDeadlineSeconds and added tolerations may change; other spec fields may not', async () => {
  const pod = await createPod('p1', { activeDeadlineSeconds: 100, tolerations: [{ key: 'a', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 5 }] });
  const ok = await strategicPatch('p1', {
    spec: {
      containers: [{ name: 'c', image: 'nginx:2' }],
      activeDeadlineSeconds: 50,
      tolerations: [
        { key: 'a', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 10 },
        { key: 'b', operator: 'Exists' },
      ],
    },
  });
  assert.equal(ok.status, 200, ok.text);
  assert.equal(ok.json().spec.containers[0].image, 'nginx:2');

  // A port change: the whole spec is checked (the message starts as kube's; its diff is hearth's).
  const body = ok.json();
  body.spec.containers[0].ports[0].containerPort = 8080;
  const r = await s.request('PUT', `${PODS}/p1`, { body });
  assert.equal(r.status, 422, r.text);
  const [cause] = r.json().details.causes;
  assert.equal(cause.field, 'spec');
  assert.ok(cause.message.startsWith(FORBIDDEN_HEAD), cause.message);
  assert.match(cause.message, /- \tContainers: .*"containerPort":80/);
  assert.match(cause.message, /\+ \tContainers: .*"containerPort":8080/);

  const causes = (patch: unknown) => invalidCauses(s, 'PATCH', `${PODS}/p1`, patch, { 'content-type': 'application/merge-patch+json' });
  assert.deepEqual(await causes({ spec: { activeDeadlineSeconds: 60 } }), [['spec.activeDeadlineSeconds', 'Invalid value: 60: must be less than or equal to previous value']]);
  assert.deepEqual(await causes({ spec: { activeDeadlineSeconds: null } }), [['spec.activeDeadlineSeconds', 'Invalid value: "null": must not update from a positive integer to nil value']]);
  assert.deepEqual(await causes({ spec: { tolerations: [{ key: 'b', operator: 'Exists' }] } }), [['spec.tolerations', 'Forbidden: existing toleration can not be modified except its tolerationSeconds']]);
  const padded = await s.request('PATCH', `${PODS}/p1`, { body: { spec: { containers: [{ name: 'c', image: ' nginx' }] } }, headers: { 'content-type': 'application/strategic-merge-patch+json' } });
  assert.deepEqual(
    padded.json().details.causes.map((c: { field: string; message: string }) => [c.field, c.message]),
    [['spec.containers[0].image', 'Invalid value: " nginx": must not have leading or trailing whitespace']],
  );
  const added = structuredClone(ok.json());
  added.spec.containers.push({ name: 'd', image: 'busybox' });
  assert.deepEqual(await invalidCauses(s, 'PUT', `${PODS}/p1`, added), [['spec.containers', 'Forbidden: pod updates may not add or remove containers']]);

  const now = (await s.request('GET', `${PODS}/p1`)).json();
  assert.equal(now.metadata.resourceVersion, ok.json().metadata.resourceVersion);
  assert.equal(now.spec.containers[0].ports[0].containerPort, 80);
  assert.equal(pod.metadata.uid, now.metadata.uid);
});

test('scheduling gates may only be removed; a binding and a status write are not pod updates', async () => {
  await createPod('p2', { schedulingGates: [{ name: 'one' }, { name: 'two' }] });
  const causes = (patch: unknown) => invalidCauses(s, 'PATCH', `${PODS}/p2`, patch, { 'content-type': 'application/merge-patch+json' });
  assert.deepEqual(await causes({ spec: { schedulingGates: [{ name: 'one' }, { name: 'three' }] } }), [
    ['spec.schedulingGates', "Forbidden: only deletion is allowed, but found new scheduling gate 'three'"],
  ]);
  const removed = await mergePatch('p2', { spec: { schedulingGates: [{ name: 'two' }] } });
  assert.equal(removed.status, 200, removed.text);
  assert.deepEqual(removed.json().spec.schedulingGates, [{ name: 'two' }]);
  // An unchanged spec with other metadata is fine.
  assert.equal((await mergePatch('p2', { metadata: { labels: { a: 'b' } } })).status, 200);

  await createPod('p3');
  const bound = await s.request('POST', `${PODS}/p3/binding`, { body: { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'p3' }, target: { kind: 'Node', name: 'n1' } } });
  assert.equal(bound.status, 201, bound.text);
  const status = await s.request('PATCH', `${PODS}/p3/status`, { body: { status: { phase: 'Running' } }, headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(status.status, 200, status.text);
  assert.equal(status.json().spec.nodeName, 'n1');
  // The node itself is part of the spec a pod update may not change.
  const moved = await invalidCauses(s, 'PATCH', `${PODS}/p3`, { spec: { nodeName: 'n2' } }, { 'content-type': 'application/merge-patch+json' });
  assert.match(moved[0][1], /^Forbidden: pod updates may not change fields other than/);
});

test('a pod stored before quantities were canonical compares by value (no API write can store one now: checked directly)', async () => {
  const { validatePodUpdate } = await import('../../../server/registry/kinds/core/pods/validation.ts');
  const spec = (cpu: string, memory: string) => ({ containers: [{ name: 'c', image: 'nginx', resources: { limits: { cpu, memory } } }] });
  assert.deepEqual(validatePodUpdate({ spec: spec('1', '1Gi') }, { spec: spec('1000m', '1024Mi') }), []);
  const changed = validatePodUpdate({ spec: spec('2', '1Gi') }, { spec: spec('1000m', '1024Mi') });
  assert.equal(changed.length, 1);
  assert.ok(changed[0].message.startsWith(FORBIDDEN_HEAD), changed[0].message);
});
