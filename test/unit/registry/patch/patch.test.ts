import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../../../../server/errors.ts';
import type { TypeNode } from '../../../../server/schema/types.ts';
import {
  applyJsonPatch,
  applyMergePatch,
  applyPatch,
  applyStrategicMergePatch,
  MAX_JSON_PATCH_OPERATIONS,
  PATCH_TYPES,
} from '../../../../server/registry/patch/index.ts';

// ---------------------------------------------------------------------------------------------
// Hand-built TypeNodes: a small Deployment-like shape.

const str: TypeNode = { type: 'string' };
const int: TypeNode = { type: 'integer' };
const intOrString: TypeNode = { type: 'int-or-string' };

const objectMeta: TypeNode = {
  type: 'object',
  properties: {
    name: str,
    namespace: str,
    labels: { type: 'map', values: str },
    annotations: { type: 'map', values: str },
    finalizers: { type: 'array', items: str, patchStrategy: 'merge' },
  },
};

const containerPort: TypeNode = {
  type: 'object',
  properties: { name: str, containerPort: int, protocol: str },
};

const envVar: TypeNode = { type: 'object', properties: { name: str, value: str } };

const container: TypeNode = {
  type: 'object',
  properties: {
    name: str,
    image: str,
    args: { type: 'array', items: str },
    ports: {
      type: 'array',
      items: containerPort,
      patchStrategy: 'merge',
      patchMergeKey: 'containerPort',
      listType: 'map',
      listMapKeys: ['containerPort', 'protocol'],
    },
    env: { type: 'array', items: envVar, patchStrategy: 'merge', patchMergeKey: 'name', listType: 'map', listMapKeys: ['name'] },
  },
};

const volume: TypeNode = {
  type: 'object',
  properties: {
    name: str,
    emptyDir: { type: 'object', properties: { medium: str } },
    configMap: { type: 'object', properties: { name: str } },
  },
};

const podSpec: TypeNode = {
  type: 'object',
  properties: {
    containers: { type: 'array', items: container, patchStrategy: 'merge', patchMergeKey: 'name', listType: 'map', listMapKeys: ['name'] },
    volumes: { type: 'array', items: volume, patchStrategy: 'merge,retainKeys', patchMergeKey: 'name' },
    tolerations: { type: 'array', items: { type: 'object', properties: { key: str, value: str } }, listType: 'atomic' },
    nodeSelector: { type: 'map', values: str, mapType: 'atomic' },
  },
};

const deploymentStrategy: TypeNode = {
  type: 'object',
  patchStrategy: 'retainKeys',
  properties: {
    type: str,
    rollingUpdate: { type: 'object', properties: { maxSurge: intOrString, maxUnavailable: intOrString } },
  },
};

const deployment: TypeNode = {
  type: 'object',
  properties: {
    apiVersion: str,
    kind: str,
    metadata: objectMeta,
    spec: {
      type: 'object',
      properties: {
        replicas: int,
        strategy: deploymentStrategy,
        template: { type: 'object', properties: { metadata: objectMeta, spec: podSpec } },
        extra: { type: 'any' },
        matrix: { type: 'array', items: { type: 'array', items: str }, patchStrategy: 'merge' },
      },
    },
  },
};

// ---------------------------------------------------------------------------------------------
// Helpers.

type Obj = Record<string, any>;

function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null) {
    for (const child of Object.values(v)) deepFreeze(child);
    Object.freeze(v);
  }
  return v;
}

function expectApiError(fn: () => unknown, code: number, reason: string, message?: string | RegExp): ApiError {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof ApiError, `expected an ApiError, got ${String(caught)}`);
  assert.equal(caught.code, code, `code (message: ${caught.message})`);
  assert.equal(caught.reason, reason);
  if (typeof message === 'string') assert.equal(caught.message, message);
  else if (message) assert.match(caught.message, message);
  return caught;
}

const REJECTED = 'the server rejected our request due to an error in our request';

function expectJsonPatchFailure(doc: unknown, patch: unknown, cause: string | RegExp): void {
  const err = expectApiError(() => applyJsonPatch(doc, patch), 422, 'Invalid', REJECTED);
  if (typeof cause === 'string') assert.equal(err.cause, cause);
  else assert.match(String(err.cause), cause);
  assert.equal(err.toStatus().code, 422);
}

function sampleDeployment(): Obj {
  return deepFreeze({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'web',
      namespace: 'default',
      labels: { app: 'web', tier: 'front' },
      annotations: { 'example.com/a': '1' },
      finalizers: ['a.example.com/one', 'b.example.com/two'],
    },
    spec: {
      replicas: 2,
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          containers: [
            {
              name: 'app',
              image: 'nginx:1',
              args: ['--a', '--b'],
              ports: [
                { containerPort: 80, protocol: 'TCP' },
                { containerPort: 443, protocol: 'TCP' },
              ],
              env: [
                { name: 'A', value: '1' },
                { name: 'B', value: '2' },
              ],
            },
            { name: 'sidecar', image: 'busybox' },
          ],
          volumes: [{ name: 'data', emptyDir: { medium: 'Memory' } }],
          tolerations: [{ key: 'k1', value: 'v1' }],
          nodeSelector: { zone: 'a' },
        },
      },
    },
  });
}

const smp = (doc: unknown, patch: unknown) => applyStrategicMergePatch(doc, patch, deployment) as Obj;
const names = (list: Obj[]) => list.map((c) => c.name);

// ---------------------------------------------------------------------------------------------

describe('PATCH_TYPES / applyPatch', () => {
  it('lists the three content types', () => {
    assert.deepEqual([...PATCH_TYPES], ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json']);
  });

  it('dispatches on the media type, ignoring parameters', () => {
    const doc = deepFreeze({ a: 1, list: [1, 2] });
    assert.deepEqual(applyPatch('application/json-patch+json; charset=utf-8', doc, [{ op: 'add', path: '/b', value: 2 }], undefined), { a: 1, list: [1, 2], b: 2 });
    assert.deepEqual(applyPatch('application/merge-patch+json', doc, { a: null, list: [3] }, undefined), { list: [3] });
    assert.deepEqual(applyPatch('application/strategic-merge-patch+json', doc, { b: 1 }, undefined), { a: 1, list: [1, 2], b: 1 });
  });

  it('rejects other content types with 415', () => {
    expectApiError(
      () => applyPatch('application/json', {}, {}, undefined),
      415,
      'UnsupportedMediaType',
      'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json',
    );
  });

  it('rejects merge patches that are not objects the way the handler decodes them', () => {
    expectApiError(() => applyPatch('application/merge-patch+json', { a: 1 }, [1], undefined), 400, 'BadRequest',
      'error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}');
    expectApiError(() => applyPatch('application/merge-patch+json', { a: 1 }, 'x', undefined), 400, 'BadRequest',
      'error decoding patch: json: cannot unmarshal string into Go value of type map[string]interface {}');
    expectApiError(() => applyPatch('application/merge-patch+json', { a: 1 }, null, undefined), 400, 'BadRequest', 'Invalid JSON Patch');
  });
});

describe('JSON patch (RFC 6902)', () => {
  it('adds, replaces and removes without mutating the input, sharing untouched subtrees', () => {
    const doc = sampleDeployment();
    const out = applyJsonPatch(doc, [
      { op: 'replace', path: '/spec/replicas', value: 5 },
      { op: 'add', path: '/metadata/labels/env', value: 'prod' },
      { op: 'remove', path: '/metadata/labels/tier' },
    ]) as Obj;
    assert.equal(out.spec.replicas, 5);
    assert.deepEqual(out.metadata.labels, { app: 'web', env: 'prod' });
    assert.equal(doc.spec.replicas, 2);
    assert.deepEqual(doc.metadata.labels, { app: 'web', tier: 'front' });
    assert.equal(out.spec.template, doc.spec.template, 'untouched subtree is shared');
    assert.notEqual(out.spec, doc.spec);
  });

  it('decodes ~1 and ~0 escapes in pointers', () => {
    const doc = deepFreeze({ metadata: { annotations: { 'example.com/a': '1', 'x~y': 'z' } } });
    const out = applyJsonPatch(doc, [
      { op: 'replace', path: '/metadata/annotations/example.com~1a', value: '2' },
      { op: 'remove', path: '/metadata/annotations/x~0y' },
      { op: 'add', path: '/metadata/annotations/a~01', value: 'tilde-one' },
    ]) as Obj;
    assert.deepEqual(out.metadata.annotations, { 'example.com/a': '2', 'a~1': 'tilde-one' });
  });

  it('appends with "-", inserts by index and counts negative indexes from the end', () => {
    const doc = deepFreeze({ list: ['a', 'b'] });
    assert.deepEqual(applyJsonPatch(doc, [{ op: 'add', path: '/list/-', value: 'c' }]), { list: ['a', 'b', 'c'] });
    assert.deepEqual(applyJsonPatch(doc, [{ op: 'add', path: '/list/0', value: 'z' }]), { list: ['z', 'a', 'b'] });
    assert.deepEqual(applyJsonPatch(doc, [{ op: 'add', path: '/list/2', value: 'end' }]), { list: ['a', 'b', 'end'] });
    assert.deepEqual(applyJsonPatch(doc, [{ op: 'remove', path: '/list/-1' }]), { list: ['a'] });
    assert.deepEqual(applyJsonPatch(doc, [{ op: 'replace', path: '/list/1', value: 'B' }]), { list: ['a', 'B'] });
  });

  it('enforces array bounds', () => {
    const doc = deepFreeze({ list: ['a', 'b'] });
    expectJsonPatchFailure(doc, [{ op: 'add', path: '/list/3', value: 'x' }],
      "error in add for path: '/list/3': Unable to access invalid index: 3: invalid index referenced");
    expectJsonPatchFailure(doc, [{ op: 'remove', path: '/list/2' }],
      "error in remove for path: '/list/2': Unable to access invalid index: 2: invalid index referenced");
    expectJsonPatchFailure(doc, [{ op: 'replace', path: '/list/5', value: 'x' }],
      'replace operation does not apply: doc is missing key: /list/5: missing value');
    expectJsonPatchFailure(doc, [{ op: 'add', path: '/list/x', value: 'x' }], /value was not a proper array index: 'x'/);
  });

  it('test op passes or fails the whole patch with 422', () => {
    const doc = sampleDeployment();
    const out = applyJsonPatch(doc, [
      { op: 'test', path: '/spec/replicas', value: 2 },
      { op: 'test', path: '/metadata/labels', value: { tier: 'front', app: 'web' } },
      { op: 'replace', path: '/spec/replicas', value: 3 },
    ]) as Obj;
    assert.equal(out.spec.replicas, 3);
    expectJsonPatchFailure(doc, [
      { op: 'replace', path: '/spec/replicas', value: 3 },
      { op: 'test', path: '/spec/replicas', value: 2 },
    ], 'testing value /spec/replicas failed: test failed');
    assert.equal(doc.spec.replicas, 2);
    // null matches a missing member
    applyJsonPatch(doc, [{ op: 'test', path: '/metadata/labels/missing', value: null }]);
    expectJsonPatchFailure(doc, [{ op: 'test', path: '/metadata/labels/app', value: null }], 'testing value /metadata/labels/app failed: test failed');
  });

  it('remove of a missing member or path is 422 Invalid with the generic message', () => {
    const doc = sampleDeployment();
    expectJsonPatchFailure(doc, [{ op: 'remove', path: '/metadata/labels/nope' }],
      "error in remove for path: '/metadata/labels/nope': Unable to remove nonexistent key: nope: missing value");
    expectJsonPatchFailure(doc, [{ op: 'remove', path: '/spec/missing/x' }],
      'remove operation does not apply: doc is missing path: "/spec/missing/x": missing value');
    expectJsonPatchFailure(doc, [{ op: 'replace', path: '/status/foo', value: 1 }],
      'replace operation does not apply: doc is missing path: /status/foo: missing value');
  });

  it('replace of a missing member of an existing object adds it (json-patch v4 behaviour)', () => {
    const out = applyJsonPatch(sampleDeployment(), [{ op: 'replace', path: '/metadata/labels/new', value: 'x' }]) as Obj;
    assert.equal(out.metadata.labels.new, 'x');
  });

  it('moves and copies; a copy is independent of its source', () => {
    const doc = deepFreeze({ a: { x: { n: 1 } }, b: {} });
    const moved = applyJsonPatch(doc, [{ op: 'move', from: '/a/x', path: '/b/y' }]) as Obj;
    assert.deepEqual(moved, { a: {}, b: { y: { n: 1 } } });
    const copied = applyJsonPatch(doc, [
      { op: 'copy', from: '/a/x', path: '/b/y' },
      { op: 'replace', path: '/b/y/n', value: 2 },
    ]) as Obj;
    assert.deepEqual(copied, { a: { x: { n: 1 } }, b: { y: { n: 2 } } });
    const chained = applyJsonPatch(doc, [
      { op: 'replace', path: '/a/x/n', value: 5 },
      { op: 'copy', from: '/a/x', path: '/b/y' },
      { op: 'replace', path: '/b/y/n', value: 6 },
    ]) as Obj;
    assert.deepEqual(chained, { a: { x: { n: 5 } }, b: { y: { n: 6 } } });
    expectJsonPatchFailure(doc, [{ op: 'move', from: '/nope/x', path: '/b/y' }], 'move operation does not apply: doc is missing from path: /nope/x: missing value');
  });

  it('rejects bodies that are not a list of operations with 400', () => {
    expectApiError(() => applyJsonPatch({}, { op: 'add', path: '/a', value: 1 }), 400, 'BadRequest',
      'error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp');
    expectApiError(() => applyJsonPatch({}, ['add']), 400, 'BadRequest',
      'error decoding patch: json: cannot unmarshal string into Go value of type handlers.jsonPatchOp');
    expectApiError(() => applyJsonPatch({}, [{ op: 'add', path: 5 }]), 400, 'BadRequest',
      'error decoding patch: json: cannot unmarshal number into Go struct field jsonPatchOp.path of type string');
  });

  it('rejects unknown operations with 422', () => {
    expectJsonPatchFailure({ a: 1 }, [{ op: 'frobnicate', path: '/a' }], 'Unexpected kind: frobnicate');
    expectJsonPatchFailure({ a: 1 }, [{ path: '/a' }], 'Unexpected kind: unknown');
  });

  it(`limits a patch to ${MAX_JSON_PATCH_OPERATIONS} operations (413)`, () => {
    const ok = Array.from({ length: MAX_JSON_PATCH_OPERATIONS }, () => ({ op: 'test', path: '/a', value: 1 }));
    assert.deepEqual(applyJsonPatch({ a: 1 }, ok), { a: 1 });
    const tooMany = [...ok, { op: 'test', path: '/a', value: 1 }];
    expectApiError(() => applyJsonPatch({ a: 1 }, tooMany), 413, 'RequestEntityTooLarge',
      'Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001');
  });

  it('treats "__proto__" as an ordinary member', () => {
    const out = applyJsonPatch({}, [{ op: 'add', path: '/__proto__', value: { polluted: true } }]) as Obj;
    assert.ok(Object.prototype.hasOwnProperty.call(out, '__proto__'));
    assert.equal(({} as Obj).polluted, undefined);
    assert.equal(Object.getPrototypeOf(out), Object.prototype);
  });
});

describe('JSON merge patch (RFC 7386)', () => {
  it('merges objects recursively, deletes with null, replaces everything else', () => {
    const doc = sampleDeployment();
    const out = applyMergePatch(doc, {
      metadata: { labels: { tier: null, env: 'prod' } },
      spec: { replicas: null, template: { spec: { containers: [{ name: 'only' }] } } },
    }) as Obj;
    assert.deepEqual(out.metadata.labels, { app: 'web', env: 'prod' });
    assert.equal('replicas' in out.spec, false);
    assert.deepEqual(out.spec.template.spec.containers, [{ name: 'only' }]);
    assert.deepEqual(out.spec.template.spec.volumes, doc.spec.template.spec.volumes);
    assert.equal(out.spec.strategy, doc.spec.strategy, 'untouched subtree is shared');
    assert.equal(doc.spec.replicas, 2, 'input not mutated');
  });

  it('prunes nulls from values that have nothing to merge into', () => {
    const out = applyMergePatch({ a: 'x' }, { a: { b: null, c: 1 }, d: { e: null } }) as Obj;
    assert.deepEqual(out, { a: { c: 1 }, d: {} });
  });

  it('deleting a missing member is a no-op; a non-object patch replaces the document', () => {
    const doc = deepFreeze({ a: 1 });
    assert.deepEqual(applyMergePatch(doc, { b: null }), { a: 1 });
    assert.deepEqual(applyMergePatch(doc, ['x']), ['x']);
    assert.equal(applyMergePatch(doc, 'str'), 'str');
  });
});

describe('strategic merge patch', () => {
  it('merges containers by name; new elements come before the untouched ones like kube-apiserver', () => {
    const doc = sampleDeployment();
    const out = smp(doc, {
      spec: { template: { spec: { containers: [{ name: 'app', image: 'nginx:2' }, { name: 'new', image: 'redis' }] } } },
    });
    const containers = out.spec.template.spec.containers;
    assert.deepEqual(names(containers), ['app', 'new', 'sidecar']);
    assert.equal(containers[0].image, 'nginx:2');
    assert.deepEqual(containers[0].env, doc.spec.template.spec.containers[0].env, 'unpatched fields kept');
    assert.deepEqual(containers[1], { name: 'new', image: 'redis' });
    assert.equal(doc.spec.template.spec.containers[0].image, 'nginx:1', 'input not mutated');
    assert.equal(out.metadata, doc.metadata, 'untouched subtree is shared');
  });

  it('adds a new element without $setElementOrder before existing ones (kubectl patch docs example)', () => {
    const out = smp(sampleDeployment(), { spec: { template: { spec: { containers: [{ name: 'redis', image: 'redis' }] } } } });
    assert.deepEqual(names(out.spec.template.spec.containers), ['redis', 'app', 'sidecar']);
  });

  it('keeps patch order among patched elements and original positions for the rest', () => {
    const doc = deepFreeze({ metadata: { finalizers: ['1', '2', '3'] }, spec: { template: { spec: { containers: [{ name: '1' }, { name: '2', image: 'b' }, { name: '3' }] } } } });
    const out = smp(doc, { spec: { template: { spec: { containers: [{ name: '3', image: 'c' }, { name: '1', image: 'a' }] } } } });
    assert.deepEqual(out.spec.template.spec.containers, [{ name: '2', image: 'b' }, { name: '3', image: 'c' }, { name: '1', image: 'a' }]);
    const out2 = smp(doc, { metadata: { finalizers: ['3', '1'] } });
    assert.deepEqual(out2.metadata.finalizers, ['2', '3', '1']);
  });

  it('merges nested keyed lists (ports by numeric containerPort, env by name)', () => {
    const out = smp(sampleDeployment(), {
      spec: { template: { spec: { containers: [{ name: 'app', ports: [{ containerPort: 443, name: 'https' }], env: [{ name: 'A', value: 'one' }] }] } } },
    });
    const app = out.spec.template.spec.containers[0];
    assert.deepEqual(app.ports, [{ containerPort: 80, protocol: 'TCP' }, { containerPort: 443, protocol: 'TCP', name: 'https' }]);
    assert.deepEqual(app.env, [{ name: 'A', value: 'one' }, { name: 'B', value: '2' }]);
  });

  it('deletes list elements with {"$patch":"delete"}', () => {
    const out = smp(sampleDeployment(), {
      spec: { template: { spec: { containers: [{ name: 'app', env: [{ name: 'B', $patch: 'delete' }] }, { $patch: 'delete', name: 'sidecar' }] } } },
    });
    assert.deepEqual(names(out.spec.template.spec.containers), ['app']);
    assert.deepEqual(out.spec.template.spec.containers[0].env, [{ name: 'A', value: '1' }]);
  });

  it('replaces a merge list with {"$patch":"replace"}', () => {
    const out = smp(sampleDeployment(), {
      spec: { template: { spec: { containers: [{ name: 'solo', image: 'x' }, { $patch: 'replace' }] } } },
    });
    assert.deepEqual(out.spec.template.spec.containers, [{ name: 'solo', image: 'x' }]);
    const emptied = smp(sampleDeployment(), { metadata: { finalizers: [] } });
    assert.deepEqual(emptied.metadata.finalizers, ['a.example.com/one', 'b.example.com/two'], 'an empty merge list changes nothing');
  });

  it('honours $patch replace / delete / merge on maps', () => {
    const doc = sampleDeployment();
    assert.deepEqual(smp(doc, { metadata: { labels: { $patch: 'replace', only: 'me' } } }).metadata.labels, { only: 'me' });
    assert.deepEqual(smp(doc, { metadata: { labels: { $patch: 'delete' } } }).metadata.labels, {});
    assert.deepEqual(smp(doc, { metadata: { labels: { $patch: 'merge', env: 'x' } } }).metadata.labels, { app: 'web', tier: 'front', env: 'x' });
  });

  it('merges maps per key and deletes with null', () => {
    const out = smp(sampleDeployment(), { metadata: { labels: { tier: null, env: 'prod' }, annotations: { 'example.com/b': '2' } }, spec: { replicas: null } });
    assert.deepEqual(out.metadata.labels, { app: 'web', env: 'prod' });
    assert.deepEqual(out.metadata.annotations, { 'example.com/a': '1', 'example.com/b': '2' });
    assert.equal('replicas' in out.spec, false);
  });

  it('replaces lists without a merge strategy wholesale', () => {
    const out = smp(sampleDeployment(), {
      spec: { template: { spec: { tolerations: [{ key: 'k2', value: 'v2' }], containers: [{ name: 'app', args: ['--c'] }] } } },
    });
    assert.deepEqual(out.spec.template.spec.tolerations, [{ key: 'k2', value: 'v2' }]);
    assert.deepEqual(out.spec.template.spec.containers[0].args, ['--c']);
  });

  it('merges primitive lists with patchStrategy merge as sets and deletes with $deleteFromPrimitiveList', () => {
    const doc = sampleDeployment();
    const added = smp(doc, { metadata: { finalizers: ['b.example.com/two', 'c.example.com/three'] } });
    assert.deepEqual(added.metadata.finalizers, ['a.example.com/one', 'b.example.com/two', 'c.example.com/three']);
    const removed = smp(doc, { metadata: { '$deleteFromPrimitiveList/finalizers': ['a.example.com/one'], finalizers: ['z'] } });
    assert.deepEqual(removed.metadata.finalizers, ['z', 'b.example.com/two']);
  });

  it('orders primitive lists with $setElementOrder', () => {
    const out = smp(sampleDeployment(), {
      metadata: {
        '$setElementOrder/finalizers': ['c.example.com/three', 'b.example.com/two', 'a.example.com/one'],
        finalizers: ['c.example.com/three'],
      },
    });
    assert.deepEqual(out.metadata.finalizers, ['c.example.com/three', 'b.example.com/two', 'a.example.com/one']);
  });

  it('orders keyed lists with $setElementOrder, including a pure reorder', () => {
    const doc = sampleDeployment();
    const reordered = smp(doc, { spec: { template: { spec: { '$setElementOrder/containers': [{ name: 'sidecar' }, { name: 'app' }] } } } });
    assert.deepEqual(names(reordered.spec.template.spec.containers), ['sidecar', 'app']);
    assert.deepEqual(reordered.spec.template.spec.containers[1], doc.spec.template.spec.containers[0]);
    const added = smp(doc, {
      spec: { template: { spec: { '$setElementOrder/containers': [{ name: 'app' }, { name: 'sidecar' }, { name: 'last' }], containers: [{ name: 'last', image: 'x' }] } } },
    });
    assert.deepEqual(names(added.spec.template.spec.containers), ['app', 'sidecar', 'last']);
  });

  it('rejects a $setElementOrder that does not match the patch list', () => {
    expectApiError(
      () => smp(sampleDeployment(), { spec: { template: { spec: { '$setElementOrder/containers': [{ name: 'app' }], containers: [{ name: 'other', image: 'x' }] } } } }),
      400,
      'BadRequest',
      /^The order in patch list:\n\[map\[image:x name:other\]\]\n doesn't match \$setElementOrder list:\n\[map\[name:app\]\]\n$/,
    );
    expectApiError(() => smp(sampleDeployment(), { metadata: { '$setElementOrder/finalizers': 'x' } }), 400, 'BadRequest', 'invalid patch format of setElementOrder list');
    expectApiError(() => smp(sampleDeployment(), { metadata: { $setElementOrder: [] } }), 400, 'BadRequest', 'invalid patch format of setElementOrder list');
    expectApiError(() => smp(sampleDeployment(), { metadata: { $deleteFromPrimitiveList: [] } }), 400, 'BadRequest', 'invalid patch format of primitive list');
  });

  it('clears fields not listed in $retainKeys (Deployment strategy)', () => {
    const out = smp(sampleDeployment(), { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } } });
    assert.deepEqual(out.spec.strategy, { type: 'Recreate' });
    const kept = smp(sampleDeployment(), { spec: { strategy: { $retainKeys: ['type', 'rollingUpdate'], rollingUpdate: { maxSurge: 1 } } } });
    assert.deepEqual(kept.spec.strategy, { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: '25%' } });
  });

  it('applies $retainKeys inside merge-list elements (volume source switch)', () => {
    const out = smp(sampleDeployment(), {
      spec: { template: { spec: { volumes: [{ name: 'data', $retainKeys: ['configMap', 'name'], configMap: { name: 'cm' } }] } } },
    });
    assert.deepEqual(out.spec.template.spec.volumes, [{ name: 'data', configMap: { name: 'cm' } }]);
  });

  it('rejects invalid $retainKeys', () => {
    expectApiError(() => smp(sampleDeployment(), { spec: { strategy: { $retainKeys: ['type'], rollingUpdate: { maxSurge: 1 } } } }), 400, 'BadRequest', 'invalid patch format of retainKeys');
    expectApiError(() => smp(sampleDeployment(), { spec: { strategy: { $retainKeys: 'type' } } }), 400, 'BadRequest', 'invalid patch format of retainKeys');
  });

  it('rejects unknown $patch values and unknown $-directives with 400', () => {
    expectApiError(() => smp(sampleDeployment(), { metadata: { labels: { $patch: 'frob' } } }), 400, 'BadRequest', 'unknown patch type: frob in map: map[$patch:frob]');
    expectApiError(
      () => smp(sampleDeployment(), { spec: { template: { spec: { containers: [{ name: 'app', $patch: 'frob' }] } } } }),
      400,
      'BadRequest',
      'unknown patch type: frob in map: map[$patch:frob name:app]',
    );
    expectApiError(() => smp(sampleDeployment(), { spec: { $bogus: 1 } }), 400, 'BadRequest', /\$bogus/);
  });

  it('rejects list elements without the merge key', () => {
    expectApiError(
      () => smp(sampleDeployment(), { spec: { template: { spec: { containers: [{ image: 'x' }] } } } }),
      400,
      'BadRequest',
      'map: map[image:x] does not contain declared merge key: name',
    );
  });

  it('a value of another shape than the current one replaces it, as kube merges maps (the decoding that follows refuses it); list errors stay', () => {
    assert.deepEqual((smp(sampleDeployment(), { spec: { strategy: ['Recreate'] } }) as any).spec.strategy, ['Recreate']);
    assert.deepEqual((smp(sampleDeployment(), { spec: { template: { spec: { containers: { name: 'app' } } } } }) as any).spec.template.spec.containers, { name: 'app' });
    expectApiError(() => smp(sampleDeployment(), { metadata: { finalizers: ['a', 1] } }), 400, 'BadRequest', /^list element types are not identical/);
    expectApiError(() => smp({ spec: { matrix: [['a']] } }, { spec: { matrix: [['b']] } }), 422, 'Invalid', REJECTED);
  });

  it('rejects patches that are not objects; a null patch changes nothing', () => {
    expectApiError(() => smp(sampleDeployment(), ['x']), 400, 'BadRequest', 'json: cannot unmarshal array into Go value of type map[string]interface {}');
    const doc = sampleDeployment();
    assert.equal(smp(doc, null), doc);
  });

  it('cleans directives and nulls out of values that are set rather than merged', () => {
    const doc = deepFreeze({ metadata: { name: 'bare' } });
    const out = smp(doc, {
      metadata: { labels: { a: 'b', gone: null } },
      spec: {
        strategy: { $retainKeys: ['type'], type: 'Recreate' },
        template: {
          spec: {
            '$setElementOrder/containers': [{ name: 'a' }, { name: 'b' }],
            containers: [{ name: 'a', env: [{ name: 'X', value: null }] }, { name: 'b' }, { name: 'old', $patch: 'delete' }],
          },
        },
      },
    });
    assert.deepEqual(out, {
      metadata: { name: 'bare', labels: { a: 'b' } },
      spec: { strategy: { type: 'Recreate' }, template: { spec: { containers: [{ name: 'a', env: [{ name: 'X' }] }, { name: 'b' }] } } },
    });
  });

  it('merges positions without type information like a JSON merge patch', () => {
    const doc = deepFreeze({ spec: { extra: { list: [1, 2], keep: true, drop: 'x' } } });
    const out = smp(doc, { spec: { extra: { list: [3], drop: null, $patch: 'delete' } } });
    assert.deepEqual(out.spec.extra, { list: [3], keep: true, $patch: 'delete' });
    const untyped = applyStrategicMergePatch(doc, { spec: { extra: { drop: null } } }, undefined) as Obj;
    assert.deepEqual(untyped, { spec: { extra: { list: [1, 2], keep: true } } });
    assert.deepEqual(applyStrategicMergePatch({ a: [1] }, { a: [2] }, { type: 'any' }), { a: [2] });
  });

  it('applies a kubectl client-side apply patch', () => {
    const doc = sampleDeployment();
    const lastApplied = JSON.stringify({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' } }) + '\n';
    const patch = {
      metadata: { annotations: { 'kubectl.kubernetes.io/last-applied-configuration': lastApplied } },
      spec: {
        strategy: { $retainKeys: ['rollingUpdate', 'type'], rollingUpdate: { maxSurge: 1 } },
        template: {
          spec: {
            '$setElementOrder/containers': [{ name: 'app' }, { name: 'metrics' }],
            containers: [
              {
                name: 'app',
                image: 'nginx:2',
                '$setElementOrder/env': [{ name: 'B' }, { name: 'C' }],
                env: [{ name: 'C', value: '3' }, { $patch: 'delete', name: 'A' }],
              },
              { name: 'metrics', image: 'prom' },
              { $patch: 'delete', name: 'sidecar' },
            ],
          },
        },
      },
    };
    deepFreeze(patch);
    const out = smp(doc, patch);
    assert.equal(out.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration'], lastApplied);
    assert.equal(out.metadata.annotations['example.com/a'], '1');
    assert.deepEqual(out.spec.strategy, { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: '25%' } });
    const containers = out.spec.template.spec.containers;
    assert.deepEqual(names(containers), ['app', 'metrics']);
    assert.equal(containers[0].image, 'nginx:2');
    assert.deepEqual(containers[0].env, [{ name: 'B', value: '2' }, { name: 'C', value: '3' }]);
    assert.deepEqual(containers[0].ports, doc.spec.template.spec.containers[0].ports);
    assert.deepEqual(containers[1], { name: 'metrics', image: 'prom' });
    for (const c of containers) for (const k of Object.keys(c)) assert.ok(!k.startsWith('$'), `directive ${k} left in result`);
    assert.deepEqual(names(doc.spec.template.spec.containers), ['app', 'sidecar'], 'input not mutated');
  });
});
