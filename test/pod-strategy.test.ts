// Pods are created Pending with their QoS class (kube's podStrategy.PrepareForCreate and
// qos.ComputePodQOS), and held by scheduling gates with a PodScheduled=False condition.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { podQOSClass } from '../server/registry/strategies/pods.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

const c = (requests?: Record<string, string>, limits?: Record<string, string>) => ({ name: 'c', image: 'i', resources: { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) } });
const pod = (containers: unknown[], extra: Record<string, unknown> = {}) => ({ spec: { containers, ...extra } });

test('QoS class: BestEffort, Burstable, Guaranteed as ComputePodQOS decides', () => {
  const cases: [string, unknown, string][] = [
    ['no resources', pod([c()]), 'BestEffort'],
    ['only resources QoS ignores', pod([c({ 'ephemeral-storage': '1Gi' }, { 'hugepages-2Mi': '2Mi' })]), 'BestEffort'],
    ['zero quantities count as none', pod([c({ cpu: '0', memory: '0Mi' })]), 'BestEffort'],
    ['a cpu request alone', pod([c({ cpu: '100m' })]), 'Burstable'],
    ['equal requests and limits of cpu and memory', pod([c({ cpu: '1', memory: '1Gi' }, { cpu: '1000m', memory: '1024Mi' })]), 'Guaranteed'],
    ['limits without memory', pod([c({ cpu: '1' }, { cpu: '1' })]), 'Burstable'],
    ['a request below its limit', pod([c({ cpu: '500m', memory: '1Gi' }, { cpu: '1', memory: '1Gi' })]), 'Burstable'],
    ['every container guaranteed', pod([c({ cpu: '1', memory: '1Gi' }, { cpu: '1', memory: '1Gi' }), c({ cpu: '0.5', memory: '512Mi' }, { cpu: '500m', memory: '0.5Gi' })]), 'Guaranteed'],
    ['one container without limits', pod([c({ cpu: '1', memory: '1Gi' }, { cpu: '1', memory: '1Gi' }), c()]), 'Burstable'],
    ['an init container counts', pod([c({ cpu: '1', memory: '1Gi' }, { cpu: '1', memory: '1Gi' })], { initContainers: [c({ cpu: '1' })] }), 'Burstable'],
    ['pod-level resources decide over the containers', pod([c()], { resources: { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } } }), 'Guaranteed'],
    ['pod-level requests without limits', pod([c({ cpu: '1', memory: '1Gi' }, { cpu: '1', memory: '1Gi' })], { resources: { requests: { cpu: '1' } } }), 'Burstable'],
  ];
  for (const [what, p, want] of cases) assert.equal(podQOSClass(p), want, what);
});

test('a created pod is Pending with its QoS class; scheduling gates add PodScheduled=False; status in a create body is dropped', async () => {
  const s: TestServer = await startTestServer();
  try {
    const body = (name: string, extra: Record<string, unknown> = {}) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: { containers: [{ name: 'c', image: 'busybox', resources: { limits: { cpu: '1', memory: '64Mi' } } }], ...extra },
      status: { phase: 'Running', podIP: '10.0.0.9' },
    });
    const plain = await s.request('POST', '/api/v1/namespaces/default/pods', { body: body('plain') });
    assert.equal(plain.status, 201, plain.text);
    // Requests default to the limits: Guaranteed.
    assert.deepEqual(plain.json().status, { phase: 'Pending', qosClass: 'Guaranteed' });
    const gated = await s.request('POST', '/api/v1/namespaces/default/pods', { body: body('gated', { schedulingGates: [{ name: 'example.com/wait' }] }) });
    assert.equal(gated.status, 201, gated.text);
    assert.deepEqual(gated.json().status, {
      phase: 'Pending',
      qosClass: 'Guaranteed',
      conditions: [{ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated', message: 'Scheduling is blocked due to non-empty scheduling gates' }],
    });
    // The table kubectl prints reads the phase.
    const table = await s.request('GET', '/api/v1/namespaces/default/pods/plain', { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } });
    const row = table.json().rows[0].cells;
    const columns = table.json().columnDefinitions.map((d: any) => d.name);
    assert.equal(row[columns.indexOf('Status')], 'Pending');
  } finally {
    await s.stop();
  }
});
