// The apps/v1 pod controllers' validation as kube-apiserver words it: negative counts, selectors
// that select nothing or do not match the pod template, templates that do not restart Always,
// Deployment rolling-update bounds. One cause per field; nothing is written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import YAML from 'yaml';
import { invalidCauses, useTestServer } from '../../helpers/server.ts';
import { DNS1123_LABEL, QUALIFIED_NAME_PART } from '../../helpers/kube-messages.ts';

const s = useTestServer();

const template = (labels: Record<string, string> = { app: 'w' }, spec: Record<string, unknown> = {}) => ({ metadata: { labels }, spec: { containers: [{ name: 'c', image: 'nginx' }], ...spec } });
const workload = (kind: string, name: string, spec: Record<string, unknown>) => ({ apiVersion: 'apps/v1', kind, metadata: { name }, spec: { selector: { matchLabels: { app: 'w' } }, template: template(), ...spec } });
const PATHS: Record<string, string> = { Deployment: 'deployments', ReplicaSet: 'replicasets', StatefulSet: 'statefulsets', DaemonSet: 'daemonsets' };

const causes = (kind: string, spec: Record<string, unknown>) => invalidCauses(s, 'POST', `/apis/apps/v1/namespaces/default/${PATHS[kind]}`, workload(kind, 'w', spec));

test('deployments: counts, selector against template labels, restart policy, rolling-update bounds', async () => {
  assert.deepEqual(await causes('Deployment', { replicas: -1, minReadySeconds: -2 }), [
    ['spec.replicas', 'Invalid value: -1: must be greater than or equal to 0'],
    ['spec.minReadySeconds', 'Invalid value: -2: must be greater than or equal to 0'],
  ]);
  assert.deepEqual(await causes('Deployment', { selector: { matchLabels: { app: 'other' } } }), [
    ['spec.template.metadata.labels', 'Invalid value: map[string]string{"app":"w"}: `selector` does not match template `labels`'],
  ]);
  assert.deepEqual(await causes('Deployment', { selector: {} }), [
    ['spec.selector', 'Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment'],
  ]);
  assert.deepEqual(await causes('Deployment', { template: template({ app: 'w' }, { restartPolicy: 'Never' }) }), [
    ['spec.template.spec.restartPolicy', 'Unsupported value: "Never": supported values: "Always"'],
  ]);
  assert.deepEqual(await causes('Deployment', { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: '0%' } } }), [
    ['spec.strategy.rollingUpdate.maxUnavailable', 'Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"0%"}: may not be 0 when `maxSurge` is 0'],
  ]);
  assert.deepEqual(await causes('Deployment', { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 'x', maxUnavailable: '150%' } } }), [
    ['spec.strategy.rollingUpdate.maxSurge', "Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"x\"}: a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"],
    ['spec.strategy.rollingUpdate.maxUnavailable', 'Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"150%"}: must not be greater than 100%'],
  ]);
  assert.deepEqual(await causes('Deployment', { progressDeadlineSeconds: 10, minReadySeconds: 10 }), [
    ['spec.progressDeadlineSeconds', 'Invalid value: 10: must be greater than minReadySeconds'],
  ]);
  assert.deepEqual(await causes('Deployment', { strategy: { type: 'Recreate', rollingUpdate: { maxSurge: 1 } } }), [
    ['spec.strategy.rollingUpdate', "Forbidden: may not be specified when strategy `type` is 'Recreate'"],
  ]);
  // None of them was written; a valid one is.
  assert.equal((await s.request('GET', '/apis/apps/v1/namespaces/default/deployments/w')).status, 404);
  assert.equal((await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: workload('Deployment', 'w', { replicas: 0 }) })).status, 201);
});

test('replicasets, statefulsets, daemonsets: the same selector and template rules in their own words; updates are checked too', async () => {
  assert.deepEqual(await causes('ReplicaSet', { replicas: -3, selector: { matchLabels: {} } }), [
    ['spec.replicas', 'Invalid value: -3: must be greater than or equal to 0'],
    ['spec.selector', 'Invalid value: v1.LabelSelector{MatchLabels:map[string]string{}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment'],
  ]);
  assert.deepEqual(await causes('StatefulSet', { selector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['x'] }] } }), [
    ['spec.template.metadata.labels', 'Invalid value: map[string]string{"app":"w"}: `selector` does not match template `labels`'],
  ]);
  assert.deepEqual(await causes('DaemonSet', { template: template({ app: 'w' }, { activeDeadlineSeconds: 5 }) }), [
    ['spec.template.spec.activeDeadlineSeconds', 'Forbidden: activeDeadlineSeconds in DaemonSet is not Supported'],
  ]);
  const created = await s.request('POST', '/apis/apps/v1/namespaces/default/statefulsets', { body: workload('StatefulSet', 'ok', {}) });
  assert.equal(created.status, 201, created.text);
  const ss = created.json();
  const put = await s.request('PUT', '/apis/apps/v1/namespaces/default/statefulsets/ok', { body: { ...ss, spec: { ...ss.spec, replicas: -1 } } });
  assert.equal(put.status, 422, put.text);
  assert.deepEqual(put.json().details.causes.map((c: any) => c.field), ['spec.replicas']);
});

test("statefulsets: the template's pod spec is not validated (its mounts may name a volumeClaimTemplate), only its labels, annotations, restart policy and deadline", async () => {
  // The kubernetes.io example: the container mounts `www`, a volumeClaimTemplate.
  const example = YAML.parse(readFileSync(new URL('../../fixtures/kinds/statefulset.yaml', import.meta.url), 'utf8'));
  const created = await s.request('POST', '/apis/apps/v1/namespaces/default/statefulsets', { body: example });
  assert.equal(created.status, 201, created.text);
  assert.deepEqual(created.json().spec.template.spec.containers[0].volumeMounts, [{ name: 'www', mountPath: '/usr/share/nginx/html' }]);
  // kube's ValidatePodTemplateSpecForStatefulSet leaves the pod spec out altogether: what a pod
  // would be refused for (no image, an unknown volume, no container name) is the pods' problem.
  const loose = workload('StatefulSet', 'loose', { template: template({ app: 'w' }, { containers: [{ image: '' , volumeMounts: [{ name: 'nowhere', mountPath: '/x' }] }] }) });
  const accepted = await s.request('POST', '/apis/apps/v1/namespaces/default/statefulsets?dryRun=All', { body: loose });
  assert.equal(accepted.status, 201, accepted.text);
  assert.deepEqual(await causes('StatefulSet', { template: template({ app: 'w', 'bad key!': 'x' }, { restartPolicy: 'Never', activeDeadlineSeconds: 5 }) }), [
    ['spec.template.labels', `Invalid value: "bad key!": ${QUALIFIED_NAME_PART}`],
    ['spec.template.spec.restartPolicy', 'Unsupported value: "Never": supported values: "Always"'],
    ['spec.template.spec.activeDeadlineSeconds', 'Forbidden: activeDeadlineSeconds in StatefulSet is not Supported'],
  ]);
  // Other controllers' templates are pod specs in full, their labels and annotations included.
  assert.deepEqual(await causes('Deployment', { template: template({ app: 'w' }, { containers: [{ name: 'c', image: 'i', volumeMounts: [{ name: 'www', mountPath: '/x' }] }] }) }), [
    ['spec.template.spec.containers[0].volumeMounts[0].name', 'Not found: "www"'],
  ]);
  const annotated = template();
  (annotated.metadata as any).annotations = { 'no/good/key': 'v' };
  assert.deepEqual((await causes('DaemonSet', { template: annotated })).map(([field]) => field), ['spec.template.annotations']);
});

test('pod specs, in pods and in every pod template: containers, names, images, ports, volume mounts', async () => {
  const post = (path: string, body: unknown) => invalidCauses(s, 'POST', path, body);
  const pod = (spec: Record<string, unknown>) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec });
  assert.deepEqual(await post('/api/v1/namespaces/default/pods', pod({ containers: [] })), [['spec.containers', 'Required value']]);
  assert.deepEqual(
    await post(
      '/api/v1/namespaces/default/pods',
      pod({
        containers: [
          { name: 'Bad_Name', image: 'nginx', ports: [{ containerPort: 70000 }, { containerPort: 80, name: 'HTTP' }, { containerPort: 81, name: 'web' }, { containerPort: 82, name: 'web' }] },
          { name: 'app', volumeMounts: [{ name: 'data', mountPath: '/d' }, { name: 'cfg', mountPath: '/d' }] },
        ],
        initContainers: [{ name: 'app', image: 'busybox' }],
        volumes: [{ name: 'cfg', configMap: { name: 'c' } }],
      }),
    ),
    [
      ['spec.containers[0].name', `Invalid value: "Bad_Name": ${DNS1123_LABEL}`],
      ['spec.containers[0].ports[0].containerPort', 'Invalid value: 70000: must be between 1 and 65535, inclusive'],
      ['spec.containers[0].ports[1].name', 'Invalid value: "HTTP": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)'],
      ['spec.containers[0].ports[1].name', 'Invalid value: "HTTP": must contain at least one letter (a-z)'],
      ['spec.containers[0].ports[3].name', 'Duplicate value: "web"'],
      ['spec.containers[1].image', 'Required value'],
      ['spec.containers[1].volumeMounts[0].name', 'Not found: "data"'],
      ['spec.containers[1].volumeMounts[1].mountPath', 'Invalid value: "/d": must be unique'],
      ['spec.initContainers[0].name', 'Duplicate value: "app"'],
    ],
  );
  // Templates get the same checks at their own paths.
  const noImage = { metadata: { labels: { app: 'w' } }, spec: { restartPolicy: 'Never', containers: [{ name: 'c' }] } };
  assert.deepEqual(await post('/apis/batch/v1/namespaces/default/jobs', { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j' }, spec: { template: noImage } }), [['spec.template.spec.containers[0].image', 'Required value']]);
  assert.deepEqual(await post('/apis/batch/v1/namespaces/default/cronjobs', { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'cj' }, spec: { schedule: '* * * * *', jobTemplate: { spec: { template: noImage } } } }), [
    ['spec.jobTemplate.spec.template.spec.containers[0].image', 'Required value'],
  ]);
  assert.deepEqual(await causes('Deployment', { template: { ...noImage, spec: { containers: [{ name: 'c' }] } } }), [['spec.template.spec.containers[0].image', 'Required value']]);
  assert.equal((await s.request('GET', '/api/v1/namespaces/default/pods/p')).status, 404, 'nothing was written');
});

test('null list elements and map values decode as their zero values, as Go decodes them, and are validated as such; env variables need a printable name without =', async () => {
  const post = (body: unknown) => invalidCauses(s, 'POST', '/api/v1/namespaces/default/pods', body);
  const pod = (containers: unknown[]) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'zero' }, spec: { containers } });
  assert.deepEqual(await post(pod([null])), [
    ['spec.containers[0].name', 'Required value'],
    ['spec.containers[0].image', 'Required value'],
  ]);
  assert.deepEqual(await post(pod([{ name: 'a', image: 'i', ports: [null], env: [null, { name: 'A=B' }, { name: 'tab\there' }, { name: 'ok name' }] }])), [
    ['spec.containers[0].ports[0].containerPort', 'Required value'],
    ['spec.containers[0].env[0].name', 'Required value'],
    ['spec.containers[0].env[1].name', `Invalid value: "A=B": a valid environment variable name must consist only of printable ASCII characters other than '='`],
    ['spec.containers[0].env[2].name', `Invalid value: "tab\\there": a valid environment variable name must consist only of printable ASCII characters other than '='`],
  ]);
  // A null string element is the empty string, stored as such.
  const ok = await s.request('POST', '/api/v1/namespaces/default/pods?dryRun=All', { body: pod([{ name: 'a', image: 'i', args: [null, 'x'] }]) });
  assert.equal(ok.status, 201, ok.text);
  assert.deepEqual(ok.json().spec.containers[0].args, ['', 'x']);
  // A map keeps the key with the zero value (a Helm chart's `KEY:` in a ConfigMap is "").
  const cm = await s.request('POST', '/api/v1/namespaces/default/configmaps?dryRun=All', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'zero', labels: { k: null } }, data: { a: null, b: 'x' } } });
  assert.equal(cm.status, 201, cm.text);
  assert.deepEqual(cm.json().data, { a: '', b: 'x' });
  assert.deepEqual(cm.json().metadata.labels, { k: '' });
});

test('updates: apps/v1 selectors are immutable; a statefulset changes only replicas, template, update strategy and a few more', async () => {
  const d = (await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: workload('Deployment', 'sel', {}) })).json();
  const moved = { ...d, spec: { ...d.spec, selector: { matchLabels: { app: 'w', tier: 'x' } }, template: template({ app: 'w', tier: 'x' }) } };
  assert.deepEqual(await invalidCauses(s, 'PUT', '/apis/apps/v1/namespaces/default/deployments/sel', moved), [['spec.selector', 'Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"w", "tier":"x"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable']]);
  // The same selector spelled with an empty expression list is no change (apiequality.Semantic).
  const same = await s.request('PUT', '/apis/apps/v1/namespaces/default/deployments/sel', { body: { ...d, spec: { ...d.spec, selector: { matchLabels: { app: 'w' }, matchExpressions: [] }, replicas: 3 } } });
  assert.equal(same.status, 200, same.text);

  const ss = (await s.request('POST', '/apis/apps/v1/namespaces/default/statefulsets', { body: workload('StatefulSet', 'db', {}) })).json();
  const scaled = await s.request('PUT', '/apis/apps/v1/namespaces/default/statefulsets/db', { body: { ...ss, spec: { ...ss.spec, replicas: 3, minReadySeconds: 5 } } });
  assert.equal(scaled.status, 200, scaled.text);
  assert.deepEqual(await invalidCauses(s, 'PUT', '/apis/apps/v1/namespaces/default/statefulsets/db', { ...scaled.json(), spec: { ...scaled.json().spec, serviceName: 'other' } }), [
    ['spec', "Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"],
  ]);
});

test('jobs and cronjobs: non-negative counts, and a template that restarts OnFailure or Never (none given is Always, refused)', async () => {
  const podTemplate = { spec: { containers: [{ name: 'c', image: 'busybox' }] } };
  assert.deepEqual(await invalidCauses(s, 'POST', '/apis/batch/v1/namespaces/default/jobs', { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j' }, spec: { backoffLimit: -1, template: podTemplate } }), [
    ['spec.backoffLimit', 'Invalid value: -1: must be greater than or equal to 0'],
    ['spec.template.spec.restartPolicy', 'Unsupported value: "Always": supported values: "OnFailure", "Never"'],
  ]);
  assert.deepEqual(await invalidCauses(s, 'POST', '/apis/batch/v1/namespaces/default/cronjobs', { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'cj' }, spec: { schedule: '@hourly', jobTemplate: { spec: { parallelism: -2, template: podTemplate } } } }), [
    ['spec.jobTemplate.spec.parallelism', 'Invalid value: -2: must be greater than or equal to 0'],
    ['spec.jobTemplate.spec.template.spec.restartPolicy', 'Unsupported value: "Always": supported values: "OnFailure", "Never"'],
  ]);
});

test('job updates: template, selector, completions and completion mode are immutable; a suspended job that never ran may move', async () => {
  const JOBS = '/apis/batch/v1/namespaces/default/jobs';
  const job = (name: string, spec: Record<string, unknown> = {}) => ({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name },
    spec: { completions: 2, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } }, ...spec },
  });
  assert.equal((await s.request('POST', JOBS, { body: job('ju') })).status, 201);
  const patch = (name: string, body: unknown) => invalidCauses(s, 'PATCH', `${JOBS}/${name}`, body, { 'content-type': 'application/strategic-merge-patch+json' });
  assert.deepEqual(await patch('ju', { spec: { template: { spec: { containers: [{ name: 'c', image: 'busybox:2' }] } } } }), [['spec.template', 'Invalid value: core.PodTemplateSpec{...}: field is immutable']]);
  assert.deepEqual(await patch('ju', { spec: { completions: 3 } }), [['spec.completions', 'Invalid value: 3: field is immutable']]);
  const selector = await patch('ju', { spec: { selector: { matchLabels: { x: 'y' } } } });
  assert.deepEqual(selector.map(([f, m]) => [f, m.replace(/"[0-9a-f-]{36}"/g, '"<uid>"')]), [
    ['spec.selector', 'Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"batch.kubernetes.io/controller-uid":"<uid>", "x":"y"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable'],
  ]);
  // Labels and other metadata of the job itself may change.
  const labelled = await s.request('PATCH', `${JOBS}/ju`, { body: { metadata: { labels: { a: 'b' } } }, headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(labelled.status, 200, labelled.text);

  // Suspended and never started: the template's scheduling directives and labels may change, not its containers.
  assert.equal((await s.request('POST', JOBS, { body: job('js', { suspend: true }) })).status, 201);
  const moved = await s.request('PATCH', `${JOBS}/js`, {
    body: { spec: { template: { metadata: { labels: { zone: 'b' } }, spec: { nodeSelector: { zone: 'b' }, tolerations: [{ key: 'k', operator: 'Exists' }] } } } },
    headers: { 'content-type': 'application/strategic-merge-patch+json' },
  });
  assert.equal(moved.status, 200, moved.text);
  assert.deepEqual(moved.json().spec.template.spec.nodeSelector, { zone: 'b' });
  assert.deepEqual(await patch('js', { spec: { template: { spec: { containers: [{ name: 'c', image: 'busybox:2' }] } } } }), [['spec.template', 'Invalid value: core.PodTemplateSpec{...}: field is immutable']]);
  // Indexed jobs scale completions together with parallelism.
  assert.equal((await s.request('POST', JOBS, { body: job('ji', { completionMode: 'Indexed', parallelism: 2 }) })).status, 201);
  assert.deepEqual(await patch('ji', { spec: { completions: 4 } }), [['spec.completions', 'Invalid value: 4: can only be modified in tandem with spec.parallelism']]);
  const scaled = await s.request('PATCH', `${JOBS}/ji`, { body: { spec: { completions: 4, parallelism: 4 } }, headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(scaled.status, 200, scaled.text);
  assert.deepEqual(await patch('ji', { spec: { completionMode: 'NonIndexed' } }), [['spec.completionMode', 'Invalid value: "NonIndexed": field is immutable']]);
});
