// What kube's strategies set on create: pods Pending with their QoS class (podStrategy
// PrepareForCreate, qos.ComputePodQOS) and a PodScheduled=False condition while scheduling gates
// hold them; jobs with the server's selector (jobStrategy PrepareForCreate, generateSelector).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { podQOSClass } from '../../../server/registry/kinds/core/pods/strategy.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

const c = (requests?: Record<string, string>, limits?: Record<string, string>) => ({ name: 'c', image: 'i', resources: { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) } });
const pod = (containers: unknown[], extra: Record<string, unknown> = {}) => ({ spec: { containers, ...extra } });

test('a namespace\'s name label is a default, owned by its creator, as kube defaults it before the field manager runs', async () => {
  const s: TestServer = await startTestServer();
  try {
    const r = await s.request('POST', '/api/v1/namespaces?fieldManager=maker', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'labelled' } } });
    assert.equal(r.status, 201, r.text);
    const ns = r.json();
    assert.equal(ns.metadata.labels['kubernetes.io/metadata.name'], 'labelled');
    assert.deepEqual(ns.metadata.managedFields.map((m: any) => [m.manager, m.fieldsV1]), [['maker', { 'f:metadata': { 'f:labels': { '.': {}, 'f:kubernetes.io/metadata.name': {} } } }]]);
    assert.deepEqual(ns.spec.finalizers, ['kubernetes']);
  } finally {
    await s.stop();
  }
});

test('a container without resources is written with `resources: {}` (a non-pointer struct in Go), owned by its creator as kube records it', async () => {
  const s: TestServer = await startTestServer();
  try {
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'nginx', image: 'nginx' }] } } },
    };
    const r = await s.request('POST', '/apis/apps/v1/namespaces/default/deployments?fieldManager=maker', { body: deployment });
    assert.equal(r.status, 201, r.text);
    const created = r.json();
    assert.deepEqual(created.spec.template.spec.containers[0].resources, {});
    const owned = created.metadata.managedFields[0].fieldsV1['f:spec']['f:template']['f:spec']['f:containers']['k:{"name":"nginx"}'];
    assert.deepEqual(owned['f:resources'], {});
  } finally {
    await s.stop();
  }
});

test('a workload is created with the status kube writes for its reset status struct: `{}` plus the counters Go writes without omitempty; empty template metadata is `{}`', async () => {
  const s: TestServer = await startTestServer();
  try {
    const template = { metadata: { labels: { app: 'w' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } };
    const spec = { selector: { matchLabels: { app: 'w' } }, template };
    const cases: [string, string, unknown][] = [
      ['/apis/apps/v1/namespaces/default/deployments', 'Deployment', {}],
      ['/apis/apps/v1/namespaces/default/replicasets', 'ReplicaSet', { replicas: 0 }],
      ['/apis/apps/v1/namespaces/default/statefulsets', 'StatefulSet', { replicas: 0, availableReplicas: 0 }],
      ['/apis/apps/v1/namespaces/default/daemonsets', 'DaemonSet', { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 }],
    ];
    for (const [path, kind, status] of cases) {
      // A status in the body is dropped (the create strategy resets it) before the zero struct is written.
      const r = await s.request('POST', path, { body: { apiVersion: 'apps/v1', kind, metadata: { name: 'w' }, spec, status: { observedGeneration: 7 } } });
      assert.equal(r.status, 201, r.text);
      assert.deepEqual(r.json().status, status, kind);
    }
    const job = await s.request('POST', '/apis/batch/v1/namespaces/default/jobs', { body: { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j' }, spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } } } });
    assert.equal(job.status, 201, job.text);
    assert.deepEqual(job.json().status, {});
    // Templates without metadata: ObjectMeta is a non-pointer struct, written as `metadata: {}`.
    const cronJob = await s.request('POST', '/apis/batch/v1/namespaces/default/cronjobs', {
      body: { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'cj' }, spec: { schedule: '*/5 * * * *', jobTemplate: { spec: { template: { spec: { restartPolicy: 'OnFailure', containers: [{ name: 'c', image: 'busybox' }] } } } } } },
    });
    assert.equal(cronJob.status, 201, cronJob.text);
    const cj = cronJob.json();
    assert.deepEqual([cj.status, cj.spec.jobTemplate.metadata, cj.spec.jobTemplate.spec.template.metadata], [{}, {}, {}]);
    // A status write that leaves a counter out gets it back as 0, as Go decodes and writes it.
    const ds = (await s.request('GET', '/apis/apps/v1/namespaces/default/daemonsets/w')).json();
    const put = await s.request('PUT', '/apis/apps/v1/namespaces/default/daemonsets/w/status', { body: { ...ds, status: { currentNumberScheduled: 1, desiredNumberScheduled: 1 } } });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual(put.json().status, { currentNumberScheduled: 1, desiredNumberScheduled: 1, numberMisscheduled: 0, numberReady: 0 });
  } finally {
    await s.stop();
  }
});

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

test('a job gets the server\'s selector and template labels; its own labels default to the template\'s; manualSelector keeps the user\'s', async () => {
  const s: TestServer = await startTestServer();
  try {
    const job = (name: string, extra: { labels?: Record<string, string>; templateLabels?: Record<string, string>; spec?: Record<string, unknown> } = {}) => ({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name, ...(extra.labels ? { labels: extra.labels } : {}) },
      spec: { template: { ...(extra.templateLabels ? { metadata: { labels: extra.templateLabels } } : {}), spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } }, ...extra.spec },
    });
    const create = async (body: unknown) => {
      const r = await s.request('POST', '/apis/batch/v1/namespaces/default/jobs', { body });
      assert.equal(r.status, 201, r.text);
      return r.json();
    };
    const plain = await create(job('plain'));
    const uid = plain.metadata.uid;
    // Server-set on create (after the field manager, as in kube): owned by no manager.
    const owned = JSON.stringify(plain.metadata.managedFields);
    assert.ok(owned.includes('f:containers') && !owned.includes('f:selector') && !owned.includes('job-name'), owned);
    const generated = { 'job-name': 'plain', 'batch.kubernetes.io/job-name': 'plain', 'controller-uid': uid, 'batch.kubernetes.io/controller-uid': uid };
    assert.deepEqual(plain.spec.template.metadata.labels, generated);
    assert.deepEqual(plain.spec.selector, { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } });
    assert.deepEqual(plain.metadata.labels, generated);
    assert.equal(plain.spec.manualSelector, false);
    // Template labels of the user's own: kept, and they alone become the job's labels.
    const labelled = await create(job('labelled', { templateLabels: { app: 'batch' } }));
    assert.equal(labelled.spec.template.metadata.labels.app, 'batch');
    assert.equal(labelled.spec.template.metadata.labels['batch.kubernetes.io/job-name'], 'labelled');
    assert.deepEqual(labelled.metadata.labels, { app: 'batch' });
    const own = await create(job('own', { labels: { team: 'x' } }));
    assert.deepEqual(own.metadata.labels, { team: 'x' });
    const manual = await create(job('manual', { templateLabels: { app: 'm' }, spec: { manualSelector: true, selector: { matchLabels: { app: 'm' } } } }));
    assert.deepEqual(manual.spec.selector, { matchLabels: { app: 'm' } });
    assert.deepEqual(manual.spec.template.metadata.labels, { app: 'm' });
    // kubectl finds the job's pods by the selector it shows.
    const table = await s.request('GET', '/apis/batch/v1/namespaces/default/jobs/plain', { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } });
    const t = table.json();
    const cells = t.rows[0].cells;
    const names = t.columnDefinitions.map((d: any) => d.name);
    assert.equal(cells[names.indexOf('Selector')], `batch.kubernetes.io/controller-uid=${uid}`);
  } finally {
    await s.stop();
  }
});
