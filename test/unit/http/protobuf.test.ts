import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ApiError } from '../../../server/errors.ts';
import { dbl, key, ld, sint, str, varint, vint } from '../../helpers/protobuf-wire.ts';
import {
  PROTOBUF_MEDIA_TYPE,
  decodeProtobuf,
  definitionForKind,
  encodeProtobuf,
  encodeWatchEventFrame,
  hasProtobuf,
} from '../../../server/http/protobuf.ts';

// ---- hand-built protobuf, from the documented field numbers ----
const MAGIC = Buffer.from('k8s\0', 'latin1');
/** runtime.Unknown{typeMeta = 1 {apiVersion = 1, kind = 2}, raw = 2, contentEncoding = 3, contentType = 4} after "k8s\0". */
const envelope = (apiVersion: string, kind: string, raw: Buffer) =>
  Buffer.concat([MAGIC, ld(1, str(1, apiVersion), str(2, kind)), ld(2, raw), str(3, ''), str(4, '')]);

function roundTrip(obj: any): any {
  const def = definitionForKind(obj.apiVersion, obj.kind);
  assert.ok(def, `definition for ${obj.apiVersion} ${obj.kind}`);
  const buf = encodeProtobuf(obj, def);
  assert.ok(buf, `protobuf form of ${def}`);
  assert.deepEqual(buf.subarray(0, 4), MAGIC);
  return decodeProtobuf(buf, def);
}

function assert400(fn: () => unknown, re?: RegExp) {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof ApiError, `ApiError, got ${e}`);
    assert.equal(e.code, 400);
    assert.equal(e.reason, 'BadRequest');
    if (re) assert.match(e.message, re);
    return true;
  });
}

test('media type constant', () => {
  assert.equal(PROTOBUF_MEDIA_TYPE, 'application/vnd.kubernetes.protobuf');
});

test('ConfigMap with binaryData round-trips, binary values travel as raw bytes and map keys are sorted', () => {
  const cm = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'cfg', namespace: 'default', labels: { b: '2', a: '1' }, resourceVersion: '12', uid: '0b1c', creationTimestamp: '2024-03-04T05:06:07Z' },
    data: { 'app.properties': 'x=1\ny=2', empty: '' },
    binaryData: { blob: Buffer.from([0, 1, 2, 0xff, 0xfe]).toString('base64') },
    immutable: true,
  };
  assert.deepEqual(roundTrip(cm), cm);
  const buf = encodeProtobuf(cm, 'io.k8s.api.core.v1.ConfigMap')!;
  // ConfigMap.binaryData = 3: entry {key = 1 "blob", value = 2 <5 raw bytes>}
  assert.ok(buf.includes(ld(3, str(1, 'blob'), ld(2, Buffer.from([0, 1, 2, 0xff, 0xfe])))), 'binaryData entry carries the raw bytes');
  // labels (ObjectMeta = 11) are written in key order
  assert.ok(buf.indexOf(ld(11, str(1, 'a'), str(2, '1'))) < buf.indexOf(ld(11, str(1, 'b'), str(2, '2'))));
});

test('a small ConfigMap encodes to exactly the expected bytes', () => {
  const buf = encodeProtobuf({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { k: 'v' } }, 'io.k8s.api.core.v1.ConfigMap');
  // ConfigMap{metadata = 1 {name = 1}, data = 2 map entry}
  const raw = Buffer.concat([ld(1, str(1, 'c')), ld(2, str(1, 'k'), str(2, 'v'))]);
  assert.deepEqual(buf, envelope('v1', 'ConfigMap', raw));
});

test('exact bytes: field order, maps, nulls, long and multi-byte strings, large nested messages, Time, FieldsV1', () => {
  const annotation = 'a'.repeat(150);
  const cm = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      uid: null,
      name: 5, // a string field given a number
      namespace: 'ns',
      generation: -2,
      annotations: { note: annotation },
      labels: { b: '2', a: null, é: 'x', Z: 'z' },
      creationTimestamp: '2024-01-01T02:00:00+02:00',
      managedFields: [{ manager: 'm', operation: 'Apply', time: '2024-01-01T00:00:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:k': {} } } }],
      finalizers: [null, 'f'],
      notAField: 'ignored',
    },
    data: { text: 'é日本😀\ud800', long: 'x'.repeat(200), huge: 'y'.repeat(20_000) },
    binaryData: { b: 'AAEC/w==' },
    immutable: false,
  };
  const meta = Buffer.concat([
    str(1, '5'),
    str(3, 'ns'),
    sint(7, -2n),
    ld(8, vint(1, 1_704_067_200), vint(2, 0)),
    // map entries in key order; a null value leaves the entry's value out
    ld(11, str(1, 'Z'), str(2, 'z')),
    ld(11, str(1, 'a')),
    ld(11, str(1, 'b'), str(2, '2')),
    ld(11, str(1, 'é'), str(2, 'x')),
    ld(12, str(1, 'note'), str(2, annotation)),
    // a null element of a repeated string is ""
    str(14, ''),
    str(14, 'f'),
    ld(17, str(1, 'm'), str(2, 'Apply'), ld(4, vint(1, 1_704_067_200), vint(2, 0)), str(6, 'FieldsV1'), ld(7, str(1, '{"f:data":{"f:k":{}}}'))),
  ]);
  const raw = Buffer.concat([
    ld(1, meta),
    ld(2, str(1, 'huge'), str(2, 'y'.repeat(20_000))),
    ld(2, str(1, 'long'), str(2, 'x'.repeat(200))),
    // a lone surrogate is written as U+FFFD
    ld(2, str(1, 'text'), ld(2, Buffer.from('é日本😀\ufffd', 'utf8'))),
    ld(3, str(1, 'b'), ld(2, Buffer.from([0, 1, 2, 0xff]))),
    vint(4, 0),
  ]);
  assert.deepEqual(encodeProtobuf(cm, 'io.k8s.api.core.v1.ConfigMap'), envelope('v1', 'ConfigMap', raw));
});

test('exact bytes: JSONSchemaProps doubles, int64 beyond 2^53, JSON values and the Or-unions', () => {
  const JSP = 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps';
  const schema = {
    description: 'd',
    type: 'object',
    default: { a: [1, 'é'] },
    maximum: 10.5,
    exclusiveMaximum: false,
    minimum: -2.25,
    maxLength: 2n ** 62n,
    minLength: -1,
    maxItems: '9007199254740993',
    minItems: 0,
    enum: [1, null, 'x'],
    required: ['a', null],
    items: { type: 'string' },
    allOf: [{ type: 'integer' }],
    properties: { b: { type: 'string' }, a: { type: 'integer' } },
    additionalProperties: false,
    additionalItems: { type: 'string' },
    dependencies: { x: ['y', 'z'], w: { type: 'object' } },
    'x-kubernetes-preserve-unknown-fields': true,
    'x-kubernetes-int-or-string': 1,
  };
  const type = (t: string) => str(5, t);
  const raw = Buffer.concat([
    str(4, 'd'),
    type('object'),
    ld(8, str(1, '{"a":[1,"é"]}')),
    dbl(9, 10.5),
    vint(10, 0),
    dbl(11, -2.25),
    sint(13, 2n ** 62n),
    sint(14, -1n),
    sint(16, 9007199254740993n),
    vint(17, 0),
    // a null element of a repeated message is an empty one: JSON "{}"
    ld(20, str(1, '1')),
    ld(20, str(1, '{}')),
    ld(20, str(1, '"x"')),
    str(23, 'a'),
    str(23, ''),
    ld(24, ld(1, type('string'))),
    ld(25, type('integer')),
    ld(29, str(1, 'a'), ld(2, type('integer'))),
    ld(29, str(1, 'b'), ld(2, type('string'))),
    ld(30, vint(1, 0)),
    ld(32, str(1, 'w'), ld(2, ld(1, type('object')))),
    ld(32, str(1, 'x'), ld(2, str(2, 'y'), str(2, 'z'))),
    ld(33, vint(1, 1), ld(2, type('string'))),
    vint(38, 1),
    vint(40, 1),
  ]);
  assert.deepEqual(encodeProtobuf(schema, JSP), envelope('', '', raw));
  // items as a list of schemas: JSONSchemaPropsOrArray's second field, once per schema
  assert.deepEqual(encodeProtobuf({ items: [{ type: 'a' }, { type: 'b' }] }, JSP), envelope('', '', ld(24, ld(2, type('a')), ld(2, type('b')))));
});

test('exact bytes: string-list wrappers (Verbs, ExtraValue) and RawExtension', () => {
  const resource = { name: 'pods', namespaced: true, kind: 'Pod', verbs: ['get', 'list'], shortNames: ['po'] };
  assert.deepEqual(
    encodeProtobuf(resource, 'io.k8s.apimachinery.pkg.apis.meta.v1.APIResource'),
    // (the envelope's kind is the object's "kind", here a field of APIResource)
    envelope('', 'Pod', Buffer.concat([str(1, 'pods'), vint(2, 1), str(3, 'Pod'), ld(4, str(1, 'get'), str(1, 'list')), str(5, 'po')])),
  );
  const user = { username: 'u', extra: { scopes: ['a', 'b'], empty: [] } };
  assert.deepEqual(
    encodeProtobuf(user, 'io.k8s.api.authentication.v1.UserInfo'),
    envelope('', '', Buffer.concat([str(1, 'u'), ld(4, str(1, 'empty'), ld(2)), ld(4, str(1, 'scopes'), ld(2, str(1, 'a'), str(1, 'b')))])),
  );
  const revision = { apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name: 'r' }, data: { a: 1 }, revision: 3 };
  assert.deepEqual(encodeProtobuf(revision, 'io.k8s.api.apps.v1.ControllerRevision'), envelope('apps/v1', 'ControllerRevision', Buffer.concat([ld(1, str(1, 'r')), ld(2, str(1, '{"a":1}')), vint(3, 3)])));
});

test('exact bytes: watch events, with an object and without one', () => {
  const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n' } };
  const nsBytes = envelope('v1', 'Namespace', ld(1, str(1, 'n')));
  assert.deepEqual(encodeProtobuf(ns, 'io.k8s.api.core.v1.Namespace'), nsBytes);
  const event = Buffer.concat([str(1, 'ADDED'), ld(2, ld(1, nsBytes))]);
  const frame = (msg: Buffer) => Buffer.concat([Buffer.from([0, 0, msg.length >> 8, msg.length & 0xff]), msg]);
  assert.deepEqual(encodeWatchEventFrame({ type: 'ADDED', object: ns }), frame(event));
  assert.deepEqual(encodeProtobuf({ apiVersion: 'v1', kind: 'WatchEvent', type: 'ADDED', object: ns }, 'io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent'), envelope('v1', 'WatchEvent', event));
  // no object (an empty RawExtension)
  assert.deepEqual(encodeWatchEventFrame({ type: 'BOOKMARK', object: undefined }), frame(Buffer.concat([str(1, 'BOOKMARK'), ld(2)])));
});

test('Secret round-trips (data is bytes, stringData is text)', () => {
  const secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'tls', namespace: 'prod', annotations: { 'kubernetes.io/description': 'x' } },
    type: 'kubernetes.io/tls',
    data: { 'tls.crt': Buffer.from('CERT').toString('base64'), 'tls.key': Buffer.from([1, 2, 3]).toString('base64') },
    stringData: { note: 'hello' },
    immutable: false,
  };
  const back = roundTrip(secret);
  // immutable is a *bool: an explicit false survives
  assert.deepEqual(back, secret);
  const buf = encodeProtobuf(secret, 'io.k8s.api.core.v1.Secret')!;
  // Secret.data = 2, value bytes are the decoded secret
  assert.ok(buf.includes(ld(2, str(1, 'tls.crt'), ld(2, Buffer.from('CERT')))));
});

test('Namespace round-trips', () => {
  const ns = {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'team-a', labels: { 'kubernetes.io/metadata.name': 'team-a' }, creationTimestamp: '2025-01-02T03:04:05Z', resourceVersion: '5', uid: 'u1' },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Active', conditions: [{ type: 'NamespaceDeletionDiscoveryFailure', status: 'False', lastTransitionTime: '2025-01-02T03:04:06Z', reason: 'ResourcesDiscovered', message: 'ok' }] },
  };
  assert.deepEqual(roundTrip(ns), ns);
});

test('decodes the bytes client-go sends for `kubectl create namespace foo`', () => {
  // ObjectMeta: name = 1, generateName = 2, namespace = 3, selfLink = 4, uid = 5, resourceVersion = 6,
  // generation = 7, creationTimestamp = 8 (Go writes every non-pointer field, even when empty).
  // These are byte for byte the bytes kubectl 1.33 POSTs for `kubectl create namespace foo`.
  const meta = Buffer.concat([str(1, 'foo'), str(2, ''), str(3, ''), str(4, ''), str(5, ''), str(6, ''), vint(7, 0), ld(8)]);
  // Namespace: metadata = 1, spec = 2, status = 3 {phase = 1}
  const raw = Buffer.concat([ld(1, meta), ld(2), ld(3, str(1, ''))]);
  const body = envelope('v1', 'Namespace', raw);
  assert.deepEqual(decodeProtobuf(body, 'io.k8s.api.core.v1.Namespace'), {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'foo' },
    spec: {},
    status: {},
  });
  // without a hint the envelope's kind picks the message
  assert.equal(decodeProtobuf(body).metadata.name, 'foo');
});

test('unknown field numbers are skipped at every level', () => {
  const meta = Buffer.concat([str(1, 'foo'), vint(900, 7), str(901, 'junk'), Buffer.concat([key(902, 1), Buffer.alloc(8)]), Buffer.concat([key(903, 5), Buffer.alloc(4)])]);
  const raw = Buffer.concat([vint(77, 1), ld(1, meta), ld(78, str(1, 'x')), ld(2, str(1, 'kubernetes'))]);
  const body = Buffer.concat([envelope('v1', 'Namespace', raw), str(9, 'trailing unknown envelope field')]);
  assert.deepEqual(decodeProtobuf(body), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'foo' }, spec: { finalizers: ['kubernetes'] }, status: {} });
});

const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'default', labels: { app: 'web' }, generation: 2, creationTimestamp: '2024-05-01T10:20:30Z' },
  spec: {
    replicas: 0,
    selector: { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['fe', 'be'] }] },
    strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 1 } },
    revisionHistoryLimit: 10,
    progressDeadlineSeconds: 600,
    template: {
      metadata: { labels: { app: 'web' }, annotations: { a: 'b' } },
      spec: {
        automountServiceAccountToken: false,
        terminationGracePeriodSeconds: 0,
        restartPolicy: 'Always',
        nodeSelector: { 'kubernetes.io/os': 'linux' },
        securityContext: { runAsUser: 0, runAsNonRoot: false, fsGroup: 2000, supplementalGroups: [1, 2] },
        tolerations: [{ key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 }],
        containers: [
          {
            name: 'nginx',
            image: 'nginx:1.25',
            command: ['nginx'],
            args: ['-g', 'daemon off;'],
            ports: [{ name: 'http', containerPort: 80, protocol: 'TCP' }, { containerPort: 9090, hostPort: 9090, protocol: 'UDP' }],
            env: [
              { name: 'MODE', value: 'prod' },
              { name: 'POD', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
              { name: 'CPU', valueFrom: { resourceFieldRef: { containerName: 'nginx', resource: 'limits.cpu', divisor: '1m' } } },
              { name: 'PASS', valueFrom: { secretKeyRef: { name: 'db', key: 'password', optional: true } } },
            ],
            envFrom: [{ configMapRef: { name: 'shared' }, prefix: 'S_' }],
            resources: { limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: '0.25', 'nvidia.com/gpu': '1' } },
            livenessProbe: { httpGet: { path: '/healthz', port: 'http', scheme: 'HTTP', httpHeaders: [{ name: 'X', value: 'y' }] }, initialDelaySeconds: 3, periodSeconds: 10, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3 },
            readinessProbe: { tcpSocket: { port: 80 }, periodSeconds: 5 },
            startupProbe: { exec: { command: ['cat', '/tmp/ok'] }, failureThreshold: 30 },
            volumeMounts: [{ name: 'data', mountPath: '/data', readOnly: true }],
            securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, readOnlyRootFilesystem: true },
            imagePullPolicy: 'IfNotPresent',
          },
        ],
        volumes: [
          { name: 'data', persistentVolumeClaim: { claimName: 'data' } },
          { name: 'cfg', configMap: { name: 'cfg', defaultMode: 420, items: [{ key: 'a', path: 'a.txt' }] } },
          { name: 'tmp', emptyDir: { medium: 'Memory', sizeLimit: '64Mi' } },
        ],
      },
    },
  },
  status: {
    observedGeneration: 2,
    replicas: 3,
    updatedReplicas: 3,
    readyReplicas: 3,
    availableReplicas: 3,
    conditions: [{ type: 'Available', status: 'True', lastUpdateTime: '2024-05-01T10:21:00Z', lastTransitionTime: '2024-05-01T10:21:00Z', reason: 'MinimumReplicasAvailable', message: 'ok' }],
  },
};

test('Deployment with a full pod template round-trips (quantities, int-or-string, probes, explicit zeros)', () => {
  assert.deepEqual(roundTrip(deployment), deployment);
});

test('Deployment wire details: Quantity and IntOrString messages, inlined Volume source', () => {
  const buf = encodeProtobuf(deployment, 'io.k8s.api.apps.v1.Deployment')!;
  // resources.limits (ResourceRequirements.limits = 1) entry value is Quantity{string = 1}
  assert.ok(buf.includes(ld(1, str(1, 'cpu'), ld(2, str(1, '500m')))));
  // maxSurge (RollingUpdateDeployment.maxSurge = 2) is IntOrString{type = 1 (string), intVal = 2, strVal = 3}
  assert.ok(buf.includes(ld(2, vint(1, 1), vint(2, 0), str(3, '25%'))));
  // maxUnavailable (= 1) is IntOrString{type = 0 (int), intVal = 1}
  assert.ok(buf.includes(ld(1, vint(1, 0), vint(2, 1), str(3, ''))));
  // Volume{name = 1, volumeSource = 2 {emptyDir = 2 {medium = 1, sizeLimit = 2}}}: JSON-inlined, nested on the wire
  assert.ok(buf.includes(ld(2, ld(2, str(1, 'Memory'), ld(2, str(1, '64Mi'))))));
});

test('decoding keeps explicit zeros of pointer fields and drops Go-zero noise of non-pointer omitempty ones', () => {
  // Container: name = 1, image = 2, workingDir = 5, terminationMessagePath = 13, imagePullPolicy = 14, stdin = 16
  const container = Buffer.concat([str(1, 'c'), str(2, 'busybox'), str(5, ''), str(13, ''), str(14, ''), vint(16, 0)]);
  // PodSpec: containers = 2, restartPolicy = 3, terminationGracePeriodSeconds = 4, hostNetwork = 11,
  // automountServiceAccountToken = 21, enableServiceLinks = 30
  const podSpec = Buffer.concat([ld(2, container), str(3, ''), vint(4, 0), vint(11, 0), vint(21, 0), vint(30, 0)]);
  // DeploymentSpec: replicas = 1, selector = 2, template = 3 {metadata = 1, spec = 2}, minReadySeconds = 5, paused = 7
  const spec = Buffer.concat([vint(1, 0), ld(2, ld(1, str(1, 'app'), str(2, 'x'))), ld(3, ld(1), ld(2, podSpec)), vint(5, 0), vint(7, 0)]);
  const meta = Buffer.concat([str(1, 'd'), str(3, 'default'), vint(7, 0)]);
  const got = decodeProtobuf(envelope('apps/v1', 'Deployment', Buffer.concat([ld(1, meta), ld(2, spec)])), 'io.k8s.api.apps.v1.Deployment');
  assert.deepEqual(got, {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'd', namespace: 'default' },
    spec: {
      replicas: 0,
      selector: { matchLabels: { app: 'x' } },
      template: {
        metadata: {},
        spec: {
          containers: [{ name: 'c', image: 'busybox', resources: {} }],
          terminationGracePeriodSeconds: 0,
          automountServiceAccountToken: false,
          enableServiceLinks: false,
        },
      },
      strategy: {},
    },
    status: {},
  });
});

test('packed repeated scalars are accepted', () => {
  // PodSecurityContext.supplementalGroups = 4 (int64), packed as one length-delimited run
  const sc = ld(4, varint(5), varint(300));
  const raw = Buffer.concat([ld(1, str(1, 'p')), ld(2, ld(14, sc))]);
  const pod = decodeProtobuf(envelope('v1', 'Pod', raw), 'io.k8s.api.core.v1.Pod');
  assert.deepEqual(pod.spec.securityContext, { supplementalGroups: [5, 300] });
});

test('negative integers use the 10-byte two’s complement varint', () => {
  const ev = {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: 'e', namespace: 'default' },
    involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' },
    reason: 'X',
    count: -1,
    source: {},
    firstTimestamp: '2020-02-03T04:05:06Z',
    lastTimestamp: '2020-02-03T04:05:07Z',
    eventTime: '2020-02-03T04:05:06.123456Z',
    reportingComponent: '',
    reportingInstance: '',
  };
  const buf = encodeProtobuf(ev, 'io.k8s.api.core.v1.Event')!;
  // Event.count = 8
  assert.ok(buf.includes(Buffer.concat([key(8, 0), Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01])])));
  assert.deepEqual(decodeProtobuf(buf), ev);
});

test('Time is {seconds = 1, nanos = 2} at seconds precision, MicroTime keeps microseconds', () => {
  const lease = {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'l', namespace: 'kube-system', creationTimestamp: '1970-01-01T00:00:10Z' },
    spec: { holderIdentity: 'me', leaseDurationSeconds: 15, acquireTime: '2024-01-01T00:00:00.000001Z', renewTime: '2024-01-01T00:00:05.500000Z', leaseTransitions: 0 },
  };
  const buf = encodeProtobuf(lease, 'io.k8s.api.coordination.v1.Lease')!;
  // ObjectMeta.creationTimestamp = 8 {seconds = 1: 10, nanos = 2: 0}
  assert.ok(buf.includes(ld(8, vint(1, 10), vint(2, 0))));
  // LeaseSpec.renewTime = 4: 1704067205 s + 500000000 ns
  assert.ok(buf.includes(ld(4, vint(1, 1704067205), vint(2, 500000000))));
  assert.deepEqual(decodeProtobuf(buf), lease);
  // an RFC3339 time with an offset is normalised to UTC
  const back = roundTrip({ ...lease, metadata: { ...lease.metadata, creationTimestamp: '2024-01-01T02:00:00+02:00' } });
  assert.equal(back.metadata.creationTimestamp, '2024-01-01T00:00:00Z');
  // Go's RFC 3339 reading (go/time.ts): a fraction past nanoseconds is cut, not refused; a
  // lower-case t or a 25th hour is no time at all
  const long = encodeProtobuf({ ...lease, spec: { ...lease.spec, renewTime: '2024-01-01T00:00:05.1234567891Z' } }, 'io.k8s.api.coordination.v1.Lease')!;
  assert.ok(long.includes(ld(4, vint(1, 1704067205), vint(2, 123456789))));
  for (const bad of ['2024-01-01t00:00:05Z', '2024-01-01T24:00:05Z'])
    assert.throws(() => encodeProtobuf({ ...lease, spec: { ...lease.spec, renewTime: bad } }, 'io.k8s.api.coordination.v1.Lease'), /invalid time/);
});

test('Service round-trips (named and numeric targetPort, session affinity)', () => {
  const svc = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web', namespace: 'default' },
    spec: {
      type: 'NodePort',
      selector: { app: 'web' },
      ports: [
        { name: 'http', protocol: 'TCP', port: 80, targetPort: 'http', nodePort: 30080 },
        { name: 'metrics', protocol: 'TCP', port: 9090, targetPort: 9090, appProtocol: 'http' },
      ],
      clusterIP: '10.96.0.10',
      clusterIPs: ['10.96.0.10'],
      ipFamilies: ['IPv4'],
      ipFamilyPolicy: 'SingleStack',
      sessionAffinity: 'ClientIP',
      sessionAffinityConfig: { clientIP: { timeoutSeconds: 10800 } },
      externalTrafficPolicy: 'Cluster',
      internalTrafficPolicy: 'Cluster',
    },
    status: { loadBalancer: { ingress: [{ ip: '1.2.3.4', ipMode: 'VIP', ports: [{ port: 80, protocol: 'TCP' }] }] } },
  };
  assert.deepEqual(roundTrip(svc), svc);
});

test('Status round-trips', () => {
  const status = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'pods "x" is invalid: spec.containers: Required value',
    reason: 'Invalid',
    details: { name: 'x', kind: 'pods', causes: [{ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.containers' }], retryAfterSeconds: 0 },
    code: 422,
  };
  assert.equal(definitionForKind('v1', 'Status'), 'io.k8s.apimachinery.pkg.apis.meta.v1.Status');
  const back = roundTrip(status);
  // retryAfterSeconds is a non-pointer omitempty int32: a zero does not come back
  const { retryAfterSeconds: _drop, ...details } = status.details;
  assert.deepEqual(back, { ...status, details });
});

test('List kinds round-trip with their items', () => {
  const list = {
    apiVersion: 'v1',
    kind: 'ConfigMapList',
    metadata: { resourceVersion: '99', continue: 'abc' },
    items: [
      { metadata: { name: 'a', namespace: 'n' }, data: { x: '1' } },
      { metadata: { name: 'b', namespace: 'n' } },
    ],
  };
  assert.deepEqual(roundTrip(list), list);
});

test('CRD schemas: $ref/x-kubernetes names, JSON values and the Or-unions round-trip', () => {
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com' },
    spec: {
      group: 'example.com',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              'x-kubernetes-preserve-unknown-fields': false,
              properties: {
                spec: {
                  type: 'object',
                  required: ['size'],
                  properties: {
                    size: { type: 'integer', minimum: 1, maximum: 10.5, default: 3 },
                    mode: { type: 'string', enum: ['a', 'b'] },
                    tags: { type: 'array', items: { type: 'string' } },
                    labels: { type: 'object', additionalProperties: { type: 'string' } },
                    free: { type: 'object', additionalProperties: false },
                    port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
                  },
                  'x-kubernetes-validations': [{ rule: 'self.size < 100', message: 'too big', optionalOldSelf: false }],
                },
              },
            },
          },
          subresources: { status: {}, scale: { specReplicasPath: '.spec.size', statusReplicasPath: '.status.size' } },
          additionalPrinterColumns: [{ name: 'Size', type: 'integer', jsonPath: '.spec.size' }],
        },
      ],
    },
  };
  const back = roundTrip(crd);
  // the absent non-pointer status struct comes back the way encoding/json prints it (plural/kind are not omitempty)
  assert.deepEqual(back, { ...crd, status: { acceptedNames: { plural: '', kind: '' } } });
});

test('every served kind, its list and the meta kinds have a protobuf form', () => {
  const res = JSON.parse(readFileSync(new URL('../../../schemas/resources.json', import.meta.url), 'utf8')) as {
    resources: { group: string; version: string; kind: string; listKind: string; definition: string }[];
  };
  for (const r of res.resources) {
    const apiVersion = r.group ? `${r.group}/${r.version}` : r.version;
    assert.equal(definitionForKind(apiVersion, r.kind), r.definition, `${apiVersion} ${r.kind}`);
    assert.ok(hasProtobuf(r.definition), r.definition);
    const list = definitionForKind(apiVersion, r.listKind);
    assert.ok(list && hasProtobuf(list), `${apiVersion} ${r.listKind}`);
  }
  for (const d of ['Status', 'DeleteOptions', 'WatchEvent', 'PartialObjectMetadata', 'PartialObjectMetadataList', 'APIResourceList']) {
    assert.ok(hasProtobuf(`io.k8s.apimachinery.pkg.apis.meta.v1.${d}`), d);
  }
  assert.ok(hasProtobuf('io.k8s.api.autoscaling.v1.Scale'));
});

test('protobuf.json numbers every field of every reachable definition, except the listed gaps', () => {
  const defs = JSON.parse(readFileSync(new URL('../../../schemas/definitions.json', import.meta.url), 'utf8')) as Record<string, any>;
  const pb = JSON.parse(readFileSync(new URL('../../../schemas/protobuf.json', import.meta.url), 'utf8')) as { gaps: string[]; messages: Record<string, any> };
  const gaps = new Set(pb.gaps);
  const fieldsOf = (name: string): Set<string> => {
    const out = new Set<string>();
    for (const [k, f] of Object.entries<any>(pb.messages[name]?.fields ?? {})) {
      if (f.inline) for (const x of fieldsOf(f.message)) out.add(x);
      else out.add(k);
    }
    return out;
  };
  let checked = 0;
  for (const [name, msg] of Object.entries<any>(pb.messages)) {
    if (msg.special || !defs[name]) continue;
    const have = fieldsOf(name);
    for (const prop of Object.keys(defs[name].properties ?? {})) {
      if (prop === 'apiVersion' || prop === 'kind') continue;
      checked++;
      assert.ok(have.has(prop) || gaps.has(`${name}.${prop}`), `${name}.${prop} has no field number`);
    }
    for (const f of Object.values<any>(msg.fields)) {
      if (f.message) assert.ok(pb.messages[f.message], `${name} refers to missing message ${f.message}`);
    }
  }
  assert.ok(checked > 2000, `checked ${checked} fields`);
});

test('definitionForKind', () => {
  assert.equal(definitionForKind('v1', 'ConfigMap'), 'io.k8s.api.core.v1.ConfigMap');
  assert.equal(definitionForKind('v1', 'NamespaceList'), 'io.k8s.api.core.v1.NamespaceList');
  assert.equal(definitionForKind('apps/v1', 'Deployment'), 'io.k8s.api.apps.v1.Deployment');
  assert.equal(definitionForKind('v1', 'Event'), 'io.k8s.api.core.v1.Event');
  assert.equal(definitionForKind('events.k8s.io/v1', 'Event'), 'io.k8s.api.events.v1.Event');
  assert.equal(definitionForKind('autoscaling/v1', 'Scale'), 'io.k8s.api.autoscaling.v1.Scale');
  assert.equal(definitionForKind('policy/v1', 'Eviction'), 'io.k8s.api.policy.v1.Eviction');
  assert.equal(definitionForKind('v1', 'WatchEvent'), 'io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent');
  assert.equal(definitionForKind('apps/v1', 'DeleteOptions'), 'io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions');
  assert.equal(definitionForKind('meta.k8s.io/v1', 'PartialObjectMetadataList'), 'io.k8s.apimachinery.pkg.apis.meta.v1.PartialObjectMetadataList');
  assert.equal(definitionForKind('apiextensions.k8s.io/v1', 'CustomResourceDefinition'), 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition');
  assert.equal(definitionForKind('apiregistration.k8s.io/v1', 'APIService'), 'io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIService');
  assert.equal(definitionForKind('apps/v1', 'ConfigMap'), undefined);
  assert.equal(definitionForKind('example.com/v1', 'Widget'), undefined);
});

test('kinds without a protobuf form encode to undefined', () => {
  assert.equal(encodeProtobuf({ apiVersion: 'example.com/v1', kind: 'Widget' }, 'com.example.v1.Widget'), undefined);
  const table = definitionForKind('meta.k8s.io/v1', 'Table');
  assert.ok(table);
  assert.equal(encodeProtobuf({ apiVersion: 'meta.k8s.io/v1', kind: 'Table', rows: [] }, table), undefined);
  assert.equal(encodeWatchEventFrame({ type: 'ADDED', object: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } } }), undefined);
});

test('DeleteOptions body decodes with preconditions', () => {
  // DeleteOptions: gracePeriodSeconds = 1, preconditions = 2 {uid = 1, resourceVersion = 2}, propagationPolicy = 4, dryRun = 5
  const raw = Buffer.concat([vint(1, 0), ld(2, str(1, 'u-1'), str(2, '7')), str(4, 'Foreground'), str(5, 'All')]);
  assert.deepEqual(decodeProtobuf(envelope('v1', 'DeleteOptions', raw)), {
    apiVersion: 'v1',
    kind: 'DeleteOptions',
    gracePeriodSeconds: 0,
    preconditions: { uid: 'u-1', resourceVersion: '7' },
    propagationPolicy: 'Foreground',
    dryRun: ['All'],
  });
});

test('watch frames: 4-byte length, WatchEvent{type = 1, object = 2 {raw = embedded envelope}}', () => {
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'd', resourceVersion: '3' }, spec: { containers: [{ name: 'c', image: 'i', resources: {} }] }, status: { phase: 'Pending' } };
  const frame = encodeWatchEventFrame({ type: 'ADDED', object: pod })!;
  assert.ok(frame);
  const len = frame.readUInt32BE(0);
  assert.equal(len, frame.length - 4);
  const msg = frame.subarray(4);
  assert.deepEqual(msg.subarray(0, 7), str(1, 'ADDED'));
  const embedded = encodeProtobuf(pod, 'io.k8s.api.core.v1.Pod')!;
  assert.deepEqual(msg.subarray(7), ld(2, ld(1, embedded)));
  assert.deepEqual(decodeProtobuf(embedded), pod);
  // The same event as a standalone enveloped WatchEvent decodes back to {type, object}
  const whole = encodeProtobuf({ apiVersion: 'v1', kind: 'WatchEvent', type: 'MODIFIED', object: pod }, 'io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent')!;
  assert.deepEqual(decodeProtobuf(whole), { apiVersion: 'v1', kind: 'WatchEvent', type: 'MODIFIED', object: pod });
});

test('envelope magic is required', () => {
  const raw = ld(1, str(1, 'foo'));
  assert400(() => decodeProtobuf(Buffer.concat([Buffer.from('k8s\x01'), ld(1, str(1, 'v1'), str(2, 'Namespace')), ld(2, raw)])), /expected prefix/);
  assert400(() => decodeProtobuf(Buffer.from('{"kind":"Namespace"}')), /does not appear to be a protobuf message/);
  assert400(() => decodeProtobuf(Buffer.alloc(0)));
  assert400(() => decodeProtobuf(Buffer.from('k8s\0', 'latin1')));
  assert400(() => decodeProtobuf(Buffer.from('k8', 'latin1')));
});

test('malformed input is a 400', () => {
  const good = Buffer.concat([ld(1, str(1, 'foo'))]);
  // length runs past the end of the body
  const truncated = envelope('v1', 'Namespace', good).subarray(0, -6);
  assert400(() => decodeProtobuf(truncated));
  // a raw length prefix that claims more than is there
  assert400(() => decodeProtobuf(Buffer.concat([MAGIC, ld(1, str(1, 'v1'), str(2, 'Namespace')), key(2, 2), varint(50), good])));
  // a varint that never ends
  assert400(() => decodeProtobuf(envelope('v1', 'Namespace', Buffer.concat([key(1, 0), Buffer.alloc(11, 0xff)]))));
  // ObjectMeta.name (= 1) sent as a varint instead of a string
  assert400(() => decodeProtobuf(envelope('v1', 'Namespace', ld(1, vint(1, 5)))), /wireType/);
  // field number 0
  assert400(() => decodeProtobuf(envelope('v1', 'Namespace', Buffer.from([0x00, 0x01]))));
  // group wire types are not supported
  assert400(() => decodeProtobuf(envelope('v1', 'Namespace', Buffer.concat([key(40, 3), key(40, 4)]))));
  // a kind with no protobuf form and no hint
  assert400(() => decodeProtobuf(envelope('example.com/v1', 'Widget', good)), /Widget/);
  // RawExtension that is not JSON (ControllerRevision.data = 2)
  assert400(() => decodeProtobuf(envelope('apps/v1', 'ControllerRevision', Buffer.concat([ld(1, str(1, 'r')), ld(2, str(1, '{not json'))]))));
});

test('the envelope hint is used when the body carries no type', () => {
  const body = Buffer.concat([MAGIC, ld(1), ld(2, ld(1, str(1, 'foo')))]);
  assert.deepEqual(decodeProtobuf(body, 'io.k8s.api.core.v1.Namespace'), { metadata: { name: 'foo' }, spec: {}, status: {} });
});
