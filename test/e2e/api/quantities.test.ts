// Quantities as kube-apiserver writes them back (canonical form), and a container's resource
// requirements validated in kube's words: names, values, requests within limits.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { invalidCauses, useTestServer } from '../../helpers/server.ts';
import { canonicalQuantity } from '../../../server/util/quantity.ts';
import { DNS1123_SUBDOMAIN } from '../../helpers/kube-messages.ts';

const s = useTestServer();

const pod = (name: string, resources: unknown, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'nginx', resources }], ...extra },
});

test('canonical form: as resource.ParseQuantity and Quantity.String give it', () => {
  const cases: [string, string | undefined][] = [
    ['1000m', '1'],
    ['1024Mi', '1Gi'],
    ['2048Ki', '2Mi'],
    ['0.5', '500m'],
    ['.5', '500m'],
    ['1.5', '1500m'],
    ['1.5Gi', '1536Mi'],
    ['0.5Ki', '512'],
    ['2000', '2k'],
    ['1000G', '1T'],
    ['1.5m', '1500u'],
    ['0.1m', '100u'],
    ['0.0000000001', '1n'], // rounded up to the smallest quantity
    ['1.5e3', '1500'],
    ['120e5', '12e6'],
    ['-1.5Gi', '-1536Mi'],
    ['0.000', '0'],
    ['-0', '0'],
    ['1.0', '1'],
    // Texts ParseQuantity finds canonical already are kept as given.
    ['100m', '100m'],
    ['1500Mi', '1500Mi'],
    ['1e3', '1e3'],
    ['+5', '+5'],
    ['05', '05'],
    ['1Ei', '1Ei'],
    ['x', undefined],
    ['', undefined],
    ['1Qi', undefined],
  ];
  for (const [text, want] of cases) assert.equal(canonicalQuantity(text), want, text);
});

test('quantities of built-in objects are stored in canonical form; a PUT that only respells them changes nothing', async () => {
  const resources = { requests: { cpu: 0.25, memory: '1024Mi' }, limits: { cpu: '2000m', memory: '2048Mi', 'example.com/gpu': 1 } };
  // (RuntimeClass admission wants a pod's overhead to be its class's: the class's '0.1' is stored as '100m' too)
  const runtime = await s.request('POST', '/apis/node.k8s.io/v1/runtimeclasses', { body: { apiVersion: 'node.k8s.io/v1', kind: 'RuntimeClass', metadata: { name: 'canon' }, handler: 'canon', overhead: { podFixed: { cpu: '0.1' } } } });
  assert.equal(runtime.status, 201, runtime.text);
  const created = await s.request('POST', '/api/v1/namespaces/default/pods', { body: pod('canon', resources, { volumes: [{ name: 'v', emptyDir: { sizeLimit: '1000M' } }], runtimeClassName: 'canon', overhead: { cpu: '0.1' }, automountServiceAccountToken: false }) });
  assert.equal(created.status, 201, created.text);
  const spec = created.json().spec;
  assert.deepEqual(spec.containers[0].resources, {
    // (requests a limit has and requests lack are defaulted from the limit, as kube does)
    limits: { cpu: '2', 'example.com/gpu': '1', memory: '2Gi' },
    requests: { cpu: '250m', 'example.com/gpu': '1', memory: '1Gi' },
  });
  assert.deepEqual(spec.volumes, [{ name: 'v', emptyDir: { sizeLimit: '1G' } }]);
  assert.deepEqual(spec.overhead, { cpu: '100m' });
  const got = await s.request('GET', '/api/v1/namespaces/default/pods/canon');
  assert.deepEqual(got.json().spec.containers[0].resources, spec.containers[0].resources);

  // The same values spelled otherwise: no change, no new resourceVersion.
  const body = got.json();
  body.spec.containers[0].resources = { limits: { cpu: '2', memory: '2048Mi', 'example.com/gpu': '1' }, requests: { cpu: '0.25', memory: '1Gi', 'example.com/gpu': '1' } };
  const put = await s.request('PUT', '/api/v1/namespaces/default/pods/canon', { body });
  assert.equal(put.status, 200, put.text);
  assert.equal(put.json().metadata.resourceVersion, got.json().metadata.resourceVersion);

  // Pod templates too (without a Pod's defaulting of requests from limits).
  const dep = await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', {
    body: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'canon' }, spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'nginx', resources: { limits: { memory: '512000Ki' } } }] } } } },
  });
  assert.equal(dep.status, 201, dep.text);
  assert.deepEqual(dep.json().spec.template.spec.containers[0].resources, { limits: { memory: '500Mi' } });
});

test('resource requirements: names, values and requests within limits, in kube words; nothing written', async () => {
  const causes = (name: string, resources: unknown) => invalidCauses(s, 'POST', '/api/v1/namespaces/default/pods', pod(name, resources));
  assert.deepEqual(await causes('r1', { requests: { cpu: '1000m', memory: '1Gi' }, limits: { cpu: '500m', memory: '1024Mi' } }), [
    ['spec.containers[0].resources.requests', 'Invalid value: "1": must be less than or equal to cpu limit of 500m'],
  ]);
  assert.deepEqual(await causes('r2', { limits: { cpu: '-1' } }), [
    ['spec.containers[0].resources.limits[cpu]', 'Invalid value: "-1": must be greater than or equal to 0'],
    // (the request defaulted from the limit)
    ['spec.containers[0].resources.requests[cpu]', 'Invalid value: "-1": must be greater than or equal to 0'],
  ]);
  assert.deepEqual(await causes('r3', { requests: { cpux: '1', pods: '1' } }), [
    ['spec.containers[0].resources.requests[cpux]', 'Invalid value: cpux: must be a standard resource type or fully qualified'],
    ['spec.containers[0].resources.requests[cpux]', 'Invalid value: cpux: must be a standard resource for containers'],
    ['spec.containers[0].resources.requests[pods]', 'Invalid value: pods: must be a standard resource for containers'],
  ]);
  assert.deepEqual(await causes('r4', { requests: { 'example.com/gpu': '2' }, limits: { 'example.com/gpu': '1' } }), [
    ['spec.containers[0].resources.requests', 'Invalid value: "2": must be equal to example.com/gpu limit of 1'],
  ]);
  assert.deepEqual(await causes('r5', { requests: { 'example.com/gpu': '500m', 'hugepages-2Mi': '2Mi' } }), [
    ['spec.containers[0].resources.requests[example.com/gpu]', 'Invalid value: "500m": must be an integer'],
    ['spec.containers[0].resources.limits', 'Required value: Limit must be set for non overcommitable resources'],
    ['spec.containers[0].resources.limits', 'Required value: Limit must be set for non overcommitable resources'],
    ['spec.containers[0].resources.requests', 'Forbidden: HugePages require cpu or memory'],
  ]);
  assert.deepEqual(await causes('r6', { limits: { 'Example.com/x_y': '1', 'kubernetes.io/x': '1' } }), [
    ['spec.containers[0].resources.limits[Example.com/x_y]', `Invalid value: Example.com/x_y: prefix part ${DNS1123_SUBDOMAIN}`],
    ['spec.containers[0].resources.limits[Example.com/x_y]', "Invalid value: Example.com/x_y: doesn't follow extended resource name standard"],
    ['spec.containers[0].resources.requests[Example.com/x_y]', `Invalid value: Example.com/x_y: prefix part ${DNS1123_SUBDOMAIN}`],
    ['spec.containers[0].resources.requests[Example.com/x_y]', "Invalid value: Example.com/x_y: doesn't follow extended resource name standard"],
  ]);
  for (const name of ['r1', 'r2', 'r3', 'r4', 'r5', 'r6']) assert.equal((await s.request('GET', `/api/v1/namespaces/default/pods/${name}`)).status, 404);
  // Within limits, with an extended resource requested as much as its limit: accepted.
  const ok = await s.request('POST', '/api/v1/namespaces/default/pods', { body: pod('r7', { requests: { cpu: '100m', 'example.com/gpu': '1' }, limits: { cpu: '1', 'example.com/gpu': '1', 'hugepages-2Mi': '4Mi', memory: '1Gi' } }) });
  assert.equal(ok.status, 201, ok.text);
});
