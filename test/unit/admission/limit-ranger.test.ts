// LimitRanger's rules (plugin/pkg/admission/limitranger/admission_test.go's cases, by kube's
// messages): defaults and the annotation, min/max per Container and Pod (init containers and
// sidecars in the pod's sum), the ratio's six decimals, a claim's bounds, an unchanged value not
// checked again on update.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setDefaults, validatePod, validateClaim, ratioText, type LimitRangeView } from '../../../server/admission/limit-ranger.ts';

const range = (...limits: Record<string, unknown>[]): LimitRangeView => ({ spec: { limits } });

test('defaults fill only what a container lacks; init containers are named as such', () => {
  const pod = { spec: { containers: [{ name: 'a', resources: { limits: { cpu: '1' } } }], initContainers: [{ name: 'i' }] } };
  setDefaults(range({ type: 'Container', default: { cpu: '500m', memory: '1Gi' }, defaultRequest: { cpu: '100m' } }), pod as never);
  assert.deepEqual(pod.spec.containers[0].resources, { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '100m' } });
  assert.deepEqual((pod as { metadata?: unknown }).metadata, {
    annotations: { 'kubernetes.io/limit-ranger': 'LimitRanger plugin set: cpu request for container a; memory limit for container a; cpu request for init container i; cpu, memory limit for init container i' },
  });
});

test('nothing to default: no annotation, no empty maps', () => {
  const pod = { spec: { containers: [{ name: 'a' }] } };
  setDefaults(range({ type: 'Pod', max: { cpu: '1' } }), pod as never);
  assert.deepEqual(pod, { spec: { containers: [{ name: 'a', resources: {} }] } });
});

test('Container min and max, with kube\'s messages', () => {
  const r = range({ type: 'Container', min: { memory: '10Mi' }, max: { cpu: '1' } });
  assert.deepEqual(validatePod(r, { spec: { containers: [{ name: 'a', resources: { limits: { memory: '5Mi' } } }] } }, undefined), [
    'minimum memory usage per Container is 10Mi.  No request is specified',
    'maximum cpu usage per Container is 1.  No limit is specified',
  ]);
  assert.deepEqual(validatePod(r, { spec: { containers: [{ name: 'a', resources: { requests: { memory: '20Mi', cpu: '2' }, limits: { memory: '5Mi', cpu: '500m' } } }] } }, undefined), [
    'minimum memory usage per Container is 10Mi, but limit is 5Mi',
    'maximum cpu usage per Container is 1, but request is 2',
  ]);
});

test('Pod bounds sum the containers, sidecars included, ordinary init containers as a max', () => {
  const r = range({ type: 'Pod', max: { cpu: '1' }, min: { cpu: '100m' } });
  const pod = {
    spec: {
      containers: [{ name: 'a', resources: { requests: { cpu: '300m' }, limits: { cpu: '400m' } } }],
      initContainers: [
        { name: 'big-init', resources: { requests: { cpu: '500m' }, limits: { cpu: '1200m' } } },
        { name: 'side', restartPolicy: 'Always', resources: { requests: { cpu: '100m' }, limits: { cpu: '100m' } } },
      ],
    },
  };
  assert.deepEqual(validatePod(r, pod, undefined), ['maximum cpu usage per Pod is 1, but limit is 1200m']);
});

test('the ratio is exact and shown to six decimals, rounded half to even', () => {
  const r = range({ type: 'Container', maxLimitRequestRatio: { cpu: '1500m' } });
  assert.deepEqual(validatePod(r, { spec: { containers: [{ name: 'a', resources: { requests: { cpu: '300m' }, limits: { cpu: '450m' } } }] } }, undefined), []);
  assert.deepEqual(validatePod(r, { spec: { containers: [{ name: 'a', resources: { requests: { cpu: '300m' }, limits: { cpu: '451m' } } }] } }, undefined), [
    'cpu max limit to request ratio per Container is 1500m, but provided ratio is 1.503333',
  ]);
  assert.deepEqual(validatePod(r, { spec: { containers: [{ name: 'a', resources: { limits: { cpu: '1' } } }] } }, undefined), [
    'cpu max limit to request ratio per Container is 1500m, but no request is specified or request is 0',
  ]);
  assert.equal(ratioText({ num: 2n, den: 3n }, { num: 1n, den: 1n }), '0.666667');
  assert.equal(ratioText({ num: 1n, den: 8_000_000n }, { num: 1n, den: 1n }), '0.000000');
  assert.equal(ratioText({ num: 3n, den: 8_000_000n }, { num: 1n, den: 1n }), '0.000000');
  assert.equal(ratioText({ num: 5n, den: 1n }, { num: 2n, den: 1n }), '2.500000');
});

test('on a resize, a value as it was is not checked again', () => {
  const r = range({ type: 'Container', max: { cpu: '1' } });
  const old = { spec: { containers: [{ name: 'a', resources: { limits: { cpu: '2', memory: '1Gi' } } }] } };
  const resized = { spec: { containers: [{ name: 'a', resources: { limits: { cpu: '2', memory: '2Gi' } } }] } };
  assert.deepEqual(validatePod(r, resized, old), []);
  assert.deepEqual(validatePod(r, { spec: { containers: [{ name: 'a', resources: { limits: { cpu: '3' } } }] } }, old), ['maximum cpu usage per Container is 1, but limit is 3']);
});

test('a claim\'s storage: min and max of its request', () => {
  const r = range({ type: 'PersistentVolumeClaim', min: { storage: '1Gi' }, max: { storage: '10Gi' } });
  assert.deepEqual(validateClaim(r, { spec: { resources: {} } }, undefined), [
    'minimum storage usage per PersistentVolumeClaim is 1Gi.  No request is specified',
    'maximum storage usage per PersistentVolumeClaim is 10Gi.  No request is specified',
  ]);
  assert.deepEqual(validateClaim(r, { spec: { resources: { requests: { storage: '20Gi' } } } }, { spec: { resources: { requests: { storage: '20Gi' } } } }), []);
});
