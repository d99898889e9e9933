import { test } from 'node:test';
import assert from 'node:assert/strict';
import { imageTag } from '../../../../server/registry/kinds/core/pods/defaults.ts';
import { applyDefaults, defaultsFor } from '../../../../server/registry/kinds/index.ts';
import { createServiceStrategy } from '../../../../server/registry/kinds/core/services/strategy.ts';
import type { Strategy } from '../../../../server/registry/strategy.ts';
import { ApiError, invalid } from '../../../../server/errors.ts';

const POD = 'io.k8s.api.core.v1.Pod';
const SERVICE = 'io.k8s.api.core.v1.Service';

const EXPECTED_POD_SPEC_DEFAULTS = {
  dnsPolicy: 'ClusterFirst',
  restartPolicy: 'Always',
  securityContext: {},
  terminationGracePeriodSeconds: 30,
  schedulerName: 'default-scheduler',
};
const EXPECTED_CONTAINER_DEFAULTS = { terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File' };
const PROBE_DEFAULTS = { timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 };

function podSpec(): any {
  return {
    containers: [
      {
        name: 'app',
        image: 'nginx:1.27',
        ports: [{ containerPort: 80 }, { containerPort: 53, protocol: 'UDP' }],
        env: [{ name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
        livenessProbe: { httpGet: { port: 80 } },
        readinessProbe: { grpc: { port: 9000 }, timeoutSeconds: 5 },
        resources: { limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: '100m' } },
      },
    ],
    initContainers: [{ name: 'init', image: 'busybox' }],
    volumes: [{ name: 'scratch' }, { name: 'cfg', configMap: { name: 'c' } }, { name: 'host', hostPath: { path: '/data' } }, { name: 'tok', projected: { sources: [{ serviceAccountToken: { path: 't' } }] } }],
  };
}

test('pod: PodSpec, Container, port, probe, env, volume and Pod-only defaults', () => {
  const pod: any = { metadata: { name: 'p' }, spec: podSpec() };
  applyDefaults(POD, pod);
  const spec = pod.spec;
  for (const [k, v] of Object.entries(EXPECTED_POD_SPEC_DEFAULTS)) assert.deepEqual(spec[k], v, k);
  assert.equal(spec.enableServiceLinks, true);
  const c = spec.containers[0];
  assert.equal(c.imagePullPolicy, 'IfNotPresent');
  for (const [k, v] of Object.entries(EXPECTED_CONTAINER_DEFAULTS)) assert.equal(c[k], v, k);
  assert.deepEqual(c.ports, [{ containerPort: 80, protocol: 'TCP' }, { containerPort: 53, protocol: 'UDP' }]);
  assert.equal(c.env[0].valueFrom.fieldRef.apiVersion, 'v1');
  assert.deepEqual(c.livenessProbe, { httpGet: { port: 80, path: '/', scheme: 'HTTP' }, ...PROBE_DEFAULTS });
  assert.deepEqual(c.readinessProbe, { grpc: { port: 9000, service: '' }, ...PROBE_DEFAULTS, timeoutSeconds: 5 });
  // Requests default to limits, keeping the ones given.
  assert.deepEqual(c.resources.requests, { cpu: '100m', memory: '128Mi' });
  assert.equal(spec.initContainers[0].imagePullPolicy, 'Always');
  // Resources is a non-pointer struct in Go: kube writes `resources: {}` when none are given.
  assert.deepEqual(spec.initContainers[0].resources, {});
  assert.deepEqual(spec.volumes[0], { name: 'scratch', emptyDir: {} });
  assert.deepEqual(spec.volumes[1].configMap, { name: 'c', defaultMode: 420 });
  assert.deepEqual(spec.volumes[2].hostPath, { path: '/data', type: '' });
  assert.equal(spec.volumes[3].projected.defaultMode, 420);
  assert.equal(spec.volumes[3].projected.sources[0].serviceAccountToken.expirationSeconds, 3600);
});

test('pod: values the user set are never overwritten, including zeros of pointer fields', () => {
  const pod: any = {
    spec: {
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 0,
      enableServiceLinks: false,
      dnsPolicy: 'Default',
      securityContext: { runAsUser: 1000 },
      containers: [{ name: 'a', image: 'nginx', imagePullPolicy: 'Never', terminationMessagePolicy: 'FallbackToLogsOnError' }],
    },
  };
  applyDefaults(POD, pod);
  assert.equal(pod.spec.restartPolicy, 'Never');
  assert.equal(pod.spec.terminationGracePeriodSeconds, 0);
  assert.equal(pod.spec.enableServiceLinks, false);
  assert.equal(pod.spec.dnsPolicy, 'Default');
  assert.deepEqual(pod.spec.securityContext, { runAsUser: 1000 });
  assert.equal(pod.spec.containers[0].imagePullPolicy, 'Never');
  assert.equal(pod.spec.containers[0].terminationMessagePolicy, 'FallbackToLogsOnError');
});

test('pod: hostNetwork defaults container hostPorts to their containerPorts', () => {
  const pod: any = { spec: { hostNetwork: true, containers: [{ name: 'a', image: 'x', ports: [{ containerPort: 8080 }, { containerPort: 9090, hostPort: 9091 }] }] } };
  applyDefaults(POD, pod);
  assert.deepEqual(pod.spec.containers[0].ports.map((p: any) => p.hostPort), [8080, 9091]);
});

test('image pull policy follows the tag the way ParseImageName reads it', () => {
  const cases: [string, string][] = [
    ['nginx', 'latest'],
    ['nginx:latest', 'latest'],
    ['nginx:1.27', '1.27'],
    ['localhost:5000/app', 'latest'],
    ['localhost:5000/app:v1', 'v1'],
    ['registry.example.com/team/app@sha256:' + 'a'.repeat(64), ''],
    ['registry.example.com/team/app:v2@sha256:' + 'a'.repeat(64), 'v2'],
    ['Invalid/Name', ''],
    ['', ''],
  ];
  for (const [image, tag] of cases) assert.equal(imageTag(image), tag, image);
  const pod: any = { spec: { containers: [{ name: 'a', image: 'app@sha256:' + 'b'.repeat(64) }, { name: 'b', image: 'app:latest' }] } };
  applyDefaults(POD, pod);
  assert.deepEqual(pod.spec.containers.map((c: any) => c.imagePullPolicy), ['IfNotPresent', 'Always']);
});

test('deployment: spec defaults, and the pod template gets PodSpec/Container defaults but not Pod-only ones', () => {
  const d: any = { metadata: { name: 'd' }, spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: podSpec() } } };
  applyDefaults('io.k8s.api.apps.v1.Deployment', d);
  assert.equal(d.spec.replicas, 1);
  assert.deepEqual(d.spec.strategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } });
  assert.equal(d.spec.revisionHistoryLimit, 10);
  assert.equal(d.spec.progressDeadlineSeconds, 600);
  const spec = d.spec.template.spec;
  for (const [k, v] of Object.entries(EXPECTED_POD_SPEC_DEFAULTS)) assert.deepEqual(spec[k], v, k);
  assert.equal('enableServiceLinks' in spec, false, 'enableServiceLinks is defaulted on Pods only');
  assert.deepEqual(spec.containers[0].resources.requests, { cpu: '100m' }, 'requests-from-limits is Pod-only');
  const c = spec.containers[0];
  assert.equal(c.imagePullPolicy, 'IfNotPresent');
  assert.equal(c.terminationMessagePath, '/dev/termination-log');
  assert.equal(c.ports[0].protocol, 'TCP');
  assert.equal(c.livenessProbe.periodSeconds, 10);
  assert.equal(c.env[0].valueFrom.fieldRef.apiVersion, 'v1');
  assert.deepEqual(spec.volumes[0].emptyDir, {});
});

test('deployment: user values win, replicas 0 stays, Recreate gets no rollingUpdate', () => {
  const d: any = { spec: { replicas: 0, revisionHistoryLimit: 0, strategy: { type: 'Recreate' }, template: { spec: { restartPolicy: 'Always', terminationGracePeriodSeconds: 5, containers: [] } } } };
  applyDefaults('io.k8s.api.apps.v1.Deployment', d);
  assert.equal(d.spec.replicas, 0);
  assert.equal(d.spec.revisionHistoryLimit, 0);
  assert.deepEqual(d.spec.strategy, { type: 'Recreate' });
  assert.equal(d.spec.template.spec.terminationGracePeriodSeconds, 5);
  const partial: any = { spec: { strategy: { rollingUpdate: { maxSurge: 1 } } } };
  applyDefaults('io.k8s.api.apps.v1.Deployment', partial);
  assert.deepEqual(partial.spec.strategy, { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: '25%' } });
});

test('statefulset, daemonset, replicaset defaults', () => {
  const ss: any = { spec: { template: { spec: { containers: [] } }, volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'] } }] } };
  applyDefaults('io.k8s.api.apps.v1.StatefulSet', ss);
  assert.equal(ss.spec.replicas, 1);
  assert.equal(ss.spec.podManagementPolicy, 'OrderedReady');
  assert.deepEqual(ss.spec.updateStrategy, { type: 'RollingUpdate', rollingUpdate: { partition: 0, maxUnavailable: 1 } });
  assert.deepEqual(ss.spec.persistentVolumeClaimRetentionPolicy, { whenDeleted: 'Retain', whenScaled: 'Retain' });
  assert.equal(ss.spec.revisionHistoryLimit, 10);
  assert.equal(ss.spec.volumeClaimTemplates[0].spec.volumeMode, 'Filesystem');
  assert.equal(ss.spec.template.spec.restartPolicy, 'Always');
  // serviceName has no omitempty in Go: written as "" when unset; so has ordinals.start.
  assert.equal(ss.spec.serviceName, '');
  const ordinals: any = { spec: { ordinals: {}, serviceName: 'web' } };
  applyDefaults('io.k8s.api.apps.v1.StatefulSet', ordinals);
  assert.deepEqual([ordinals.spec.serviceName, ordinals.spec.ordinals], ['web', { start: 0 }]);
  const onDelete: any = { spec: { updateStrategy: { type: 'OnDelete' } } };
  applyDefaults('io.k8s.api.apps.v1.StatefulSet', onDelete);
  assert.deepEqual(onDelete.spec.updateStrategy, { type: 'OnDelete' });

  const ds: any = { spec: {} };
  applyDefaults('io.k8s.api.apps.v1.DaemonSet', ds);
  assert.deepEqual(ds.spec.updateStrategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } });
  assert.equal(ds.spec.revisionHistoryLimit, 10);

  const rs: any = { spec: {} };
  applyDefaults('io.k8s.api.apps.v1.ReplicaSet', rs);
  assert.equal(rs.spec.replicas, 1);
});

test('service: defaults by type', () => {
  const svc: any = { spec: { selector: { app: 'a' }, ports: [{ port: 80 }, { port: 53, protocol: 'UDP', targetPort: 'dns' }, { port: 443, targetPort: 0 }] } };
  applyDefaults(SERVICE, svc);
  assert.equal(svc.spec.type, 'ClusterIP');
  assert.equal(svc.spec.sessionAffinity, 'None');
  assert.equal(svc.spec.internalTrafficPolicy, 'Cluster');
  assert.equal('externalTrafficPolicy' in svc.spec, false);
  assert.deepEqual(svc.spec.ports, [
    { port: 80, protocol: 'TCP', targetPort: 80 },
    { port: 53, protocol: 'UDP', targetPort: 'dns' },
    { port: 443, targetPort: 443, protocol: 'TCP' },
  ]);

  const lb: any = { spec: { type: 'LoadBalancer', sessionAffinity: 'ClientIP', ports: [{ port: 80 }] } };
  applyDefaults(SERVICE, lb);
  assert.equal(lb.spec.externalTrafficPolicy, 'Cluster');
  assert.equal(lb.spec.allocateLoadBalancerNodePorts, true);
  assert.deepEqual(lb.spec.sessionAffinityConfig, { clientIP: { timeoutSeconds: 10800 } });

  const withExternalIPs: any = { spec: { externalIPs: ['192.0.2.1'], ports: [{ port: 80 }] } };
  applyDefaults(SERVICE, withExternalIPs);
  assert.equal(withExternalIPs.spec.externalTrafficPolicy, 'Cluster');

  const ext: any = { spec: { type: 'ExternalName', externalName: 'example.com' } };
  applyDefaults(SERVICE, ext);
  assert.equal('internalTrafficPolicy' in ext.spec, false);
  assert.equal('externalTrafficPolicy' in ext.spec, false);
});

test('job: completions/parallelism, backoff, modes, labels from the template, pod template defaults', () => {
  const job: any = { metadata: { name: 'j' }, spec: { template: { metadata: { labels: { app: 'j' } }, spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox:1.36' }] } } } };
  applyDefaults('io.k8s.api.batch.v1.Job', job);
  const s = job.spec;
  assert.deepEqual(
    { completions: s.completions, parallelism: s.parallelism, backoffLimit: s.backoffLimit, completionMode: s.completionMode, suspend: s.suspend, podReplacementPolicy: s.podReplacementPolicy, manualSelector: s.manualSelector },
    { completions: 1, parallelism: 1, backoffLimit: 6, completionMode: 'NonIndexed', suspend: false, podReplacementPolicy: 'TerminatingOrFailed', manualSelector: false },
  );
  assert.deepEqual(job.metadata.labels, { app: 'j' });
  assert.equal(s.template.spec.restartPolicy, 'Never');
  assert.equal(s.template.spec.dnsPolicy, 'ClusterFirst');
  assert.equal(s.template.spec.containers[0].imagePullPolicy, 'IfNotPresent');

  const parallel: any = {
    metadata: { labels: { own: 'x' } },
    spec: {
      parallelism: 3,
      backoffLimitPerIndex: 1,
      completionMode: 'Indexed',
      podFailurePolicy: { rules: [{ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] }] },
      template: { metadata: { labels: { app: 'j' } }, spec: { containers: [] } },
    },
  };
  applyDefaults('io.k8s.api.batch.v1.Job', parallel);
  assert.equal('completions' in parallel.spec, false, 'completions stays unset when parallelism is given');
  assert.equal(parallel.spec.parallelism, 3);
  assert.equal(parallel.spec.backoffLimit, 2147483647);
  assert.equal(parallel.spec.completionMode, 'Indexed');
  assert.equal(parallel.spec.podReplacementPolicy, 'Failed');
  assert.equal(parallel.spec.podFailurePolicy.rules[0].onPodConditions[0].status, 'True');
  assert.deepEqual(parallel.metadata.labels, { own: 'x' });
});

test('cronjob: spec defaults; the job template gets pod defaults but not Job-object defaults', () => {
  const cj: any = { spec: { schedule: '* * * * *', jobTemplate: { spec: { template: { spec: { restartPolicy: 'OnFailure', containers: [{ name: 'c', image: 'busybox' }] } } } } } };
  applyDefaults('io.k8s.api.batch.v1.CronJob', cj);
  assert.equal(cj.spec.concurrencyPolicy, 'Allow');
  assert.equal(cj.spec.suspend, false);
  assert.equal(cj.spec.successfulJobsHistoryLimit, 3);
  assert.equal(cj.spec.failedJobsHistoryLimit, 1);
  const jobSpec = cj.spec.jobTemplate.spec;
  assert.equal('backoffLimit' in jobSpec, false);
  assert.equal('completions' in jobSpec, false);
  assert.equal(jobSpec.template.spec.schedulerName, 'default-scheduler');
  assert.equal(jobSpec.template.spec.containers[0].imagePullPolicy, 'Always');
});

test('other kinds: secret, PVC, PV, network policy, RBAC subjects, priority class, storage class, HPA, webhooks', () => {
  const secret: any = { data: {} };
  applyDefaults('io.k8s.api.core.v1.Secret', secret);
  assert.equal(secret.type, 'Opaque');

  const pvc: any = { spec: { accessModes: ['ReadWriteOnce'] } };
  applyDefaults('io.k8s.api.core.v1.PersistentVolumeClaim', pvc);
  assert.equal(pvc.spec.volumeMode, 'Filesystem');
  assert.deepEqual(pvc.status, { phase: 'Pending' });

  const pv: any = { spec: { hostPath: { path: '/x' } } };
  applyDefaults('io.k8s.api.core.v1.PersistentVolume', pv);
  assert.equal(pv.spec.persistentVolumeReclaimPolicy, 'Retain');
  assert.equal(pv.spec.volumeMode, 'Filesystem');
  assert.equal(pv.spec.hostPath.type, '');

  const np: any = { spec: { podSelector: {}, egress: [{ ports: [{ port: 53 }] }] } };
  applyDefaults('io.k8s.api.networking.v1.NetworkPolicy', np);
  assert.deepEqual(np.spec.policyTypes, ['Ingress', 'Egress']);
  assert.equal(np.spec.egress[0].ports[0].protocol, 'TCP');
  const ingressOnly: any = { spec: { podSelector: {} } };
  applyDefaults('io.k8s.api.networking.v1.NetworkPolicy', ingressOnly);
  assert.deepEqual(ingressOnly.spec.policyTypes, ['Ingress']);

  const rb: any = { roleRef: { kind: 'Role', name: 'r' }, subjects: [{ kind: 'User', name: 'u' }, { kind: 'Group', name: 'g' }, { kind: 'ServiceAccount', name: 's', namespace: 'n' }] };
  applyDefaults('io.k8s.api.rbac.v1.RoleBinding', rb);
  assert.equal(rb.roleRef.apiGroup, 'rbac.authorization.k8s.io');
  // (a ServiceAccount's is "", which encoding/json leaves out: absent, as kube serves it)
  assert.deepEqual(rb.subjects.map((s: any) => s.apiGroup), ['rbac.authorization.k8s.io', 'rbac.authorization.k8s.io', undefined]);

  const pc: any = { value: 1000 };
  applyDefaults('io.k8s.api.scheduling.v1.PriorityClass', pc);
  assert.equal(pc.preemptionPolicy, 'PreemptLowerPriority');

  const sc: any = { provisioner: 'x' };
  applyDefaults('io.k8s.api.storage.v1.StorageClass', sc);
  assert.equal(sc.reclaimPolicy, 'Delete');
  assert.equal(sc.volumeBindingMode, 'Immediate');

  const hpa: any = { spec: { maxReplicas: 5, behavior: { scaleDown: { stabilizationWindowSeconds: 60 } } } };
  applyDefaults('io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler', hpa);
  assert.equal(hpa.spec.minReplicas, 1);
  assert.deepEqual(hpa.spec.metrics, [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }]);
  assert.deepEqual(hpa.spec.behavior.scaleDown, { selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }], stabilizationWindowSeconds: 60 });
  assert.equal(hpa.spec.behavior.scaleUp.stabilizationWindowSeconds, 0);
  assert.equal(hpa.spec.behavior.scaleUp.policies.length, 2);

  const mwc: any = { webhooks: [{ name: 'w', clientConfig: { service: { name: 's', namespace: 'n' } }, rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }] }] };
  applyDefaults('io.k8s.api.admissionregistration.v1.MutatingWebhookConfiguration', mwc);
  const w = mwc.webhooks[0];
  assert.deepEqual(
    { failurePolicy: w.failurePolicy, matchPolicy: w.matchPolicy, namespaceSelector: w.namespaceSelector, objectSelector: w.objectSelector, timeoutSeconds: w.timeoutSeconds, reinvocationPolicy: w.reinvocationPolicy },
    { failurePolicy: 'Fail', matchPolicy: 'Equivalent', namespaceSelector: {}, objectSelector: {}, timeoutSeconds: 10, reinvocationPolicy: 'Never' },
  );
  assert.equal(w.clientConfig.service.port, 443);
  assert.equal(w.rules[0].scope, '*');
});

test('defaultsFor: a hook for kinds with defaults, none for kinds without; applying twice changes nothing', () => {
  assert.equal(defaultsFor('io.k8s.api.core.v1.ConfigMap'), undefined);
  assert.equal(defaultsFor('io.k8s.api.coordination.v1.Lease'), undefined);
  assert.equal(defaultsFor('no.such.Definition'), undefined);
  const hook = defaultsFor(POD);
  assert.ok(hook);
  const pod: any = { spec: podSpec() };
  hook(pod);
  const once = structuredClone(pod);
  hook(pod);
  assert.deepEqual(pod, once);
  assert.equal(pod.spec.restartPolicy, 'Always');
});

// ---- Service IP and node-port allocation ----

class Services {
  items: any[] = [];
  readonly strategy: Strategy;
  constructor(opts: { reservationMillis?: number } = {}) {
    this.strategy = createServiceStrategy(() => this.items, { reservationMillis: opts.reservationMillis ?? 0 });
  }
  /** What the store does on create: default, prepare, store. */
  create(name: string, spec: any, ns = 'default'): any {
    const obj: any = { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: ns }, spec: structuredClone(spec) };
    defaultsFor(SERVICE)!(obj);
    this.strategy.prepareForCreate!(obj);
    this.items.push(obj);
    return obj;
  }
  /** What the store does on update: default the desired object, carry status, prepare, validate. */
  update(old: any, spec: any): any {
    const obj: any = { apiVersion: 'v1', kind: 'Service', metadata: { ...old.metadata }, spec: structuredClone(spec) };
    defaultsFor(SERVICE)!(obj);
    obj.status = old.status;
    this.strategy.prepareForUpdate!(obj, old);
    const errors = this.strategy.validateUpdate!(obj, old, '');
    if (errors.length) throw invalid('', 'Service', obj.metadata.name, errors);
    this.items[this.items.indexOf(old)] = obj;
    return obj;
  }
  delete(obj: any): void {
    this.items.splice(this.items.indexOf(obj), 1);
  }
}

function invalidMessage(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof ApiError, `expected ApiError, got ${e}`);
    assert.equal(e.code, 422);
    assert.equal(e.reason, 'Invalid');
    return e.message;
  }
  assert.fail('expected a 422 Invalid');
}

const web = { selector: { app: 'web' }, ports: [{ port: 80 }] };

test('services: cluster IPs are allocated in order above the static band, with IP family fields', () => {
  const s = new Services();
  const a = s.create('a', web);
  const b = s.create('b', web, 'other');
  assert.equal(a.spec.clusterIP, '10.96.1.1');
  assert.deepEqual(a.spec.clusterIPs, ['10.96.1.1']);
  assert.deepEqual(a.spec.ipFamilies, ['IPv4']);
  assert.equal(a.spec.ipFamilyPolicy, 'SingleStack');
  assert.deepEqual(a.status, { loadBalancer: {} });
  assert.equal(b.spec.clusterIP, '10.96.1.2');
  // A freed address is handed out again.
  s.delete(a);
  assert.equal(s.create('c', web).spec.clusterIP, '10.96.1.1');
});

test('services: default/kubernetes gets 10.96.0.1; requested addresses in the static band are honoured', () => {
  const s = new Services();
  assert.equal(s.create('kubernetes', { ports: [{ port: 443, targetPort: 6443 }] }).spec.clusterIP, '10.96.0.1');
  const dns = s.create('kube-dns', { clusterIP: '10.96.0.10', selector: { k8s: 'dns' }, ports: [{ port: 53, protocol: 'UDP' }] }, 'kube-system');
  assert.deepEqual(dns.spec.clusterIPs, ['10.96.0.10']);
  assert.equal(s.create('next', web).spec.clusterIP, '10.96.1.1');
  // 10.96.0.1 is not handed out to anyone else.
  const t = new Services();
  assert.equal(t.create('kubernetes', web, 'other').spec.clusterIP, '10.96.1.1');
});

test('services: a taken or out-of-range cluster IP is a 422 with kube-apiserver wording', () => {
  const s = new Services();
  s.create('dns', { clusterIP: '10.96.0.10', ports: [{ port: 53 }] });
  assert.equal(
    invalidMessage(() => s.create('dup', { clusterIP: '10.96.0.10', ports: [{ port: 53 }] })),
    'Service "dup" is invalid: spec.clusterIPs: Invalid value: []string{"10.96.0.10"}: failed to allocate IP 10.96.0.10: provided IP is already allocated',
  );
  assert.equal(
    invalidMessage(() => s.create('far', { clusterIP: '192.168.1.1', ports: [{ port: 53 }] })),
    'Service "far" is invalid: spec.clusterIPs: Invalid value: []string{"192.168.1.1"}: failed to allocate IP 192.168.1.1: the provided network does not match the current range',
  );
  assert.equal(
    invalidMessage(() => s.create('bad', { clusterIP: 'not-an-ip', ports: [{ port: 53 }] })),
    'Service "bad" is invalid: spec.clusterIPs[0]: Invalid value: "not-an-ip": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
  );
  assert.equal(s.items.length, 1);
});

test('services: headless and ExternalName services take no address', () => {
  const s = new Services();
  const headless = s.create('h', { clusterIP: 'None', selector: { app: 'db' }, ports: [{ port: 5432 }] });
  assert.equal(headless.spec.clusterIP, 'None');
  assert.deepEqual(headless.spec.clusterIPs, ['None']);
  assert.equal(headless.spec.ipFamilyPolicy, 'SingleStack');
  assert.deepEqual(headless.spec.ipFamilies, ['IPv4']);
  const selectorless = s.create('hs', { clusterIP: 'None', ports: [{ port: 5432 }] });
  assert.equal(selectorless.spec.ipFamilyPolicy, 'RequireDualStack');
  assert.deepEqual(selectorless.spec.ipFamilies, ['IPv4', 'IPv6']);
  const ext = s.create('e', { type: 'ExternalName', externalName: 'example.com' });
  assert.equal('clusterIP' in ext.spec, false);
  assert.equal('clusterIPs' in ext.spec, false);
  assert.equal('ipFamilies' in ext.spec, false);
  assert.equal('ipFamilyPolicy' in ext.spec, false);
  assert.equal(s.create('first', web).spec.clusterIP, '10.96.1.1');
});

test('services: node ports are allocated above the static band; requests honoured; conflicts are 422', () => {
  const s = new Services();
  const np = s.create('np', { type: 'NodePort', selector: { app: 'a' }, ports: [{ name: 'http', port: 80 }, { name: 'https', port: 443 }] });
  assert.deepEqual(np.spec.ports.map((p: any) => p.nodePort), [30086, 30087]);
  assert.equal(np.spec.externalTrafficPolicy, 'Cluster');
  const fixed = s.create('fixed', { type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] });
  assert.equal(fixed.spec.ports[0].nodePort, 30080);
  assert.equal(
    invalidMessage(() => s.create('dup', { type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] }, 'other')),
    'Service "dup" is invalid: spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated',
  );
  assert.equal(
    invalidMessage(() => s.create('low', { type: 'NodePort', ports: [{ port: 80, nodePort: 29999 }] })),
    'Service "low" is invalid: spec.ports[0].nodePort: Invalid value: 29999: provided port is not in the valid range. The range of valid ports is 30000-32767',
  );
  // TCP and UDP on the same port share one node port.
  const dns = s.create('dns', { type: 'NodePort', ports: [{ name: 'tcp', port: 53 }, { name: 'udp', port: 53, protocol: 'UDP' }] });
  assert.deepEqual(dns.spec.ports.map((p: any) => p.nodePort), [30088, 30088]);
  // LoadBalancer with Local traffic also gets a health-check node port.
  const lb = s.create('lb', { type: 'LoadBalancer', externalTrafficPolicy: 'Local', ports: [{ port: 80 }] });
  assert.equal(lb.spec.ports[0].nodePort, 30089);
  assert.equal(lb.spec.healthCheckNodePort, 30090);
  const noPorts = s.create('lb2', { type: 'LoadBalancer', allocateLoadBalancerNodePorts: false, ports: [{ port: 80 }] });
  assert.equal('nodePort' in noPorts.spec.ports[0], false);
});

test('services: a value chosen for a request in flight is not handed out twice', () => {
  const s = new Services({ reservationMillis: 60_000 });
  const strategy = s.strategy;
  const first: any = { metadata: { name: 'a', namespace: 'default' }, spec: { type: 'NodePort', ports: [{ port: 80 }] } };
  const second: any = { metadata: { name: 'b', namespace: 'default' }, spec: { type: 'NodePort', ports: [{ port: 80 }] } };
  strategy.prepareForCreate!(first); // not stored yet, as while admission runs
  strategy.prepareForCreate!(second);
  assert.notEqual(first.spec.clusterIP, second.spec.clusterIP);
  assert.notEqual(first.spec.ports[0].nodePort, second.spec.ports[0].nodePort);
});

test('services: updates keep allocated values, refuse cluster IP changes, and follow type changes', () => {
  const s = new Services();
  let svc = s.create('web', { type: 'NodePort', selector: { app: 'web' }, ports: [{ name: 'http', port: 80 }] });
  const ip = svc.spec.clusterIP;
  const nodePort = svc.spec.ports[0].nodePort;
  // Resubmitting the original manifest (no clusterIP, no nodePort) keeps what was allocated.
  svc = s.update(svc, { type: 'NodePort', selector: { app: 'web', tier: 'fe' }, ports: [{ name: 'http', port: 80 }] });
  assert.equal(svc.spec.clusterIP, ip);
  assert.deepEqual(svc.spec.clusterIPs, [ip]);
  assert.equal(svc.spec.ports[0].nodePort, nodePort);
  assert.deepEqual(svc.spec.ipFamilies, ['IPv4']);

  const old = svc;
  assert.equal(
    invalidMessage(() => s.update(old, { ...old.spec, clusterIP: '10.96.5.5', clusterIPs: ['10.96.5.5'] })),
    'Service "web" is invalid: spec.clusterIPs[0]: Invalid value: []string{"10.96.5.5"}: may not change once set',
  );
  // Changing only clusterIP carries the change into clusterIPs, and is refused the same way.
  assert.equal(
    invalidMessage(() => s.update(old, { ...old.spec, clusterIP: '10.96.5.6' })),
    'Service "web" is invalid: spec.clusterIPs[0]: Invalid value: []string{"10.96.5.6"}: may not change once set',
  );
  assert.equal(
    invalidMessage(() => s.update(old, { ...old.spec, clusterIP: 'None', clusterIPs: ['None'] })),
    'Service "web" is invalid: spec.clusterIPs[0]: Invalid value: []string{"None"}: may not change once set',
  );

  // NodePort -> ClusterIP drops the node ports it had; ClusterIP -> NodePort allocates again.
  svc = s.update(svc, { ...svc.spec, type: 'ClusterIP' });
  assert.equal('nodePort' in svc.spec.ports[0], false);
  assert.equal('externalTrafficPolicy' in svc.spec, false);
  assert.equal(svc.spec.clusterIP, ip);
  svc = s.update(svc, { ...svc.spec, type: 'NodePort' });
  assert.equal(svc.spec.ports[0].nodePort, 30086);

  // A new requested node port on update must be free.
  s.create('other', { type: 'NodePort', ports: [{ port: 80, nodePort: 30500 }] });
  const cur = svc;
  assert.equal(
    invalidMessage(() => s.update(cur, { ...cur.spec, ports: [{ name: 'http', port: 80, nodePort: 30500 }] })),
    'Service "web" is invalid: spec.ports[0].nodePort: Invalid value: 30500: provided port is already allocated',
  );

  // ClusterIP -> ExternalName releases the address; back to ClusterIP allocates one.
  svc = s.update(svc, { type: 'ExternalName', externalName: 'example.com', ports: [{ name: 'http', port: 80 }] });
  assert.equal('clusterIP' in svc.spec, false);
  assert.equal('ipFamilies' in svc.spec, false);
  svc = s.update(svc, { type: 'ClusterIP', selector: { app: 'web' }, ports: [{ name: 'http', port: 80 }] });
  assert.equal(svc.spec.clusterIP, ip);
});

test('resource.k8s.io: a device request or sub-request asks for exactly one device unless it says otherwise', () => {
  const claim: any = { spec: { devices: { requests: [
    { name: 'one', exactly: { deviceClassName: 'gpu' } },
    { name: 'all', exactly: { deviceClassName: 'gpu', allocationMode: 'All' } },
    { name: 'either', firstAvailable: [{ name: 'a', deviceClassName: 'gpu', count: 2 }, { name: 'b', deviceClassName: 'gpu' }] },
  ] } } };
  applyDefaults('io.k8s.api.resource.v1.ResourceClaim', claim);
  const [one, all, either] = claim.spec.devices.requests;
  assert.deepEqual(one.exactly, { deviceClassName: 'gpu', allocationMode: 'ExactCount', count: 1 });
  assert.deepEqual(all.exactly, { deviceClassName: 'gpu', allocationMode: 'All' });
  assert.deepEqual(either.firstAvailable, [
    { name: 'a', deviceClassName: 'gpu', count: 2, allocationMode: 'ExactCount' },
    { name: 'b', deviceClassName: 'gpu', allocationMode: 'ExactCount', count: 1 },
  ]);
});
