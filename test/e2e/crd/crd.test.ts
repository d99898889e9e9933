// CustomResourceDefinitions end to end over HTTP: CRD validation and status, serving within the
// create's round trip, custom object CRUD with schema validation, CEL rules, pruning, defaulting,
// status and scale subresources, printer columns, versions, selectable fields, watch, SSA,
// dry run, finalizers, deletion and restart.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import YAML from 'yaml';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

let s: TestServer;
before(async () => {
  s = await startTestServer();
  const r = await s.request('POST', CRDS, { body: widgetCrd() });
  assert.equal(r.status, 201, r.text);
});
after(async () => {
  await s.stop();
});

const GROUP = 'stable.hearth.test';

/** A namespaced Widget CRD: v1beta1 (served, deprecated) and v1 (storage), status and scale, columns, CEL. */
function widgetCrd(extra: { plural?: string; kind?: string } = {}) {
  const plural = extra.plural ?? 'widgets';
  const kind = extra.kind ?? 'Widget';
  const schema = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        required: ['size'],
        'x-kubernetes-validations': [
          { rule: 'self.minReplicas <= self.replicas', message: 'minReplicas must not exceed replicas', fieldPath: '.minReplicas' },
          { rule: '!has(oldSelf.color) || self.color == oldSelf.color', message: 'color is immutable' },
        ],
        properties: {
          size: { type: 'string', enum: ['small', 'medium', 'large'] },
          color: { type: 'string', pattern: '^[a-z]+$' },
          replicas: { type: 'integer', minimum: 0, maximum: 100, default: 1 },
          minReplicas: { type: 'integer', default: 0 },
          port: { 'x-kubernetes-int-or-string': true },
          ports: {
            type: 'array',
            'x-kubernetes-list-type': 'map',
            'x-kubernetes-list-map-keys': ['name'],
            items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, port: { type: 'integer' } } },
          },
          extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        },
      },
      status: {
        type: 'object',
        properties: { replicas: { type: 'integer' }, selector: { type: 'string' }, phase: { type: 'string' } },
      },
    },
  };
  const columns = [
    { name: 'Size', type: 'string', jsonPath: '.spec.size' },
    { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
    { name: 'Phase', type: 'string', jsonPath: '.status.phase', priority: 1 },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ];
  const version = (name: string, storage: boolean, more: object = {}) => ({
    name,
    served: true,
    storage,
    schema: { openAPIV3Schema: schema },
    subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' } },
    additionalPrinterColumns: columns,
    selectableFields: [{ jsonPath: '.spec.size' }],
    ...more,
  });
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List`, shortNames: [`${plural.slice(0, 2)}x`], categories: ['all', 'hearth'] },
      versions: [version('v1beta1', false, { deprecated: true }), version('v1', true)],
    },
  };
}

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const W = `/apis/${GROUP}/v1/namespaces/default/widgets`;
const widget = (name: string, spec: object = { size: 'small' }, apiVersion = `${GROUP}/v1`) => ({ apiVersion, kind: 'Widget', metadata: { name }, spec });
/** Warning header values, unquoted (node joins repeated headers with ", "). */
const warnings = (r: { headers: Record<string, unknown> }): string[] => {
  const h = r.headers.warning;
  if (h === undefined) return [];
  return [...String(h).matchAll(/299 - ("(?:[^"\\]|\\.)*")/g)].map((m) => JSON.parse(m[1]));
};


test('a created CRD is established with accepted names and stored versions, and served by the next request', async () => {
  const crd = (await s.request('GET', `${CRDS}/widgets.${GROUP}`)).json();
  const cond = Object.fromEntries(crd.status.conditions.map((c: any) => [c.type, c.status]));
  assert.equal(cond.NamesAccepted, 'True');
  assert.equal(cond.Established, 'True');
  assert.equal(crd.status.acceptedNames.kind, 'Widget');
  assert.deepEqual(crd.status.storedVersions, ['v1']);
  assert.equal(crd.metadata.generation, 1);

  const rl = (await s.request('GET', `/apis/${GROUP}/v1`)).json();
  const res = rl.resources.find((r: any) => r.name === 'widgets');
  assert.equal(res.kind, 'Widget');
  assert.equal(res.singularName, 'widget');
  assert.equal(res.namespaced, true);
  assert.deepEqual(res.shortNames, ['wix']);
  assert.deepEqual(res.categories, ['all', 'hearth']);
  assert.ok(rl.resources.some((r: any) => r.name === 'widgets/status'));
  assert.ok(rl.resources.some((r: any) => r.name === 'widgets/scale'));
  const groups = (await s.request('GET', '/apis')).json();
  const g = groups.groups.find((x: any) => x.name === GROUP);
  assert.deepEqual(g.versions.map((v: any) => v.version), ['v1', 'v1beta1']);
  assert.equal(g.preferredVersion.version, 'v1');

  // Created and used in one breath.
  const crd2 = widgetCrd({ plural: 'gadgets', kind: 'Gadget' });
  assert.equal((await s.request('POST', CRDS, { body: crd2 })).status, 201);
  const c = await s.request('POST', `/apis/${GROUP}/v1/namespaces/default/gadgets`, { body: { apiVersion: `${GROUP}/v1`, kind: 'Gadget', metadata: { name: 'g1' }, spec: { size: 'large' } } });
  assert.equal(c.status, 201, c.text);
});

test('invalid CRDs are refused with one cause per violation', async () => {
  const bad = widgetCrd({ plural: 'bads', kind: 'Bad' });
  bad.metadata.name = 'wrong.stable.hearth.test';
  (bad.spec.versions[1].schema.openAPIV3Schema.properties.spec.properties as any).size = { enum: ['x'] };
  const r = await s.request('POST', CRDS, { body: bad });
  assert.equal(r.status, 422, r.text);
  const st = r.json();
  assert.equal(st.reason, 'Invalid');
  const fields = st.details.causes.map((c: any) => c.field);
  assert.ok(fields.includes('metadata.name'), fields.join());
  assert.ok(fields.some((f: string) => f.includes('properties[size].type')), fields.join());
  // Nothing was stored.
  assert.equal((await s.request('GET', `${CRDS}/wrong.stable.hearth.test`)).status, 404);
});

test('custom objects: create with defaults, validation errors with field paths, CEL rules, update and delete', async () => {
  const c = await s.request('POST', W, { body: widget('w1', { size: 'small', color: 'red' }) });
  assert.equal(c.status, 201, c.text);
  const o = c.json();
  assert.equal(o.spec.replicas, 1);
  assert.equal(o.spec.minReplicas, 0);
  assert.equal(o.metadata.generation, 1);
  assert.equal(o.apiVersion, `${GROUP}/v1`);

  const bad = await s.request('POST', W, { body: widget('w-bad', { size: 'huge', replicas: 'x', color: 'Red1' }) });
  assert.equal(bad.status, 422, bad.text);
  const causes = bad.json().details.causes.map((x: any) => `${x.field}: ${x.message}`);
  assert.ok(causes.some((m: string) => m.startsWith('spec.size: Unsupported value: "huge"')), causes.join('\n'));
  assert.ok(causes.some((m: string) => m.startsWith('spec.replicas: Invalid value: "string"')), causes.join('\n'));
  assert.ok(causes.some((m: string) => m.startsWith('spec.color: Invalid value: "Red1"')), causes.join('\n'));
  // A shape error keeps the CEL rules from running, as kube reports.
  assert.ok(causes.some((m: string) => m.startsWith('<nil>: Invalid value: null: some validation rules were not checked')), causes.join('\n'));

  const cel = await s.request('POST', W, { body: widget('w-cel', { size: 'small', replicas: 1, minReplicas: 3 }) });
  assert.equal(cel.status, 422, cel.text);
  const celCause = cel.json().details.causes[0];
  assert.equal(celCause.field, 'spec.minReplicas');
  assert.match(celCause.message, /minReplicas must not exceed replicas/);

  // Transition rule: color may not change once set.
  const cur = (await s.request('GET', `${W}/w1`)).json();
  const upd = await s.request('PUT', `${W}/w1`, { body: { ...cur, spec: { ...cur.spec, color: 'blue' } } });
  assert.equal(upd.status, 422, upd.text);
  assert.match(upd.text, /color is immutable/);
  const ok = await s.request('PUT', `${W}/w1`, { body: { ...cur, spec: { ...cur.spec, size: 'large' } } });
  assert.equal(ok.status, 200, ok.text);
  assert.equal(ok.json().metadata.generation, 2);

  const del = await s.request('DELETE', `${W}/w1`);
  assert.equal(del.status, 200);
  assert.equal((await s.request('GET', `${W}/w1`)).status, 404);
});

test('unknown fields are pruned: Warn by default, Strict refuses, preserve-unknown-fields keeps them', async () => {
  const body = { ...widget('w-prune', { size: 'small', bogus: 1, extra: { anything: { goes: true } } }), junk: 'x' };
  const r = await s.request('POST', W, { body });
  assert.equal(r.status, 201, r.text);
  const o = r.json();
  assert.equal(o.spec.bogus, undefined);
  assert.equal(o.junk, undefined);
  assert.deepEqual(o.spec.extra, { anything: { goes: true } });
  const w = warnings(r).join('\n');
  assert.match(w, /unknown field "spec.bogus"/);
  assert.match(w, /unknown field "junk"/);
  const strict = await s.request('POST', `${W}?fieldValidation=Strict`, { body: { ...body, metadata: { name: 'w-strict' } } });
  assert.equal(strict.status, 400, strict.text);
  assert.match(strict.json().message, /strict decoding error: .*unknown field "spec.bogus"/);
  assert.equal((await s.request('GET', `${W}/w-strict`)).status, 404);
});

test('status subresource: the main resource ignores status, /status changes only status; scale reads and writes the CRD paths', async () => {
  const c = await s.request('POST', W, { body: { ...widget('w-st', { size: 'small', replicas: 2 }), status: { phase: 'ignored' } } });
  assert.equal(c.status, 201, c.text);
  assert.equal(c.json().status, undefined);
  const cur = c.json();
  const st = await s.request('PUT', `${W}/w-st/status`, { body: { ...cur, spec: { size: 'large' }, status: { phase: 'Ready', replicas: 2, selector: 'app=w' } } });
  assert.equal(st.status, 200, st.text);
  assert.equal(st.json().status.phase, 'Ready');
  assert.equal(st.json().spec.size, 'small');
  assert.equal(st.json().metadata.generation, 1);

  const scale = await s.request('GET', `${W}/w-st/scale`);
  assert.equal(scale.status, 200, scale.text);
  assert.deepEqual({ spec: scale.json().spec, status: scale.json().status, kind: scale.json().kind }, { spec: { replicas: 2 }, status: { replicas: 2, selector: 'app=w' }, kind: 'Scale' });
  const put = await s.request('PUT', `${W}/w-st/scale`, { body: { ...scale.json(), spec: { replicas: 5 } } });
  assert.equal(put.status, 200, put.text);
  const after = (await s.request('GET', `${W}/w-st`)).json();
  assert.equal(after.spec.replicas, 5);
  assert.equal(after.metadata.generation, 2);
  const patch = await s.request('PATCH', `${W}/w-st/scale`, { raw: JSON.stringify({ spec: { replicas: 7 } }), headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(patch.status, 200, patch.text);
  assert.equal((await s.request('GET', `${W}/w-st`)).json().spec.replicas, 7);
});

test('Table output uses the additionalPrinterColumns', async () => {
  await s.request('POST', W, { body: widget('w-table', { size: 'medium', replicas: 3 }) });
  const r = await s.request('GET', `${W}/w-table`, { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } });
  assert.equal(r.status, 200, r.text);
  const t = r.json();
  assert.deepEqual(t.columnDefinitions.map((c: any) => [c.name, c.type, c.priority]), [['Name', 'string', 0], ['Size', 'string', 0], ['Replicas', 'integer', 0], ['Phase', 'string', 1], ['Age', 'date', 0]]);
  assert.deepEqual(t.rows[0].cells.slice(0, 4), ['w-table', 'medium', 3, null]);
});

test('versions: stored in the storage version, served in the requested one, deprecated versions warn', async () => {
  const V1B1 = `/apis/${GROUP}/v1beta1/namespaces/default/widgets`;
  const c = await s.request('POST', V1B1, { body: widget('w-ver', { size: 'small' }, `${GROUP}/v1beta1`) });
  assert.equal(c.status, 201, c.text);
  assert.equal(c.json().apiVersion, `${GROUP}/v1beta1`);
  assert.ok(warnings(c).some((w) => w.includes(`${GROUP}/v1beta1 Widget is deprecated; use ${GROUP}/v1 Widget`)), warnings(c).join());
  assert.equal((await s.request('GET', `${W}/w-ver`)).json().apiVersion, `${GROUP}/v1`);
  const l = (await s.request('GET', V1B1)).json();
  assert.equal(l.apiVersion, `${GROUP}/v1beta1`);
  assert.equal(l.kind, 'WidgetList');
  assert.ok(l.items.every((i: any) => i.apiVersion === `${GROUP}/v1beta1`));
  assert.equal(warnings(await s.request('GET', `${W}/w-ver`)).length, 0);
});

test('field selectors: metadata fields and selectableFields; others are refused', async () => {
  await s.request('POST', W, { body: widget('w-sel-l', { size: 'large' }) });
  const r = await s.request('GET', `${W}?fieldSelector=spec.size=large`);
  assert.equal(r.status, 200, r.text);
  assert.ok(r.json().items.length >= 1);
  assert.ok(r.json().items.every((i: any) => i.spec.size === 'large'));
  const byName = (await s.request('GET', `${W}?fieldSelector=metadata.name=w-sel-l`)).json();
  assert.deepEqual(byName.items.map((i: any) => i.metadata.name), ['w-sel-l']);
  const bad = await s.request('GET', `${W}?fieldSelector=spec.color=red`);
  assert.equal(bad.status, 400);
  assert.match(bad.json().message, /field label not supported: spec.color/);
});

test('patches: merge and JSON patch work, strategic merge patch is unsupported (415)', async () => {
  await s.request('POST', W, { body: widget('w-patch', { size: 'small', ports: [{ name: 'a', port: 1 }] }) });
  const m = await s.request('PATCH', `${W}/w-patch`, { raw: JSON.stringify({ spec: { size: 'large' } }), headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(m.status, 200, m.text);
  assert.equal(m.json().spec.size, 'large');
  const j = await s.request('PATCH', `${W}/w-patch`, { raw: JSON.stringify([{ op: 'replace', path: '/spec/replicas', value: 4 }]), headers: { 'content-type': 'application/json-patch+json' } });
  assert.equal(j.status, 200, j.text);
  assert.equal(j.json().spec.replicas, 4);
  const sm = await s.request('PATCH', `${W}/w-patch`, { raw: JSON.stringify({ spec: { size: 'small' } }), headers: { 'content-type': 'application/strategic-merge-patch+json' } });
  assert.equal(sm.status, 415);
  assert.equal(sm.json().reason, 'UnsupportedMediaType');
});

test('a custom object\'s metadata is decoded into ObjectMeta: values of the wrong type are a 400 on create, a 422 on "patch" for patches; nothing is written', async () => {
  const cannot = 'Widget in version "v1" cannot be handled as a Widget: json: cannot unmarshal number into Go struct field ObjectMeta.labels of type string';
  const created = await s.request('POST', W, { body: { ...widget('w-meta'), metadata: { name: 'w-meta', labels: { a: 5 } } } });
  assert.equal(created.status, 400, created.text);
  assert.equal(created.json().message, cannot);
  const fromYaml = await s.request('POST', W, { raw: YAML.stringify({ ...widget('w-meta'), metadata: { name: 'w-meta', annotations: { a: ['x'] } } }, { version: '1.1' }), headers: { 'content-type': 'application/yaml' } });
  assert.equal(fromYaml.json().message, 'Widget in version "v1" cannot be handled as a Widget: json: cannot unmarshal array into Go struct field ObjectMeta.annotations of type string');
  assert.equal((await s.request('POST', W, { body: widget('w-meta') })).status, 201);
  const rv = (await s.request('GET', `${W}/w-meta`)).json().metadata.resourceVersion;
  const patched = await s.request('PATCH', `${W}/w-meta`, { raw: '{"metadata":{"labels":{"a":5}}}', headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(patched.status, 422, patched.text);
  const cause = patched.json().details.causes[0];
  assert.equal(cause.field, 'patch');
  assert.ok(cause.message.endsWith('": json: cannot unmarshal number into Go struct field ObjectMeta.labels of type string'), cause.message);
  // The rest of a custom object is a map: its types are the schema's concern (422 on the field).
  const spec = await s.request('PATCH', `${W}/w-meta`, { raw: '{"spec":{"replicas":"x"}}', headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(spec.status, 422);
  assert.equal(spec.json().details.causes[0].field, 'spec.replicas');
  assert.equal((await s.request('GET', `${W}/w-meta`)).json().metadata.resourceVersion, rv);
});

test('server-side apply merges list-type=map items by key from the CRD schema and tracks managers', async () => {
  const apply = (body: object, manager: string, force = false) =>
    s.request('PATCH', `${W}/w-ssa?fieldManager=${manager}${force ? '&force=true' : ''}`, { raw: YAML.stringify(body, { version: '1.1' }), headers: { 'content-type': 'application/apply-patch+yaml' } });
  const a = await apply(widget('w-ssa', { size: 'small', ports: [{ name: 'http', port: 80 }] }), 'alice');
  assert.equal(a.status, 201, a.text);
  const b = await apply({ apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'w-ssa' }, spec: { size: 'small', ports: [{ name: 'grpc', port: 90 }] } }, 'bob');
  assert.equal(b.status, 200, b.text);
  assert.deepEqual(b.json().spec.ports.map((p: any) => p.name).sort(), ['grpc', 'http']);
  const conflict = await apply({ apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'w-ssa' }, spec: { size: 'large' } }, 'carol');
  assert.equal(conflict.status, 409, conflict.text);
  assert.ok(conflict.json().details.causes.some((c: any) => c.message === 'conflict with "alice"' && c.field === '.spec.size'), conflict.text);
  const managers = b.json().metadata.managedFields.map((m: any) => `${m.manager}:${m.operation}`).sort();
  assert.deepEqual(managers, ['alice:Apply', 'bob:Apply']);
  assert.match(JSON.stringify(b.json().metadata.managedFields), /k:\{\\"name\\":\\"grpc\\"\}/);
});

test('dry run writes nothing; finalizers hold deletion of custom objects', async () => {
  const rvBefore = (await s.request('GET', W)).json().metadata.resourceVersion;
  const d = await s.request('POST', `${W}?dryRun=All`, { body: widget('w-dry') });
  assert.equal(d.status, 201, d.text);
  assert.equal((await s.request('GET', `${W}/w-dry`)).status, 404);
  assert.equal((await s.request('GET', W)).json().metadata.resourceVersion, rvBefore);

  const f = await s.request('POST', W, { body: { ...widget('w-fin'), metadata: { name: 'w-fin', finalizers: ['hearth.test/hold'] } } });
  assert.equal(f.status, 201, f.text);
  const del = await s.request('DELETE', `${W}/w-fin`);
  assert.equal(del.status, 200);
  assert.ok(del.json().metadata.deletionTimestamp);
  const cur = (await s.request('GET', `${W}/w-fin`)).json();
  await s.request('PUT', `${W}/w-fin`, { body: { ...cur, metadata: { ...cur.metadata, finalizers: [] } } });
  assert.equal((await s.request('GET', `${W}/w-fin`)).status, 404);
});

test('chunked lists and watches work on custom resources', async () => {
  const NS = `/apis/${GROUP}/v1/namespaces/chunks/widgets`;
  await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'chunks' } } });
  for (let i = 0; i < 5; i++) assert.equal((await s.request('POST', NS, { body: widget(`c${i}`) })).status, 201);
  const p1 = (await s.request('GET', `${NS}?limit=2`)).json();
  assert.equal(p1.items.length, 2);
  assert.equal(p1.metadata.remainingItemCount, 3);
  const p2 = (await s.request('GET', `${NS}?limit=3&continue=${encodeURIComponent(p1.metadata.continue)}`)).json();
  assert.equal(p2.items.length, 3);
  assert.equal(p2.metadata.continue, '', 'the last page of an UnstructuredList has an empty continue');

  const done = s.watch(`${NS}?watch=1&resourceVersion=${p1.metadata.resourceVersion}`, (ev) => ev.length === 2);
  await new Promise((r) => setTimeout(r, 100));
  await s.request('POST', NS, { body: widget('c-new') });
  await s.request('DELETE', `${NS}/c0`);
  const { events } = await done;
  assert.deepEqual(events.map((e) => [e.type, e.object.metadata.name, e.object.apiVersion]), [['ADDED', 'c-new', `${GROUP}/v1`], ['DELETED', 'c0', `${GROUP}/v1`]]);
});

/** The path of the first object in v whose keys are not sorted, or undefined. */
function unsortedAt(v: unknown, path = ''): string | undefined {
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const at = unsortedAt(v[i], `${path}[${i}]`);
      if (at !== undefined) return at;
    }
    return undefined;
  }
  if (v === null || typeof v !== 'object') return undefined;
  const keys = Object.keys(v);
  if (keys.some((k, i) => i > 0 && keys[i - 1] > k)) return path || '.';
  for (const k of keys) {
    const at = unsortedAt((v as Record<string, unknown>)[k], `${path}.${k}`);
    if (at !== undefined) return at;
  }
  return undefined;
}

test('custom objects are written as kube writes a map: keys sorted at the top and all through metadata; lists as UnstructuredList', async () => {
  const NS = `/apis/${GROUP}/v1/namespaces/sorted/widgets`;
  await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'sorted' } } });
  const rv0 = (await s.request('GET', NS)).json().metadata.resourceVersion;
  const events = s.watch(`${NS}?watch=1&resourceVersion=${rv0}`, (ev) => ev.length === 2);
  await new Promise((r) => setTimeout(r, 100));
  /** The top level's and metadata's keys (FieldsV1 aside) are sorted. */
  const sortedAsKube = (o: any, text: string) => {
    assert.deepEqual(Object.keys(o), Object.keys(o).sort(), text);
    const meta = { ...o.metadata, managedFields: o.metadata.managedFields.map((e: any) => ({ ...e, fieldsV1: {} })) };
    assert.equal(unsortedAt(meta), undefined, text);
  };
  // Keys out of order, as a client may send them.
  const body = { spec: { size: 'small', extra: { zeta: 1, alpha: 2 } }, kind: 'Widget', metadata: { name: 'w', labels: { z: '1', a: '2' }, ownerReferences: [{ uid: 'u1', name: 'o', kind: 'K', controller: true, apiVersion: 'v1' }] }, apiVersion: `${GROUP}/v1` };
  const created = await s.request('POST', NS, { body });
  assert.equal(created.status, 201, created.text);
  assert.match(created.text, new RegExp(`^\\{"apiVersion":"${GROUP}/v1","kind":"Widget","metadata":\\{"creationTimestamp":"[^"]+","generation":1,"labels":\\{"a":"2","z":"1"\\},"managedFields":\\[\\{"apiVersion":`));
  sortedAsKube(created.json(), created.text);
  assert.deepEqual(Object.keys(created.json().metadata.ownerReferences[0]), ['apiVersion', 'controller', 'kind', 'name', 'uid']);
  // Below spec, the client's order stays (a choice: sorting every level costs too much).
  assert.deepEqual(Object.keys(created.json().spec.extra), ['zeta', 'alpha']);
  const patched = await s.request('PATCH', `${NS}/w`, { raw: JSON.stringify({ metadata: { annotations: { b: '1', a: '2' } }, spec: { color: 'red' } }), headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(patched.status, 200, patched.text);
  sortedAsKube(patched.json(), patched.text);
  const got = await s.request('GET', `${NS}/w`);
  sortedAsKube(got.json(), got.text);
  assert.deepEqual(Object.keys(got.json().metadata.annotations), ['a', 'b']);
  // An UnstructuredList: sorted keys, items after apiVersion, continue always there.
  const list = await s.request('GET', NS);
  assert.match(list.text, new RegExp(`^\\{"apiVersion":"${GROUP}/v1","items":\\[\\{"apiVersion":"${GROUP}/v1","kind":"Widget","metadata":\\{"annotations":`));
  assert.match(list.text, /\],"kind":"WidgetList","metadata":\{"continue":"","resourceVersion":"\d+"\}\}\n$/);
  for (const e of (await events).events) sortedAsKube(e.object, JSON.stringify(e.object));
  // A streaming list's closing BOOKMARK is a map too.
  const stream = await s.watch(`${NS}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`, (ev) => ev.some((e) => e.type === 'BOOKMARK'));
  const bm = stream.events.find((e) => e.type === 'BOOKMARK')!.object;
  assert.deepEqual([Object.keys(bm), Object.keys(bm.metadata)], [['apiVersion', 'kind', 'metadata'], ['annotations', 'resourceVersion']]);
  // PartialObjectMetadata is a struct: ObjectMeta's order, its managedFields entries' too.
  const partial = (await s.request('GET', `${NS}/w`, { headers: { accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1' } })).json();
  assert.deepEqual(Object.keys(partial.metadata), ['name', 'namespace', 'uid', 'resourceVersion', 'generation', 'creationTimestamp', 'labels', 'annotations', 'ownerReferences', 'managedFields']);
  assert.deepEqual(Object.keys(partial.metadata.managedFields[0]), ['manager', 'operation', 'apiVersion', 'time', 'fieldsType', 'fieldsV1']);
  assert.deepEqual(Object.keys(partial.metadata.ownerReferences[0]), ['apiVersion', 'kind', 'name', 'uid', 'controller']);
});

test('deleting a CRD: Terminating, its objects deleted, then gone and no longer served; recreated it starts empty', async () => {
  const crd = widgetCrd({ plural: 'sprockets', kind: 'Sprocket' });
  assert.equal((await s.request('POST', CRDS, { body: crd })).status, 201);
  const P = `/apis/${GROUP}/v1/namespaces/default/sprockets`;
  for (const n of ['a', 'b']) assert.equal((await s.request('POST', P, { body: { apiVersion: `${GROUP}/v1`, kind: 'Sprocket', metadata: { name: n }, spec: { size: 'small' } } })).status, 201);
  const d = await s.request('DELETE', `${CRDS}/sprockets.${GROUP}`);
  assert.equal(d.status, 200, d.text);
  let gone = false;
  for (let i = 0; i < 50 && !gone; i++) {
    gone = (await s.request('GET', `${CRDS}/sprockets.${GROUP}`)).status === 404;
    if (!gone) await new Promise((r) => setTimeout(r, 50));
  }
  assert.ok(gone, 'the CRD is removed once its objects are gone');
  assert.equal((await s.request('GET', P)).status, 404);
  assert.ok(!(await s.request('GET', `/apis/${GROUP}/v1`)).json().resources.some((r: any) => r.name === 'sprockets'));

  assert.equal((await s.request('POST', CRDS, { body: crd })).status, 201);
  assert.deepEqual((await s.request('GET', P)).json().items, []);
});

test('a terminating CRD refuses new objects but serves reads while a finalizer holds an object', async () => {
  const crd = widgetCrd({ plural: 'cogs', kind: 'Cog' });
  assert.equal((await s.request('POST', CRDS, { body: crd })).status, 201);
  const P = `/apis/${GROUP}/v1/namespaces/default/cogs`;
  const held = { apiVersion: `${GROUP}/v1`, kind: 'Cog', metadata: { name: 'held', finalizers: ['hearth.test/hold'] }, spec: { size: 'small' } };
  assert.equal((await s.request('POST', P, { body: held })).status, 201);
  assert.equal((await s.request('DELETE', `${CRDS}/cogs.${GROUP}`)).status, 200);
  await new Promise((r) => setTimeout(r, 200));
  const crdNow = (await s.request('GET', `${CRDS}/cogs.${GROUP}`)).json();
  assert.ok(crdNow.metadata.deletionTimestamp);
  assert.ok(crdNow.status.conditions.some((c: any) => c.type === 'Terminating' && c.status === 'True'));
  const refused = await s.request('POST', P, { body: { ...held, metadata: { name: 'new' } } });
  assert.equal(refused.status, 405, refused.text);
  const h = (await s.request('GET', `${P}/held`)).json();
  assert.ok(h.metadata.deletionTimestamp);
  await s.request('PUT', `${P}/held`, { body: { ...h, metadata: { ...h.metadata, finalizers: [] } } });
  let gone = false;
  for (let i = 0; i < 60 && !gone; i++) {
    gone = (await s.request('GET', `${CRDS}/cogs.${GROUP}`)).status === 404;
    if (!gone) await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(gone);
});

test('CRDs and their objects are served again after a restart', async () => {
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-crd-restart-'));
  try {
    let one = await startTestServer({ dataDir });
    assert.equal((await one.request('POST', CRDS, { body: widgetCrd() })).status, 201);
    assert.equal((await one.request('POST', W, { body: widget('kept', { size: 'large' }) })).status, 201);
    await one.stop();
    one = await startTestServer({ dataDir });
    try {
      const got = await one.request('GET', `${W}/kept`);
      assert.equal(got.status, 200, got.text);
      assert.equal(got.json().spec.size, 'large');
      assert.ok((await one.request('GET', `/apis/${GROUP}/v1`)).json().resources.some((r: any) => r.name === 'widgets'));
      // Schemas of CRDs found at start are published just after it.
      let published = false;
      for (let i = 0; i < 40 && !published; i++) {
        const doc = (await one.request('GET', `/openapi/v3/apis/${GROUP}/v1`)).json();
        published = Object.keys(doc.components?.schemas ?? {}).some((k) => k.endsWith('.v1.Widget'));
        if (!published) await new Promise((r) => setTimeout(r, 50));
      }
      assert.ok(published, 'the Widget schema is in OpenAPI v3 after a restart');
      const apply = await one.request('PATCH', `${W}/kept?fieldManager=m&force=true`, { raw: `apiVersion: ${GROUP}/v1\nkind: Widget\nmetadata:\n  name: kept\nspec:\n  size: small\n`, headers: { 'content-type': 'application/apply-patch+yaml' } });
      assert.equal(apply.status, 200, apply.text);
    } finally {
      await one.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('defaults added to a CRD later apply when older objects are read', async () => {
  const crd = widgetCrd({ plural: 'levers', kind: 'Lever' });
  assert.equal((await s.request('POST', CRDS, { body: crd })).status, 201);
  const P = `/apis/${GROUP}/v1/namespaces/default/levers`;
  const created = await s.request('POST', P, { body: { apiVersion: `${GROUP}/v1`, kind: 'Lever', metadata: { name: 'old' }, spec: { size: 'small' } } });
  assert.equal(created.status, 201);
  const cur = (await s.request('GET', `${CRDS}/levers.${GROUP}`)).json();
  for (const v of cur.spec.versions) v.schema.openAPIV3Schema.properties.spec.properties.color.default = 'green';
  const u = await s.request('PUT', `${CRDS}/levers.${GROUP}`, { body: cur });
  assert.equal(u.status, 200, u.text);
  assert.equal(u.json().metadata.generation, 2);
  assert.equal((await s.request('GET', `${P}/old`)).json().spec.color, 'green');
  assert.equal((await s.request('GET', P)).json().items[0].spec.color, 'green');
  // A watch replaying the log from before the create serves the stored event defaulted too.
  const before = Number(created.json().metadata.resourceVersion) - 1;
  const w = await s.watch(`${P}?watch=1&resourceVersion=${before}`, (events) => events.length >= 1);
  assert.equal(w.events[0].type, 'ADDED');
  assert.equal(w.events[0].object.spec.color, 'green');
});

test('lists and objects of custom resources read as stored answer as decoded ones; a null the schema no longer allows is dropped on read', async () => {
  const schema = (nullable: boolean) => ({
    openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { text: { type: 'string' }, due: { type: 'string', ...(nullable ? { nullable: true } : {}) } } } } },
  });
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `notes.${GROUP}` },
    spec: { group: GROUP, scope: 'Namespaced', names: { plural: 'notes', singular: 'note', kind: 'Note' }, versions: [{ name: 'v1', served: true, storage: true, schema: schema(true) }] },
  };
  assert.equal((await s.request('POST', CRDS, { body: crd })).status, 201);
  const P = `/apis/${GROUP}/v1/namespaces/default/notes`;
  for (const [name, spec] of [['n1', { text: 'a' }], ['n2', { text: 'b', due: null }], ['n3', { text: 'c', due: 'soon' }]] as const) {
    assert.equal((await s.request('POST', P, { body: { apiVersion: `${GROUP}/v1`, kind: 'Note', metadata: { name }, spec } })).status, 201);
  }
  const specs = async (path: string) => (await s.request('GET', path)).json().items.map((i: any) => i.spec);
  const asDecoded = async (path: string) => JSON.stringify(JSON.parse((await s.request('GET', `${path}${path.includes('?') ? '&' : '?'}pretty=true`)).text)) + '\n';
  for (const path of [P, `${P}?limit=2`, `/apis/${GROUP}/v1/notes`, `${P}/n1`, `${P}/n2`]) assert.equal((await s.request('GET', path)).text, await asDecoded(path), path);
  assert.deepEqual(await specs(P), [{ text: 'a' }, { text: 'b', due: null }, { text: 'c', due: 'soon' }]);

  // Watches too: from the stored bytes where they need nothing applied, as the per-object path
  // (a field selector every object matches) writes them.
  const events = async (path: string) => (await s.request('GET', `${path}${path.includes('?') ? '&' : '?'}watch=1&timeoutSeconds=1`)).text;
  const everything = 'fieldSelector=metadata.name%21%3Dnone';
  assert.equal((await s.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'notes-b' } } })).status, 201);
  const B = `/apis/${GROUP}/v1/namespaces/notes-b/notes`;
  assert.equal((await s.request('POST', B, { body: { apiVersion: `${GROUP}/v1`, kind: 'Note', metadata: { name: 'b1' }, spec: { text: 'x' } } })).status, 201);
  for (const path of [B, P, `/apis/${GROUP}/v1/notes`]) assert.equal(await events(path), await events(`${path}?${everything}`), path);
  const rv = (await s.request('GET', B)).json().metadata.resourceVersion;
  const live = events(`${B}?resourceVersion=${rv}`);
  await new Promise((r) => setTimeout(r, 200));
  const created = await s.request('POST', B, { body: { apiVersion: `${GROUP}/v1`, kind: 'Note', metadata: { name: 'b2' }, spec: { text: 'y' } } });
  assert.equal(created.status, 201);
  assert.equal((await live).trim(), `{"type":"ADDED","object":${created.text.trim()}}`);
  assert.equal(await events(`${B}?resourceVersion=${rv}`), await live);

  // The schema stops allowing null: the stored null goes when the object is read, listed or not.
  const cur = (await s.request('GET', `${CRDS}/notes.${GROUP}`)).json();
  cur.spec.versions[0].schema = schema(false);
  assert.equal((await s.request('PUT', `${CRDS}/notes.${GROUP}`, { body: cur })).status, 200);
  assert.deepEqual((await s.request('GET', `${P}/n2`)).json().spec, { text: 'b' });
  assert.equal((await s.request('GET', `${P}/n2`)).text, await asDecoded(`${P}/n2`));
  assert.deepEqual(await specs(P), [{ text: 'a' }, { text: 'b' }, { text: 'c', due: 'soon' }]);
  assert.deepEqual(await specs(`${P}?limit=2`), [{ text: 'a' }, { text: 'b' }]);
  assert.equal((await s.request('GET', P)).text, await asDecoded(P));
  const watched = (await events(P)).trim().split('\n').map((l) => JSON.parse(l).object.spec);
  assert.deepEqual(watched, [{ text: 'a' }, { text: 'b' }, { text: 'c', due: 'soon' }]);
});

test('rules that do not compile or exceed the cost budget are refused when the CRD is written', async () => {
  const crd = widgetCrd({ plural: 'dials', kind: 'Dial' });
  const specSchema = (crd.spec.versions[1].schema.openAPIV3Schema.properties.spec as any);
  specSchema['x-kubernetes-validations'] = [{ rule: 'self.size ==' }];
  const r = await s.request('POST', CRDS, { body: crd });
  assert.equal(r.status, 422, r.text);
  assert.match(r.json().details.causes[0].message, /compilation failed/);

  const costly = widgetCrd({ plural: 'dials', kind: 'Dial' });
  for (const v of costly.spec.versions) {
    const props = (v.schema.openAPIV3Schema.properties.spec as any).properties;
    props.names = { type: 'array', items: { type: 'string' } };
    (v.schema.openAPIV3Schema.properties.spec as any)['x-kubernetes-validations'] = [{ rule: 'self.names.all(a, self.names.all(b, self.names.all(c, a + b + c != "")))' }];
  }
  const c = await s.request('POST', CRDS, { body: costly });
  assert.equal(c.status, 422, c.text);
  assert.match(c.text, /exceeds budget/);
  assert.equal((await s.request('GET', `${CRDS}/dials.${GROUP}`)).status, 404);
});

test('aggregated discovery and OpenAPI v3 follow CRD updates', async () => {
  const agg = await s.request('GET', '/apis', { headers: { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' } });
  assert.equal(agg.status, 200, agg.text);
  const group = agg.json().items.find((g: any) => g.metadata.name === GROUP);
  const v1 = group.versions.find((v: any) => v.version === 'v1');
  assert.ok(v1.resources.some((r: any) => r.resource === 'widgets' && r.responseKind.kind === 'Widget'));

  const crd = widgetCrd({ plural: 'knobs', kind: 'Knob' });
  assert.equal((await s.request('POST', CRDS, { body: crd })).status, 201);
  const doc = async () => (await s.request('GET', `/openapi/v3/apis/${GROUP}/v1`)).json();
  const schemaOf = (d: any) => Object.entries(d.components.schemas).find(([k]) => k.endsWith('.v1.Knob'))?.[1] as any;
  const before = schemaOf(await doc());
  assert.ok(before.properties.spec.properties.size);
  assert.equal(before.properties.spec.properties.weight, undefined);
  const cur = (await s.request('GET', `${CRDS}/knobs.${GROUP}`)).json();
  for (const v of cur.spec.versions) v.schema.openAPIV3Schema.properties.spec.properties.weight = { type: 'integer' };
  assert.equal((await s.request('PUT', `${CRDS}/knobs.${GROUP}`, { body: cur })).status, 200);
  const after = schemaOf(await doc());
  assert.equal(after.properties.spec.properties.weight.type, 'integer');
  // The new field is known now: it is kept rather than pruned.
  const k = await s.request('POST', `/apis/${GROUP}/v1/namespaces/default/knobs`, { body: { apiVersion: `${GROUP}/v1`, kind: 'Knob', metadata: { name: 'k' }, spec: { size: 'small', weight: 3 } } });
  assert.equal(k.status, 201, k.text);
  assert.equal(k.json().spec.weight, 3);
});

test('a CRD whose names another CRD of the group already uses is not accepted and not served', async () => {
  const crd = widgetCrd({ plural: 'widgetz', kind: 'Widget' });
  crd.spec.names.shortNames = ['wz'];
  const r = await s.request('POST', CRDS, { body: crd });
  assert.equal(r.status, 201, r.text);
  let cond: Record<string, any> = {};
  for (let i = 0; i < 40; i++) {
    const got = (await s.request('GET', `${CRDS}/widgetz.${GROUP}`)).json();
    cond = Object.fromEntries(got.status.conditions.map((c: any) => [c.type, c]));
    if (cond.NamesAccepted?.status === 'False') break;
    await new Promise((res) => setTimeout(res, 50));
  }
  assert.equal(cond.NamesAccepted.status, 'False');
  assert.equal(cond.NamesAccepted.reason, 'SingularConflict'); // kube checks plural, singular, short names, kind, list kind in that order
  assert.equal(cond.Established.status, 'False');
  assert.equal((await s.request('GET', `/apis/${GROUP}/v1/namespaces/default/widgetz`)).status, 404);
  assert.equal((await s.request('DELETE', `${CRDS}/widgetz.${GROUP}`)).status, 200);
});

test('changing the storage version records it in status.storedVersions', async () => {
  const crd = widgetCrd({ plural: 'gears', kind: 'Gear' });
  assert.equal((await s.request('POST', CRDS, { body: crd })).status, 201);
  const cur = (await s.request('GET', `${CRDS}/gears.${GROUP}`)).json();
  cur.spec.versions[0].storage = true;
  cur.spec.versions[1].storage = false;
  const u = await s.request('PUT', `${CRDS}/gears.${GROUP}`, { body: cur });
  assert.equal(u.status, 200, u.text);
  assert.deepEqual(u.json().status.storedVersions, ['v1', 'v1beta1']);
  // New objects are stored in the new storage version; both versions still read them.
  const c = await s.request('POST', `/apis/${GROUP}/v1/namespaces/default/gears`, { body: { apiVersion: `${GROUP}/v1`, kind: 'Gear', metadata: { name: 'g' }, spec: { size: 'small' } } });
  assert.equal(c.status, 201, c.text);
  assert.equal((await s.request('GET', `/apis/${GROUP}/v1beta1/namespaces/default/gears/g`)).json().apiVersion, `${GROUP}/v1beta1`);
});

test('custom resources have no protobuf form: an Accept of protobuf alone is a 406 before anything is written, one with a fallback gets JSON', async () => {
  const { decodeProtobuf, PROTOBUF_MEDIA_TYPE } = await import('../../../server/http/protobuf.ts');
  const notAcceptable = (r: { status: number; headers: Record<string, unknown>; raw: Buffer }, what: string) => {
    assert.equal(r.status, 406, what);
    // The Status itself comes in the protobuf asked for, as kube's error writer negotiates it without the scope's restriction.
    assert.equal(r.headers['content-type'], PROTOBUF_MEDIA_TYPE, what);
    const status = decodeProtobuf(r.raw);
    assert.deepEqual([status.reason, status.message], ['NotAcceptable', 'only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor'], what);
  };
  const accept = { accept: PROTOBUF_MEDIA_TYPE };
  notAcceptable(await s.request('POST', W, { body: widget('proto-only'), headers: accept }), 'create');
  assert.equal((await s.request('GET', `${W}/proto-only`)).status, 404, 'the refused create wrote nothing');
  const created = await s.request('POST', W, { body: widget('proto-fallback'), headers: { accept: `${PROTOBUF_MEDIA_TYPE}, application/json` } });
  assert.equal(created.status, 201, created.text);
  assert.equal(created.headers['content-type'], 'application/json');
  assert.equal(created.json().metadata.name, 'proto-fallback');
  notAcceptable(await s.request('GET', `${W}/proto-fallback`, { headers: accept }), 'get');
  notAcceptable(await s.request('GET', W, { headers: accept }), 'list');
  notAcceptable(await s.request('GET', `${W}?watch=1`, { headers: accept }), 'watch');
  notAcceptable(await s.request('GET', `${W}/proto-fallback/scale`, { headers: accept }), 'scale');
  notAcceptable(await s.request('DELETE', `${W}/proto-fallback`, { headers: accept }), 'delete');
  assert.equal((await s.request('GET', `${W}/proto-fallback`)).status, 200, 'the refused delete deleted nothing');
  // Shapes of meta.k8s.io have a protobuf form whatever they describe.
  const meta = await s.request('GET', `${W}/proto-fallback`, { headers: { accept: `${PROTOBUF_MEDIA_TYPE};as=PartialObjectMetadata;g=meta.k8s.io;v=v1` } });
  assert.equal(meta.status, 200);
  assert.equal(decodeProtobuf(meta.raw).metadata.name, 'proto-fallback');
  // Built-in kinds answer in protobuf.
  const cms = await s.request('GET', '/api/v1/namespaces/default/configmaps', { headers: accept });
  assert.deepEqual([cms.status, decodeProtobuf(cms.raw).kind], [200, 'ConfigMapList']);
});
