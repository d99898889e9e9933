import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ResourceCatalog, compareKubeVersions } from '../../../server/schema/catalog.ts';
import { TypeModel } from '../../../server/schema/model.ts';
import { validateObject } from '../../../server/schema/validate.ts';
import type { ResourceCatalogFile, ResourceInfo } from '../../../server/schema/types.ts';

const catalog = ResourceCatalog.loadBuiltins();
const model = TypeModel.loadBuiltins();

describe('resource catalog', () => {
  test('deployments: apps/v1, namespaced, scale + status, short name deploy, category all', () => {
    const d = catalog.lookup('apps', 'v1', 'deployments');
    assert.ok(d);
    assert.equal(d.kind, 'Deployment');
    assert.equal(d.listKind, 'DeploymentList');
    assert.equal(d.singularName, 'deployment');
    assert.equal(d.namespaced, true);
    assert.deepEqual(d.verbs, ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']);
    assert.deepEqual(d.shortNames, ['deploy']);
    assert.deepEqual(d.categories, ['all']);
    assert.equal(d.definition, 'io.k8s.api.apps.v1.Deployment');
    assert.deepEqual(d.subresources?.status, { verbs: ['get', 'patch', 'update'] });
    assert.deepEqual(d.subresources?.scale, { verbs: ['get', 'patch', 'update'], group: 'autoscaling', version: 'v1', kind: 'Scale' });
    assert.equal(catalog.byKind('apps', 'v1', 'Deployment'), d);
  });

  test('only GA versions; no internal.apiserver group', () => {
    for (const r of catalog.resources()) assert.match(r.version, /^v\d+$/, `${r.group}/${r.version}/${r.resource}`);
    for (const g of catalog.groups()) for (const v of g.versions) assert.match(v, /^v\d+$/);
    assert.equal(catalog.group('internal.apiserver.k8s.io'), undefined);
    assert.equal(catalog.group('storagemigration.k8s.io'), undefined);
    assert.equal(catalog.lookup('resource.k8s.io', 'v1beta1', 'resourceclaims'), undefined);
    assert.ok(catalog.lookup('resource.k8s.io', 'v1', 'resourceclaims'));
  });

  test('cluster-scoped and namespaced resources', () => {
    const ns = catalog.lookup('', 'v1', 'namespaces')!;
    assert.equal(ns.namespaced, false);
    assert.deepEqual(ns.verbs, ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch']);
    assert.deepEqual(ns.subresources?.finalize, { verbs: ['update'] });
    assert.deepEqual(ns.shortNames, ['ns']);
    assert.equal(catalog.lookup('', 'v1', 'nodes')!.namespaced, false);
    assert.equal(catalog.lookup('', 'v1', 'pods')!.namespaced, true);
    assert.equal(catalog.lookup('apiextensions.k8s.io', 'v1', 'customresourcedefinitions')!.namespaced, false);
  });

  test('pod subresources carry their own kinds', () => {
    const pods = catalog.lookup('', 'v1', 'pods')!;
    assert.deepEqual(pods.subresources?.eviction, { verbs: ['create'], kind: 'Eviction', group: 'policy', version: 'v1' });
    assert.deepEqual(pods.subresources?.exec, { verbs: ['create', 'get'], kind: 'PodExecOptions' });
    assert.deepEqual(pods.subresources?.binding, { verbs: ['create'], kind: 'Binding' });
    assert.deepEqual(pods.subresources?.log, { verbs: ['get'] });
    assert.ok(pods.subresources?.ephemeralcontainers && pods.subresources?.resize && pods.subresources?.status);
    const sa = catalog.lookup('', 'v1', 'serviceaccounts')!;
    assert.deepEqual(sa.subresources?.token, { verbs: ['create'], kind: 'TokenRequest', group: 'authentication.k8s.io', version: 'v1' });
  });

  test('review kinds, bindings and componentstatuses are excluded; their groups stay', () => {
    assert.equal(catalog.lookup('authentication.k8s.io', 'v1', 'tokenreviews'), undefined);
    assert.equal(catalog.lookup('authentication.k8s.io', 'v1', 'selfsubjectreviews'), undefined);
    assert.equal(catalog.lookup('authorization.k8s.io', 'v1', 'subjectaccessreviews'), undefined);
    assert.equal(catalog.lookup('authorization.k8s.io', 'v1', 'localsubjectaccessreviews'), undefined);
    assert.equal(catalog.lookup('', 'v1', 'bindings'), undefined);
    assert.equal(catalog.lookup('', 'v1', 'componentstatuses'), undefined);
    assert.deepEqual(catalog.group('authentication.k8s.io')?.versions, ['v1']);
    assert.deepEqual(catalog.group('authorization.k8s.io')?.versions, ['v1']);
    assert.deepEqual(catalog.resourcesIn('authentication.k8s.io', 'v1'), []);
  });

  test('groups in discovery order; autoscaling prefers v2', () => {
    const names = catalog.groups().map((g) => g.name);
    assert.deepEqual(names.slice(0, 7), ['', 'apiregistration.k8s.io', 'apps', 'events.k8s.io', 'authentication.k8s.io', 'authorization.k8s.io', 'autoscaling']);
    assert.equal(names.at(-1), 'resource.k8s.io');
    const as = catalog.group('autoscaling')!;
    assert.deepEqual(as.versions, ['v2', 'v1']);
    assert.equal(as.preferredVersion, 'v2');
    assert.equal(catalog.lookup('autoscaling', 'v1', 'horizontalpodautoscalers')!.storageVersion, 'v2');
    assert.match(catalog.kubernetesVersion, /^v1\.\d+\.\d+$/);
  });

  test('resources within a group-version are sorted by name', () => {
    const names = catalog.resourcesIn('apps', 'v1').map((r) => r.resource);
    assert.deepEqual(names, [...names].sort());
    assert.deepEqual(names, ['controllerrevisions', 'daemonsets', 'deployments', 'replicasets', 'statefulsets']);
  });

  test('resolve by short name, singular, kind, plural (case-insensitive)', () => {
    assert.equal(catalog.resolve('deploy')?.resource, 'deployments');
    assert.equal(catalog.resolve('Deployment', 'apps')?.resource, 'deployments');
    assert.equal(catalog.resolve('PO')?.resource, 'pods');
    assert.equal(catalog.resolve('crds')?.resource, 'customresourcedefinitions');
    assert.equal(catalog.resolve('hpa')?.version, 'v2');
    assert.equal(catalog.resolve('ev')?.group, '');
    assert.equal(catalog.resolve('ev', 'events.k8s.io')?.group, 'events.k8s.io');
    assert.equal(catalog.resolve('deploy', 'batch'), undefined);
  });

  test('add/remove CRD resources bumps generation and maintains groups', () => {
    const c = new ResourceCatalog(JSON.parse(readFileSync(new URL('../../../schemas/resources.json', import.meta.url), 'utf8')) as ResourceCatalogFile);
    const g0 = c.generation;
    const widget = (version: string): ResourceInfo => ({
      group: 'example.com', version, resource: 'widgets', kind: 'Widget', listKind: 'WidgetList', singularName: 'widget',
      namespaced: true, verbs: ['get', 'list'], shortNames: ['wd'],
    });
    c.add(widget('v1beta1'));
    c.add(widget('v1'));
    assert.ok(c.generation > g0);
    assert.deepEqual(c.group('example.com'), { name: 'example.com', versions: ['v1', 'v1beta1'], preferredVersion: 'v1' });
    assert.equal(c.groups().at(-1)?.name, 'example.com');
    assert.equal(c.resolve('wd')?.version, 'v1');
    assert.equal(c.byKind('example.com', 'v1beta1', 'Widget')?.version, 'v1beta1');
    assert.ok(c.resources().some((r) => r.group === 'example.com'));
    const g1 = c.generation;
    c.remove('example.com', 'v1', 'widgets');
    assert.ok(c.generation > g1);
    assert.equal(c.lookup('example.com', 'v1', 'widgets'), undefined);
    assert.deepEqual(c.group('example.com')?.versions, ['v1beta1']);
    c.remove('example.com', 'v1beta1', 'widgets');
    assert.equal(c.group('example.com'), undefined);
    assert.equal(c.resolve('wd'), undefined);
    assert.ok(!c.groups().some((g) => g.name === 'example.com'));
    // built-in groups stay even when emptied
    c.remove('apps', 'v1', 'deployments');
    assert.ok(c.group('apps'));
    assert.equal(c.lookup('apps', 'v1', 'deployments'), undefined);
  });

  test('kube version ordering', () => {
    assert.deepEqual(['v1alpha1', 'v1', 'v2beta1', 'v1beta2', 'v2', 'v1beta1', 'foo'].sort(compareKubeVersions), ['v2', 'v1', 'v2beta1', 'v1beta2', 'v1beta1', 'v1alpha1', 'foo']);
  });
});

describe('type model', () => {
  test('definitions are stripped of descriptions but keep properties named "description"', () => {
    const defs = model.definitions();
    const pod = defs['io.k8s.api.core.v1.Pod'] as Record<string, unknown>;
    assert.equal(pod.description, undefined);
    assert.ok(pod['x-kubernetes-group-version-kind']);
    const props = (defs['io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps'] as { properties: Record<string, unknown> }).properties;
    assert.deepEqual(props.description, { type: 'string' });
  });

  test('Pod spec.containers is a list-map keyed by name with patch strategy merge', () => {
    const pod = model.node('io.k8s.api.core.v1.Pod');
    const containers = pod.properties!.spec.properties!.containers;
    assert.equal(containers.type, 'array');
    assert.equal(containers.listType, 'map');
    assert.deepEqual(containers.listMapKeys, ['name']);
    assert.equal(containers.patchStrategy, 'merge');
    assert.equal(containers.patchMergeKey, 'name');
    assert.equal(containers.items, model.node('io.k8s.api.core.v1.Container'));
    assert.deepEqual(containers.items!.required, ['name']);
    assert.equal(pod.properties!.spec.required?.includes('containers'), true);
  });

  test('Deployment spec.strategy carries retainKeys, the definition itself does not', () => {
    const strategy = model.node('io.k8s.api.apps.v1.Deployment').properties!.spec.properties!.strategy;
    const def = model.node('io.k8s.api.apps.v1.DeploymentStrategy');
    assert.equal(strategy.patchStrategy, 'retainKeys');
    assert.equal(def.patchStrategy, undefined);
    assert.equal(strategy.type, 'object');
    assert.equal(strategy.definition, 'io.k8s.api.apps.v1.DeploymentStrategy');
    assert.equal(strategy.properties, def.properties);
    assert.equal(strategy.properties!.rollingUpdate.properties!.maxSurge.type, 'int-or-string');
  });

  test('JSONSchemaProps cycle resolves to the same node', () => {
    const j = model.node('io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps');
    assert.equal(j.properties!.properties.type, 'map');
    assert.equal(j.properties!.properties.values, j);
    assert.equal(j.properties!.allOf.items, j);
    assert.equal(j.properties!.items.type, 'any'); // JSONSchemaPropsOrArray
    assert.equal(j.properties!.default.type, 'any'); // JSON
    const crd = model.node('io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition');
    const schema = crd.properties!.spec.properties!.versions.items!.properties!.schema.properties!.openAPIV3Schema;
    assert.equal(schema, j);
  });

  test('special types: Quantity, Time, IntOrString, RawExtension, maps', () => {
    const q = model.node('io.k8s.apimachinery.pkg.api.resource.Quantity');
    assert.equal(q.type, 'int-or-string');
    assert.equal(model.node('io.k8s.apimachinery.pkg.apis.meta.v1.Time').type, 'string');
    assert.equal(model.node('io.k8s.apimachinery.pkg.apis.meta.v1.Time').format, 'date-time');
    assert.equal(model.node('io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime').type, 'string');
    assert.equal(model.node('io.k8s.apimachinery.pkg.util.intstr.IntOrString').type, 'int-or-string');
    assert.equal(model.node('io.k8s.apimachinery.pkg.runtime.RawExtension').type, 'any');
    assert.equal(model.node('io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1').type, 'any');
    const labels = model.node('io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta').properties!.labels;
    assert.equal(labels.type, 'map');
    assert.equal(labels.values!.type, 'string');
    assert.equal(model.node('io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector').mapType, 'atomic');
    assert.throws(() => model.node('no.such.Definition'));
  });

  test('Quantity accepts JSON numbers and strings, rejects booleans', () => {
    const q = model.node('io.k8s.apimachinery.pkg.api.resource.Quantity');
    assert.deepEqual(validateObject(q, 2).errors, []);
    assert.deepEqual(validateObject(q, 0.5).errors, []);
    assert.deepEqual(validateObject(q, '100Mi').errors, []);
    assert.equal(validateObject(q, true).errors.length, 1);
    const ios = model.node('io.k8s.apimachinery.pkg.util.intstr.IntOrString');
    assert.deepEqual(validateObject(ios, 3).errors, []);
    assert.equal(validateObject(ios, 0.5).errors.length, 1);
  });

  test('field extensions on a $ref to a definition still being built get its values later', () => {
    const m = new TypeModel({
      A: { type: 'object', additionalProperties: { $ref: '#/definitions/B' } },
      B: { type: 'object', properties: { a: { $ref: '#/definitions/A', 'x-kubernetes-map-type': 'atomic' } } },
    });
    const a = m.node('A');
    const b = a.values!;
    assert.equal(b.definition, 'B');
    const derived = b.properties!.a;
    assert.notEqual(derived, a);
    assert.equal(derived.mapType, 'atomic');
    assert.equal(derived.type, 'map');
    assert.equal(derived.values, b);
  });

  test('fromSchema builds CRD-style schemas (enum, preserve-unknown-fields, int-or-string)', () => {
    const n = model.fromSchema({
      type: 'object',
      properties: {
        mode: { type: 'string', enum: ['A', 'B'] },
        free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        port: { 'x-kubernetes-int-or-string': true },
        meta: { $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' },
      },
    });
    assert.deepEqual(n.properties!.mode.enum, ['A', 'B']);
    assert.equal(n.properties!.free.type, 'any');
    assert.equal(n.properties!.port.type, 'int-or-string');
    assert.equal(n.properties!.meta, model.node('io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta'));
  });
});

describe('validator', () => {
  const deployment = model.node('io.k8s.api.apps.v1.Deployment');
  const pod = model.node('io.k8s.api.core.v1.Pod');

  const validDeployment = () => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', labels: { app: 'web' } },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'c', image: 'nginx', resources: { limits: { cpu: 0.5, memory: '1Gi' } }, ports: [{ containerPort: 80 }] }] },
      },
    },
  });

  test('a valid object passes untouched', () => {
    const obj = validDeployment();
    const r = validateObject(deployment, obj, { prune: true });
    assert.deepEqual(r, { errors: [], unknownFields: [] });
    assert.deepEqual(obj, validDeployment());
  });

  test('nulls are dropped (fields and map values), null list items are left alone', () => {
    const obj = validDeployment() as Record<string, any>;
    obj.spec.paused = null;
    obj.metadata.annotations = null;
    obj.metadata.labels.gone = null;
    obj.spec.template.spec.containers[0].args = ['a', null];
    const r = validateObject(deployment, obj);
    assert.deepEqual(r.errors, []);
    assert.equal('paused' in obj.spec, false);
    assert.equal('annotations' in obj.metadata, false);
    assert.deepEqual(obj.metadata.labels, { app: 'web' });
    assert.deepEqual(obj.spec.template.spec.containers[0].args, ['a', null]);
  });

  test('unknown fields are reported with paths and pruned when asked', () => {
    const obj = validDeployment() as Record<string, any>;
    obj.spec.foo = 1;
    obj.spec.template.spec.containers[0].bogus = { x: 1 };
    obj.status = { nope: true };
    obj.metadata.what = 'x';
    const expected = ['metadata.what', 'spec.foo', 'spec.template.spec.containers[0].bogus', 'status.nope'];

    const kept = structuredClone(obj);
    const r1 = validateObject(deployment, kept);
    assert.deepEqual([...r1.unknownFields].sort(), expected);
    assert.equal(kept.spec.foo, 1); // reported, not removed

    const r2 = validateObject(deployment, obj, { prune: true });
    assert.deepEqual([...r2.unknownFields].sort(), expected);
    assert.deepEqual(r2.errors, []);
    assert.equal('foo' in obj.spec, false);
    assert.equal('bogus' in obj.spec.template.spec.containers[0], false);
    assert.deepEqual(obj.status, {});
    assert.equal('what' in obj.metadata, false);
  });

  test('type errors use kube wording and paths with [i] and [key]', () => {
    const obj = validDeployment() as Record<string, any>;
    obj.spec.replicas = 'abc';
    obj.spec.template.spec.containers[0].ports[0].containerPort = 1.5;
    obj.spec.selector.matchLabels.app = 5;
    obj.spec.template.spec.containers[0].image = { a: 1 };
    obj.apiVersion = 1;
    const r = validateObject(deployment, obj);
    const byField = new Map(r.errors.map((e) => [e.field, e]));
    assert.deepEqual(byField.get('spec.replicas'), {
      reason: 'FieldValueTypeInvalid',
      field: 'spec.replicas',
      message: 'Invalid value: "string": spec.replicas in body must be of type integer: "string"',
    });
    assert.equal(
      byField.get('spec.template.spec.containers[0].ports[0].containerPort')?.message,
      'Invalid value: "number": spec.template.spec.containers[0].ports[0].containerPort in body must be of type integer: "number"',
    );
    assert.equal(byField.get('spec.selector.matchLabels[app]')?.message, 'Invalid value: "integer": spec.selector.matchLabels[app] in body must be of type string: "integer"');
    assert.equal(byField.get('spec.template.spec.containers[0].image')?.message.endsWith('must be of type string: "object"'), true);
    assert.ok(byField.get('apiVersion'));
    assert.equal(r.errors.length, 5);
  });

  test('a wrong container type is reported once, without descending', () => {
    const obj = validDeployment() as Record<string, any>;
    obj.spec.template.spec.containers = { name: 'c' };
    const r = validateObject(deployment, obj);
    assert.deepEqual(r.errors.map((e) => e.field), ['spec.template.spec.containers']);
    assert.match(r.errors[0].message, /must be of type array: "object"$/);
  });

  test('missing required fields', () => {
    const obj = { metadata: { name: 'p' }, spec: { containers: [{ image: 'x' }] } };
    const r = validateObject(pod, obj);
    assert.deepEqual(r.errors, [{ reason: 'FieldValueRequired', field: 'spec.containers[0].name', message: 'Required value' }]);
    const r2 = validateObject(pod, { spec: { containers: null } });
    assert.deepEqual(r2.errors, [{ reason: 'FieldValueRequired', field: 'spec.containers', message: 'Required value' }]);
  });

  test('enum violations', () => {
    const n = model.fromSchema({ type: 'object', properties: { mode: { type: 'string', enum: ['A', 'B'] }, level: { type: 'integer', enum: [1, 2] } } });
    const r = validateObject(n, { mode: 'X', level: 3 }, { path: 'spec' });
    assert.deepEqual(r.errors, [
      { reason: 'FieldValueNotSupported', field: 'spec.mode', message: 'Unsupported value: "X": supported values: "A", "B"' },
      { reason: 'FieldValueNotSupported', field: 'spec.level', message: 'Unsupported value: 3: supported values: "1", "2"' },
    ]);
    assert.deepEqual(validateObject(n, { mode: 'B', level: 2 }).errors, []);
  });

  test('any nodes are not descended and preserve-unknown-fields keeps unknowns', () => {
    const crd = model.node('io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition');
    const obj = {
      spec: {
        group: 'x.io', names: { plural: 'as', kind: 'A' }, scope: 'Namespaced',
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', default: { anything: [null, { deep: 1 }] } } } }],
      },
    };
    const r = validateObject(crd, obj, { prune: true });
    assert.deepEqual(r, { errors: [], unknownFields: [] });
    assert.deepEqual(obj.spec.versions[0].schema.openAPIV3Schema.default, { anything: [null, { deep: 1 }] });

    const n = model.fromSchema({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { a: { type: 'string' } } });
    const o = { a: 'x', b: 1 };
    assert.deepEqual(validateObject(n, o, { prune: true }), { errors: [], unknownFields: [] });
    assert.deepEqual(o, { a: 'x', b: 1 });
  });

  test('a base path prefixes every reported path', () => {
    const spec = model.node('io.k8s.api.core.v1.PodSpec');
    const r = validateObject(spec, { containers: [{ name: 'c', extra: 1 }], hostNetwork: 'yes' }, { path: 'spec.template.spec', prune: true });
    assert.deepEqual(r.unknownFields, ['spec.template.spec.containers[0].extra']);
    assert.equal(r.errors[0].field, 'spec.template.spec.hostNetwork');
  });

  test('walks a large object quickly', () => {
    const obj = validDeployment() as Record<string, any>;
    obj.spec.template.spec.containers = Array.from({ length: 50 }, (_, i) => ({
      name: `c${i}`, image: 'img', env: Array.from({ length: 20 }, (_, j) => ({ name: `E${j}`, value: 'v' })), ports: [{ containerPort: 80 + i }],
    }));
    const start = performance.now();
    for (let i = 0; i < 200; i++) validateObject(deployment, obj, { prune: true });
    const perCall = (performance.now() - start) / 200;
    assert.ok(perCall < 5, `validateObject took ${perCall.toFixed(2)}ms per call`);
  });
});
