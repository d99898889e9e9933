import { test } from 'node:test';
import assert from 'node:assert/strict';
import { builtinPrinterFor } from '../../../../server/registry/printers/index.ts';
import { humanDuration } from '../../../../server/registry/printers/columns.ts';
import type { TablePrinter } from '../../../../server/schema/types.ts';

const NOW = Date.parse('2025-06-01T12:00:00Z');
const ago = (ms: number) => new Date(NOW - ms).toISOString();
const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

const names = (p: TablePrinter) => p.columns.map((c) => c.name);
const wide = (p: TablePrinter) => p.columns.filter((c) => c.priority > 0).map((c) => c.name);
const cellMap = (p: TablePrinter, obj: unknown) => {
  const cells = p.cells(obj, NOW);
  assert.equal(cells.length, p.columns.length, 'one cell per column');
  return Object.fromEntries(p.columns.map((c, i) => [c.name, cells[i]]));
};

test('humanDuration matches kube duration.HumanDuration at its boundaries', () => {
  const cases: [number, string][] = [
    [-3 * S, '<invalid>'],
    [-2 * S, '<invalid>'],
    [-1500, '0s'],
    [0, '0s'],
    [999, '0s'],
    [45 * S, '45s'],
    [119 * S, '119s'],
    [2 * M, '2m'],
    [5 * M + 30 * S, '5m30s'],
    [9 * M + 59 * S, '9m59s'],
    [10 * M + 30 * S, '10m'],
    [179 * M, '179m'],
    [3 * H, '3h'],
    [3 * H + 25 * M, '3h25m'],
    [7 * H + 59 * M, '7h59m'],
    [8 * H + 30 * M, '8h'],
    [47 * H, '47h'],
    [2 * D, '2d'],
    [2 * D + 5 * H, '2d5h'],
    [7 * D + 23 * H, '7d23h'],
    [8 * D + 5 * H, '8d'],
    [729 * D, '729d'],
    [730 * D, '2y'],
    [3 * 365 * D + 10 * D, '3y10d'],
    [8 * 365 * D + 100 * D, '8y'],
  ];
  for (const [ms, want] of cases) assert.equal(humanDuration(ms), want, `humanDuration(${ms})`);
});

test('default printer: Name + Created At (date) like the default table convertor', () => {
  for (const p of [builtinPrinterFor('example.com', 'widgets'), builtinPrinterFor('rbac.authorization.k8s.io', 'roles'), builtinPrinterFor('apiextensions.k8s.io', 'customresourcedefinitions'), builtinPrinterFor('', 'limitranges')]) {
    assert.deepEqual(p.columns.map((c) => [c.name, c.type, c.format, c.priority]), [
      ['Name', 'string', 'name', 0],
      ['Created At', 'date', '', 0],
    ]);
  }
  const p = builtinPrinterFor('example.com', 'widgets');
  assert.deepEqual(p.cells({ metadata: { name: 'w1', creationTimestamp: '2024-03-04T05:06:07Z' } }, NOW), ['w1', '2024-03-04T05:06:07Z']);
  assert.deepEqual(p.cells({ metadata: { name: 'w2', creationTimestamp: '2024-03-04T05:06:07.891Z' } }, NOW), ['w2', '2024-03-04T05:06:07Z']);
});

test('pod columns: names, types, wide priorities', () => {
  const p = builtinPrinterFor('', 'pods');
  assert.deepEqual(names(p), ['Name', 'Ready', 'Status', 'Restarts', 'Age', 'IP', 'Node', 'Nominated Node', 'Readiness Gates']);
  assert.deepEqual(wide(p), ['IP', 'Node', 'Nominated Node', 'Readiness Gates']);
  assert.equal(p.columns[0]!.format, 'name');
  assert.equal(p.columns[3]!.type, 'string');
});

test('pod cells: ready count, restarts with last-restart age, running status', () => {
  const p = builtinPrinterFor('', 'pods');
  const pod = {
    metadata: { name: 'web-1', creationTimestamp: ago(3 * H) },
    spec: { nodeName: 'node-a', containers: [{ name: 'a' }, { name: 'b' }], readinessGates: [{ conditionType: 'x/ok' }] },
    status: {
      phase: 'Running',
      podIP: '10.0.0.5',
      conditions: [{ type: 'Ready', status: 'False' }, { type: 'x/ok', status: 'True' }],
      containerStatuses: [
        { name: 'a', ready: true, restartCount: 2, state: { running: {} }, lastState: { terminated: { finishedAt: ago(5 * M) } } },
        { name: 'b', ready: false, restartCount: 1, state: { running: {} }, lastState: { terminated: { finishedAt: ago(20 * M) } } },
      ],
    },
  };
  const c = cellMap(p, pod);
  assert.equal(c['Name'], 'web-1');
  assert.equal(c['Ready'], '1/2');
  assert.equal(c['Status'], 'Running');
  assert.equal(c['Restarts'], '3 (5m ago)');
  assert.equal(c['Age'], '3h');
  assert.equal(c['IP'], '10.0.0.5');
  assert.equal(c['Node'], 'node-a');
  assert.equal(c['Nominated Node'], '<none>');
  assert.equal(c['Readiness Gates'], '1/1');
});

test('pod status: waiting reason, init progress, terminating, no restarts', () => {
  const p = builtinPrinterFor('', 'pods');
  const base = { metadata: { name: 'p', creationTimestamp: ago(M) }, spec: { containers: [{ name: 'a' }] } };
  const crash = cellMap(p, {
    ...base,
    status: { phase: 'Running', containerStatuses: [{ name: 'a', restartCount: 0, state: { waiting: { reason: 'CrashLoopBackOff' } } }] },
  });
  assert.equal(crash['Status'], 'CrashLoopBackOff');
  assert.equal(crash['Restarts'], '0');
  assert.equal(crash['Ready'], '0/1');
  assert.equal(crash['IP'], '<none>');

  const init = cellMap(p, {
    metadata: { name: 'p' },
    spec: { initContainers: [{ name: 'i1' }, { name: 'i2' }], containers: [{ name: 'a' }] },
    status: {
      phase: 'Pending',
      initContainerStatuses: [
        { name: 'i1', state: { terminated: { exitCode: 0, reason: 'Completed' } } },
        { name: 'i2', state: { running: {} } },
      ],
      containerStatuses: [{ name: 'a', state: { waiting: { reason: 'PodInitializing' } } }],
    },
  });
  assert.equal(init['Status'], 'Init:1/2');
  assert.equal(init['Age'], '<unknown>');

  const gone = cellMap(p, {
    ...base,
    metadata: { ...base.metadata, deletionTimestamp: ago(0) },
    status: { phase: 'Running', containerStatuses: [{ name: 'a', ready: true, state: { running: {} } }] },
  });
  assert.equal(gone['Status'], 'Terminating');
  assert.equal(gone['Ready'], '1/1');

  const done = cellMap(p, {
    ...base,
    status: { phase: 'Succeeded', containerStatuses: [{ name: 'a', state: { terminated: { exitCode: 0, reason: 'Completed' } } }] },
  });
  assert.equal(done['Status'], 'Completed');
});

test('sidecar (restartable init) containers count toward READY', () => {
  const p = builtinPrinterFor('', 'pods');
  const c = cellMap(p, {
    metadata: { name: 'p' },
    spec: { initContainers: [{ name: 'side', restartPolicy: 'Always' }], containers: [{ name: 'a' }] },
    status: {
      phase: 'Running',
      conditions: [{ type: 'Initialized', status: 'True' }],
      initContainerStatuses: [{ name: 'side', started: true, ready: true, restartCount: 1, state: { running: {} } }],
      containerStatuses: [{ name: 'a', ready: true, state: { running: {} } }],
    },
  });
  assert.equal(c['Ready'], '2/2');
  assert.equal(c['Restarts'], '1');
  assert.equal(c['Status'], 'Running');
});

test('deployment columns and READY "2/3"', () => {
  const p = builtinPrinterFor('apps', 'deployments');
  assert.deepEqual(names(p), ['Name', 'Ready', 'Up-to-date', 'Available', 'Age', 'Containers', 'Images', 'Selector']);
  assert.deepEqual(wide(p), ['Containers', 'Images', 'Selector']);
  const c = cellMap(p, {
    metadata: { name: 'web', creationTimestamp: ago(2 * D) },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['fe', 'be'] }] },
      template: { spec: { containers: [{ name: 'nginx', image: 'nginx:1' }, { name: 'side', image: 'busybox' }] } },
    },
    status: { readyReplicas: 2, updatedReplicas: 3, availableReplicas: 2 },
  });
  assert.equal(c['Ready'], '2/3');
  assert.equal(c['Up-to-date'], 3);
  assert.equal(c['Available'], 2);
  assert.equal(c['Age'], '2d');
  assert.equal(c['Containers'], 'nginx,side');
  assert.equal(c['Images'], 'nginx:1,busybox');
  assert.equal(c['Selector'], 'app=web,tier in (be,fe)');
});

test('service columns and PORT(S) string', () => {
  const p = builtinPrinterFor('', 'services');
  assert.deepEqual(names(p), ['Name', 'Type', 'Cluster-IP', 'External-IP', 'Port(s)', 'Age', 'Selector']);
  assert.deepEqual(wide(p), ['Selector']);
  const c = cellMap(p, {
    metadata: { name: 'web', creationTimestamp: ago(90 * S) },
    spec: {
      type: 'NodePort',
      clusterIP: '10.96.0.10',
      clusterIPs: ['10.96.0.10'],
      selector: { b: '2', a: '1' },
      ports: [
        { port: 80, protocol: 'TCP' },
        { port: 443, nodePort: 30443, protocol: 'TCP' },
      ],
    },
  });
  assert.equal(c['Port(s)'], '80/TCP,443:30443/TCP');
  assert.equal(c['Cluster-IP'], '10.96.0.10');
  assert.equal(c['External-IP'], '<none>');
  assert.equal(c['Age'], '90s');
  assert.equal(c['Selector'], 'a=1,b=2');

  const lb = cellMap(p, { metadata: { name: 'lb' }, spec: { type: 'LoadBalancer', clusterIPs: ['10.0.0.1'], ports: [] } });
  assert.equal(lb['External-IP'], '<pending>');
  assert.equal(lb['Port(s)'], '<none>');
  assert.equal(lb['Selector'], '<none>');
});

test('configmap DATA counts data + binaryData; secret DATA counts data', () => {
  const cm = builtinPrinterFor('', 'configmaps');
  assert.deepEqual(names(cm), ['Name', 'Data', 'Age']);
  const c = cellMap(cm, { metadata: { name: 'cfg', creationTimestamp: ago(5 * M) }, data: { a: '1', b: '2' }, binaryData: { c: 'AA==' } });
  assert.equal(c['Data'], 3);
  assert.equal(c['Age'], '5m');
  assert.equal(cellMap(cm, { metadata: { name: 'empty' } })['Data'], 0);

  const sec = builtinPrinterFor('', 'secrets');
  assert.deepEqual(names(sec), ['Name', 'Type', 'Data', 'Age']);
  const s = cellMap(sec, { metadata: { name: 's' }, type: 'Opaque', data: { x: 'eA==' } });
  assert.equal(s['Type'], 'Opaque');
  assert.equal(s['Data'], 1);
});

test('column sets for other common kinds', () => {
  assert.deepEqual(names(builtinPrinterFor('', 'namespaces')), ['Name', 'Status', 'Age']);
  assert.deepEqual(names(builtinPrinterFor('', 'serviceaccounts')), ['Name', 'Secrets', 'Age']);
  assert.deepEqual(names(builtinPrinterFor('', 'nodes')), ['Name', 'Status', 'Roles', 'Age', 'Version', 'Internal-IP', 'External-IP', 'OS-Image', 'Kernel-Version', 'Container-Runtime']);
  assert.deepEqual(wide(builtinPrinterFor('', 'nodes')), ['Internal-IP', 'External-IP', 'OS-Image', 'Kernel-Version', 'Container-Runtime']);
  const ev = builtinPrinterFor('', 'events');
  assert.deepEqual(names(ev), ['Last Seen', 'Type', 'Reason', 'Object', 'Subobject', 'Source', 'Message', 'First Seen', 'Count', 'Name']);
  assert.deepEqual(wide(ev), ['Subobject', 'Source', 'First Seen', 'Count', 'Name']);
  assert.deepEqual(names(builtinPrinterFor('batch', 'jobs')), ['Name', 'Status', 'Completions', 'Duration', 'Age', 'Containers', 'Images', 'Selector']);
  assert.deepEqual(names(builtinPrinterFor('batch', 'cronjobs')), ['Name', 'Schedule', 'Timezone', 'Suspend', 'Active', 'Last Schedule', 'Age', 'Containers', 'Images', 'Selector']);
  assert.deepEqual(names(builtinPrinterFor('apps', 'statefulsets')), ['Name', 'Ready', 'Age', 'Containers', 'Images']);
  assert.deepEqual(names(builtinPrinterFor('apps', 'replicasets')), ['Name', 'Desired', 'Current', 'Ready', 'Age', 'Containers', 'Images', 'Selector']);
  assert.deepEqual(names(builtinPrinterFor('rbac.authorization.k8s.io', 'clusterrolebindings')), ['Name', 'Role', 'Age', 'Users', 'Groups', 'ServiceAccounts']);
  assert.deepEqual(names(builtinPrinterFor('admissionregistration.k8s.io', 'validatingwebhookconfigurations')), ['Name', 'Webhooks', 'Age']);
  assert.deepEqual(names(builtinPrinterFor('networking.k8s.io', 'ingresses')), ['Name', 'Class', 'Hosts', 'Address', 'Ports', 'Age']);
  assert.deepEqual(names(builtinPrinterFor('events.k8s.io', 'events')), names(ev));
});

test('node, event, job and binding cells', () => {
  const node = cellMap(builtinPrinterFor('', 'nodes'), {
    metadata: { name: 'n1', labels: { 'node-role.kubernetes.io/control-plane': '', 'node-role.kubernetes.io/worker': '' } },
    spec: { unschedulable: true },
    status: { conditions: [{ type: 'Ready', status: 'True' }], nodeInfo: { kubeletVersion: 'v1.34.0' }, addresses: [{ type: 'InternalIP', address: '192.168.1.2' }] },
  });
  assert.equal(node['Status'], 'Ready,SchedulingDisabled');
  assert.equal(node['Roles'], 'control-plane,worker');
  assert.equal(node['Version'], 'v1.34.0');
  assert.equal(node['Internal-IP'], '192.168.1.2');
  assert.equal(node['External-IP'], '<none>');
  assert.equal(node['OS-Image'], '<unknown>');

  const ev = cellMap(builtinPrinterFor('', 'events'), {
    metadata: { name: 'web.123' },
    involvedObject: { kind: 'Pod', name: 'web', fieldPath: 'spec.containers{a}' },
    type: 'Warning',
    reason: 'BackOff',
    message: ' Back-off restarting \n',
    source: { component: 'kubelet', host: 'n1' },
    firstTimestamp: ago(10 * M),
    lastTimestamp: ago(30 * S),
    count: 7,
  });
  assert.deepEqual(ev, {
    'Last Seen': '30s', Type: 'Warning', Reason: 'BackOff', Object: 'pod/web', Subobject: 'spec.containers{a}',
    Source: 'kubelet, n1', Message: 'Back-off restarting', 'First Seen': '10m', Count: 7, Name: 'web.123',
  });

  const newEv = cellMap(builtinPrinterFor('events.k8s.io', 'events'), {
    apiVersion: 'events.k8s.io/v1',
    metadata: { name: 'e2' },
    regarding: { kind: 'Node', name: 'n1' },
    note: 'hi',
    reason: 'Started',
    type: 'Normal',
    eventTime: ago(2 * M),
    reportingController: 'ctrl',
  });
  assert.equal(newEv['Object'], 'node/n1');
  assert.equal(newEv['Last Seen'], '2m');
  assert.equal(newEv['Count'], 1);
  assert.equal(newEv['Source'], 'ctrl');

  const job = cellMap(builtinPrinterFor('batch', 'jobs'), {
    metadata: { name: 'j' },
    spec: { completions: 3, template: { spec: { containers: [{ name: 'c', image: 'i' }] } }, selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': 'u' } } },
    status: { succeeded: 3, startTime: ago(10 * M), completionTime: ago(7 * M), conditions: [{ type: 'Complete', status: 'True' }] },
  });
  assert.equal(job['Status'], 'Complete');
  assert.equal(job['Completions'], '3/3');
  assert.equal(job['Duration'], '3m');
  assert.equal(job['Selector'], 'batch.kubernetes.io/controller-uid=u');

  const rb = cellMap(builtinPrinterFor('rbac.authorization.k8s.io', 'rolebindings'), {
    metadata: { name: 'rb' },
    roleRef: { kind: 'Role', name: 'reader' },
    subjects: [{ kind: 'User', name: 'alice' }, { kind: 'ServiceAccount', namespace: 'ns', name: 'sa' }, { kind: 'User', name: 'bob' }],
  });
  assert.equal(rb['Role'], 'Role/reader');
  assert.equal(rb['Users'], 'alice, bob');
  assert.equal(rb['ServiceAccounts'], 'ns/sa');
  assert.equal(rb['Groups'], '');
});

test('every registered printer yields one cell per column for an empty object', () => {
  const kinds: [string, string][] = [
    ['', 'pods'], ['', 'namespaces'], ['', 'services'], ['', 'configmaps'], ['', 'secrets'], ['', 'serviceaccounts'],
    ['', 'nodes'], ['', 'events'], ['', 'endpoints'], ['', 'persistentvolumes'], ['', 'persistentvolumeclaims'],
    ['', 'replicationcontrollers'], ['', 'resourcequotas'], ['', 'podtemplates'], ['', 'componentstatuses'],
    ['apps', 'deployments'], ['apps', 'replicasets'], ['apps', 'statefulsets'], ['apps', 'daemonsets'], ['apps', 'controllerrevisions'],
    ['batch', 'jobs'], ['batch', 'cronjobs'], ['autoscaling', 'horizontalpodautoscalers'],
    ['networking.k8s.io', 'ingresses'], ['networking.k8s.io', 'ingressclasses'], ['networking.k8s.io', 'networkpolicies'],
    ['policy', 'poddisruptionbudgets'], ['rbac.authorization.k8s.io', 'rolebindings'],
    ['storage.k8s.io', 'storageclasses'], ['scheduling.k8s.io', 'priorityclasses'], ['coordination.k8s.io', 'leases'],
    ['certificates.k8s.io', 'certificatesigningrequests'], ['admissionregistration.k8s.io', 'mutatingwebhookconfigurations'],
    ['discovery.k8s.io', 'endpointslices'], ['flowcontrol.apiserver.k8s.io', 'flowschemas'],
    ['flowcontrol.apiserver.k8s.io', 'prioritylevelconfigurations'], ['apiregistration.k8s.io', 'apiservices'],
  ];
  for (const [g, r] of kinds) {
    const p = builtinPrinterFor(g, r);
    assert.notEqual(p.columns.length, 2, `${g}/${r} should not fall back to the default printer`);
    assert.equal(p.cells({}, NOW).length, p.columns.length, `${g}/${r}`);
  }
});

test('misc cell logic: pv/pvc, endpoints, hpa, pdb, statefulset, cronjob, controllerrevision, storageclass', () => {
  const pv = cellMap(builtinPrinterFor('', 'persistentvolumes'), {
    metadata: { name: 'pv1' },
    spec: { capacity: { storage: '10Gi' }, accessModes: ['ReadWriteMany', 'ReadWriteOnce'], persistentVolumeReclaimPolicy: 'Retain', claimRef: { namespace: 'ns', name: 'c' }, storageClassName: 'fast' },
    status: { phase: 'Bound' },
  });
  assert.equal(pv['Capacity'], '10Gi');
  assert.equal(pv['Access Modes'], 'RWO,RWX');
  assert.equal(pv['Claim'], 'ns/c');
  assert.equal(pv['VolumeMode'], '<unset>');

  const pvc = cellMap(builtinPrinterFor('', 'persistentvolumeclaims'), { metadata: { name: 'c' }, spec: {}, status: { phase: 'Pending' } });
  assert.equal(pvc['Capacity'], '');
  assert.equal(pvc['Status'], 'Pending');

  const ep = cellMap(builtinPrinterFor('', 'endpoints'), {
    metadata: { name: 'e' },
    subsets: [{ addresses: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }, { ip: 'fd00::1' }, { ip: '10.0.0.4' }], ports: [{ port: 80 }] }],
  });
  assert.equal(ep['Endpoints'], '10.0.0.1:80,10.0.0.2:80,[fd00::1]:80 + 1 more...');
  assert.equal(cellMap(builtinPrinterFor('', 'endpoints'), { metadata: { name: 'e' } })['Endpoints'], '<none>');

  const hpa = cellMap(builtinPrinterFor('autoscaling', 'horizontalpodautoscalers'), {
    metadata: { name: 'h' },
    spec: { scaleTargetRef: { kind: 'Deployment', name: 'web' }, minReplicas: 1, maxReplicas: 5, metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }] },
    status: { currentReplicas: 2, currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 42 } } }] },
  });
  assert.equal(hpa['Reference'], 'Deployment/web');
  assert.equal(hpa['Targets'], 'cpu: 42%/80%');
  assert.equal(hpa['MinPods'], '1');
  assert.equal(hpa['MaxPods'], 5);

  const pdb = cellMap(builtinPrinterFor('policy', 'poddisruptionbudgets'), { metadata: { name: 'p' }, spec: { minAvailable: '50%' }, status: { disruptionsAllowed: 1 } });
  assert.deepEqual([pdb['Min Available'], pdb['Max Unavailable'], pdb['Allowed Disruptions']], ['50%', 'N/A', 1]);

  // The two replica-count kinds share a printer; their selectors print from different shapes.
  const template = { spec: { containers: [{ name: 'c', image: 'i:1' }] } };
  const rc = cellMap(builtinPrinterFor('', 'replicationcontrollers'), { metadata: { name: 'rc' }, spec: { selector: { app: 'x' }, template }, status: { replicas: 2, readyReplicas: 1 } });
  assert.deepEqual([rc['Desired'], rc['Current'], rc['Ready'], rc['Containers'], rc['Images'], rc['Selector']], [1, 2, 1, 'c', 'i:1', 'app=x']);
  const rs = cellMap(builtinPrinterFor('apps', 'replicasets'), { metadata: { name: 'rs' }, spec: { replicas: 3, selector: { matchLabels: { app: 'x' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['web'] }] }, template } });
  assert.deepEqual([rs['Desired'], rs['Current'], rs['Ready'], rs['Selector']], [3, 0, 0, 'app=x,tier in (web)']);

  const sts = cellMap(builtinPrinterFor('apps', 'statefulsets'), { metadata: { name: 's' }, spec: { replicas: 3 }, status: { readyReplicas: 1 } });
  assert.equal(sts['Ready'], '1/3');

  const cj = cellMap(builtinPrinterFor('batch', 'cronjobs'), { metadata: { name: 'cj' }, spec: { schedule: '*/5 * * * *', suspend: false }, status: { lastScheduleTime: ago(4 * M) } });
  assert.deepEqual([cj['Schedule'], cj['Timezone'], cj['Suspend'], cj['Active'], cj['Last Schedule']], ['*/5 * * * *', '<none>', 'False', 0, '4m']);

  const cr = cellMap(builtinPrinterFor('apps', 'controllerrevisions'), {
    metadata: { name: 'cr', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'ds', controller: true }] },
    revision: 4,
  });
  assert.equal(cr['Controller'], 'daemonset.apps/ds');
  assert.equal(cr['Revision'], 4);

  const sc = cellMap(builtinPrinterFor('storage.k8s.io', 'storageclasses'), {
    metadata: { name: 'std', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
    provisioner: 'x.csi',
  });
  assert.deepEqual([sc['Name'], sc['ReclaimPolicy'], sc['VolumeBindingMode'], sc['AllowVolumeExpansion']], ['std (default)', 'Delete', 'Immediate', false]);
});
