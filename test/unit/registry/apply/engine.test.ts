import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ApiError } from '../../../../server/errors.ts';
import { TypeModel } from '../../../../server/schema/model.ts';
import type { TypeNode } from '../../../../server/schema/types.ts';
import { updateGenerally } from '../../../../server/registry/apply/field-manager.ts';
import { customResourceInfos } from '../../../../server/registry/crd/runtime.ts';
import { benchWidget, benchWidgetsCRD } from '../../../fixtures/crds/generate.ts';
import {
  FieldSet,
  LAST_APPLIED_ANNOTATION,
  MAX_UPDATE_MANAGERS,
  apply,
  applyMerge,
  compareObjects,
  fieldPE,
  fieldPath,
  fieldsOf,
  indexPE,
  keyPE,
  pathString,
  removeFields,
  update,
  upgradeManagedFields,
  valuePE,
  zeroObject,
  type ApplyOptions,
  type ManagedFieldsEntry,
} from '../../../../server/registry/apply/index.ts';

// ---------------------------------------------------------------------------------------------
// Schemas

const S: TypeNode = { type: 'string' };
const I: TypeNode = { type: 'integer' };
const item: TypeNode = { type: 'object', properties: { name: S, value: S, other: S } };

/** One field of every list/map/struct flavour. */
const kinds: TypeNode = {
  type: 'object',
  properties: {
    apiVersion: S,
    kind: S,
    metadata: {
      type: 'object',
      properties: { name: S, namespace: S, labels: { type: 'map', values: S }, annotations: { type: 'map', values: S }, resourceVersion: S, generation: I, uid: S },
    },
    scalar: S,
    num: I,
    atomicList: { type: 'array', listType: 'atomic', items: S },
    plainList: { type: 'array', items: S }, // no list type, no strategy: atomic
    setList: { type: 'array', listType: 'set', items: S },
    mergeSet: { type: 'array', patchStrategy: 'merge', items: S }, // merge without key: set
    mapList: { type: 'array', listType: 'map', listMapKeys: ['name'], items: item },
    keyedByStrategy: { type: 'array', patchStrategy: 'merge', patchMergeKey: 'name', items: item }, // list-map
    multiKey: { type: 'array', listType: 'map', listMapKeys: ['protocol', 'port'], items: { type: 'object', properties: { port: I, protocol: S, name: S } } },
    granularMap: { type: 'map', values: S },
    atomicMap: { type: 'map', mapType: 'atomic', values: S },
    struct: { type: 'object', properties: { a: S, b: S, inner: { type: 'object', properties: { x: S, y: S } } } },
    atomicStruct: { type: 'object', mapType: 'atomic', properties: { a: S, b: S } },
    untyped: { type: 'any' },
    spec: { type: 'object', properties: { replicas: I, paused: { type: 'boolean' } } },
    status: { type: 'object', properties: { ready: I } },
  },
};

const model = TypeModel.loadBuiltins();
const deployment = model.node('io.k8s.api.apps.v1.Deployment');
const configMap = model.node('io.k8s.api.core.v1.ConfigMap');

const T0 = '2024-05-01T10:00:00Z';
const T1 = '2024-05-01T10:01:00Z';
const T2 = '2024-05-01T10:02:00Z';
const T3 = '2024-05-01T10:03:00Z';

const fv1 = (s: FieldSet): string => JSON.stringify(s.toFieldsV1());

function opts(manager: string, extra: Partial<ApplyOptions> = {}): ApplyOptions {
  return { manager, force: false, apiVersion: 'v1', now: T0, ...extra };
}

/** The entry of a manager (and operation). */
function entry(mf: ManagedFieldsEntry[], manager: string, operation?: string): ManagedFieldsEntry | undefined {
  return mf.find((e) => e.manager === manager && (!operation || e.operation === operation));
}

function owned(mf: ManagedFieldsEntry[], manager: string, operation?: string): string[] {
  const e = entry(mf, manager, operation);
  return e ? FieldSet.fromFieldsV1(e.fieldsV1).paths().map(pathString) : [];
}

function expectConflict(fn: () => unknown, message: string, causes?: { field: string; message: string }[]): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof ApiError, String(e));
    assert.equal(e.code, 409);
    assert.equal(e.reason, 'Conflict');
    assert.equal(e.message, message);
    if (causes) {
      assert.deepEqual(
        e.details?.causes,
        causes.map((c) => ({ reason: 'FieldManagerConflict', message: c.message, field: c.field })),
      );
    }
    return true;
  });
}

// ---------------------------------------------------------------------------------------------

describe('FieldSet and FieldsV1', () => {
  it('serializes f:/k:/v:/i: elements in kube order, "." first when a node is also a member', () => {
    const s = FieldSet.of(
      [fieldPE('spec'), fieldPE('containers'), keyPE({ name: 'c' })],
      [fieldPE('spec'), fieldPE('containers'), keyPE({ name: 'c' }), fieldPE('image')],
      [fieldPE('metadata'), fieldPE('labels'), fieldPE('app')],
      [fieldPE('metadata'), fieldPE('finalizers'), valuePE('b')],
      [fieldPE('metadata'), fieldPE('finalizers'), valuePE('a')],
      [fieldPE('x'), indexPE(1)],
      [fieldPE('x'), fieldPE('z')],
    );
    assert.equal(
      fv1(s),
      '{"f:metadata":{"f:finalizers":{"v:\\"a\\"":{},"v:\\"b\\"":{}},"f:labels":{"f:app":{}}},' +
        '"f:spec":{"f:containers":{"k:{\\"name\\":\\"c\\"}":{".":{},"f:image":{}}}},"f:x":{"f:z":{},"i:1":{}}}',
    );
  });

  it('writes list-map keys sorted by name, compact, and set values as Go JSON (numbers before strings, HTML escaped)', () => {
    const s = FieldSet.of([fieldPE('ports'), keyPE({ protocol: 'TCP', containerPort: 80 })], [fieldPE('v'), valuePE('a<b')], [fieldPE('v'), valuePE(3)]);
    assert.deepEqual(Object.keys(s.toFieldsV1().valueOf() as object), ['f:ports', 'f:v']);
    const obj = s.toFieldsV1() as Record<string, Record<string, unknown>>;
    assert.deepEqual(Object.keys(obj['f:ports']), ['k:{"containerPort":80,"protocol":"TCP"}']);
    assert.deepEqual(Object.keys(obj['f:v']), ['v:3', 'v:"a\\u003cb"']);
  });

  it('round-trips the kube wire form, including "." members and unknown element types', () => {
    const wire = {
      'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
      'f:spec': {
        'f:containers': { 'k:{"name":"c"}': { '.': {}, 'f:image': {}, 'f:ports': { 'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} } } } },
        'f:finalizers': { 'v:"x"': {} },
      },
    };
    const s = FieldSet.fromFieldsV1(wire);
    assert.deepEqual(s.paths().map(pathString), [
      '.metadata.labels',
      '.metadata.labels.app',
      '.spec.containers[name="c"]',
      '.spec.containers[name="c"].image',
      '.spec.containers[name="c"].ports[containerPort=80,protocol="TCP"]',
      '.spec.containers[name="c"].ports[containerPort=80,protocol="TCP"].containerPort',
      '.spec.finalizers[="x"]',
    ]);
    assert.equal(JSON.stringify(s.toFieldsV1()), JSON.stringify(wire));
    // A key written with its names unsorted reads as the same element.
    assert.ok(FieldSet.fromFieldsV1({ 'f:p': { 'k:{"protocol":"TCP","containerPort":80}': {} } }).has([fieldPE('p'), keyPE({ containerPort: 80, protocol: 'TCP' })]));
    // Unknown element kinds are dropped, malformed names rejected.
    assert.equal(fv1(FieldSet.fromFieldsV1({ 'f:a': {}, 'x:zzz': {} })), '{"f:a":{}}');
    assert.throws(() => FieldSet.fromFieldsV1({ f: {} }));
    assert.throws(() => FieldSet.fromFieldsV1({ 'fx': {} }));
    assert.throws(() => FieldSet.fromFieldsV1({ 'k:notjson': {} }));
  });

  it('union, intersection, difference, recursive difference, leaves, equality', () => {
    const a = FieldSet.of(fieldPath('a'), fieldPath('a', 'b'), fieldPath('c'));
    const b = FieldSet.of(fieldPath('a', 'b'), fieldPath('d'));
    assert.deepEqual(a.union(b).paths().map(pathString), ['.a', '.c', '.d', '.a.b']);
    assert.deepEqual(a.intersection(b).paths().map(pathString), ['.a.b']);
    assert.deepEqual(a.difference(b).paths().map(pathString), ['.a', '.c']);
    // A parent in the subtrahend leaves children alone in a plain difference, removes them recursively.
    const parent = FieldSet.of(fieldPath('a'));
    assert.deepEqual(a.difference(parent).paths().map(pathString), ['.c', '.a.b']);
    assert.deepEqual(a.recursiveDifference(parent).paths().map(pathString), ['.c']);
    assert.deepEqual(a.leaves().paths().map(pathString), ['.c', '.a.b']);
    assert.ok(new FieldSet().isEmpty());
    assert.ok(!a.isEmpty());
    assert.ok(a.equals(FieldSet.of(fieldPath('c'), fieldPath('a', 'b'), fieldPath('a'))));
    assert.ok(!a.equals(b));
    assert.ok(a.difference(a).isEmpty());
  });
});

describe('fieldsOf: the fields an object sets, per list/map type', () => {
  const cases: [string, unknown, unknown][] = [
    ['scalar', { scalar: 'x' }, { 'f:scalar': {} }],
    ['atomic list: the field only', { atomicList: ['a', 'b'] }, { 'f:atomicList': {} }],
    ['list without list-type or merge strategy is atomic', { plainList: ['a'] }, { 'f:plainList': {} }],
    ['set: one v: per element', { setList: ['b', 'a'] }, { 'f:setList': { 'v:"a"': {}, 'v:"b"': {} } }],
    ['merge strategy without key: a set', { mergeSet: ['a'] }, { 'f:mergeSet': { 'v:"a"': {} } }],
    ['list-map: k: per element, "." and its fields', { mapList: [{ name: 'a', value: '1' }] }, { 'f:mapList': { 'k:{"name":"a"}': { '.': {}, 'f:name': {}, 'f:value': {} } } }],
    ['merge strategy with key: a list-map', { keyedByStrategy: [{ name: 'a' }] }, { 'f:keyedByStrategy': { 'k:{"name":"a"}': { '.': {}, 'f:name': {} } } }],
    ['multi-key list-map: keys sorted', { multiKey: [{ protocol: 'UDP', port: 53 }] }, { 'f:multiKey': { 'k:{"port":53,"protocol":"UDP"}': { '.': {}, 'f:port': {}, 'f:protocol': {} } } }],
    ['granular map: per key', { granularMap: { k1: 'a', k2: 'b' } }, { 'f:granularMap': { 'f:k1': {}, 'f:k2': {} } }],
    ['atomic map: the field only', { atomicMap: { k1: 'a' } }, { 'f:atomicMap': {} }],
    ['struct: per field, no "."', { struct: { a: 'x', inner: { y: 'z' } } }, { 'f:struct': { 'f:a': {}, 'f:inner': { 'f:y': {} } } }],
    ['atomic struct: the field only', { atomicStruct: { a: 'x' } }, { 'f:atomicStruct': {} }],
    ['empty or null struct sets nothing', { struct: {}, spec: null }, {}],
    ['null scalar is still a field', { scalar: null }, { 'f:scalar': {} }],
    ['untyped: maps granular (keys are members), lists atomic', { untyped: { m: { k: 1 }, l: [1, 2] } }, { 'f:untyped': { 'f:l': {}, 'f:m': { '.': {}, 'f:k': {} } } }],
  ];
  for (const [name, obj, expected] of cases) {
    it(name, () => assert.equal(fv1(fieldsOf(kinds, obj)), JSON.stringify(expected)));
  }

  it('fills the protocol default into container port keys (Deployment)', () => {
    const d = { spec: { template: { spec: { containers: [{ name: 'c', ports: [{ containerPort: 80 }] }] } } } };
    assert.deepEqual(fieldsOf(deployment, d).paths().map(pathString).slice(-2), [
      '.spec.template.spec.containers[name="c"].ports[containerPort=80,protocol="TCP"]',
      '.spec.template.spec.containers[name="c"].ports[containerPort=80,protocol="TCP"].containerPort',
    ]);
  });
});

describe('applyMerge per type', () => {
  const cases: [string, unknown, unknown, unknown][] = [
    ['scalar: config wins', { scalar: 'a', num: 1 }, { scalar: 'b' }, { scalar: 'b', num: 1 }],
    ['atomic list replaced', { atomicList: ['a', 'b'] }, { atomicList: ['c'] }, { atomicList: ['c'] }],
    ['list without type replaced', { plainList: ['a', 'b'] }, { plainList: ['b'] }, { plainList: ['b'] }],
    ['set: union, config order first for new values', { setList: ['a', 'b'] }, { setList: ['c', 'a'] }, { setList: ['c', 'a', 'b'] }],
    ['merge-strategy set: union', { mergeSet: ['a'] }, { mergeSet: ['b'] }, { mergeSet: ['a', 'b'] }],
    [
      'list-map: elements merged by key, unknown ones kept',
      { mapList: [{ name: 'a', value: '1' }, { name: 'b', value: '2', other: 'keep' }] },
      { mapList: [{ name: 'b', value: '3' }, { name: 'c' }] },
      { mapList: [{ name: 'a', value: '1' }, { name: 'b', value: '3', other: 'keep' }, { name: 'c' }] },
    ],
    [
      'list-map: shared elements follow the config order, live-only ones keep their place',
      { mapList: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] },
      { mapList: [{ name: 'c' }, { name: 'a' }] },
      { mapList: [{ name: 'b' }, { name: 'c' }, { name: 'a' }] },
    ],
    ['patch-merge-key list merges like a list-map', { keyedByStrategy: [{ name: 'a', value: '1' }] }, { keyedByStrategy: [{ name: 'a', other: 'x' }] }, { keyedByStrategy: [{ name: 'a', value: '1', other: 'x' }] }],
    ['granular map: per key', { granularMap: { k1: 'a', k2: 'b' } }, { granularMap: { k2: 'c', k3: 'd' } }, { granularMap: { k1: 'a', k2: 'c', k3: 'd' } }],
    ['atomic map replaced', { atomicMap: { k1: 'a', k2: 'b' } }, { atomicMap: { k2: 'c' } }, { atomicMap: { k2: 'c' } }],
    ['struct: per field', { struct: { a: 'x', inner: { x: '1' } } }, { struct: { b: 'y', inner: { y: '2' } } }, { struct: { a: 'x', inner: { x: '1', y: '2' }, b: 'y' } }],
    ['atomic struct replaced', { atomicStruct: { a: 'x' } }, { atomicStruct: { b: 'y' } }, { atomicStruct: { b: 'y' } }],
    ['untyped: maps merge, lists replace', { untyped: { m: { a: 1 }, l: [1, 2] } }, { untyped: { m: { b: 2 }, l: [3] } }, { untyped: { m: { a: 1, b: 2 }, l: [3] } }],
    ['null config value for a non-empty map keeps the live map', { granularMap: { k: 'v' } }, { granularMap: null }, { granularMap: { k: 'v' } }],
    ['empty config map over nothing stays empty', {}, { granularMap: {} }, { granularMap: {} }],
    ['nothing live: the config', undefined, { scalar: 'a', setList: ['x'] }, { scalar: 'a', setList: ['x'] }],
  ];
  for (const [name, live, config, expected] of cases) {
    it(name, () => {
      const before = structuredClone(live);
      assert.deepEqual(applyMerge(kinds, live, config), expected);
      assert.deepEqual(live, before, 'live object not modified');
    });
  }
});

describe('compareObjects and removeFields', () => {
  it('reports added (with wholly-added parents), modified leaves and removed fields', () => {
    const c = compareObjects(kinds, { scalar: 'a', granularMap: { k: 'v' }, mapList: [{ name: 'a', value: '1' }] }, { scalar: 'b', struct: { a: 'x' }, mapList: [{ name: 'a', value: '2' }, { name: 'b' }] });
    assert.deepEqual(c.modified.paths().map(pathString), ['.scalar', '.mapList[name="a"].value']);
    assert.deepEqual(c.added.paths().map(pathString), ['.struct', '.mapList[name="b"]', '.mapList[name="b"].name', '.struct.a']);
    assert.deepEqual(c.removed.paths().map(pathString), ['.granularMap', '.granularMap.k']);
  });

  it('removes list-map elements, set values and map keys; emptied maps and lists are left null (structured-merge-diff RemoveItems)', () => {
    const obj = { mapList: [{ name: 'a', value: '1' }, { name: 'b' }], setList: ['x', 'y'], granularMap: { k: 'v' }, scalar: 's' };
    const out = removeFields(
      kinds,
      obj,
      FieldSet.of([fieldPE('mapList'), keyPE({ name: 'a' })], [fieldPE('setList'), valuePE('y')], [fieldPE('granularMap'), fieldPE('k')], [fieldPE('mapList'), keyPE({ name: 'b' }), fieldPE('value')]),
    );
    assert.deepEqual(out, { mapList: [{ name: 'b' }], setList: ['x'], granularMap: null, scalar: 's' });
    assert.deepEqual(obj.granularMap, { k: 'v' }, 'input untouched');
    const emptied = removeFields(kinds, { setList: ['y'], mapList: [{ name: 'a', value: '1' }] }, FieldSet.of([fieldPE('setList'), valuePE('y')], [fieldPE('mapList'), keyPE({ name: 'a' }), fieldPE('name')], [fieldPE('mapList'), keyPE({ name: 'a' }), fieldPE('value')]));
    // (a list-map element left without fields is dropped: no key names a null element)
    assert.deepEqual(emptied, { setList: null, mapList: null });
  });
});

describe('apply: ownership, conflicts, force, removal', () => {
  const base = { apiVersion: 'v1', kind: 'Thing', metadata: { name: 'x', namespace: 'ns' } };
  const cfg = (extra: Record<string, unknown>) => ({ ...structuredClone(base), ...extra });

  it('records exactly the applied fields, never name/namespace/apiVersion/kind, with the time', () => {
    const r = apply(kinds, undefined, cfg({ metadata: { name: 'x', namespace: 'ns', labels: { app: 'a' } }, scalar: 'v', mapList: [{ name: 'a' }] }), opts('alice'));
    assert.deepEqual(r.managedFields, [
      {
        manager: 'alice',
        operation: 'Apply',
        apiVersion: 'v1',
        time: T0,
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:mapList': { 'k:{"name":"a"}': { '.': {}, 'f:name': {} } }, 'f:metadata': { 'f:labels': { 'f:app': {} } }, 'f:scalar': {} },
      },
    ]);
    assert.deepEqual(Object.keys(r.managedFields[0]), ['manager', 'operation', 'apiVersion', 'time', 'fieldsType', 'fieldsV1']);
    assert.deepEqual(r.object.metadata.managedFields, r.managedFields);
    assert.equal(r.object.scalar, 'v');
  });

  it('rejects managedFields in the configuration', () => {
    assert.throws(
      () => apply(kinds, undefined, cfg({ metadata: { name: 'x', managedFields: [] } }), opts('a')),
      (e: unknown) => e instanceof ApiError && e.code === 400 && e.message === 'metadata.managedFields must be nil',
    );
  });

  it('rejects configurations that are not valid typed objects, as kube words it', () => {
    assert.throws(
      () => apply(kinds, undefined, cfg({ mapList: [{ name: 'a' }, { name: 'a' }] }), opts('a')),
      (e: unknown) =>
        e instanceof ApiError &&
        e.code === 500 &&
        e.message === 'failed to create typed patch object (ns/x; /v1, Kind=Thing): .mapList: duplicate entries for key [name="a"]',
    );
    assert.throws(
      () => apply(kinds, undefined, cfg({ bogus: 1, mapList: [{ value: 'no key' }] }), opts('a')),
      (e: unknown) =>
        e instanceof ApiError &&
        e.message ===
          'failed to create typed patch object (ns/x; /v1, Kind=Thing): errors:\n' +
            '  .bogus: field not declared in schema\n' +
            '  .mapList: element 0: associative list with keys has an element that omits key field "name" (and doesn\'t have default value)',
    );
  });

  it('same value: shared ownership, no conflict; a different value conflicts with every owner', () => {
    const a = apply(kinds, undefined, cfg({ scalar: 'v', num: 1 }), opts('alice'));
    const b = apply(kinds, a.object, cfg({ scalar: 'v' }), opts('bob', { now: T1 }));
    assert.deepEqual(owned(b.managedFields, 'alice'), ['.num', '.scalar']);
    assert.deepEqual(owned(b.managedFields, 'bob'), ['.scalar']);
    // Nothing changed, so bob's entry carries no time (kube only stamps an apply that changed the object).
    assert.equal(entry(b.managedFields, 'bob')!.time, undefined);

    expectConflict(() => apply(kinds, b.object, cfg({ scalar: 'w' }), opts('carol')), 'Apply failed with 2 conflicts: conflicts with "alice":\n- .scalar\nconflicts with "bob":\n- .scalar', [
      { field: '.scalar', message: 'conflict with "alice"' },
      { field: '.scalar', message: 'conflict with "bob"' },
    ]);
    expectConflict(() => apply(kinds, b.object, cfg({ scalar: 'v', num: 2 }), opts('bob')), 'Apply failed with 1 conflict: conflict with "alice": .num', [
      { field: '.num', message: 'conflict with "alice"' },
    ]);
    expectConflict(
      () => apply(kinds, a.object, cfg({ scalar: 'w', num: 2 }), opts('dave')),
      'Apply failed with 2 conflicts: conflicts with "alice":\n- .num\n- .scalar',
    );
  });

  it('force takes the fields away from the other managers', () => {
    const a = apply(kinds, undefined, cfg({ scalar: 'v', num: 1 }), opts('alice'));
    const b = apply(kinds, a.object, cfg({ scalar: 'w' }), opts('bob', { force: true, now: T1 }));
    assert.equal(b.object.scalar, 'w');
    assert.deepEqual(owned(b.managedFields, 'alice'), ['.num']);
    assert.deepEqual(owned(b.managedFields, 'bob'), ['.scalar']);
    assert.equal(entry(b.managedFields, 'bob')!.time, T1);
    // A manager left with nothing disappears.
    const c = apply(kinds, b.object, cfg({ num: 5 }), opts('carol', { force: true, now: T2 }));
    assert.equal(entry(c.managedFields, 'alice'), undefined);
  });

  it('a dropped field is removed when nobody else owns it, only released when someone does', () => {
    const a = apply(kinds, undefined, cfg({ scalar: 'v', num: 1, granularMap: { k: 'x' }, mapList: [{ name: 'a', value: '1' }, { name: 'b' }], setList: ['p', 'q'] }), opts('alice'));
    const b = apply(kinds, a.object, cfg({ num: 1 }), opts('bob', { now: T1 })); // bob shares num
    const c = apply(kinds, b.object, cfg({ mapList: [{ name: 'b' }], setList: ['p'] }), opts('alice', { now: T2 }));
    assert.deepEqual(c.object, {
      ...base,
      metadata: { ...base.metadata, managedFields: c.managedFields },
      num: 1,
      mapList: [{ name: 'b' }],
      setList: ['p'],
    });
    assert.deepEqual(owned(c.managedFields, 'bob'), ['.num']);
    assert.deepEqual(owned(c.managedFields, 'alice'), ['.mapList[name="b"]', '.mapList[name="b"].name', '.setList[="p"]']);
  });

  it('fields set by an Update are not removed when an applier drops them', () => {
    const a = apply(kinds, undefined, cfg({ scalar: 'v' }), opts('alice'));
    const next = structuredClone(a.object);
    next.num = 7;
    next.metadata.managedFields = update(kinds, a.object, next, { manager: 'ctl', apiVersion: 'v1', now: T1 });
    const c = apply(kinds, next, cfg({}), opts('alice', { now: T2 }));
    assert.equal(c.object.num, 7);
    assert.equal(c.object.scalar, undefined);
    assert.deepEqual(owned(c.managedFields, 'ctl'), ['.num']);
    assert.equal(entry(c.managedFields, 'alice'), undefined);
  });

  it('status is neither owned nor conflicting on the main resource of a kind with a status subresource', () => {
    const a = apply(kinds, undefined, cfg({ status: { ready: 1 }, scalar: 'v' }), opts('alice', { statusSubresource: true }));
    assert.deepEqual(owned(a.managedFields, 'alice'), ['.scalar']);
    const live = structuredClone(a.object);
    live.status = { ready: 3 };
    live.metadata.managedFields = update(kinds, a.object, live, { manager: 'kubelet', apiVersion: 'v1', subresource: 'status', now: T1, statusSubresource: true });
    assert.deepEqual(owned(live.metadata.managedFields, 'kubelet'), ['.status.ready']);
    assert.equal(entry(live.metadata.managedFields, 'kubelet')!.subresource, 'status');
    // Applying another status value through the main resource does not conflict.
    assert.doesNotThrow(() => apply(kinds, live, cfg({ status: { ready: 9 }, scalar: 'v' }), opts('alice', { statusSubresource: true, now: T2 })));
    // Through the status subresource it does, naming the subresource.
    expectConflict(
      () => apply(kinds, live, cfg({ status: { ready: 9 } }), opts('bob', { subresource: 'status', statusSubresource: true })),
      'Apply failed with 1 conflict: conflict with "kubelet" with subresource "status" using v1: .status.ready',
    );
  });
});

describe('update: ownership of non-apply writes', () => {
  const base = { apiVersion: 'v1', kind: 'Thing', metadata: { name: 'x' } };

  it('the writer owns what it added or changed; unchanged writes neither record nor restamp', () => {
    const created = { ...base, scalar: 'a', granularMap: { k: 'v' } };
    const mf = update(kinds, undefined, created, { manager: 'kubectl-create', apiVersion: 'v1', now: T0 });
    assert.deepEqual(mf, [
      { manager: 'kubectl-create', operation: 'Update', apiVersion: 'v1', time: T0, fieldsType: 'FieldsV1', fieldsV1: { 'f:granularMap': { '.': {}, 'f:k': {} }, 'f:scalar': {} } },
    ]);
    const live = { ...created, metadata: { ...base.metadata, managedFields: mf } };
    // Same manager, bookkeeping-only change (resourceVersion is never owned): nothing recorded, time kept.
    const same = structuredClone(live) as any;
    same.metadata.resourceVersion = '9';
    assert.deepEqual(update(kinds, live, same, { manager: 'kubectl-create', apiVersion: 'v1', now: T1 }), mf);
    // Same manager again with a change: one entry, merged, new time.
    const next = structuredClone(live) as any;
    next.num = 3;
    const mf2 = update(kinds, live, next, { manager: 'kubectl-create', apiVersion: 'v1', now: T1 });
    assert.equal(mf2.length, 1);
    assert.equal(mf2[0].time, T1);
    assert.deepEqual(owned(mf2, 'kubectl-create'), ['.granularMap', '.num', '.scalar', '.granularMap.k']);
    // Another apiVersion is another entry.
    const next2 = structuredClone({ ...next, metadata: { ...next.metadata, managedFields: mf2 } });
    next2.struct = { a: 'z' };
    const mf3 = update(kinds, { ...next, metadata: { ...next.metadata, managedFields: mf2 } }, next2, { manager: 'kubectl-create', apiVersion: 'v2', now: T2 });
    assert.deepEqual(
      mf3.map((e) => [e.manager, e.apiVersion]),
      [
        ['kubectl-create', 'v1'],
        ['kubectl-create', 'v2'],
      ],
    );
  });

  it('takes changed fields from other managers without conflict; removed fields leave every set', () => {
    const a = apply(kinds, undefined, { ...base, scalar: 'a', num: 1, granularMap: { k: 'v' } }, opts('alice'));
    const next = structuredClone(a.object);
    next.scalar = 'b';
    delete next.granularMap;
    const mf = update(kinds, a.object, next, { manager: 'editor', apiVersion: 'v1', now: T1 });
    assert.deepEqual(owned(mf, 'alice'), ['.num']);
    assert.deepEqual(owned(mf, 'editor'), ['.scalar']);
  });

  it('caps Update entries at 10, folding the oldest into ancient-changes', () => {
    let live: any = { ...structuredClone(base), scalar: 'created' };
    let mf: ManagedFieldsEntry[] = update(kinds, undefined, live, { manager: 'creator', apiVersion: 'v1', now: '2023-12-31T00:00:00Z' });
    live.metadata.managedFields = mf;
    for (let i = 0; i <= MAX_UPDATE_MANAGERS; i++) {
      const next = structuredClone(live);
      next.granularMap = { ...(next.granularMap ?? {}), [`k${i}`]: 'v' };
      mf = update(kinds, live, next, { manager: `m${i}`, apiVersion: 'v1', now: `2024-01-01T00:${String(i).padStart(2, '0')}:00Z` });
      next.metadata.managedFields = mf;
      live = next;
    }
    assert.equal(mf.length, MAX_UPDATE_MANAGERS);
    const ancient = entry(mf, 'ancient-changes')!;
    assert.ok(ancient, JSON.stringify(mf.map((e) => e.manager)));
    // The three oldest (creator, m0, m1) are folded together, with the time of the last folded.
    assert.deepEqual(FieldSet.fromFieldsV1(ancient.fieldsV1).paths().map(pathString), ['.granularMap', '.scalar', '.granularMap.k0', '.granularMap.k1']);
    assert.equal(ancient.time, '2024-01-01T00:01:00Z');
    assert.equal(entry(mf, 'creator'), undefined);
    assert.equal(entry(mf, 'm0'), undefined);
    assert.equal(entry(mf, 'm1'), undefined);
    assert.ok(entry(mf, 'm10'));
  });

  it('sorts entries as kube does: Apply first, then by time, then by manager', () => {
    const a = apply(kinds, undefined, { ...base, scalar: 'a' }, opts('zed', { now: T2 }));
    const n1 = structuredClone(a.object);
    n1.num = 1;
    n1.metadata.managedFields = update(kinds, a.object, n1, { manager: 'beta', apiVersion: 'v1', now: T1 });
    const n2 = structuredClone(n1);
    n2.granularMap = { k: 'v' };
    n2.metadata.managedFields = update(kinds, n1, n2, { manager: 'alpha', apiVersion: 'v1', now: T1 });
    const r = apply(kinds, n2, { ...base, scalar: 'a', struct: { a: 'q' } }, opts('aaa', { now: T0 }));
    assert.deepEqual(
      r.managedFields.map((e) => `${e.operation}:${e.manager}`),
      ['Apply:aaa', 'Apply:zed', 'Update:alpha', 'Update:beta'],
    );
  });

  it('managedFields sent with the write replace the live ones; [] and [{}] reset; untracked objects stay untracked', () => {
    const a = apply(kinds, undefined, { ...base, scalar: 'a' }, opts('alice'));
    // Direct edit: the request's managedFields win.
    const edited = structuredClone(a.object);
    edited.metadata.managedFields = [{ manager: 'someone', operation: 'Update', apiVersion: 'v1', time: T0, fieldsType: 'FieldsV1', fieldsV1: { 'f:scalar': {} } }];
    assert.deepEqual(
      update(kinds, a.object, edited, { manager: 'x', apiVersion: 'v1', now: T1 }).map((e) => e.manager),
      ['someone'],
    );
    // Invalid ones are ignored in favour of the live ones.
    const invalid = structuredClone(a.object);
    invalid.metadata.managedFields = [{ manager: 'bad', operation: 'Oops', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: {} }];
    assert.deepEqual(update(kinds, a.object, invalid, { manager: 'x', apiVersion: 'v1', now: T1 }), a.managedFields);
    // Reset with [{}] (and with [], as kube-apiserver does), even together with other changes.
    for (const reset of [[{}], []]) {
      const next = structuredClone(a.object);
      next.metadata.managedFields = reset;
      next.num = 4;
      assert.deepEqual(update(kinds, a.object, next, { manager: 'x', apiVersion: 'v1', now: T1 }), []);
    }
    // Once untracked, updates of the existing object are not tracked.
    const untracked = { ...base, scalar: 'a' };
    assert.deepEqual(update(kinds, untracked, { ...untracked, num: 2 }, { manager: 'x', apiVersion: 'v1', now: T1 }), []);
    // A subresource write never takes managedFields from the request.
    const sub = structuredClone(a.object);
    sub.metadata.managedFields = [{}];
    sub.status = { ready: 1 };
    const mf = update(kinds, a.object, sub, { manager: 'k', apiVersion: 'v1', subresource: 'status', now: T1 });
    assert.deepEqual(
      mf.map((e) => e.manager),
      ['alice', 'k'],
    );
  });

  it('the first apply to an untracked object attributes existing fields to before-first-apply', () => {
    const untracked = { ...base, scalar: 'a', num: 1 };
    expectConflict(
      () => apply(kinds, untracked, { ...base, scalar: 'b' }, opts('alice', { now: T1 })),
      'Apply failed with 1 conflict: conflict with "before-first-apply" using v1: .scalar',
      [{ field: '.scalar', message: 'conflict with "before-first-apply" using v1' }],
    );
    const r = apply(kinds, untracked, { ...base, scalar: 'a', struct: { a: 'x' } }, opts('alice', { now: T1 }));
    assert.deepEqual(owned(r.managedFields, 'before-first-apply', 'Update'), ['.num', '.scalar']);
    assert.equal(entry(r.managedFields, 'before-first-apply')!.time, T1);
    assert.deepEqual(owned(r.managedFields, 'alice', 'Apply'), ['.scalar', '.struct.a']);
  });
});

describe('schema changes between atomic and granular', () => {
  const granular: TypeNode = { type: 'object', properties: { data: { type: 'map', values: S } } };
  const atomic: TypeNode = { type: 'object', properties: { data: { type: 'map', mapType: 'atomic', values: S } } };

  it('owning part of a field that became atomic means owning the field', () => {
    const a = apply(granular, undefined, { data: { key1: 'a' } }, opts('one'));
    expectConflict(() => apply(atomic, a.object, { data: { key2: 'b' } }, opts('two')), 'Apply failed with 1 conflict: conflict with "one": .data');
    const forced = apply(atomic, a.object, { data: { key2: 'b' } }, opts('two', { force: true }));
    assert.deepEqual(forced.object.data, { key2: 'b' });
    assert.deepEqual(owned(forced.managedFields, 'two'), ['.data']);
    assert.equal(entry(forced.managedFields, 'one'), undefined);
  });

  it('owning a field that became granular stays owning the field alone, as if it had always been granular', () => {
    const a = apply(atomic, undefined, { data: { key1: 'a', key2: 'b' } }, opts('one'));
    assert.deepEqual(owned(a.managedFields, 'one'), ['.data']);
    const b = apply(granular, a.object, { data: { key2: 'c' } }, opts('two'));
    assert.deepEqual(b.object.data, { key1: 'a', key2: 'c' });
    assert.deepEqual(owned(b.managedFields, 'one'), ['.data']);
    assert.deepEqual(owned(b.managedFields, 'two'), ['.data.key2']);
    // The first owner's next apply without key1 removes nothing it no longer owns.
    const c = apply(granular, b.object, { data: { key2: 'c' } }, opts('one'));
    assert.deepEqual(c.object.data, { key1: 'a', key2: 'c' });
  });
});

describe('schema reconciliation leaves ordinary sets alone', () => {
  it('an empty struct owned as a whole keeps its owner and does not conflict when another applier fills it', () => {
    const created = { apiVersion: 'v1', kind: 'Thing', metadata: { name: 'x' }, struct: {} };
    const mf = update(kinds, undefined, created, { manager: 'creator', apiVersion: 'v1', now: T0 });
    assert.deepEqual(owned(mf, 'creator'), ['.struct']);
    const live = { ...created, metadata: { name: 'x', managedFields: mf } };
    const r = apply(kinds, live, { apiVersion: 'v1', kind: 'Thing', metadata: { name: 'x' }, struct: { a: 'x' } }, opts('two', { now: T1 }));
    assert.deepEqual(owned(r.managedFields, 'creator'), ['.struct']);
    assert.deepEqual(owned(r.managedFields, 'two'), ['.struct.a']);
  });
});

describe('seed scenarios on built-in kinds', () => {
  const nginx = () => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'nginx-deployment', labels: { app: 'nginx' } },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: 'nginx' } },
      template: { metadata: { labels: { app: 'nginx' } }, spec: { containers: [{ name: 'nginx', image: 'nginx:1.14.2' }] } },
    },
  });
  const dopts = (manager: string, extra: Partial<ApplyOptions> = {}): ApplyOptions => ({ manager, force: false, apiVersion: 'apps/v1', now: T0, statusSubresource: true, ...extra });
  const scaled = (live: any, replicas: number, manager: string, now: string) => {
    const next = structuredClone(live);
    next.spec.replicas = replicas;
    next.metadata.managedFields = update(deployment, live, next, { manager, apiVersion: 'apps/v1', now, statusSubresource: true });
    return next;
  };

  it('creates a Deployment by apply with kube-shaped managedFields', () => {
    const r = apply(deployment, undefined, nginx(), dopts('kubectl'));
    assert.equal(
      JSON.stringify(r.managedFields[0].fieldsV1),
      '{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:replicas":{},"f:selector":{},"f:template":{"f:metadata":{"f:labels":{"f:app":{}}},' +
        '"f:spec":{"f:containers":{"k:{\\"name\\":\\"nginx\\"}":{".":{},"f:image":{},"f:name":{}}}}}}}',
    );
  });

  it('HPA: keeping replicas in the config conflicts once the HPA has written them', () => {
    const user = apply(deployment, undefined, nginx(), dopts('kubectl'));
    const afterHpa = scaled(user.object, 5, 'kube-controller-manager', T1);
    assert.deepEqual(owned(afterHpa.metadata.managedFields, 'kube-controller-manager'), ['.spec.replicas']);
    assert.ok(!owned(afterHpa.metadata.managedFields, 'kubectl').includes('.spec.replicas'));
    expectConflict(
      () => apply(deployment, afterHpa, nginx(), dopts('kubectl', { now: T2 })),
      'Apply failed with 1 conflict: conflict with "kube-controller-manager" using apps/v1: .spec.replicas',
      [{ field: '.spec.replicas', message: 'conflict with "kube-controller-manager" using apps/v1' }],
    );
    // Dropping replicas from the config now leaves them with the HPA.
    const cfg = nginx() as any;
    delete cfg.spec.replicas;
    const r = apply(deployment, afterHpa, cfg, dopts('kubectl', { now: T2 }));
    assert.equal(r.object.spec.replicas, 5);
  });

  it('HPA handover: a temporary manager shares replicas, the user drops them, the HPA takes them and the temporary entry vanishes', () => {
    const user = apply(deployment, undefined, nginx(), dopts('kubectl'));
    const handover = apply(deployment, user.object, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'nginx-deployment' }, spec: { replicas: 3 } }, dopts('handover-to-hpa', { now: T1 }));
    assert.deepEqual(owned(handover.managedFields, 'handover-to-hpa'), ['.spec.replicas']);
    const cfg = nginx() as any;
    delete cfg.spec.replicas;
    const dropped = apply(deployment, handover.object, cfg, dopts('kubectl', { now: T2 }));
    assert.equal(dropped.object.spec.replicas, 3, 'still owned by handover-to-hpa: kept, not reset');
    assert.ok(!owned(dropped.managedFields, 'kubectl').includes('.spec.replicas'));
    const hpa = scaled(dropped.object, 7, 'kube-controller-manager', T3);
    assert.equal(entry(hpa.metadata.managedFields, 'handover-to-hpa'), undefined);
    assert.deepEqual(owned(hpa.metadata.managedFields, 'kube-controller-manager'), ['.spec.replicas']);
    // Had the HPA been first, the handover apply would conflict (and then there is nothing to do).
    const early = scaled(user.object, 4, 'kube-controller-manager', T1);
    expectConflict(
      () => apply(deployment, early, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'nginx-deployment' }, spec: { replicas: 3 } }, dopts('handover-to-hpa', { now: T2 })),
      'Apply failed with 1 conflict: conflict with "kube-controller-manager" using apps/v1: .spec.replicas',
    );
  });

  it('transfer between users: share by applying the same value, then the first drops it', () => {
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'test-cm', namespace: 'default', labels: { 'test-label': 'test' } }, data: { key: 'some value' } };
    const one = apply(configMap, undefined, cm, opts('user-one'));
    const two = apply(configMap, one.object, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'test-cm', namespace: 'default' }, data: { key: 'some value' } }, opts('user-two', { now: T1 }));
    assert.deepEqual(owned(two.managedFields, 'user-one'), ['.data.key', '.metadata.labels.test-label']);
    assert.deepEqual(owned(two.managedFields, 'user-two'), ['.data.key']);
    const released = apply(configMap, two.object, { ...cm, data: undefined }, opts('user-one', { now: T2 }));
    assert.equal(released.object.data.key, 'some value');
    assert.deepEqual(owned(released.managedFields, 'user-one'), ['.metadata.labels.test-label']);
    assert.deepEqual(owned(released.managedFields, 'user-two'), ['.data.key']);
    // Now user-two alone may change it.
    const changed = apply(configMap, released.object, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'test-cm', namespace: 'default' }, data: { key: 'new' } }, opts('user-two', { now: T3 }));
    assert.equal(changed.object.data.key, 'new');
  });

  it("upgrading from client-side apply: kubectl's first server-side apply takes over what last-applied still matches", () => {
    const csaConfig = nginx() as any;
    csaConfig.spec.replicas = 2;
    const lastApplied = JSON.stringify(csaConfig) + '\n';
    const created = structuredClone(csaConfig);
    created.metadata.annotations = { [LAST_APPLIED_ANNOTATION]: lastApplied };
    created.metadata.managedFields = update(deployment, undefined, created, { manager: 'kubectl-client-side-apply', apiVersion: 'apps/v1', now: T0, statusSubresource: true });
    assert.ok(owned(created.metadata.managedFields, 'kubectl-client-side-apply').includes('.spec.replicas'));

    const ssa = nginx(); // replicas 3
    // Another field manager gets the conflict.
    expectConflict(
      () => apply(deployment, created, ssa, dopts('my-manager', { now: T1 })),
      'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps/v1: .spec.replicas',
    );
    // kubectl does not.
    const r = apply(deployment, created, ssa, dopts('kubectl', { now: T1 }));
    assert.equal(r.object.spec.replicas, 3);
    assert.ok(owned(r.managedFields, 'kubectl', 'Apply').includes('.spec.replicas'));
    assert.ok(!owned(r.managedFields, 'kubectl-client-side-apply').includes('.spec.replicas'));
    // ...and keeps the last-applied annotation in step with what it applied (Go JSON: sorted keys, newline).
    assert.equal(
      r.object.metadata.annotations[LAST_APPLIED_ANNOTATION],
      '{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"labels":{"app":"nginx"},"name":"nginx-deployment"},"spec":{"replicas":3,"selector":{"matchLabels":{"app":"nginx"}},' +
        '"template":{"metadata":{"labels":{"app":"nginx"}},"spec":{"containers":[{"image":"nginx:1.14.2","name":"nginx"}]}}}}\n',
    );
    // When someone else changed the field since, last-applied no longer matches: still a conflict.
    const drifted = scaled(created, 6, 'kube-controller-manager', T1);
    expectConflict(
      () => apply(deployment, drifted, ssa, dopts('kubectl', { now: T2 })),
      'Apply failed with 1 conflict: conflict with "kube-controller-manager" using apps/v1: .spec.replicas',
    );
  });

  it('csaupgrade: client-side apply entries merge into the server-side Apply entry', () => {
    const mf: ManagedFieldsEntry[] = [
      { manager: 'kubectl-client-side-apply', operation: 'Update', apiVersion: 'apps/v1', time: T1, fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:replicas': {} } } },
      { manager: 'hpa', operation: 'Update', apiVersion: 'apps/v1', time: T0, fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:paused': {} } } },
    ];
    const up = upgradeManagedFields(mf, ['kubectl-client-side-apply'], 'kubectl');
    assert.deepEqual(up, [
      { manager: 'kubectl', operation: 'Apply', apiVersion: 'apps/v1', time: T1, fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:replicas': {} } } },
      mf[1],
    ]);
    const withSsa: ManagedFieldsEntry[] = [{ manager: 'kubectl', operation: 'Apply', apiVersion: 'apps/v1', time: T2, fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': { 'f:app': {} } } } }, mf[0]];
    assert.deepEqual(upgradeManagedFields(withSsa, ['kubectl-client-side-apply'], 'kubectl'), [
      { ...withSsa[0], fieldsV1: { 'f:metadata': { 'f:labels': { 'f:app': {} } }, 'f:spec': { 'f:replicas': {} } } },
    ]);
    assert.deepEqual(upgradeManagedFields([mf[1]], ['kubectl-client-side-apply'], 'kubectl'), [mf[1]]);
  });

  it('a create compared with the Go zero value gets kube-shaped Update entries', () => {
    const proto = JSON.parse(readFileSync(new URL('../../../../schemas/protobuf.json', import.meta.url), 'utf8')) as { messages: Record<string, { fields: Record<string, { ptr?: boolean }> }> };
    const emptyObject = zeroObject(deployment, (def, field) => proto.messages[def]?.fields[field]);
    assert.deepEqual(emptyObject, {
      metadata: { creationTimestamp: null },
      spec: { selector: null, strategy: {}, template: { metadata: { creationTimestamp: null }, spec: { containers: null } } },
      status: {},
    });
    const obj = nginx() as any;
    obj.spec.strategy = { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } };
    const mf = update(deployment, undefined, obj, { manager: 'kubectl-create', apiVersion: 'apps/v1', now: T0, statusSubresource: true, emptyObject });
    assert.equal(
      JSON.stringify(mf[0].fieldsV1),
      '{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:replicas":{},"f:selector":{},' +
        '"f:strategy":{"f:rollingUpdate":{".":{},"f:maxSurge":{},"f:maxUnavailable":{}},"f:type":{}},' +
        '"f:template":{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{"k:{\\"name\\":\\"nginx\\"}":{".":{},"f:image":{},"f:name":{}}}}}}}',
    );
  });
});

// ---------------------------------------------------------------------------------------------
// update() writes a create's FieldsV1 straight from one walk (createdFieldsV1); updateGenerally
// takes kube's layers (compare, set algebra, FieldSet.toFieldsV1). Same bytes expected.

describe('the create shortcut gives what the general path gives', () => {
  const same = (node: TypeNode, obj: unknown, o: Parameters<typeof update>[3]): ManagedFieldsEntry[] => {
    const fast = update(node, undefined, obj, o);
    const general = updateGenerally(node, undefined, obj, o);
    // Compared as bytes: key order (kube's order, "." first) is part of the result.
    assert.equal(JSON.stringify(fast), JSON.stringify(general));
    return fast;
  };
  const proto = JSON.parse(readFileSync(new URL('../../../../schemas/protobuf.json', import.meta.url), 'utf8')) as { messages: Record<string, { fields: Record<string, { ptr?: boolean }> }> };
  const shape = (def: string, field: string) => proto.messages[def]?.fields[field];

  it('the bench Widget custom resource (~200 fields), as the store records it', () => {
    const info = customResourceInfos(benchWidgetsCRD())[0];
    const node = info.custom!.typeNode();
    for (const i of [0, 7]) {
      const w = benchWidget(i) as any;
      info.custom!.compiled().applyDefaults(w);
      Object.assign(w.metadata, { uid: 'u-' + i, generation: 1, creationTimestamp: T0 });
      w.status = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] };
      const mf = same(node, w, { manager: 'kubectl-create', apiVersion: 'bench.hearth.test/v1', now: T0, statusSubresource: true, emptyObject: {} });
      const paths = owned(mf, 'kubectl-create');
      assert.ok(paths.length > 150, String(paths.length));
      assert.ok(paths.includes('.spec.ports[name="http"].port'));
      assert.ok(paths.includes('.spec.tags[="bench"]'));
      assert.ok(!paths.some((p) => p.startsWith('.status') || p === '.metadata.uid' || p === '.metadata.name'));
      // Without the status subresource status is owned too; with a different manager and subresource spelling.
      same(node, w, { manager: '', apiVersion: 'bench.hearth.test/v1', now: T0, emptyObject: {} });
      same(node, w, { manager: 'x<&>', apiVersion: 'v1', now: T0, subresource: 'status', emptyObject: {} });
    }
  });

  it('a Deployment compared with its Go zero value, with and without reset fields', () => {
    const emptyObject = zeroObject(deployment, shape);
    const d = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'ns', uid: 'u', labels: { app: 'web' }, annotations: { a: 'b' }, finalizers: ['x', 'y'] },
      spec: {
        replicas: 3,
        selector: { matchLabels: { app: 'web' } },
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 1 } },
        template: {
          metadata: { labels: { app: 'web' }, creationTimestamp: null },
          spec: {
            containers: [
              {
                name: 'app',
                image: 'web:1',
                args: ['--a', '--b'],
                ports: [{ name: 'http', containerPort: 8080 }, { containerPort: 9090, protocol: 'UDP' }],
                env: [{ name: 'A', value: '1' }, { name: 'P', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
                resources: { requests: { cpu: '100m' }, limits: { memory: '1Gi' } },
                volumeMounts: [{ name: 'config', mountPath: '/etc' }],
              },
              { name: 'sidecar', image: 'proxy:2' },
            ],
            volumes: [{ name: 'config', configMap: { name: 'cfg' } }, { name: 'tmp', emptyDir: {} }],
            tolerations: [{ key: 'k', operator: 'Exists' }],
          },
        },
      },
      status: { replicas: 1 },
    };
    const base = { manager: 'kubectl-create', apiVersion: 'apps/v1', now: T0, emptyObject };
    same(deployment, d, { ...base, statusSubresource: true });
    same(deployment, d, base);
    same(deployment, d, { ...base, resetFields: [['spec', 'template', 'spec'], ['metadata', 'labels']] });
    same(deployment, d, { ...base, emptyObject: undefined });
    // A repeated element: the general path owns it whole, so does the shortcut.
    const dup = structuredClone(d);
    dup.spec.template.spec.containers.push({ name: 'app', image: 'web:2' } as any);
    same(deployment, dup, base);
    // Problems (a list-map element without its key, an undefined value) give what they always gave.
    const noKey = structuredClone(d) as any;
    noKey.spec.template.spec.containers.push({ image: 'nameless' });
    assert.deepEqual(same(deployment, noKey, base), []);
    const undef = structuredClone(d) as any;
    undef.spec.paused = undefined;
    same(deployment, undef, base);
  });

  it('sets kept for an object written again (from its second write on) give what reading its FieldsV1 gives', () => {
    const emptyObject = zeroObject(deployment, shape);
    // The same writes to an object with a uid (whose sets get kept and reused) and without (never kept).
    const run = (uid: string | undefined): string[] => {
      const out: string[] = [];
      let live: any;
      for (let i = 0; i < 6; i++) {
        const first = {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'web', labels: { app: 'web' } },
          spec: { replicas: 1, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'web:1' }] } } },
        };
        const next: any = live === undefined ? first : structuredClone(live);
        if (uid !== undefined) next.metadata.uid = uid;
        else delete next.metadata.uid;
        next.spec.replicas = i;
        if (i % 2 === 1) next.metadata.labels = { ...next.metadata.labels, [`l${i}`]: 'x' };
        const manager = ['kubectl-create', 'hpa', 'kubectl-edit'][i % 3];
        next.metadata.managedFields = update(deployment, live, next, { manager, apiVersion: 'apps/v1', now: [T0, T1, T2, T3][i % 4], statusSubresource: true, emptyObject });
        // The next write sees the stored object again (a copy, as read back from storage).
        live = JSON.parse(JSON.stringify(next));
        out.push(JSON.stringify(next.metadata.managedFields));
      }
      return out;
    };
    assert.deepEqual(run('u-kept-' + Date.now()), run(undefined));
  });

  it('random objects with lists of every list type, maps, structs and untyped values, against random zero objects', () => {
    // mulberry32: the same cases on every run.
    let seed = 0x5eed;
    const rnd = (): number => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
    const STRINGS = ['a', 'b', 'c', 'a<b', 'é', '\u{1F600}', '\uFFFD', ''];
    const odd = (): unknown => pick([null, 1, 'x', [], {}, true, undefined]);
    // A value for a node; `density` is how likely optional parts are present.
    let oddRate = 0;
    const gen = (node: TypeNode, density: number, depth: number): unknown => {
      if (rnd() < oddRate) return odd();
      switch (node.type) {
        case 'string':
          return pick(STRINGS);
        case 'integer':
          return pick([0, 1, 2, 80]);
        case 'boolean':
          return rnd() < 0.5;
        case 'array': {
          const n = Math.floor(rnd() * 4);
          const items = Array.from({ length: n }, () => gen(node.items!, density, depth + 1));
          // List-map elements carry their keys (from small pools, so that some repeat), but for a few odd ones.
          const keys = node.listMapKeys ?? (node.patchMergeKey ? [node.patchMergeKey] : []);
          for (const it of items) {
            if (!it || typeof it !== 'object' || Array.isArray(it) || rnd() < oddRate * 3) continue;
            for (const k of keys) (it as Record<string, unknown>)[k] = k === 'port' ? pick([80, 443]) : pick(['a', 'b', 'c']);
          }
          return items;
        }
        case 'map': {
          const out: Record<string, unknown> = {};
          for (const k of ['x', 'y', 'z', 'ü']) if (rnd() < density) out[k] = gen(node.values!, density, depth + 1);
          return out;
        }
        case 'object': {
          const out: Record<string, unknown> = {};
          for (const [k, child] of Object.entries(node.properties ?? {})) if (rnd() < density) out[k] = gen(child, density, depth + 1);
          if (rnd() < 0.05) out.undeclared = 'u';
          return out;
        }
        default:
          return depth > 3 || rnd() < 0.3 ? pick(STRINGS) : rnd() < 0.5 ? { p: gen(node, density, depth + 1), q: [1, 2] } : [gen(node, density, depth + 1)];
      }
    };
    let owning = 0;
    const N = 400;
    for (let i = 0; i < N; i++) {
      // A quarter of the objects have odd values here and there (wrong types, nulls, undefined, elements without keys).
      oddRate = i % 4 === 0 ? 0.03 : 0;
      const obj = gen(kinds, 0.6, 0) as Record<string, unknown>;
      const zero = rnd() < 0.4 ? {} : gen(kinds, 0.25, 0);
      const o = {
        manager: pick(['m', '', 'kube-controller-manager']),
        apiVersion: 'v1',
        now: T0,
        emptyObject: zero,
        ...(rnd() < 0.5 ? { statusSubresource: true } : {}),
        ...(rnd() < 0.2 ? { resetFields: [['spec', 'replicas'], ['mapList']] } : {}),
        ...(rnd() < 0.1 ? { subresource: 'status' } : {}),
      };
      if (same(kinds, obj, o).length > 0) owning++;
    }
    // Most cases own something (not only the failures that give []).
    assert.ok(owning > N * 0.6, `${owning} of ${N}`);
  });
});
