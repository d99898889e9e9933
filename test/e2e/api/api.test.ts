// The REST API through HTTPS as clients use it: CRUD, errors as Status, representations,
// subresources, finalizers, namespaces, selectors, chunked lists.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decode as cborDecode, Encoder } from 'cbor-x';
import YAML from 'yaml';
import { useTestServer } from '../../helpers/server.ts';

// Without the root CA publisher: these tests count the ConfigMaps of their namespaces, and kube's API
// server integration tests too run without kube-controller-manager's kube-root-ca.crt.
const s = useTestServer({ options: { controllers: ['*', '-root-ca-certificate-publisher-controller'] } });

const cm = (name: string, data: Record<string, string> = { a: '1' }, labels?: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ...(labels ? { labels } : {}) },
  data,
});

const deployment = (name: string, replicas = 1) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
  },
});

function assertStatus(res: { status: number; json(): any }, code: number, reason: string) {
  assert.equal(res.status, code, `expected ${code}, got ${res.status}: ${JSON.stringify(res.json())}`);
  const st = res.json();
  assert.equal(st.kind, 'Status');
  assert.equal(st.apiVersion, 'v1');
  assert.equal(st.status, 'Failure');
  assert.equal(st.reason, reason);
  assert.equal(st.code, code);
  return st;
}

test('system namespaces exist at first start', async () => {
  const res = await s.request('GET', '/api/v1/namespaces');
  assert.equal(res.status, 200);
  const names = res.json().items.map((n: any) => n.metadata.name);
  for (const n of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) assert.ok(names.includes(n), n);
  const def = res.json().items.find((n: any) => n.metadata.name === 'default');
  assert.equal(def.status.phase, 'Active');
  assert.deepEqual(def.spec.finalizers, ['kubernetes']);
  assert.equal(def.metadata.labels['kubernetes.io/metadata.name'], 'default');
});

test('create, get, update, delete a ConfigMap with resourceVersions from the log', async () => {
  const created = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: cm('crud') });
  assert.equal(created.status, 201);
  const obj = created.json();
  assert.match(obj.metadata.uid, /^[0-9a-f-]{36}$/);
  assert.match(obj.metadata.resourceVersion, /^\d+$/);
  assert.match(obj.metadata.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.equal(obj.metadata.namespace, 'default');

  const got = await s.request('GET', '/api/v1/namespaces/default/configmaps/crud');
  assert.deepEqual(got.json(), obj);

  obj.data.b = '2';
  const updated = await s.request('PUT', '/api/v1/namespaces/default/configmaps/crud', { body: obj });
  assert.equal(updated.status, 200);
  assert.ok(Number(updated.json().metadata.resourceVersion) > Number(obj.metadata.resourceVersion));
  assert.equal(updated.json().data.b, '2');

  // Stale resourceVersion → 409 Conflict, nothing written.
  const stale = await s.request('PUT', '/api/v1/namespaces/default/configmaps/crud', { body: { ...obj, data: { c: '3' } } });
  assertStatus(stale, 409, 'Conflict');
  const after = await s.request('GET', '/api/v1/namespaces/default/configmaps/crud');
  assert.equal(after.json().data.c, undefined);

  // An update that changes nothing keeps the resourceVersion.
  const same = await s.request('PUT', '/api/v1/namespaces/default/configmaps/crud', { body: after.json() });
  assert.equal(same.json().metadata.resourceVersion, after.json().metadata.resourceVersion);

  const del = await s.request('DELETE', '/api/v1/namespaces/default/configmaps/crud');
  assert.equal(del.status, 200);
  assert.equal(del.json().status, 'Success');
  assert.equal(del.json().details.name, 'crud');
  assertStatus(await s.request('GET', '/api/v1/namespaces/default/configmaps/crud'), 404, 'NotFound');
});

test('create errors: AlreadyExists, mismatches, missing namespace, malformed bodies; unacceptable output forms', async () => {
  assert.equal((await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: cm('dup') })).status, 201);
  const dup = assertStatus(await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: cm('dup') }), 409, 'AlreadyExists');
  assert.equal(dup.message, 'configmaps "dup" already exists');
  assert.deepEqual(dup.details, { name: 'dup', kind: 'configmaps' });

  assertStatus(await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: { ...cm('x'), kind: 'Secret' } }), 400, 'BadRequest');
  assertStatus(await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: { ...cm('x'), apiVersion: 'apps/v1' } }), 400, 'BadRequest');
  assertStatus(await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: { ...cm('x'), metadata: { name: 'x', namespace: 'other' } } }), 400, 'BadRequest');
  assertStatus(await s.request('POST', '/api/v1/namespaces/nope/configmaps', { body: cm('x') }), 404, 'NotFound');
  // A JSON body kube cannot read the kind of: Go's words for why, and the body's start (its text
  // when it opens with "{", else hex), as kube's create handler answers.
  const unreadable = async (raw: string) => assertStatus(await s.request('POST', '/api/v1/namespaces/default/configmaps', { raw, headers: { 'content-type': 'application/json' } }), 400, 'BadRequest').message;
  const cannot = 'the object provided is unrecognized (must be of type ConfigMap): couldn\'t get version/kind; json parse error: ';
  assert.equal(await unreadable('{"kind": '), `${cannot}unexpected end of JSON input ({"kind": )`);
  assert.equal(await unreadable('{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x"},}'), `${cannot}invalid character '}' looking for beginning of object key string ({"kind":"ConfigMap","apiVersio ...)`);
  assert.equal(await unreadable('{"a": tru}'), `${cannot}invalid character '}' in literal true (expecting 'e') ({"a": tru})`);
  assert.equal(await unreadable('{"a": 1} x'), `${cannot}invalid character 'x' after top-level value ({"a": 1} x)`);
  assert.equal(await unreadable('{"a": "\\q"}'), `${cannot}invalid character 'q' in string escape code ({"a": "\\q"})`);
  assert.equal(await unreadable('[1]'), `${cannot}json: cannot unmarshal array into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" } (5b315d)`);
  assert.equal(await unreadable('{"kind": 5}'), `${cannot}json: cannot unmarshal number into Go struct field .kind of type string ({"kind": 5})`);
  // null reads as an empty object: it has no name.
  assertStatus(await s.request('POST', '/api/v1/namespaces/default/configmaps', { raw: 'null', headers: { 'content-type': 'application/json' } }), 422, 'Invalid');
  assertStatus(await s.request('POST', '/api/v1/namespaces/default/configmaps', { raw: 'a: [', headers: { 'content-type': 'application/yaml' } }), 400, 'BadRequest');
  assertStatus(await s.request('POST', '/api/v1/namespaces/default/configmaps', { raw: '{}', headers: { 'content-type': 'text/plain' } }), 415, 'UnsupportedMediaType');
  const big = Buffer.alloc(3 * 1024 * 1024 + 10, 'a');
  assertStatus(await s.request('POST', '/api/v1/namespaces/default/configmaps', { raw: big, headers: { 'content-type': 'application/json' } }), 413, 'RequestEntityTooLarge');
  assertStatus(await s.request('GET', '/api/v1/namespaces/default/configmaps', { headers: { accept: 'application/xml' } }), 406, 'NotAcceptable');
  // The form is negotiated before the object is read, as kube-apiserver does.
  assertStatus(await s.request('GET', '/api/v1/namespaces/default/configmaps/dup', { headers: { accept: 'application/xml' } }), 406, 'NotAcceptable');
  assertStatus(await s.request('GET', '/api/v1/namespaces/default/configmaps/missing', { headers: { accept: 'application/xml' } }), 406, 'NotAcceptable');
  // None of the failures left an object behind.
  const names = (await s.request('GET', '/api/v1/namespaces/default/configmaps')).json().items.map((i: any) => i.metadata.name);
  assert.ok(!names.includes('x'));
});

test('invalid objects → 422 with one cause per field, and nothing is written', async () => {
  const rvBefore = (await s.request('GET', '/api/v1/namespaces/default/configmaps')).json().metadata.resourceVersion;
  const bad = assertStatus(await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: cm('Bad_Name') }), 422, 'Invalid');
  assert.equal(bad.details.kind, 'ConfigMap');
  assert.equal(bad.details.causes[0].field, 'metadata.name');
  assert.equal(bad.details.causes[0].reason, 'FieldValueInvalid');

  const d = deployment('broken') as any;
  delete d.spec.selector;
  d.metadata.labels = { x: '-bad-' };
  const st = assertStatus(await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: d }), 422, 'Invalid');
  const fields = st.details.causes.map((c: any) => c.field).sort();
  assert.deepEqual(fields, ['metadata.labels', 'spec.selector']);
  const rvAfter = (await s.request('GET', '/api/v1/namespaces/default/configmaps')).json().metadata.resourceVersion;
  assert.equal(rvAfter, rvBefore, 'failed writes must not move the resourceVersion');
});

test('a built-in body whose JSON does not fit the Go types is a 400 from decoding, as kube-apiserver words it; nothing is written', async () => {
  const rvBefore = (await s.request('GET', '/api/v1/namespaces/default/configmaps')).json().metadata.resourceVersion;
  const cannot = (kind: string, err: string) => `${kind} in version "v1" cannot be handled as a ${kind}: ${err}`;
  const cases: [string, (d: any) => void, string][] = [
    ['a string for an int32', (d) => (d.spec.replicas = '3'), 'json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32'],
    ['a fraction for an int32', (d) => (d.spec.replicas = 1.5), 'json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32'],
    ['a string for a struct, inside a list', (d) => (d.spec.template.spec.containers[0].resources = 'x'), 'json: cannot unmarshal string into Go struct field Container.spec.template.spec.containers.resources of type v1.ResourceRequirements'],
    ['a number for a label value', (d) => (d.metadata.labels = { a: 1 }), 'json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string'],
    ['a quantity that does not parse', (d) => (d.spec.template.spec.containers[0].resources = { limits: { cpu: 'lots' } }), "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"],
    ['a bool for an int-or-string', (d) => (d.spec.strategy = { type: 'RollingUpdate', rollingUpdate: { maxSurge: true } }), 'json: cannot unmarshal bool into Go value of type int32'],
    // encoding/json reports the first mismatch and decodes on; a custom decoder's error ends it.
    ['the first of two mismatches', (d) => ((d.spec.replicas = '3'), (d.spec.paused = 'no')), 'json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32'],
  ];
  for (const [what, spoil, err] of cases) {
    const d = deployment('typed') as any;
    spoil(d);
    const st = assertStatus(await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: d }), 400, 'BadRequest');
    assert.equal(st.message, cannot('Deployment', err), what);
  }
  // []byte fields take base64 as Go decodes it: the offset is where base64.StdEncoding gives up.
  const secret = (data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'typed-secret' }, data });
  for (const [given, at] of [['not base64!', 3], ['abc', 0], ['aGVsbG8', 4], ['aGVsbA=', 7], ['a===', 1], ['aGVsbG8=x', 8]] as const) {
    const bad = assertStatus(await s.request('POST', '/api/v1/namespaces/default/secrets?dryRun=All', { body: secret({ k: given }) }), 400, 'BadRequest');
    assert.equal(bad.message, cannot('Secret', `illegal base64 data at input byte ${at}`), given);
  }
  assert.equal((await s.request('POST', '/api/v1/namespaces/default/secrets?dryRun=All', { body: secret({ k: 'aGVsbG8=', l: '' }) })).status, 201);
  // YAML bodies are decoded the same way; so are subresource bodies, in their own kind.
  const yamlBody = YAML.stringify({ ...cm('typed'), data: { n: 1 } }, { version: '1.1' });
  const y = assertStatus(await s.request('POST', '/api/v1/namespaces/default/configmaps', { raw: yamlBody, headers: { 'content-type': 'application/yaml' } }), 400, 'BadRequest');
  assert.equal(y.message, cannot('ConfigMap', 'json: cannot unmarshal number into Go struct field ConfigMap.data of type string'));
  await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: deployment('typed-scale') });
  const scale = assertStatus(await s.request('PUT', '/apis/apps/v1/namespaces/default/deployments/typed-scale/scale', { body: { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'typed-scale' }, spec: { replicas: '2' } } }), 400, 'BadRequest');
  assert.equal(scale.message, cannot('Scale', 'json: cannot unmarshal string into Go struct field ScaleSpec.spec.replicas of type int32'));
  const rvAfter = (await s.request('GET', '/api/v1/namespaces/default/configmaps')).json().metadata.resourceVersion;
  assert.equal(Number(rvAfter), Number(rvBefore) + 1, 'only the deployment made for the scale request was written');
});

test('a patch whose result does not fit the Go types is a 422 on "patch" with no kind or name, as kube words each patch type; nothing is written', async () => {
  await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: deployment('typed-patch') });
  const path = '/apis/apps/v1/namespaces/default/deployments/typed-patch';
  const before = (await s.request('GET', path)).json();
  const patch = async (type: string, body: unknown) => {
    const st = assertStatus(await s.request('PATCH', path, { raw: JSON.stringify(body), headers: { 'content-type': `application/${type}+json` } }), 422, 'Invalid');
    assert.deepEqual(Object.keys(st), ['kind', 'apiVersion', 'metadata', 'status', 'message', 'reason', 'details', 'code'], "metav1.Status's field order");
    assert.deepEqual(Object.keys(st.details), ['causes'], 'no kind, group or name');
    assert.equal(st.details.causes.length, 1);
    const cause = st.details.causes[0];
    assert.equal(cause.field, 'patch');
    assert.equal(cause.reason, 'FieldValueInvalid');
    assert.equal(st.message, ` "" is invalid: patch: ${cause.message}`);
    return cause.message as string;
  };
  // JSON and merge patches: the patched object, as Go encodes it, decoded by encoding/json.
  const merged = await patch('merge-patch', { metadata: { labels: { a: 5 } } });
  assert.match(merged, /^Invalid value: "\{\\"apiVersion\\":\\"apps\/v1\\",\\"kind\\":\\"Deployment\\",\\"metadata\\":\{/);
  assert.ok(merged.includes('\\"labels\\":{\\"a\\":5}'), merged);
  assert.ok(merged.endsWith('": json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string'), merged);
  const jsonPatched = await patch('json-patch', [{ op: 'replace', path: '/spec/replicas', value: '2' }]);
  assert.ok(jsonPatched.endsWith('": json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32'), jsonPatched);
  // A strategic merge patch's result is converted from a map: the patch as Go prints it, the converter's words.
  const smp = (body: unknown) => patch('strategic-merge-patch', body);
  assert.equal(await smp({ spec: { replicas: '2' } }), 'Invalid value: "map[spec:map[replicas:2]]": unrecognized type: int32');
  assert.equal(await smp({ metadata: { annotations: { a: ['x'] } } }), 'Invalid value: "map[metadata:map[annotations:map[a:[x]]]]": unrecognized type: string');
  assert.equal(await smp({ metadata: { labels: { a: 5 } } }), 'Invalid value: "map[metadata:map[labels:map[a:5]]]": cannot convert int64 to string');
  assert.equal(await smp({ spec: { replicas: 1.5 } }), 'Invalid value: "map[spec:map[replicas:1.5]]": cannot convert float64 to int32');
  assert.equal(await smp({ spec: { paused: 'yes' } }), 'Invalid value: "map[spec:map[paused:yes]]": unrecognized type: bool');
  assert.equal(await smp({ spec: { template: { spec: { containers: { a: 1 } } } } }), 'Invalid value: "map[spec:map[template:map[spec:map[containers:map[a:1]]]]]": cannot restore slice from map');
  assert.equal(await smp({ spec: { strategy: ['Recreate'] } }), 'Invalid value: "map[spec:map[strategy:[Recreate]]]": cannot restore struct from: slice');
  assert.equal(await smp({ metadata: { labels: 'x' } }), 'Invalid value: "map[metadata:map[labels:x]]": cannot restore map from string');
  // The scale subresource's patch is decoded as a Scale.
  const scale = assertStatus(await s.request('PATCH', `${path}/scale`, { raw: '{"spec":{"replicas":"3"}}', headers: { 'content-type': 'application/merge-patch+json' } }), 422, 'Invalid');
  assert.ok(scale.details.causes[0].message.endsWith('": json: cannot unmarshal string into Go struct field ScaleSpec.spec.replicas of type int32'));
  const after = (await s.request('GET', path)).json();
  assert.equal(after.metadata.resourceVersion, before.metadata.resourceVersion, 'nothing was written');
  assert.equal(after.metadata.labels, undefined);
  // A patch that fits is applied as before.
  assert.equal((await s.request('PATCH', path, { raw: '{"spec":{"replicas":2}}', headers: { 'content-type': 'application/strategic-merge-patch+json' } })).status, 200);
});

test('a patch that renames the object or moves it to another namespace is a 400 naming both, as kube checks the patched object against the URL', async () => {
  await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: cm('renamed') });
  const path = '/api/v1/namespaces/default/configmaps/renamed';
  const merge = (body: unknown) => s.request('PATCH', path, { raw: JSON.stringify(body), headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(assertStatus(await merge({ metadata: { name: 'other' } }), 400, 'BadRequest').message, 'the name of the object (other) does not match the name on the URL (renamed)');
  assert.equal(assertStatus(await merge({ metadata: { namespace: 'kube-system' } }), 400, 'BadRequest').message, 'the namespace of the object (kube-system) does not match the namespace on the URL (default)');
  const removed = await s.request('PATCH', path, { raw: '[{"op":"remove","path":"/metadata/name"}]', headers: { 'content-type': 'application/json-patch+json' } });
  assert.equal(assertStatus(removed, 400, 'BadRequest').message, 'the name of the object () does not match the name on the URL (renamed)');
  // Other server-set fields are immutable as validation says.
  const uid = assertStatus(await merge({ metadata: { uid: 'abc' } }), 422, 'Invalid');
  assert.equal(uid.message, 'ConfigMap "renamed" is invalid: metadata.uid: Invalid value: "abc": field is immutable');
});

test('metadata is written in ObjectMeta field order, whatever order the body had, on create, update, apply and dry run', async () => {
  const order = ['name', 'namespace', 'uid', 'resourceVersion', 'creationTimestamp', 'labels', 'annotations', 'managedFields'];
  const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { annotations: { x: 'y' }, labels: { a: 'b' }, name: 'ordered' } };
  const created = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body });
  assert.equal(created.status, 201);
  assert.deepEqual(Object.keys(created.json().metadata), order);
  assert.deepEqual(Object.keys((await s.request('GET', '/api/v1/namespaces/default/configmaps/ordered')).json().metadata), order, 'as stored');
  // A PUT without the fields the server carries over gets them in their place.
  const updated = await s.request('PUT', '/api/v1/namespaces/default/configmaps/ordered', { body: { ...body, metadata: { annotations: { x: 'z' }, labels: { a: 'b' }, name: 'ordered' } } });
  assert.deepEqual(Object.keys(updated.json().metadata), order);
  const applied = await s.request('PATCH', '/api/v1/namespaces/default/configmaps/ordered-apply?fieldManager=m', { raw: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels: {a: b}\n  name: ordered-apply\n', headers: { 'content-type': 'application/apply-patch+yaml' } });
  assert.equal(applied.status, 201);
  assert.deepEqual(Object.keys(applied.json().metadata), order.filter((k) => k !== 'annotations'));
  const dry = await s.request('POST', '/api/v1/namespaces/default/configmaps?dryRun=All', { body: { ...body, metadata: { ...body.metadata, name: 'ordered-dry' } } });
  assert.deepEqual(Object.keys(dry.json().metadata), order.filter((k) => k !== 'resourceVersion'));
});

test('built-in objects are written in encoding/json\'s order: struct fields as the Go struct declares them, map keys sorted', async () => {
  const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'maps', labels: { z: '1', a: '2' }, annotations: { 'y.io/b': '1', 'x.io/a': '2' } }, data: { zz: '1', aa: '2', mm: '3' } };
  const created = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body });
  assert.equal(created.status, 201, created.text);
  assert.match(created.text, /"labels":\{"a":"2","z":"1"\},"annotations":\{"x\.io\/a":"2","y\.io\/b":"1"\}/);
  assert.match(created.text, /"data":\{"aa":"2","mm":"3","zz":"1"\}\}\n$/);
  // A key a patch adds goes in its place, not last.
  const patched = await s.request('PATCH', '/api/v1/namespaces/default/configmaps/maps', { raw: '{"metadata":{"labels":{"m":"3"}},"data":{"bb":"4"}}', headers: { 'content-type': 'application/strategic-merge-patch+json' } });
  assert.equal(patched.status, 200, patched.text);
  assert.deepEqual([Object.keys(patched.json().metadata.labels), Object.keys(patched.json().data)], [['a', 'm', 'z'], ['aa', 'bb', 'mm', 'zz']]);
  const got = (await s.request('GET', '/api/v1/namespaces/default/configmaps/maps')).json();
  assert.deepEqual(Object.keys(got.data), ['aa', 'bb', 'mm', 'zz'], 'as stored');
  // Maps inside structs and lists: a Service's selector, a pod template's resource limits. The
  // structs around them, and the fields the server defaults, in Go struct order.
  const svc = await s.request('POST', '/api/v1/namespaces/default/services', { body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'maps' }, spec: { type: 'ClusterIP', selector: { b: '1', a: '2' }, ports: [{ targetPort: 8080, port: 80 }] } } });
  assert.equal(svc.status, 201, svc.text);
  assert.deepEqual(Object.keys(svc.json().spec.selector), ['a', 'b']);
  assert.deepEqual(Object.keys(svc.json().spec), ['ports', 'selector', 'clusterIP', 'clusterIPs', 'type', 'sessionAffinity', 'ipFamilies', 'ipFamilyPolicy', 'internalTrafficPolicy']);
  assert.deepEqual(Object.keys(svc.json().spec.ports[0]), ['protocol', 'port', 'targetPort']);
  const rs = {
    apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'maps' },
    spec: { selector: { matchLabels: { y: '1', x: '2' } }, template: { metadata: { labels: { y: '1', x: '2' } }, spec: { containers: [{ name: 'c', image: 'i', resources: { limits: { memory: '1Gi', cpu: '1' } } }] } } },
  };
  const created2 = (await s.request('POST', '/apis/apps/v1/namespaces/default/replicasets', { body: rs })).json();
  assert.deepEqual(Object.keys(created2.spec.selector.matchLabels), ['x', 'y']);
  assert.deepEqual(Object.keys(created2.spec.template.spec.containers[0].resources.limits), ['cpu', 'memory']);
  // As kubectl sends them (sorted), and as kube answers (struct order).
  assert.deepEqual(Object.keys(created2.spec), ['replicas', 'selector', 'template']);
  assert.deepEqual(Object.keys(created2.spec.template.spec.containers[0]), ['name', 'image', 'resources', 'terminationMessagePath', 'terminationMessagePolicy', 'imagePullPolicy']);
  const sorted = (await s.request('GET', '/apis/apps/v1/namespaces/default/replicasets/maps')).json();
  assert.deepEqual(Object.keys(sorted.spec.template.spec).slice(0, 5), ['containers', 'restartPolicy', 'terminationGracePeriodSeconds', 'dnsPolicy', 'securityContext'], 'as stored');
});

test('unknown fields are dropped with a warning header and never stored', async () => {
  const body: any = cm('unknown');
  body.bogus = 1;
  body.metadata.alsoBogus = true;
  const res = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body });
  assert.equal(res.status, 201);
  const warning = String(res.headers.warning);
  assert.match(warning, /299 - "unknown field \\"bogus\\""/);
  assert.equal(res.json().bogus, undefined);
  const strict = await s.request('POST', '/api/v1/namespaces/default/configmaps?fieldValidation=Strict', { body: { ...body, metadata: { name: 'unknown2' } } });
  assertStatus(strict, 400, 'BadRequest');
});

test('YAML and CBOR requests and responses', async () => {
  const yamlBody = YAML.stringify(cm('yaml-cm'), { version: '1.1' });
  const res = await s.request('POST', '/api/v1/namespaces/default/configmaps', { raw: yamlBody, headers: { 'content-type': 'application/yaml', accept: 'application/yaml' } });
  assert.equal(res.status, 201);
  assert.match(String(res.headers['content-type']), /^application\/yaml/);
  assert.equal(YAML.parse(res.text).metadata.name, 'yaml-cm');
  // YAML is read and written as kube does (go-yaml v2, YAML 1.1): an unquoted yes is a boolean,
  // so a string that looks like one is quoted in YAML output.
  const yesBody = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yaml-yes\ndata:\n  enabled: yes\n';
  const yes = await s.request('POST', '/api/v1/namespaces/default/configmaps', { raw: yesBody, headers: { 'content-type': 'application/yaml' } });
  assert.equal(yes.status, 400);
  assert.equal(yes.json().message, 'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal bool into Go struct field ConfigMap.data of type string');
  const quoted = await s.request('POST', '/api/v1/namespaces/default/configmaps', { raw: yesBody.replace('enabled: yes', 'enabled: "yes"'), headers: { 'content-type': 'application/yaml', accept: 'application/yaml' } });
  assert.equal(quoted.status, 201);
  assert.match(quoted.text, /\n {2}enabled: "yes"\n/);
  // go-yaml v2's plain scalars: `.` and `e5` are strings (YAML 1.1's float pattern reads them as
  // NaN, which was stored as null).
  const plainBody = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yaml-plain\n  labels: {a10: x, a2: y2}\ndata:\n  path: .\n  tier: e5\n  when: "1:20"\n';
  const plain = await s.request('POST', '/api/v1/namespaces/default/configmaps', { raw: plainBody, headers: { 'content-type': 'application/yaml' } });
  assert.equal(plain.status, 201, plain.text);
  assert.deepEqual(plain.json().data, { path: '.', tier: 'e5', when: '1:20' });
  // YAML out as kube writes it (JSON through go-yaml v2): every map's keys in go-yaml's order (a2
  // before a10), sequences at their key's indent, timestamps and sexagesimal-looking strings
  // double-quoted, `.` plain.
  const out = await s.request('GET', '/api/v1/namespaces/default/configmaps/yaml-plain', { headers: { accept: 'application/yaml' } });
  assert.match(
    out.text,
    /^apiVersion: v1\ndata:\n {2}path: \.\n {2}tier: e5\n {2}when: "1:20"\nkind: ConfigMap\nmetadata:\n {2}creationTimestamp: "\d{4}-\d\d-\d\dT[\d:]+Z"\n {2}labels:\n {4}a2: y2\n {4}a10: x\n {2}managedFields:\n {2}- apiVersion: v1\n {4}fieldsType: FieldsV1\n {4}fieldsV1:\n {6}f:data:\n {8}\.: \{\}\n/,
    out.text,
  );

  const enc = new Encoder({ useRecords: false, mapsAsObjects: true });
  const cborBody = Buffer.concat([Buffer.from([0xd9, 0xd9, 0xf7]), enc.encode(cm('cbor-cm'))]);
  const res2 = await s.request('POST', '/api/v1/namespaces/default/configmaps', { raw: cborBody, headers: { 'content-type': 'application/cbor', accept: 'application/cbor' } });
  assert.equal(res2.status, 201);
  assert.deepEqual([...res2.raw.subarray(0, 3)], [0xd9, 0xd9, 0xf7], 'self-described CBOR tag');
  assert.equal(cborDecode(res2.raw.subarray(3)).metadata.name, 'cbor-cm');
  // A CBOR body is checked by the schema: a metadata value of the wrong type too (it was stored).
  const badMeta = Buffer.concat([Buffer.from([0xd9, 0xd9, 0xf7]), enc.encode({ ...cm('cbor-bad'), metadata: { name: 'cbor-bad', labels: { a: 5 } } })]);
  const res3 = await s.request('POST', '/api/v1/namespaces/default/configmaps', { raw: badMeta, headers: { 'content-type': 'application/cbor' } });
  assert.equal(res3.status, 422, res3.text);
  assert.deepEqual(res3.json().details.causes.map((c: any) => c.field), ['metadata.labels[a]']);
  assert.equal((await s.request('GET', '/api/v1/namespaces/default/configmaps/cbor-bad')).status, 404);
});

test('protobuf responses carry the k8s envelope; Table requests fall back to JSON', async () => {
  const r = await s.request('GET', '/api/v1/namespaces/default', { headers: { accept: 'application/vnd.kubernetes.protobuf,application/json' } });
  assert.equal(r.status, 200);
  assert.equal(r.headers['content-type'], 'application/vnd.kubernetes.protobuf');
  assert.deepEqual([...r.raw.subarray(0, 4)], [0x6b, 0x38, 0x73, 0x00], 'magic "k8s\\0"');
  assert.ok(r.raw.includes(Buffer.from('Namespace')) && r.raw.includes(Buffer.from('default')));
  const t = await s.request('GET', '/api/v1/namespaces', { headers: { accept: 'application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1;g=meta.k8s.io' } });
  assert.equal(t.json().kind, 'Table');
  const missing = await s.request('GET', '/api/v1/namespaces/nope', { headers: { accept: 'application/vnd.kubernetes.protobuf,application/json' } });
  assert.equal(missing.status, 404);
  assert.equal(missing.headers['content-type'], 'application/vnd.kubernetes.protobuf', 'errors are Status objects in the negotiated encoding');
});

test('Table and PartialObjectMetadata representations', async () => {
  const table = await s.request('GET', '/api/v1/namespaces', { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' } });
  assert.equal(table.status, 200);
  const t = table.json();
  assert.equal(t.kind, 'Table');
  assert.equal(t.apiVersion, 'meta.k8s.io/v1');
  assert.deepEqual(t.columnDefinitions.map((c: any) => c.name), ['Name', 'Status', 'Age']);
  assert.equal(t.rows[0].object.kind, 'PartialObjectMetadata');
  const withObj = (await s.request('GET', '/api/v1/namespaces/default?includeObject=Object', { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } })).json();
  assert.equal(withObj.rows.length, 1);
  assert.equal(withObj.rows[0].object.kind, 'Namespace');

  const pom = (await s.request('GET', '/api/v1/namespaces', { headers: { accept: 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io' } })).json();
  assert.equal(pom.kind, 'PartialObjectMetadataList');
  assert.ok(pom.items.every((i: any) => i.kind === 'PartialObjectMetadata' && i.metadata.name && !('spec' in i)));
});

test('status subresource: main writes keep status, /status writes change only status; generation tracks spec', async () => {
  const d = (await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: { ...deployment('gen'), status: { replicas: 9 } } })).json();
  assert.deepEqual(d.status, {}, 'status is not set through the main resource on create (the reset struct is written as {})');
  assert.equal(d.metadata.generation, 1);

  const withStatus = { ...d, status: { replicas: 3, observedGeneration: 1 }, spec: { ...d.spec, replicas: 5 } };
  const st = (await s.request('PUT', '/apis/apps/v1/namespaces/default/deployments/gen/status', { body: withStatus })).json();
  assert.equal(st.status.replicas, 3);
  assert.equal(st.spec.replicas, 1, '/status ignores spec changes');
  assert.equal(st.metadata.generation, 1);

  const main = (await s.request('PUT', '/apis/apps/v1/namespaces/default/deployments/gen', { body: { ...st, spec: { ...st.spec, replicas: 2 }, status: { replicas: 100 } } })).json();
  assert.equal(main.status.replicas, 3, 'main resource ignores status changes');
  assert.equal(main.spec.replicas, 2);
  assert.equal(main.metadata.generation, 2);

  const labelsOnly = (await s.request('PUT', '/apis/apps/v1/namespaces/default/deployments/gen', { body: { ...main, metadata: { ...main.metadata, labels: { x: 'y' } } } })).json();
  assert.equal(labelsOnly.metadata.generation, 2, 'metadata changes do not bump generation');
});

test('scale subresource reads and writes spec.replicas', async () => {
  await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: deployment('scaled', 2) });
  const scale = (await s.request('GET', '/apis/apps/v1/namespaces/default/deployments/scaled/scale')).json();
  assert.equal(scale.kind, 'Scale');
  assert.equal(scale.apiVersion, 'autoscaling/v1');
  assert.equal(scale.spec.replicas, 2);
  assert.equal(scale.status.selector, 'app=scaled');
  const put = await s.request('PUT', '/apis/apps/v1/namespaces/default/deployments/scaled/scale', { body: { ...scale, spec: { replicas: 7 } } });
  assert.equal(put.status, 200);
  assert.equal(put.json().spec.replicas, 7);
  const d = (await s.request('GET', '/apis/apps/v1/namespaces/default/deployments/scaled')).json();
  assert.equal(d.spec.replicas, 7);
  assert.equal(d.metadata.generation, 2);
});

test('finalizers hold deletion until removed; preconditions', async () => {
  const body: any = cm('fin');
  body.metadata.finalizers = ['example.com/hold'];
  const created = (await s.request('POST', '/api/v1/namespaces/default/configmaps', { body })).json();
  assertStatus(await s.request('DELETE', '/api/v1/namespaces/default/configmaps/fin', { body: { preconditions: { uid: 'wrong' } } }), 409, 'Conflict');
  const del = await s.request('DELETE', '/api/v1/namespaces/default/configmaps/fin');
  assert.equal(del.status, 200);
  const pending = del.json();
  assert.equal(pending.kind, 'ConfigMap');
  assert.ok(pending.metadata.deletionTimestamp);
  assert.equal(pending.metadata.deletionGracePeriodSeconds, 0);
  assert.equal(pending.metadata.uid, created.metadata.uid);
  // Where ObjectMeta has them (after creationTimestamp), not appended.
  const metaKeys = ['name', 'namespace', 'uid', 'resourceVersion', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'finalizers', 'managedFields'];
  assert.deepEqual(Object.keys(pending.metadata), metaKeys);
  assert.deepEqual(Object.keys((await s.request('GET', '/api/v1/namespaces/default/configmaps/fin')).json().metadata), metaKeys);
  // Removing the finalizer completes the deletion.
  const patched = await s.request('PATCH', '/api/v1/namespaces/default/configmaps/fin', {
    raw: JSON.stringify({ metadata: { finalizers: null } }),
    headers: { 'content-type': 'application/merge-patch+json' },
  });
  assert.equal(patched.status, 200);
  assertStatus(await s.request('GET', '/api/v1/namespaces/default/configmaps/fin'), 404, 'NotFound');
});

test('namespace deletion: Terminating, content removed, then gone; no creates while terminating', async () => {
  await s.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'doomed' } } });
  for (let i = 0; i < 3; i++) await s.request('POST', '/api/v1/namespaces/doomed/configmaps', { body: cm(`c${i}`) });
  const hold: any = cm('held');
  hold.metadata.finalizers = ['example.com/hold'];
  await s.request('POST', '/api/v1/namespaces/doomed/configmaps', { body: hold });
  const del = await s.request('DELETE', '/api/v1/namespaces/doomed');
  assert.equal(del.status, 200);
  assert.equal(del.json().status.phase, 'Terminating');
  assertStatus(await s.request('POST', '/api/v1/namespaces/doomed/configmaps', { body: cm('late') }), 403, 'Forbidden');
  // The held object keeps the namespace alive until its finalizer goes.
  await waitFor(async () => (await s.request('GET', '/api/v1/namespaces/doomed/configmaps')).json().items.length === 1);
  assert.equal((await s.request('GET', '/api/v1/namespaces/doomed')).status, 200);
  await s.request('PATCH', '/api/v1/namespaces/doomed/configmaps/held', { raw: '{"metadata":{"finalizers":[]}}', headers: { 'content-type': 'application/merge-patch+json' } });
  await waitFor(async () => (await s.request('GET', '/api/v1/namespaces/doomed')).status === 404);
  assertStatus(await s.request('DELETE', '/api/v1/namespaces/kube-system'), 403, 'Forbidden');
});

test('label and field selectors; unsupported field → 400', async () => {
  await s.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'sel' } } });
  await s.request('POST', '/api/v1/namespaces/sel/configmaps', { body: cm('a', {}, { tier: 'web', env: 'prod' }) });
  await s.request('POST', '/api/v1/namespaces/sel/configmaps', { body: cm('b', {}, { tier: 'db', env: 'prod' }) });
  await s.request('POST', '/api/v1/namespaces/sel/configmaps', { body: cm('c', {}, { tier: 'web' }) });
  const names = async (q: string) => (await s.request('GET', `/api/v1/namespaces/sel/configmaps?${q}`)).json().items.map((i: any) => i.metadata.name);
  assert.deepEqual(await names('labelSelector=tier%3Dweb'), ['a', 'c']);
  assert.deepEqual(await names('labelSelector=tier!%3Dweb'), ['b']);
  assert.deepEqual(await names('labelSelector=tier+in+(db,web),env'), ['a', 'b']);
  assert.deepEqual(await names('labelSelector=!env'), ['c']);
  assert.deepEqual(await names('labelSelector=tier+notin+(web)'), ['b']);
  assert.deepEqual(await names('fieldSelector=metadata.name%3Db'), ['b']);
  assert.deepEqual(await names('fieldSelector=metadata.name!%3Db'), ['a', 'c']);
  assertStatus(await s.request('GET', '/api/v1/namespaces/sel/configmaps?fieldSelector=spec.bogus%3D1'), 400, 'BadRequest');
  assertStatus(await s.request('GET', '/api/v1/namespaces/sel/configmaps?labelSelector=%3D%3D%3D'), 400, 'BadRequest');
  // All-namespaces list with a namespace field selector.
  const all = (await s.request('GET', '/api/v1/configmaps?fieldSelector=metadata.namespace%3Dsel')).json();
  assert.equal(all.items.length, 3);
});

test('metadata.name and metadata.namespace field selectors: across namespaces, paged, at a past resourceVersion, contradictory, watch initial state', async () => {
  for (const ns of ['byname-a', 'byname-b']) await s.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } });
  await s.request('POST', '/api/v1/namespaces/byname-a/configmaps', { body: cm('bn-x', { v: '1' }) });
  await s.request('POST', '/api/v1/namespaces/byname-b/configmaps', { body: cm('bn-x', { v: '1' }) });
  await s.request('POST', '/api/v1/namespaces/byname-a/configmaps', { body: cm('bn-y') });
  const keys = (list: any) => list.items.map((i: any) => `${i.metadata.namespace}/${i.metadata.name}`);
  const get = async (path: string) => {
    const r = await s.request('GET', path);
    assert.equal(r.status, 200, r.text);
    return r.json();
  };
  assert.deepEqual(keys(await get('/api/v1/configmaps?fieldSelector=metadata.name%3Dbn-x')), ['byname-a/bn-x', 'byname-b/bn-x']);
  assert.deepEqual(keys(await get('/api/v1/namespaces/byname-a/configmaps?fieldSelector=metadata.name%3Dbn-x')), ['byname-a/bn-x']);
  assert.deepEqual(keys(await get('/api/v1/configmaps?fieldSelector=metadata.name%3Dbn-x,metadata.namespace%3Dbyname-b')), ['byname-b/bn-x']);
  assert.deepEqual(keys(await get('/api/v1/configmaps?fieldSelector=metadata.namespace%3Dbyname-a,metadata.name!%3Dbn-x')), ['byname-a/bn-y']);
  // The URL's namespace wins over a selector naming another: nothing matches both.
  assert.deepEqual(keys(await get('/api/v1/namespaces/byname-a/configmaps?fieldSelector=metadata.namespace%3Dbyname-b')), []);
  const none = await get('/api/v1/configmaps?fieldSelector=metadata.name%3Dbn-x,metadata.name%3Dbn-y');
  assert.deepEqual(keys(none), []);
  assert.ok(Number(none.metadata.resourceVersion) > 0);
  assert.deepEqual(keys(await get('/api/v1/namespaces?fieldSelector=metadata.name%3Dbyname-a')), ['undefined/byname-a']);
  // Paged: one object per page, the same snapshot, no remainingItemCount with a selector.
  const p1 = await get('/api/v1/configmaps?fieldSelector=metadata.name%3Dbn-x&limit=1');
  assert.deepEqual(keys(p1), ['byname-a/bn-x']);
  assert.ok(p1.metadata.continue);
  assert.equal(p1.metadata.remainingItemCount, undefined);
  const p2 = await get(`/api/v1/configmaps?fieldSelector=metadata.name%3Dbn-x&limit=1&continue=${encodeURIComponent(p1.metadata.continue)}`);
  assert.deepEqual(keys(p2), ['byname-b/bn-x']);
  assert.equal(p2.metadata.resourceVersion, p1.metadata.resourceVersion);
  // At a past resourceVersion: read from the log as it was then.
  const rv = p1.metadata.resourceVersion;
  await s.request('DELETE', '/api/v1/namespaces/byname-b/configmaps/bn-x');
  await s.request('PATCH', '/api/v1/namespaces/byname-a/configmaps/bn-x', { raw: '{"data":{"v":"2"}}', headers: { 'content-type': 'application/merge-patch+json' } });
  const then = await get(`/api/v1/configmaps?fieldSelector=metadata.name%3Dbn-x&resourceVersion=${rv}&resourceVersionMatch=Exact`);
  assert.deepEqual(keys(then), ['byname-a/bn-x', 'byname-b/bn-x']);
  assert.deepEqual(then.items.map((i: any) => i.data.v), ['1', '1']);
  const thenInA = await get(`/api/v1/namespaces/byname-a/configmaps?fieldSelector=metadata.name%3Dbn-x&resourceVersion=${rv}&resourceVersionMatch=Exact`);
  assert.deepEqual(thenInA.items.map((i: any) => i.data.v), ['1']);
  const now = await get('/api/v1/configmaps?fieldSelector=metadata.name%3Dbn-x');
  assert.deepEqual(keys(now), ['byname-a/bn-x']);
  assert.equal(now.items[0].data.v, '2');
  // A watch without a resourceVersion starts with the current objects of that name.
  const initial = await collectWatch('/api/v1/configmaps?watch=1&fieldSelector=metadata.name%3Dbn-x', 1);
  assert.deepEqual(initial.map((e) => `${e.type} ${e.object.metadata.namespace}/${e.object.metadata.name} ${e.object.data.v}`), ['ADDED byname-a/bn-x 2']);
});

test('label selectors across namespaces: paged, at a past resourceVersion, negative requirements, watch initial state', async () => {
  for (const ns of ['lab-a', 'lab-b']) await s.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } });
  await s.request('POST', '/api/v1/namespaces/lab-a/configmaps', { body: cm('one', { v: '1' }, { 'lab.example.com/tier': 'web', shard: '1' }) });
  await s.request('POST', '/api/v1/namespaces/lab-a/configmaps', { body: cm('two', {}, { 'lab.example.com/tier': 'db' }) });
  await s.request('POST', '/api/v1/namespaces/lab-b/configmaps', { body: cm('one', {}, { 'lab.example.com/tier': 'web' }) });
  await s.request('POST', '/api/v1/namespaces/lab-b/configmaps', { body: cm('three', {}, { shard: '2' }) });
  const keys = (list: any) => list.items.map((i: any) => `${i.metadata.namespace}/${i.metadata.name}`);
  const get = async (path: string) => {
    const r = await s.request('GET', path);
    assert.equal(r.status, 200, r.text);
    return r.json();
  };
  const L = '/api/v1/configmaps?labelSelector=';
  assert.deepEqual(keys(await get(`${L}lab.example.com%2Ftier%3Dweb`)), ['lab-a/one', 'lab-b/one']);
  assert.deepEqual(keys(await get(`${L}lab.example.com%2Ftier+in+(web,db)`)), ['lab-a/one', 'lab-a/two', 'lab-b/one']);
  assert.deepEqual(keys(await get(`${L}lab.example.com%2Ftier,shard`)), ['lab-a/one']);
  assert.deepEqual(keys(await get(`${L}shard,lab.example.com%2Ftier!%3Dweb`)), ['lab-b/three']);
  assert.deepEqual(keys(await get(`${L}shard,!lab.example.com%2Ftier`)), ['lab-b/three']);
  assert.deepEqual(keys(await get(`${L}shard%3E1`)), ['lab-b/three']);
  assert.deepEqual(keys(await get(`${L}lab.example.com%2Ftier%3Dweb&fieldSelector=metadata.namespace%3Dlab-b`)), ['lab-b/one']);
  const p1 = await get(`${L}lab.example.com%2Ftier&limit=2`);
  assert.deepEqual(keys(p1), ['lab-a/one', 'lab-a/two']);
  assert.equal(p1.metadata.remainingItemCount, undefined);
  const p2 = await get(`${L}lab.example.com%2Ftier&limit=2&continue=${encodeURIComponent(p1.metadata.continue)}`);
  assert.deepEqual(keys(p2), ['lab-b/one']);
  assert.equal(p2.metadata.continue, undefined);
  // A label changed since: the list at the older resourceVersion still sees it as it was.
  const rv = p1.metadata.resourceVersion;
  await s.request('PATCH', '/api/v1/namespaces/lab-a/configmaps/one', { raw: '{"metadata":{"labels":{"lab.example.com/tier":"db"}}}', headers: { 'content-type': 'application/merge-patch+json' } });
  assert.deepEqual(keys(await get(`${L}lab.example.com%2Ftier%3Dweb&resourceVersion=${rv}&resourceVersionMatch=Exact`)), ['lab-a/one', 'lab-b/one']);
  assert.deepEqual(keys(await get(`${L}lab.example.com%2Ftier%3Dweb`)), ['lab-b/one']);
  const initial = await collectWatch(`${L}lab.example.com%2Ftier%3Ddb&watch=1`, 2);
  assert.deepEqual(initial.map((e) => `${e.type} ${e.object.metadata.namespace}/${e.object.metadata.name}`), ['ADDED lab-a/one', 'ADDED lab-a/two']);
});

test('pods by spec.nodeName (as a kubelet lists them), spec.host, status.phase, an empty value for unscheduled ones', async () => {
  await s.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'nodes-a' } } });
  await s.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'nodes-b' } } });
  const pod = (ns: string, name: string, nodeName?: string) =>
    s.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app: name } }, spec: { ...(nodeName ? { nodeName } : {}), containers: [{ name: 'c', image: 'busybox' }] } } });
  for (const [ns, name, node] of [['nodes-a', 'p1', 'node-1'], ['nodes-a', 'p2', 'node-2'], ['nodes-b', 'p3', 'node-1'], ['nodes-b', 'p4', undefined]] as const) {
    assert.equal((await pod(ns, name, node)).status, 201);
  }
  const keys = async (q: string) => {
    const r = await s.request('GET', `/api/v1/pods?${q}`);
    assert.equal(r.status, 200, r.text);
    return r.json().items.map((i: any) => `${i.metadata.namespace}/${i.metadata.name}`).filter((k: string) => k.startsWith('nodes-'));
  };
  assert.deepEqual(await keys('fieldSelector=spec.nodeName%3Dnode-1'), ['nodes-a/p1', 'nodes-b/p3']);
  assert.deepEqual(await keys('fieldSelector=spec.host%3Dnode-2'), ['nodes-a/p2']);
  assert.deepEqual(await keys('fieldSelector=spec.nodeName%3D'), ['nodes-b/p4']);
  assert.deepEqual(await keys('fieldSelector=spec.nodeName%3Dnode-1,metadata.namespace%3Dnodes-b'), ['nodes-b/p3']);
  assert.deepEqual(await keys('fieldSelector=spec.nodeName%3Dnode-1&labelSelector=app%3Dp1'), ['nodes-a/p1']);
  assert.deepEqual(await keys('fieldSelector=spec.nodeName!%3Dnode-1'), ['nodes-a/p2', 'nodes-b/p4']);
  assert.deepEqual(await keys('fieldSelector=spec.nodeName%3Dnode-3'), []);
  assert.deepEqual(await keys('fieldSelector=status.phase%3DPending,spec.nodeName%3Dnode-2'), ['nodes-a/p2']);
  const initial = await collectWatch('/api/v1/pods?watch=1&fieldSelector=spec.nodeName%3Dnode-2', 1);
  assert.deepEqual(initial.map((e) => `${e.type} ${e.object.metadata.namespace}/${e.object.metadata.name}`), ['ADDED nodes-a/p2']);
});

test('chunked list: limit/continue, remainingItemCount, tampered token → 400', async () => {
  await s.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'pages' } } });
  for (let i = 0; i < 7; i++) await s.request('POST', '/api/v1/namespaces/pages/configmaps', { body: cm(`p${i}`) });
  const p1 = (await s.request('GET', '/api/v1/namespaces/pages/configmaps?limit=3')).json();
  assert.equal(p1.items.length, 3);
  assert.equal(p1.metadata.remainingItemCount, 4);
  assert.ok(p1.metadata.continue);
  const p2 = (await s.request('GET', `/api/v1/namespaces/pages/configmaps?limit=3&continue=${encodeURIComponent(p1.metadata.continue)}`)).json();
  assert.deepEqual(p2.items.map((i: any) => i.metadata.name), ['p3', 'p4', 'p5']);
  const p3 = (await s.request('GET', `/api/v1/namespaces/pages/configmaps?limit=3&continue=${encodeURIComponent(p2.metadata.continue)}`)).json();
  assert.deepEqual(p3.items.map((i: any) => i.metadata.name), ['p6']);
  assert.equal(p3.metadata.continue, undefined);
  // One character of the MAC changed, away from its end: the last character of base64 also
  // carries padding bits a decoder ignores, so changing it alone may change nothing.
  const token: string = p1.metadata.continue;
  const at = token.length - 5;
  const bad = token.slice(0, at) + (token[at] === 'A' ? 'B' : 'A') + token.slice(at + 1);
  assertStatus(await s.request('GET', `/api/v1/namespaces/pages/configmaps?limit=3&continue=${encodeURIComponent(bad)}`), 400, 'BadRequest');
});

test('patch types: json, merge, strategic', async () => {
  await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: deployment('patchme') });
  const p = (type: string, body: unknown) =>
    s.request('PATCH', '/apis/apps/v1/namespaces/default/deployments/patchme', { raw: JSON.stringify(body), headers: { 'content-type': `application/${type}` } });
  let r = await p('json-patch+json', [{ op: 'replace', path: '/spec/replicas', value: 4 }]);
  assert.equal(r.status, 200);
  assert.equal(r.json().spec.replicas, 4);
  r = await p('merge-patch+json', { metadata: { labels: { a: 'b' } } });
  assert.equal(r.json().metadata.labels.a, 'b');
  r = await p('strategic-merge-patch+json', { spec: { template: { spec: { containers: [{ name: 'sidecar', image: 'busybox' }] } } } });
  assert.deepEqual(r.json().spec.template.spec.containers.map((c: any) => c.name), ['sidecar', 'c']);
  r = await p('strategic-merge-patch+json', { spec: { template: { spec: { containers: [{ name: 'sidecar', $patch: 'delete' }] } } } });
  assert.deepEqual(r.json().spec.template.spec.containers.map((c: any) => c.name), ['c']);
  // A failing JSON patch test op changes nothing.
  const before = (await s.request('GET', '/apis/apps/v1/namespaces/default/deployments/patchme')).json();
  r = await p('json-patch+json', [{ op: 'test', path: '/spec/replicas', value: 99 }, { op: 'replace', path: '/spec/replicas', value: 1 }]);
  assert.ok(r.status === 422 || r.status === 400, `got ${r.status}`);
  const afterObj = (await s.request('GET', '/apis/apps/v1/namespaces/default/deployments/patchme')).json();
  assert.equal(afterObj.metadata.resourceVersion, before.metadata.resourceVersion);
  assertStatus(await p('apply-patch+yaml-bogus', {}), 415, 'UnsupportedMediaType');
  assertStatus(await s.request('PATCH', '/apis/apps/v1/namespaces/default/deployments/missing', { raw: '{}', headers: { 'content-type': 'application/merge-patch+json' } }), 404, 'NotFound');
});

test('unknown paths and verbs', async () => {
  assertStatus(await s.request('GET', '/api/v1/namespaces/default/widgets'), 404, 'NotFound');
  assertStatus(await s.request('GET', '/apis/nope.example.com/v1/things'), 404, 'NotFound');
  assertStatus(await s.request('POST', '/api/v1/configmaps', { body: cm('nowhere') }), 405, 'MethodNotAllowed');
});

test('anonymous requests: health and version allowed, resources forbidden', async () => {
  assert.equal((await s.request('GET', '/readyz', { anonymous: true })).status, 200);
  assert.equal((await s.request('GET', '/version', { anonymous: true })).json().major, '1');
  const st = assertStatus(await s.request('GET', '/api/v1/namespaces', { anonymous: true }), 403, 'Forbidden');
  assert.match(st.message, /User "system:anonymous" cannot list resource "namespaces"/);
});

test('health endpoints: verbose, exclude, single checks', async () => {
  assert.equal((await s.request('GET', '/livez')).text, 'ok');
  const v = await s.request('GET', '/readyz?verbose');
  assert.match(v.text, /\[\+\]ping ok/);
  assert.match(v.text, /readyz check passed/);
  const ex = await s.request('GET', '/livez?verbose&exclude=sqlite');
  assert.match(ex.text, /\[\+\]sqlite excluded: ok/);
  assert.equal((await s.request('GET', '/livez/ping')).text, 'ok');
  assert.equal((await s.request('GET', '/readyz/nope')).status, 404);
});

test('dry run writes nothing and does not move the resourceVersion', async () => {
  const rv = (await s.request('GET', '/api/v1/namespaces/default/configmaps')).json().metadata.resourceVersion;
  const r = await s.request('POST', '/api/v1/namespaces/default/configmaps?dryRun=All', { body: cm('dry') });
  assert.equal(r.status, 201);
  assert.equal(r.json().metadata.name, 'dry');
  assertStatus(await s.request('GET', '/api/v1/namespaces/default/configmaps/dry'), 404, 'NotFound');
  assertStatus(await s.request('POST', '/api/v1/namespaces/default/configmaps?dryRun=Bogus', { body: cm('dry') }), 400, 'BadRequest');
  assert.equal((await s.request('GET', '/api/v1/namespaces/default/configmaps')).json().metadata.resourceVersion, rv);
});

async function waitFor(cond: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail('condition not met in time');
}

/** Opens a watch and collects its events until `count` arrived (or the stream ends). */
async function collectWatch(path: string, count: number): Promise<any[]> {
  return (await s.watch(path, (events) => events.length >= count)).events;
}

test('watch from a resourceVersion replays the log; selectors turn changes into ADDED/DELETED', async () => {
  await s.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'w1' } } });
  const rv = (await s.request('GET', '/api/v1/namespaces/w1/configmaps')).json().metadata.resourceVersion;
  await s.request('POST', '/api/v1/namespaces/w1/configmaps', { body: cm('a', {}, { show: 'yes' }) });
  await s.request('POST', '/api/v1/namespaces/w1/configmaps', { body: cm('b', {}, { show: 'no' }) });
  // b starts matching, then a stops matching, then b is deleted.
  await s.request('PATCH', '/api/v1/namespaces/w1/configmaps/b', { raw: '{"metadata":{"labels":{"show":"yes"}}}', headers: { 'content-type': 'application/merge-patch+json' } });
  await s.request('PATCH', '/api/v1/namespaces/w1/configmaps/a', { raw: '{"metadata":{"labels":{"show":"no"}}}', headers: { 'content-type': 'application/merge-patch+json' } });
  await s.request('DELETE', '/api/v1/namespaces/w1/configmaps/b');
  const events = await collectWatch(`/api/v1/namespaces/w1/configmaps?watch=1&resourceVersion=${rv}&labelSelector=show%3Dyes`, 4);
  assert.deepEqual(events.map((e) => `${e.type} ${e.object.metadata.name}`), ['ADDED a', 'ADDED b', 'DELETED a', 'DELETED b']);
  const rvs = events.map((e) => Number(e.object.metadata.resourceVersion));
  assert.deepEqual([...rvs].sort((x, y) => x - y), rvs, 'events arrive in resourceVersion order');
  assert.equal(events[0].object.kind, 'ConfigMap');

  // Without a resourceVersion: synthetic ADDED for the current state.
  const initial = await collectWatch('/api/v1/namespaces/w1/configmaps?watch=true', 1);
  assert.deepEqual(initial.map((e) => `${e.type} ${e.object.metadata.name}`), ['ADDED a']);
  // A watch on one object by name.
  const one = await collectWatch('/api/v1/namespaces?watch=1&fieldSelector=metadata.name%3Dw1', 1);
  assert.equal(one[0].object.metadata.name, 'w1');
});

test('discovery over HTTP: legacy, aggregated v2 with ETag/304, OpenAPI v3 by hash, version', async () => {
  const legacy = (await s.request('GET', '/apis')).json();
  assert.equal(legacy.kind, 'APIGroupList');
  assert.ok(legacy.groups.some((g: any) => g.name === 'apps' && g.preferredVersion.version === 'v1'));
  const accept = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';
  const agg = await s.request('GET', '/apis', { headers: { accept } });
  assert.equal(agg.status, 200);
  assert.equal(agg.headers['content-type'], 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
  const doc = agg.json();
  assert.equal(doc.kind, 'APIGroupDiscoveryList');
  const apps = doc.items.find((i: any) => i.metadata.name === 'apps');
  const deployments = apps.versions[0].resources.find((r: any) => r.resource === 'deployments');
  assert.equal(deployments.scope, 'Namespaced');
  assert.deepEqual(deployments.subresources.map((x: any) => x.subresource).sort(), ['scale', 'status']);
  const etag = String(agg.headers.etag);
  assert.ok(etag);
  const again = await s.request('GET', '/apis', { headers: { accept, 'if-none-match': etag } });
  assert.equal(again.status, 304);
  const core = (await s.request('GET', '/api', { headers: { accept } })).json();
  assert.equal(core.items.length, 1);
  assert.ok(core.items[0].versions[0].resources.some((r: any) => r.resource === 'pods'));
  assert.equal((await s.request('GET', '/api/v1')).json().kind, 'APIResourceList');
  assertStatus(await s.request('GET', '/apis/apps/v9'), 404, 'NotFound');

  const index = (await s.request('GET', '/openapi/v3')).json();
  const url = index.paths['apis/apps/v1'].serverRelativeURL as string;
  assert.match(url, /^\/openapi\/v3\/apis\/apps\/v1\?hash=[0-9A-F]+$/);
  const v3 = await s.request('GET', url);
  assert.equal(v3.status, 200);
  assert.match(String(v3.headers['cache-control']), /immutable/);
  assert.ok(v3.json().components.schemas['io.k8s.api.apps.v1.Deployment']);
  const v2 = (await s.request('GET', '/openapi/v2', { headers: { accept: 'application/json' } })).json();
  assert.equal(v2.swagger, '2.0');

  const version = (await s.request('GET', '/version')).json();
  assert.match(version.gitVersion, /^v1\.\d+\.\d+$/);
  assert.equal(`v${version.major}.${version.minor}.0`, version.gitVersion);
});

test('pretty output and HEAD', async () => {
  const r = await s.request('GET', '/api/v1/namespaces/default?pretty=true');
  assert.match(r.text, /^\{\n {2}"kind": "Namespace",/);
});

test('indented JSON as kube-apiserver decides it: pretty parameter, Accept pretty=1, or a curl/Wget/browser User-Agent', async () => {
  const INDENTED = /^\{\n {2}"(kind|apiVersion)": /;
  const get = async (path: string, headers: Record<string, string> = {}) => (await s.request('GET', path, { headers })).text;
  const ns = '/api/v1/namespaces/default';
  assert.doesNotMatch(await get(ns), INDENTED);
  assert.doesNotMatch(await get(ns, { 'user-agent': 'kubectl/v1.33.0 (linux/amd64)' }), INDENTED);
  // Go's ParseBool decides the parameter: 1, t, True… indent; anything else does not.
  for (const v of ['1', 't', 'True']) assert.match(await get(`${ns}?pretty=${v}`), INDENTED, v);
  for (const v of ['0', 'f', 'yes']) assert.doesNotMatch(await get(`${ns}?pretty=${v}`), INDENTED, v);
  assert.match(await get(ns, { accept: 'application/json;pretty=1' }), INDENTED);
  // curl, Wget and browsers get indented objects, lists, errors and discovery, unless they say pretty=false.
  const curl = { 'user-agent': 'curl/8.5.0' };
  assert.match(await get(ns, curl), INDENTED);
  assert.match(await get(`${ns}?pretty=false`, { 'user-agent': 'curl/8.5.0', accept: 'application/json;pretty=1' }), INDENTED);
  assert.doesNotMatch(await get(`${ns}?pretty=false`, curl), INDENTED);
  assert.match(await get('/api/v1/namespaces', { 'user-agent': 'Wget/1.21' }), INDENTED);
  assert.match(await get('/api/v1/namespaces/missing', { 'user-agent': 'Mozilla/5.0 (X11)' }), INDENTED);
  assert.match(await get('/api/v1', curl), INDENTED);
  assert.match(await get('/api', curl), INDENTED);
  const listed = JSON.parse(await get('/api/v1/namespaces', curl));
  assert.deepEqual(listed, JSON.parse(await get('/api/v1/namespaces')));
});

test('racing writers: concurrent patches all land; concurrent PUTs at one resourceVersion have one winner', async () => {
  await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: cm('race', {}) });
  const patches = await Promise.all(
    Array.from({ length: 30 }, (_, i) =>
      s.request('PATCH', '/api/v1/namespaces/default/configmaps/race', { raw: JSON.stringify({ data: { [`k${i}`]: String(i) } }), headers: { 'content-type': 'application/merge-patch+json' } }),
    ),
  );
  assert.ok(patches.every((p) => p.status === 200));
  const after = (await s.request('GET', '/api/v1/namespaces/default/configmaps/race')).json();
  assert.equal(Object.keys(after.data).length, 30);
  const rvs = new Set(patches.map((p) => p.json().metadata.resourceVersion));
  assert.equal(rvs.size, 30, 'each patch is its own version');

  const puts = await Promise.all(
    Array.from({ length: 10 }, (_, i) => s.request('PUT', '/api/v1/namespaces/default/configmaps/race', { body: { ...after, data: { only: String(i) } } })),
  );
  assert.equal(puts.filter((p) => p.status === 200).length, 1);
  assert.equal(puts.filter((p) => p.status === 409).length, 9);
});
