// ValidatePodSpec's container rules beyond names and ports, in kube's words: env variable sources
// (exactly one, not with a value, each well formed), probes and lifecycle hooks (one handler each,
// liveness and startup succeed once, readiness has no grace period, plain init containers have
// none). Pod templates are checked the same way; nothing refused is written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { invalidCauses, useTestServer } from '../../helpers/server.ts';
import { DNS1123_LABEL, DNS1123_SUBDOMAIN, QUALIFIED_NAME_PART } from '../../helpers/kube-messages.ts';

// Without ServiceAccount admission: a pod naming an invalid ServiceAccount here is to meet validation,
// not the 403 of a ServiceAccount that cannot exist (kube's integration tests disable the plugin too).
const s = useTestServer({ options: { disableAdmissionPlugins: ['ServiceAccount'] } });

const container = (extra: Record<string, unknown>) => ({ name: 'c', image: 'nginx', ...extra });
const pod = (name: string, c: Record<string, unknown>, spec: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [container(c)], ...spec } });
const causes = (name: string, c: Record<string, unknown>, spec: Record<string, unknown> = {}) => invalidCauses(s, 'POST', '/api/v1/namespaces/default/pods', pod(name, c, spec));
const C = 'spec.containers[0]';

test('env variables: one source, not with a value, each source well formed', async () => {
  assert.deepEqual(
    await causes('e1', {
      env: [
        { name: 'A', value: 'x', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
        { name: 'B', valueFrom: { fieldRef: { fieldPath: 'metadata.name' }, secretKeyRef: { name: 's', key: 'k' } } },
        { name: 'C', valueFrom: {} },
        { name: 'D', valueFrom: { fieldRef: { fieldPath: 'status.phase' } } },
        { name: 'E', valueFrom: { fieldRef: { fieldPath: 'status.nothing' } } },
        { name: 'F', valueFrom: { fieldRef: { fieldPath: "metadata.labels['a b']" } } },
        { name: 'G', valueFrom: { configMapKeyRef: { name: 'Bad_Name', key: '' } } },
        { name: 'H', valueFrom: { secretKeyRef: { name: 's', key: 'a/b' } } },
        { name: 'I', valueFrom: { resourceFieldRef: { resource: 'limits.gpu' } } },
      ],
    }),
    [
      [`${C}.env[0].valueFrom`, 'Invalid value: "": may not be specified when `value` is not empty'],
      [`${C}.env[1].valueFrom`, 'Invalid value: "": may not have more than one field specified at a time'],
      [`${C}.env[2].valueFrom`, 'Invalid value: "": must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`'],
      [`${C}.env[3].valueFrom.fieldRef.fieldPath`, 'Unsupported value: "status.phase": supported values: "metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"'],
      [`${C}.env[4].valueFrom.fieldRef.fieldPath`, 'Invalid value: "status.nothing": error converting fieldPath: field label not supported: status.nothing'],
      [`${C}.env[5].valueFrom.fieldRef`, `Invalid value: "a b": ${QUALIFIED_NAME_PART}`],
      [`${C}.env[6].valueFrom.configMapKeyRef.name`, `Invalid value: "Bad_Name": ${DNS1123_SUBDOMAIN}`],
      [`${C}.env[6].valueFrom.configMapKeyRef.key`, 'Required value'],
      [`${C}.env[7].valueFrom.secretKeyRef.key`, `Invalid value: "a/b": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`],
      [`${C}.env[8].valueFrom.resourceFieldRef.resource`, 'Unsupported value: "limits.gpu": supported values: "limits.cpu", "limits.ephemeral-storage", "limits.memory", "requests.cpu", "requests.ephemeral-storage", "requests.memory"'],
    ],
  );
  // Well-formed sources pass (the fieldRef's apiVersion is defaulted to v1).
  const ok = await s.request('POST', '/api/v1/namespaces/default/pods', {
    body: pod('e2', {
      env: [
        { name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
        { name: 'APP', valueFrom: { fieldRef: { fieldPath: "metadata.labels['app']" } } },
        { name: 'MEM', valueFrom: { resourceFieldRef: { resource: 'limits.memory' } } },
        { name: 'PW', valueFrom: { secretKeyRef: { name: 'db', key: 'password', optional: true } } },
      ],
    }),
  });
  assert.equal(ok.status, 201, ok.text);
  assert.equal(ok.json().spec.containers[0].env[0].valueFrom.fieldRef.apiVersion, 'v1');
});

test('probes and lifecycle hooks: one handler, well formed; liveness and startup succeed once; plain init containers have none', async () => {
  assert.deepEqual(
    await causes('p1', {
      livenessProbe: { successThreshold: 2, periodSeconds: -1 },
      readinessProbe: { exec: { command: [] }, httpGet: { port: 80 }, terminationGracePeriodSeconds: 5 },
      startupProbe: { httpGet: { port: 70000, scheme: 'FTP', httpHeaders: [{ name: 'X Bad', value: 'v' }] } },
      lifecycle: { preStop: { sleep: { seconds: 60 } }, postStart: { tcpSocket: { port: 'Not_A_Port' } } },
    }),
    [
      [`${C}.lifecycle.postStart.tcpSocket.port`, 'Invalid value: "Not_A_Port": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)'],
      [`${C}.lifecycle.preStop.sleep`, 'Invalid value: 60: must be non-negative and less than terminationGracePeriodSeconds (30)'],
      [`${C}.livenessProbe`, 'Required value: must specify a handler type'],
      [`${C}.livenessProbe.periodSeconds`, 'Invalid value: -1: must be greater than or equal to 0'],
      [`${C}.livenessProbe.successThreshold`, 'Invalid value: 2: must be 1'],
      [`${C}.readinessProbe.exec.command`, 'Required value'],
      [`${C}.readinessProbe.httpGet`, 'Forbidden: may not specify more than 1 handler type'],
      [`${C}.readinessProbe.terminationGracePeriodSeconds`, 'Invalid value: 5: must not be set for readinessProbes'],
      [`${C}.startupProbe.httpGet.port`, 'Invalid value: 70000: must be between 1 and 65535, inclusive'],
      [`${C}.startupProbe.httpGet.scheme`, 'Unsupported value: "FTP": supported values: "HTTP", "HTTPS"'],
      [`${C}.startupProbe.httpGet.httpHeaders`, `Invalid value: "X Bad": a valid HTTP header must consist of alphanumeric characters or '-' (e.g. 'X-Header-Name', regex used for validation is '[-A-Za-z0-9]+')`],
    ],
  );
  // A plain init container may have no probe or hook; a sidecar (restartPolicy Always) may.
  const init = (c: Record<string, unknown>) => ({ initContainers: [{ name: 'i', image: 'busybox', ...c }] });
  assert.deepEqual(await causes('p2', {}, init({ readinessProbe: { exec: { command: ['true'] } }, lifecycle: { preStop: { exec: { command: ['x'] } } } })), [
    ['spec.initContainers[0].lifecycle', 'Forbidden: may not be set for init containers without restartPolicy=Always'],
    ['spec.initContainers[0].readinessProbe', 'Forbidden: may not be set for init containers without restartPolicy=Always'],
  ]);
  const sidecar = await s.request('POST', '/api/v1/namespaces/default/pods', { body: pod('p3', {}, init({ restartPolicy: 'Always', readinessProbe: { exec: { command: ['true'] } } })) });
  assert.equal(sidecar.status, 201, sidecar.text);
  // Defaults make a bare handler valid (periods, thresholds, path, scheme).
  const probed = await s.request('POST', '/api/v1/namespaces/default/pods', { body: pod('p4', { livenessProbe: { httpGet: { port: 'http' } }, startupProbe: { grpc: { port: 9000 } }, lifecycle: { preStop: { sleep: { seconds: 5 } } } }) });
  assert.equal(probed.status, 201, probed.text);
  // Templates are checked the same way.
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'd' },
    spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [container({ livenessProbe: { tcpSocket: { port: 0 } } })] } } },
  };
  assert.deepEqual(await invalidCauses(s, 'POST', '/apis/apps/v1/namespaces/default/deployments', deployment), [
    ['spec.template.spec.containers[0].livenessProbe.tcpSocket.port', 'Invalid value: 0: must be between 1 and 65535, inclusive'],
  ]);
  for (const name of ['p1', 'p2']) assert.equal((await s.request('GET', `/api/v1/namespaces/default/pods/${name}`)).status, 404);
});

test('volumes, policies, names and tolerations of a pod spec', async () => {
  const spec = {
    restartPolicy: 'Sometimes',
    dnsPolicy: 'Maybe',
    nodeSelector: { 'bad key!': 'x' },
    serviceAccountName: 'Not_Valid',
    hostname: 'a.b',
    activeDeadlineSeconds: 0,
    volumes: [
      { name: 'data', emptyDir: {} },
      { name: 'data', emptyDir: {} },
      { name: 'Bad_Name', emptyDir: {} },
      { name: 'both', emptyDir: {}, configMap: { name: 'x' } },
    ],
    tolerations: [
      { operator: 'Equal', value: 'x' },
      { key: 'k', operator: 'Exists', value: 'v' },
      { key: 'k', operator: 'Equal', value: 'v', effect: 'NoSchedule', tolerationSeconds: 5 },
      { key: 'k', operator: 'Near', effect: 'Sometimes' },
    ],
  };
  const causesOf = await causes('s1', { imagePullPolicy: 'Sometimes', volumeMounts: [{ name: 'both', mountPath: '/x' }] }, spec);
  assert.deepEqual(causesOf, [
    ['spec.volumes[1].name', 'Duplicate value: "data"'],
    ['spec.volumes[2].name', `Invalid value: "Bad_Name": ${DNS1123_LABEL}`],
    ['spec.volumes[3].configMap', 'Forbidden: may not specify more than 1 volume type'],
    // (a volume with errors cannot be mounted)
    [`${C}.volumeMounts[0].name`, 'Not found: "both"'],
    [`${C}.imagePullPolicy`, 'Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"'],
    ['spec.restartPolicy', 'Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"'],
    ['spec.dnsPolicy', 'Unsupported value: "Maybe": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"'],
    ['spec.nodeSelector', `Invalid value: "bad key!": ${QUALIFIED_NAME_PART}`],
    ['spec.serviceAccountName', `Invalid value: "Not_Valid": ${DNS1123_SUBDOMAIN}`],
    ['spec.activeDeadlineSeconds', 'Invalid value: 0: must be between 1 and 2147483647, inclusive'],
    ['spec.hostname', 'Invalid value: "a.b": must not contain dots'],
    ['spec.tolerations[0].operator', 'Invalid value: "Equal": operator must be Exists when `key` is empty, which means "match all values and all keys"'],
    ['spec.tolerations[1].operator', "Invalid value: core.Toleration{Key:\"k\", Operator:\"Exists\", Value:\"v\", Effect:\"\", TolerationSeconds:(*int64)(nil)}: value must be empty when `operator` is 'Exists'"],
    ['spec.tolerations[2].effect', "Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set"],
    ['spec.tolerations[3].operator', 'Unsupported value: "Near": supported values: "Equal", "Exists"'],
    ['spec.tolerations[3].effect', 'Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"'],
  ]);
  // A volume given no source gets an emptyDir (kube's default), so it is valid.
  const ok = await s.request('POST', '/api/v1/namespaces/default/pods', { body: pod('s2', { volumeMounts: [{ name: 'scratch', mountPath: '/tmp' }] }, { volumes: [{ name: 'scratch' }], tolerations: [{ operator: 'Exists' }] }) });
  assert.equal(ok.status, 201, ok.text);
  assert.deepEqual(ok.json().spec.volumes, [{ name: 'scratch', emptyDir: {} }]);
});
