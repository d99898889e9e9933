// HorizontalPodAutoscalers as kube validates them: replica bounds, the scale target, metrics of
// every source type, scaling behavior; autoscaling/v1's target CPU where v2 holds it. Nothing
// refused is written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { invalidCauses, useTestServer } from '../../helpers/server.ts';

const s = useTestServer();

const V2 = '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers';
const V1 = '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers';
const target = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' };
const hpa = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name }, spec: { scaleTargetRef: target, maxReplicas: 5, ...spec } });
const cpu = (t: Record<string, unknown>) => ({ type: 'Resource', resource: { name: 'cpu', target: t } });

test('replica bounds and the scale target come first; metrics only when the target is valid', async () => {
  assert.deepEqual(await invalidCauses(s, 'POST', V2, hpa('a', { minReplicas: 0, maxReplicas: 0, scaleTargetRef: { kind: '', name: 'a/b' }, metrics: [{ type: 'Nope' }] })), [
    ['spec.minReplicas', 'Invalid value: 0: must be greater than or equal to 1'],
    ['spec.maxReplicas', 'Invalid value: 0: must be greater than 0'],
    ['spec.scaleTargetRef.kind', 'Required value'],
    ['spec.scaleTargetRef.name', `Invalid value: "a/b": may not contain '/'`],
  ]);
  assert.deepEqual(await invalidCauses(s, 'POST', V2, hpa('b', { minReplicas: 4, maxReplicas: 2 })), [['spec.maxReplicas', 'Invalid value: 2: must be greater than or equal to `minReplicas`']]);
});

test('metrics: a known type, its source filled and no other, targets well formed', async () => {
  assert.deepEqual(
    await invalidCauses(s, 'POST', V2, hpa('m', {
      metrics: [
        cpu({ type: 'Utilization', averageUtilization: 0 }),
        cpu({ type: 'Sometimes' }),
        cpu({ type: 'AverageValue', averageValue: '500m', averageUtilization: 50 }),
        { type: 'Pods', pods: { metric: { name: '' }, target: { type: 'Value', value: '-1' } } },
        { type: 'External', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } }, external: { metric: { name: 'queue' }, target: { type: 'Value', value: '10' } } },
        { type: 'Object' },
      ],
    })),
    [
      ['spec.metrics[0].resource.target.averageUtilization', 'Invalid value: 0: must be greater than 0'],
      ['spec.metrics[1].resource.target.type', 'Invalid value: "Sometimes": must be either Utilization, Value, or AverageValue'],
      ['spec.metrics[1].resource.target.averageUtilization', 'Required value: must set either a target raw value or a target utilization'],
      ['spec.metrics[2].resource.target.averageValue', 'Forbidden: may not set both a target raw value and a target utilization'],
      ['spec.metrics[3].pods.metric.name', 'Required value: must specify a metric name'],
      ['spec.metrics[3].pods.target.value', 'Invalid value: "-1": must be positive'],
      ['spec.metrics[3].pods.target.averageValue', 'Required value: must specify a positive target averageValue'],
      ['spec.metrics[4].resource', 'Forbidden: must populate the given metric source only'],
      ['spec.metrics[5].object', 'Required value: must populate information for the given metric source'],
    ],
  );
  // The external metric of [4] was not looked at: only the first source filled is.
  const ok = await s.request('POST', V2, { body: hpa('ok', { minReplicas: 1, metrics: [cpu({ type: 'Utilization', averageUtilization: 70 }), { type: 'External', external: { metric: { name: 'queue' }, target: { type: 'AverageValue', averageValue: '30' } } }] }) });
  assert.equal(ok.status, 201, ok.text);
  for (const name of ['a', 'b', 'm']) assert.equal((await s.request('GET', `${V2}/${name}`)).status, 404);
});

test('scaling behavior: windows, policies and select policies within bounds; v1 target CPU where v2 holds it', async () => {
  assert.deepEqual(
    await invalidCauses(s, 'POST', V2, hpa('beh', {
      behavior: {
        scaleUp: { stabilizationWindowSeconds: 4000, selectPolicy: 'Sometimes', policies: [{ type: 'Nodes', value: 0, periodSeconds: 2000 }] },
        scaleDown: { policies: [] },
      },
    })),
    [
      ['spec.behavior.scaleUp.stabilizationWindowSeconds', 'Invalid value: 4000: must be less than or equal to 3600'],
      ['spec.behavior.scaleUp.selectPolicy', 'Unsupported value: "Sometimes": supported values: "Disabled", "Max", "Min"'],
      ['spec.behavior.scaleUp.policies[0].type', 'Unsupported value: "Nodes": supported values: "Percent", "Pods"'],
      ['spec.behavior.scaleUp.policies[0].value', 'Invalid value: 0: must be greater than zero'],
      ['spec.behavior.scaleUp.policies[0].periodSeconds', 'Invalid value: 2000: must be less than or equal to 1800'],
      ['spec.behavior.scaleDown.policies', 'Required value: must specify at least one Policy'],
    ],
  );
  const v1 = { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'v1' }, spec: { scaleTargetRef: target, maxReplicas: 3, targetCPUUtilizationPercentage: 0 } };
  assert.deepEqual(await invalidCauses(s, 'POST', V1, v1), [['spec.metrics[0].resource.target.averageUtilization', 'Invalid value: 0: must be greater than 0']]);
  v1.spec.targetCPUUtilizationPercentage = 60;
  assert.equal((await s.request('POST', V1, { body: v1 })).status, 201);
});
