// HorizontalPodAutoscalers are kept as autoscaling/v2 and served as autoscaling/v1 too, converted
// as kube converts them: a target CPU is a cpu metric; what v1 cannot hold travels in kube's
// round-trip annotations, so a v1 client that writes back what it read loses nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { invalidCauses, kubectlsToTest, useTestServer } from '../../helpers/server.ts';

const s = useTestServer();

const V2 = '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers';
const V1 = '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers';
const target = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' };
const v1Hpa = (name: string, spec: Record<string, unknown> = {}, annotations?: Record<string, string>) => ({
  apiVersion: 'autoscaling/v1',
  kind: 'HorizontalPodAutoscaler',
  metadata: { name, ...(annotations ? { annotations } : {}) },
  spec: { scaleTargetRef: target, maxReplicas: 5, ...spec },
});
const cpuMetric = (utilization: number) => ({ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: utilization } } });
const podsMetric = { type: 'Pods', pods: { metric: { name: 'packets-per-second' }, target: { type: 'AverageValue', averageValue: '1k' } } };

test('a v1 target CPU is a v2 cpu metric; without one, v1 means the 80% default', async () => {
  const created = await s.request('POST', V1, { body: v1Hpa('cpu', { targetCPUUtilizationPercentage: 70 }) });
  assert.equal(created.status, 201, created.text);
  assert.equal(created.json().spec.targetCPUUtilizationPercentage, 70);
  const v2 = (await s.request('GET', `${V2}/cpu`)).json();
  assert.equal(v2.apiVersion, 'autoscaling/v2');
  assert.deepEqual(v2.spec, { scaleTargetRef: target, minReplicas: 1, maxReplicas: 5, metrics: [cpuMetric(70)] });
  assert.equal(v2.metadata.annotations, undefined);

  // kube answers a v1 create with the stored object converted back: the default shows.
  const plain = await s.request('POST', V1, { body: v1Hpa('plain') });
  assert.equal(plain.status, 201, plain.text);
  assert.equal(plain.json().spec.targetCPUUtilizationPercentage, 80);
  assert.deepEqual((await s.request('GET', `${V2}/plain`)).json().spec.metrics, [cpuMetric(80)]);
});

test('what v1 cannot hold travels in the round-trip annotations, and a v1 write-back keeps it', async () => {
  const behavior = { scaleDown: { stabilizationWindowSeconds: 60, policies: [{ type: 'Pods', value: 1, periodSeconds: 30 }] } };
  const v2Body = { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'rich', annotations: { team: 'web' } }, spec: { scaleTargetRef: target, maxReplicas: 9, metrics: [podsMetric, cpuMetric(60)], behavior } };
  const created = await s.request('POST', V2, { body: v2Body });
  assert.equal(created.status, 201, created.text);
  const stored = created.json();
  // The status, as the autoscaler controller writes it.
  const status = {
    ...stored,
    status: {
      currentReplicas: 2,
      desiredReplicas: 3,
      currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 72, averageValue: '350m' } } }],
      conditions: [{ type: 'AbleToScale', status: 'True', lastTransitionTime: '2026-11-20T10:00:00Z', reason: 'ReadyForNewScale', message: 'ok' }],
    },
  };
  assert.equal((await s.request('PUT', `${V2}/rich/status`, { body: status })).status, 200);

  const v1 = (await s.request('GET', `${V1}/rich`)).json();
  assert.equal(v1.spec.targetCPUUtilizationPercentage, 60);
  assert.equal(v1.spec.metrics, undefined);
  assert.equal(v1.status.currentCPUUtilizationPercentage, 72);
  assert.deepEqual(v1.metadata.annotations, {
    'autoscaling.alpha.kubernetes.io/behavior':
      '{"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":4,"PeriodSeconds":15},{"Type":"Percent","Value":100,"PeriodSeconds":15}],"Tolerance":null},"ScaleDown":{"StabilizationWindowSeconds":60,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":1,"PeriodSeconds":30}],"Tolerance":null}}',
    'autoscaling.alpha.kubernetes.io/conditions': '[{"type":"AbleToScale","status":"True","lastTransitionTime":"2026-11-20T10:00:00Z","reason":"ReadyForNewScale","message":"ok"}]',
    'autoscaling.alpha.kubernetes.io/current-metrics': '[{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":72,"currentAverageValue":"350m"}}]',
    'autoscaling.alpha.kubernetes.io/metrics': '[{"type":"Pods","pods":{"metricName":"packets-per-second","targetAverageValue":"1k"}}]',
    team: 'web',
  });

  // Written back as read: nothing changes, nothing is written.
  const same = await s.request('PUT', `${V1}/rich`, { body: v1 });
  assert.equal(same.status, 200, same.text);
  assert.equal(same.json().metadata.resourceVersion, v1.metadata.resourceVersion);

  // A v1 client changes what it knows; the rest survives, and no annotation is stored.
  const bumped = await s.request('PUT', `${V1}/rich`, { body: { ...v1, spec: { ...v1.spec, maxReplicas: 12, targetCPUUtilizationPercentage: 50 } } });
  assert.equal(bumped.status, 200, bumped.text);
  const after = (await s.request('GET', `${V2}/rich`)).json();
  assert.equal(after.spec.maxReplicas, 12);
  assert.deepEqual(after.spec.metrics, [podsMetric, cpuMetric(50)]);
  assert.equal(after.spec.behavior.scaleDown.stabilizationWindowSeconds, 60);
  assert.deepEqual(after.metadata.annotations, { team: 'web' });
  assert.equal(after.status.conditions[0].reason, 'ReadyForNewScale');
});

test('lists and watches in v1 convert what v2 wrote', async () => {
  const list = (await s.request('GET', V1)).json();
  assert.ok(list.items.length >= 3);
  for (const item of list.items) {
    assert.equal(item.apiVersion, 'autoscaling/v1');
    assert.equal(item.spec.metrics, undefined);
    assert.equal(typeof item.spec.targetCPUUtilizationPercentage, 'number');
  }
  const watching = s.watch(`${V1}?watch=1&resourceVersion=${list.metadata.resourceVersion}`, (events) => events.length >= 1);
  await new Promise((r) => setTimeout(r, 100));
  const patched = await s.request('PATCH', `${V2}/cpu`, { body: { spec: { metrics: [cpuMetric(40)] } }, headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(patched.status, 200, patched.text);
  const { events } = await watching;
  assert.equal(events[0].type, 'MODIFIED');
  assert.equal(events[0].object.apiVersion, 'autoscaling/v1');
  assert.equal(events[0].object.spec.targetCPUUtilizationPercentage, 40);
});

test('v1 objects are validated in their v2 form: metrics from the annotation at their v2 paths', async () => {
  const bad = v1Hpa('bad', { targetCPUUtilizationPercentage: 0 }, { 'autoscaling.alpha.kubernetes.io/metrics': '[{"type":"Pods","pods":{"metricName":"","targetAverageValue":"1"}}]' });
  assert.deepEqual(await invalidCauses(s, 'POST', V1, bad), [
    ['spec.metrics[0].pods.metric.name', 'Required value: must specify a metric name'],
    ['spec.metrics[1].resource.target.averageUtilization', 'Invalid value: 0: must be greater than 0'],
  ]);
  assert.equal((await s.request('GET', `${V2}/bad`)).status, 404);
  // A dry run answers what would be stored, converted back.
  const dry = await s.request('POST', `${V1}?dryRun=All`, { body: v1Hpa('dry') });
  assert.equal(dry.status, 201, dry.text);
  assert.equal(dry.json().spec.targetCPUUtilizationPercentage, 80);
  assert.equal((await s.request('GET', `${V1}/dry`)).status, 404);
});

for (const { version, path } of kubectlsToTest()) {
  test(`kubectl ${version}: autoscale, then get hpa shows the cpu target`, async () => {
    const name = `web-${version.replace('.', '')}`;
    const deployment = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name }, spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } } };
    assert.equal((await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: deployment })).status, 201);
    const r = await s.kubectl(['autoscale', 'deployment', name, '--cpu-percent=55', '--min=2', '--max=6', '-n', 'default'], { binary: path });
    assert.equal(r.code, 0, r.stderr);
    const v2 = (await s.request('GET', `${V2}/${name}`)).json();
    assert.deepEqual(v2.spec.metrics, [cpuMetric(55)]);
    const got = await s.kubectl(['get', 'hpa', name, '-n', 'default'], { binary: path });
    assert.equal(got.code, 0, got.stderr);
    assert.match(got.stdout, new RegExp(`${name}\\s+Deployment/${name}\\s+cpu: <unknown>/55%\\s+2\\s+6\\s+0`));
  });
}

test('server-side apply across versions: managers are compared in the version they wrote in', async () => {
  const applied = (cpu: number) => ({ apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'owned' }, spec: { scaleTargetRef: target, maxReplicas: 4, metrics: [podsMetric, cpuMetric(cpu)] } });
  const apply = (cpu: number, force = false) =>
    s.request('PATCH', `${V2}/owned?fieldManager=gitops${force ? '&force=true' : ''}`, { raw: JSON.stringify(applied(cpu)), headers: { 'content-type': 'application/apply-patch+yaml' } });
  assert.equal((await apply(60)).status, 201);
  // A v1 client changes the target CPU: in v2, the metrics list (atomic) changed, and the applier no longer owns it.
  const v1 = (await s.request('GET', `${V1}/owned`)).json();
  const put = await s.request('PUT', `${V1}/owned?fieldManager=tuner`, { body: { ...v1, spec: { ...v1.spec, targetCPUUtilizationPercentage: 50 } } });
  assert.equal(put.status, 200, put.text);
  const managed = put.json().metadata.managedFields.map((m: any) => [m.manager, m.apiVersion, Object.keys(m.fieldsV1['f:spec'] ?? {}).sort()]);
  assert.deepEqual(managed, [
    ['gitops', 'autoscaling/v2', ['f:maxReplicas', 'f:scaleTargetRef']],
    ['tuner', 'autoscaling/v1', ['f:targetCPUUtilizationPercentage']],
  ]);
  // Applying the old target again conflicts with the v1 writer, named in its own version's fields.
  const conflict = await apply(60);
  assert.equal(conflict.status, 409, conflict.text);
  assert.deepEqual(conflict.json().details.causes, [{ reason: 'FieldManagerConflict', message: 'conflict with "tuner" using autoscaling/v1', field: '.spec.targetCPUUtilizationPercentage' }]);
  const forced = await apply(60, true);
  assert.equal(forced.status, 200, forced.text);
  assert.deepEqual(forced.json().spec.metrics, [podsMetric, cpuMetric(60)]);
  assert.deepEqual(forced.json().metadata.managedFields.map((m: any) => m.manager), ['gitops']);
});
