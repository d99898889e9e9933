import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { parse as parseYaml } from 'yaml';
import { ResourceCatalog } from '../../../../server/schema/catalog.ts';
import { TypeModel } from '../../../../server/schema/model.ts';
import type { ResourceInfo } from '../../../../server/schema/types.ts';
import { OpenApi } from '../../../../server/http/openapi.ts';
import { encodeOpenApiV2Document } from '../../../../server/http/openapi-v2-proto.ts';
import { crdDefinitionName, crdDefinitions } from '../../../../server/registry/crd/crd-openapi.ts';

type Json = Record<string, any>;

const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';
const LIST_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta';
const DEF = 'com.example.stable.v1.CronTab';
const LIST_DEF = 'com.example.stable.v1.CronTabList';

function cronTabSchema(extra: Json = {}): Json {
  return {
    type: 'object',
    description: 'A cron tab.',
    properties: {
      // kube replaces whatever the CRD says about metadata with ObjectMeta.
      metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 20 } } },
      spec: {
        type: 'object',
        required: ['cronSpec', 'note'],
        'x-kubernetes-validations': [{ rule: 'self.replicas >= 0', message: 'must not be negative' }],
        properties: {
          cronSpec: { type: 'string', pattern: '^\\S+$', default: '* * * * *', description: 'When to run.' },
          replicas: { type: 'integer', minimum: 0, maximum: 10, format: 'int32' },
          port: { 'x-kubernetes-int-or-string': true },
          note: { type: 'string', nullable: true },
          mode: { type: 'string', enum: ['a', 'b'], oneOf: [{ pattern: '^a$' }, { pattern: '^b$' }] },
          ports: {
            type: 'array',
            'x-kubernetes-list-type': 'map',
            'x-kubernetes-list-map-keys': ['name', 'protocol'],
            items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, protocol: { type: 'string', default: 'TCP' }, port: { type: 'integer' } } },
          },
          tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
          labels: { type: 'object', 'x-kubernetes-map-type': 'atomic', additionalProperties: { type: 'string' } },
          raw: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { known: { type: 'string' } } },
          rawList: { type: 'array', 'x-kubernetes-preserve-unknown-fields': true, items: { type: 'string' } },
          template: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
          pod: { type: 'object', 'x-kubernetes-embedded-resource': true, required: ['spec'], properties: { spec: { type: 'object', properties: { image: { type: 'string' } } } } },
          ...extra,
        },
      },
      status: { type: 'object', properties: { ready: { type: 'boolean' } } },
    },
  };
}

function cronTabCrd(schema: Json = cronTabSchema(), more: Json = {}): Json {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'crontabs.stable.example.com' },
    spec: {
      group: 'stable.example.com',
      scope: 'Namespaced',
      names: { plural: 'crontabs', singular: 'crontab', kind: 'CronTab', listKind: 'CronTabList', shortNames: ['ct'] },
      versions: [
        { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema }, selectableFields: [{ jsonPath: '.spec.cronSpec' }], subresources: { status: {} } },
        { name: 'v1beta1', served: false, storage: false, schema: { openAPIV3Schema: { type: 'object' } } },
      ],
      ...more,
    },
  };
}

function cronTabInfo(version = 'v1', definition: string | undefined = crdDefinitionName('stable.example.com', version, 'CronTab')): ResourceInfo {
  return {
    group: 'stable.example.com',
    version,
    resource: 'crontabs',
    kind: 'CronTab',
    listKind: 'CronTabList',
    singularName: 'crontab',
    namespaced: true,
    verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
    shortNames: ['ct'],
    categories: ['all'],
    subresources: {
      status: { verbs: ['get', 'patch', 'update'] },
      scale: { verbs: ['get', 'patch', 'update'], kind: 'Scale', group: 'autoscaling', version: 'v1' },
    },
    ...(definition ? { definition } : {}),
  };
}

/** What the CRD controller does on every CRD change: definitions first, then the catalog. */
function install(model: TypeModel, catalog: ResourceCatalog, crd: Json, info: ResourceInfo = cronTabInfo()): void {
  const defs = crdDefinitions(crd);
  model.setDefinitions(crd.metadata.name, defs.definitions, defs.v2Definitions);
  catalog.add(info);
}

function setup(): { catalog: ResourceCatalog; model: TypeModel; o: OpenApi } {
  const catalog = ResourceCatalog.loadBuiltins();
  const model = TypeModel.loadBuiltins().overlay();
  return { catalog, model, o: new OpenApi(catalog, model, catalog.kubernetesVersion) };
}

const parse = (b: Buffer): Json => JSON.parse(b.toString('utf8'));

function refs(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) for (const n of node) refs(n, out);
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else refs(v, out);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// crdDefinitions

test('definition names: reversed group, version, kind; served versions with a schema only', () => {
  assert.equal(crdDefinitionName('stable.example.com', 'v1', 'CronTab'), 'com.example.stable.v1.CronTab');
  assert.equal(crdDefinitionName('snapshot.storage.k8s.io', 'v1', 'VolumeSnapshot'), 'io.k8s.storage.snapshot.v1.VolumeSnapshot');
  const crd = cronTabCrd();
  crd.spec.versions.push({ name: 'v2', served: true, storage: false }); // no schema: no definitions
  delete crd.spec.names.listKind; // defaulted the way kube defaults it
  const out = crdDefinitions(crd);
  assert.deepEqual(out.byVersion, { v1: { definition: DEF, listDefinition: LIST_DEF } });
  assert.deepEqual(Object.keys(out.definitions).sort(), [DEF, LIST_DEF]);
  assert.deepEqual(Object.keys(out.v2Definitions).sort(), [DEF, LIST_DEF]);
});

test('v3 form: metadata is ObjectMeta, TypeMeta strings, GVK, extensions and validations kept', () => {
  const d = crdDefinitions(cronTabCrd()).definitions;
  const kind = d[DEF] as Json;
  assert.equal(kind.type, 'object');
  assert.equal(kind.description, 'A cron tab.');
  assert.deepEqual(kind.properties.metadata, { $ref: `#/definitions/${OBJECT_META}` });
  assert.deepEqual(kind.properties.apiVersion, { type: 'string' });
  assert.deepEqual(kind.properties.kind, { type: 'string' });
  assert.deepEqual(kind['x-kubernetes-group-version-kind'], [{ group: 'stable.example.com', kind: 'CronTab', version: 'v1' }]);
  assert.deepEqual(kind['x-kubernetes-selectable-fields'], [{ fieldPath: 'spec.cronSpec' }]);
  const spec = kind.properties.spec;
  assert.deepEqual(spec['x-kubernetes-validations'], [{ message: 'must not be negative', rule: 'self.replicas >= 0' }]);
  assert.deepEqual(spec.required, ['cronSpec', 'note']);
  const p = spec.properties;
  assert.deepEqual(p.cronSpec, { default: '* * * * *', description: 'When to run.', pattern: '^\\S+$', type: 'string' });
  assert.deepEqual(p.note, { nullable: true, type: 'string' });
  assert.deepEqual(p.mode.oneOf, [{ pattern: '^a$' }, { pattern: '^b$' }]);
  // int-or-string is unfolded into the two types it allows.
  assert.deepEqual(p.port, { anyOf: [{ type: 'integer' }, { type: 'string' }], 'x-kubernetes-int-or-string': true });
  assert.equal(p.ports['x-kubernetes-list-type'], 'map');
  assert.deepEqual(p.ports['x-kubernetes-list-map-keys'], ['name', 'protocol']);
  assert.equal(p.ports.items.properties.protocol.default, 'TCP');
  assert.equal(p.labels['x-kubernetes-map-type'], 'atomic');
  assert.deepEqual(p.raw.properties, { known: { type: 'string' } });
  assert.equal(p.raw.type, 'object');
  // Embedded resources get TypeMeta/ObjectMeta and require kind and apiVersion.
  assert.deepEqual(p.template.properties.metadata, { $ref: `#/definitions/${OBJECT_META}` });
  assert.deepEqual(p.template.required, ['kind', 'apiVersion']);
  assert.deepEqual(p.pod.required, ['spec', 'kind', 'apiVersion']);
  assert.deepEqual(Object.keys(p.pod.properties), ['apiVersion', 'kind', 'metadata', 'spec']);

  const list = d[LIST_DEF] as Json;
  assert.deepEqual(list, {
    properties: {
      apiVersion: { type: 'string' },
      items: { items: { $ref: `#/definitions/${DEF}` }, type: 'array' },
      kind: { type: 'string' },
      metadata: { $ref: `#/definitions/${LIST_META}` },
    },
    required: ['items'],
    type: 'object',
    'x-kubernetes-group-version-kind': [{ group: 'stable.example.com', kind: 'CronTabList', version: 'v1' }],
    'x-kubernetes-selectable-fields': [{ fieldPath: 'spec.cronSpec' }],
  });
});

test('v3 form: an int-or-string that already states anyOf is not unfolded twice; other anyOf goes under allOf', () => {
  const pattern = [{ type: 'integer' }, { type: 'string' }];
  const d = crdDefinitions(
    cronTabCrd(
      cronTabSchema({
        given: { 'x-kubernetes-int-or-string': true, anyOf: pattern },
        other: { 'x-kubernetes-int-or-string': true, anyOf: [{ maxLength: 3 }, { minimum: 1 }] },
      }),
    ),
  ).definitions[DEF] as Json;
  const p = d.properties.spec.properties;
  assert.deepEqual(p.given.anyOf, pattern);
  assert.equal(p.given.allOf, undefined);
  assert.deepEqual(p.other.allOf, [{ anyOf: pattern }]);
  assert.deepEqual(p.other.anyOf, [{ maxLength: 3 }, { minimum: 1 }]);
});

test('v2 form: what Swagger 2.0 and kubectl cannot take is stripped the way kube strips it', () => {
  const d = crdDefinitions(cronTabCrd()).v2Definitions;
  const kind = d[DEF] as Json;
  assert.deepEqual(kind.properties.metadata, { $ref: `#/definitions/${OBJECT_META}` });
  assert.deepEqual(kind['x-kubernetes-group-version-kind'], [{ group: 'stable.example.com', kind: 'CronTab', version: 'v1' }]);
  assert.equal(kind['x-kubernetes-selectable-fields'], undefined);
  const spec = kind.properties.spec;
  const p = spec.properties;
  // nullable: no type, and no longer required by the parent
  assert.deepEqual(p.note, {});
  assert.deepEqual(spec.required, ['cronSpec']);
  // no junctors, no defaults
  assert.deepEqual(p.port, { 'x-kubernetes-int-or-string': true });
  assert.deepEqual(p.mode, { enum: ['a', 'b'], type: 'string' });
  assert.deepEqual(p.cronSpec, { description: 'When to run.', pattern: '^\\S+$', type: 'string' });
  assert.equal(p.ports.items.properties.protocol.default, undefined);
  // preserve-unknown-fields: no properties/items, no object type; an array left without items loses its type
  assert.deepEqual(p.raw, { 'x-kubernetes-preserve-unknown-fields': true });
  assert.deepEqual(p.rawList, { 'x-kubernetes-preserve-unknown-fields': true });
  // an embedded resource that preserves unknown fields gets no TypeMeta/ObjectMeta in v2; one that does not, does
  assert.deepEqual(p.template, { 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true });
  assert.deepEqual(p.pod.required, ['spec', 'kind', 'apiVersion']);
  assert.deepEqual(p.pod.properties.metadata, { $ref: `#/definitions/${OBJECT_META}` });
  // list-type, map-type and CEL rules stay
  assert.equal(p.ports['x-kubernetes-list-type'], 'map');
  assert.equal(p.labels['x-kubernetes-map-type'], 'atomic');
  assert.equal(spec['x-kubernetes-validations'].length, 1);
  assert.equal((d[LIST_DEF] as Json)['x-kubernetes-selectable-fields'], undefined);
});

test('v2 form: unknown fields at the root publish only an object with its GVK', () => {
  const gvk = [{ group: 'stable.example.com', kind: 'CronTab', version: 'v1' }];
  const rootPreserve = crdDefinitions(cronTabCrd({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { spec: { type: 'object' } } }));
  assert.deepEqual(rootPreserve.v2Definitions[DEF], { type: 'object', 'x-kubernetes-group-version-kind': gvk });
  const v3 = rootPreserve.definitions[DEF] as Json;
  assert.equal(v3['x-kubernetes-preserve-unknown-fields'], true);
  assert.deepEqual(Object.keys(v3.properties), ['apiVersion', 'kind', 'metadata', 'spec']);
  const legacy = crdDefinitions(cronTabCrd(cronTabSchema(), { preserveUnknownFields: true }));
  assert.deepEqual(legacy.v2Definitions[DEF], { type: 'object', 'x-kubernetes-group-version-kind': gvk });
  assert.ok((legacy.definitions[DEF] as Json).properties.spec);
});

// ---------------------------------------------------------------------------------------------
// The overlay model

test('overlay: the built-in model refuses definitions; overlays see built-ins plus their own', () => {
  const builtins = TypeModel.loadBuiltins();
  assert.throws(() => builtins.setDefinitions('x', {}), /overlay/);
  assert.throws(() => builtins.overlay().overlay(), /overlay/);
  const a = builtins.overlay();
  const b = builtins.overlay();
  const defs = crdDefinitions(cronTabCrd());
  a.setDefinitions('crontabs.stable.example.com', defs.definitions, defs.v2Definitions);
  assert.ok(a.has(DEF));
  assert.ok(a.has(LIST_DEF));
  assert.ok(a.has(OBJECT_META));
  assert.equal(b.has(DEF), false);
  assert.equal(builtins.has(DEF), false);
  assert.throws(() => b.node(DEF), /unknown definition/);
  assert.equal(b.definitions()[DEF], undefined);
  assert.equal(a.ownerOf(DEF), 'crontabs.stable.example.com');
  assert.equal(a.ownerOf(OBJECT_META), undefined);
  assert.deepEqual(a.v2Definition(DEF), defs.v2Definitions[DEF]);
  assert.equal(a.v2Definition(OBJECT_META), undefined);
  // Built-in nodes are the shared ones.
  assert.equal(a.node('io.k8s.api.apps.v1.Deployment'), builtins.node('io.k8s.api.apps.v1.Deployment'));
  assert.equal(Object.keys(a.definitions()).length, Object.keys(builtins.definitions()).length + 2);
});

test('overlay: the CRD node carries list/map semantics, int-or-string, embedded and preserved fields', () => {
  const model = TypeModel.loadBuiltins().overlay();
  const defs = crdDefinitions(cronTabCrd());
  model.setDefinitions('crontabs.stable.example.com', defs.definitions, defs.v2Definitions);
  const node = model.node(DEF);
  assert.equal(node, model.node(DEF), 'cached');
  assert.equal(node.type, 'object');
  assert.equal(node.definition, DEF);
  assert.equal(node.properties!.metadata, TypeModel.loadBuiltins().node(OBJECT_META));
  assert.equal(node.properties!.apiVersion.type, 'string');
  const spec = node.properties!.spec.properties!;
  assert.equal(spec.ports.type, 'array');
  assert.equal(spec.ports.listType, 'map');
  assert.deepEqual(spec.ports.listMapKeys, ['name', 'protocol']);
  assert.deepEqual(spec.ports.items!.required, ['name']);
  assert.equal(spec.tags.listType, 'set');
  assert.equal(spec.labels.type, 'map');
  assert.equal(spec.labels.mapType, 'atomic');
  assert.equal(spec.port.type, 'int-or-string');
  assert.equal(spec.replicas.type, 'integer');
  assert.equal(spec.replicas.format, 'int32');
  assert.equal(spec.raw.preserveUnknownFields, true);
  assert.equal(spec.template.embeddedResource, true);
  assert.equal(spec.template.properties!.metadata, TypeModel.loadBuiltins().node(OBJECT_META));
  assert.deepEqual(spec.mode.enum, ['a', 'b']);
  assert.equal(model.node(LIST_DEF).properties!.items.items, node);
});

test('overlay: definitions() is stable between changes; updates rebuild what changed and what reaches it', () => {
  const model = TypeModel.loadBuiltins().overlay();
  const d0 = model.definitions();
  assert.equal(model.definitions(), d0);
  const g0 = model.generation;
  install(model, ResourceCatalog.loadBuiltins(), cronTabCrd());
  const d1 = model.definitions();
  assert.notEqual(d1, d0);
  assert.equal(model.definitions(), d1);
  assert.ok(model.generation > g0);
  const kind1 = model.node(DEF);
  const list1 = model.node(LIST_DEF);

  // Another owner, whose definition refers to the CronTab one.
  model.setDefinitions('other', { 'x.Holder': { type: 'object', properties: { tab: { $ref: `#/definitions/${DEF}` } } }, 'x.Alone': { type: 'string' } });
  const holder1 = model.node('x.Holder');
  const alone1 = model.node('x.Alone');
  assert.equal(holder1.properties!.tab, kind1);

  // Re-publishing the same schemas changes nothing.
  const g1 = model.generation;
  const d2 = model.definitions();
  install(model, ResourceCatalog.loadBuiltins(), cronTabCrd());
  assert.equal(model.generation, g1);
  assert.equal(model.definitions(), d2);
  assert.equal(model.node(DEF), kind1);

  // A schema change: the kind, the list that holds it and the other owner's holder are rebuilt.
  install(model, ResourceCatalog.loadBuiltins(), cronTabCrd(cronTabSchema({ added: { type: 'boolean' } })));
  assert.notEqual(model.definitions(), d2);
  const kind2 = model.node(DEF);
  assert.notEqual(kind2, kind1);
  assert.equal(kind2.properties!.spec.properties!.added.type, 'boolean');
  assert.equal(kind1.properties!.spec.properties!.added, undefined);
  assert.notEqual(model.node(LIST_DEF), list1);
  assert.equal(model.node(LIST_DEF).properties!.items.items, kind2);
  assert.equal(model.node('x.Holder').properties!.tab, kind2);
  assert.equal(model.node('x.Alone'), alone1, 'untouched definitions keep their nodes');

  model.removeDefinitions('crontabs.stable.example.com');
  assert.equal(model.has(DEF), false);
  assert.equal(model.definitions()[DEF], undefined);
  assert.throws(() => model.node(DEF), /unknown definition/);
  assert.equal(model.ownerOf(DEF), undefined);
  assert.equal(model.v2Definition(DEF), undefined);
  assert.throws(() => model.node('x.Holder'), /unknown definition/, 'a holder of a removed definition is rebuilt too');
});

test('overlay: on a name clash the last owner set wins, and removing it falls back', () => {
  const model = TypeModel.loadBuiltins().overlay();
  model.setDefinitions('a', { 'x.T': { type: 'string' } });
  model.setDefinitions('b', { 'x.T': { type: 'integer' } });
  assert.equal(model.node('x.T').type, 'integer');
  assert.equal(model.ownerOf('x.T'), 'b');
  model.removeDefinitions('b');
  assert.equal(model.node('x.T').type, 'string');
  assert.equal(model.ownerOf('x.T'), 'a');
});

// ---------------------------------------------------------------------------------------------
// /openapi/v2 and /openapi/v3

test('v3: the CRD group-version is listed with its hash; paths and schemas with metadata as ObjectMeta', () => {
  const { catalog, model, o } = setup();
  const before = o.v3Index() as Json;
  assert.equal(before.paths['apis/stable.example.com/v1'], undefined);
  const apps = before.paths['apis/apps/v1'].serverRelativeURL;
  install(model, catalog, cronTabCrd());

  const index = o.v3Index() as Json;
  const doc = o.v3('apis/stable.example.com/v1')!;
  assert.ok(doc);
  const hash = createHash('sha512').update(doc.body).digest('hex').toUpperCase();
  assert.equal(index.paths['apis/stable.example.com/v1'].serverRelativeURL, `/openapi/v3/apis/stable.example.com/v1?hash=${hash}`);
  assert.ok(index.paths['apis/stable.example.com']);
  assert.equal(index.paths['apis/apps/v1'].serverRelativeURL, apps, 'unrelated documents keep their hash');

  const v3 = parse(doc.body);
  const item = v3.paths['/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}'];
  assert.equal(item.get.operationId, 'readStableExampleComV1NamespacedCronTab');
  assert.deepEqual(item.get.responses['200'].content['application/json'].schema, { $ref: `#/components/schemas/${DEF}` });
  assert.deepEqual(Object.keys(item.patch.requestBody.content).sort(), ['application/apply-patch+yaml', 'application/json-patch+json', 'application/merge-patch+json']);
  const list = v3.paths['/apis/stable.example.com/v1/namespaces/{namespace}/crontabs'];
  assert.deepEqual(list.get.responses['200'].content['application/json'].schema, { $ref: `#/components/schemas/${LIST_DEF}` });
  assert.ok(v3.paths['/apis/stable.example.com/v1/crontabs'], 'all-namespaces list');
  assert.ok(v3.paths['/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}/status']);
  const scale = v3.paths['/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}/scale'];
  assert.deepEqual(scale.get.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/io.k8s.api.autoscaling.v1.Scale' });

  const schemas = v3.components.schemas;
  const kind = schemas[DEF];
  assert.deepEqual(kind.properties.metadata, { $ref: `#/components/schemas/${OBJECT_META}` });
  assert.deepEqual(kind['x-kubernetes-group-version-kind'], [{ group: 'stable.example.com', kind: 'CronTab', version: 'v1' }]);
  assert.deepEqual(kind.properties.spec.properties.note, { nullable: true, type: 'string' });
  assert.equal(kind.properties.spec.properties.ports['x-kubernetes-list-type'], 'map');
  assert.deepEqual(schemas[LIST_DEF].properties.items.items, { $ref: `#/components/schemas/${DEF}` });
  assert.deepEqual(schemas[LIST_DEF].properties.metadata, { $ref: `#/components/schemas/${LIST_META}` });
  for (const r of refs(v3)) {
    assert.ok(r.startsWith('#/components/schemas/'), r);
    assert.ok(schemas[r.slice('#/components/schemas/'.length)], `dangling ${r}`);
  }
  assert.ok(schemas[OBJECT_META]);
});

test('v2: CRD definitions in their v2 form, paths, and a protobuf form that decodes', () => {
  const { catalog, model, o } = setup();
  install(model, catalog, cronTabCrd());
  const v2 = parse(o.v2().body);
  const expected = crdDefinitions(cronTabCrd()).v2Definitions as Json;
  assert.deepEqual(v2.definitions[DEF], expected[DEF]);
  assert.deepEqual(v2.definitions[LIST_DEF], expected[LIST_DEF]);
  assert.deepEqual(v2.definitions[DEF].properties.spec.properties.note, {});
  const item = v2.paths['/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}'];
  assert.deepEqual(item.get.responses['200'].schema, { $ref: `#/definitions/${DEF}` });
  assert.ok(!item.patch.consumes.includes('application/strategic-merge-patch+json'));
  for (const r of refs(v2)) assert.ok(v2.definitions[r.slice('#/definitions/'.length)], `dangling ${r}`);

  const doc = new Msg(encodeOpenApiV2Document(v2));
  const defs = named(doc.msg(9)!.msgs(1)); // Document.definitions -> NamedSchema
  const kind = defs.get(DEF)!;
  assert.ok(kind, 'CronTab definition in the protobuf');
  assert.deepEqual(kind.msg(22)!.strs(1), ['object']); // Schema.type
  const props = named(kind.msg(25)!.msgs(1)); // Schema.properties
  assert.equal(props.get('metadata')!.str(1), `#/definitions/${OBJECT_META}`);
  const spec = named(props.get('spec')!.msg(25)!.msgs(1));
  assert.equal(spec.get('note')!.has(22), false, 'a nullable field has no type in v2');
  const ports = spec.get('ports')!;
  const ext = new Map(ports.msgs(31).map((m) => [m.str(1), parseYaml(m.msg(2)!.str(2))]));
  assert.equal(ext.get('x-kubernetes-list-type'), 'map');
  assert.deepEqual(ext.get('x-kubernetes-list-map-keys'), ['name', 'protocol']);
  const gvk = new Map(kind.msgs(31).map((m) => [m.str(1), parseYaml(m.msg(2)!.str(2))])).get('x-kubernetes-group-version-kind');
  assert.deepEqual(gvk, [{ group: 'stable.example.com', kind: 'CronTab', version: 'v1' }]);
  const paths = named(doc.msg(8)!.msgs(2));
  assert.ok(paths.has('/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}'));
});

test('a schema change alone re-publishes: new v3 hash and v2 etag; removal takes the documents away', () => {
  const { catalog, model, o } = setup();
  const builtinV2 = o.v2();
  install(model, catalog, cronTabCrd());
  const v2a = o.v2();
  const docA = o.v3('apis/stable.example.com/v1')!;
  const indexA = o.v3Index() as Json;
  const apps = o.v3('apis/apps/v1')!;

  // Only the definitions change (same ResourceInfo, catalog untouched).
  const defs = crdDefinitions(cronTabCrd(cronTabSchema({ added: { type: 'boolean' } })));
  model.setDefinitions('crontabs.stable.example.com', defs.definitions, defs.v2Definitions);
  const docB = o.v3('apis/stable.example.com/v1')!;
  assert.notEqual(docB.hash, docA.hash);
  assert.equal(parse(docB.body).components.schemas[DEF].properties.spec.properties.added.type, 'boolean');
  const indexB = o.v3Index() as Json;
  assert.notEqual(indexB.paths['apis/stable.example.com/v1'].serverRelativeURL, indexA.paths['apis/stable.example.com/v1'].serverRelativeURL);
  assert.equal(o.v3('apis/apps/v1'), apps, 'unrelated documents are reused');
  const v2b = o.v2();
  assert.notEqual(v2b.etag, v2a.etag);
  assert.equal(parse(v2b.body).definitions[DEF].properties.spec.properties.added.type, 'boolean');

  model.removeDefinitions('crontabs.stable.example.com');
  catalog.remove('stable.example.com', 'v1', 'crontabs');
  assert.equal(o.v3('apis/stable.example.com/v1'), undefined);
  assert.equal((o.v3Index() as Json).paths['apis/stable.example.com/v1'], undefined);
  const v2c = parse(o.v2().body);
  assert.equal(v2c.definitions[DEF], undefined);
  assert.equal(v2c.paths['/apis/stable.example.com/v1/crontabs'], undefined);
  assert.ok(o.v2().body.equals(builtinV2.body), 'back to the built-in document, byte for byte');
});

test('root preserve-unknown-fields and schema-less versions still render paths', () => {
  const { catalog, model, o } = setup();
  install(model, catalog, cronTabCrd({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true }));
  // A served version without a schema gets no definition: its paths are untyped objects.
  catalog.add(cronTabInfo('v2', undefined));
  const v2 = parse(o.v2().body);
  assert.deepEqual(v2.definitions[DEF], { type: 'object', 'x-kubernetes-group-version-kind': [{ group: 'stable.example.com', kind: 'CronTab', version: 'v1' }] });
  assert.deepEqual(v2.paths['/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}'].get.responses['200'].schema, { $ref: `#/definitions/${DEF}` });
  assert.deepEqual(v2.paths['/apis/stable.example.com/v2/namespaces/{namespace}/crontabs/{name}'].get.responses['200'].schema, { type: 'object' });
  const v3 = parse(o.v3('apis/stable.example.com/v1')!.body);
  assert.equal(v3.components.schemas[DEF]['x-kubernetes-preserve-unknown-fields'], true);
  assert.deepEqual(v3.components.schemas[DEF].properties.metadata, { $ref: `#/components/schemas/${OBJECT_META}` });
  const v3b = parse(o.v3('apis/stable.example.com/v2')!.body);
  assert.deepEqual(v3b.paths['/apis/stable.example.com/v2/namespaces/{namespace}/crontabs/{name}'].get.responses['200'].content['application/json'].schema, { type: 'object' });
  assert.ok(encodeOpenApiV2Document(v2).length > 0);
});

test('a CRD in a *.k8s.io group is still a custom resource: no strategic merge patch', () => {
  const { catalog, model, o } = setup();
  const crd = cronTabCrd();
  crd.metadata.name = 'crontabs.snapshot.storage.k8s.io';
  crd.spec.group = 'snapshot.storage.k8s.io'; // its definitions get io.k8s.* names, like the built-ins
  const defs = crdDefinitions(crd);
  const def = defs.byVersion.v1!.definition;
  assert.equal(def, 'io.k8s.storage.snapshot.v1.CronTab');
  model.setDefinitions(crd.metadata.name, defs.definitions, defs.v2Definitions);
  catalog.add({ ...cronTabInfo(), group: 'snapshot.storage.k8s.io', definition: def });
  const v3 = parse(o.v3('apis/snapshot.storage.k8s.io/v1')!.body);
  const patch = v3.paths['/apis/snapshot.storage.k8s.io/v1/namespaces/{namespace}/crontabs/{name}'].patch;
  assert.equal(patch.requestBody.content['application/strategic-merge-patch+json'], undefined);
  assert.deepEqual(patch.responses['200'].content['application/json'].schema, { $ref: `#/components/schemas/${def}` });
});

test('a ResourceInfo without `definition` finds the CRD schema by its GVK', () => {
  const { catalog, model, o } = setup();
  install(model, catalog, cronTabCrd(), cronTabInfo('v1', undefined));
  const v3 = parse(o.v3('apis/stable.example.com/v1')!.body);
  const item = v3.paths['/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}'];
  assert.deepEqual(item.get.responses['200'].content['application/json'].schema, { $ref: `#/components/schemas/${DEF}` });
  assert.equal(item.patch.requestBody.content['application/strategic-merge-patch+json'], undefined);
  const v2 = parse(o.v2().body);
  assert.deepEqual(v2.paths['/apis/stable.example.com/v1/crontabs'].get.responses['200'].schema, { $ref: `#/definitions/${LIST_DEF}` });
});

test('two servers in one process: overlays do not see each other', () => {
  const a = setup();
  const b = setup();
  install(a.model, a.catalog, cronTabCrd());
  assert.ok(parse(a.o.v2().body).definitions[DEF]);
  assert.equal(parse(b.o.v2().body).definitions[DEF], undefined);
  assert.equal(b.model.has(DEF), false);
});

// ---------------------------------------------------------------------------------------------
// A minimal protobuf reader for the gnostic document

class Msg {
  readonly fields = new Map<number, { wireType: number; bytes?: Buffer; varint?: bigint }[]>();
  constructor(buf: Buffer) {
    let pos = 0;
    const varint = (): bigint => {
      let result = 0n;
      let shift = 0n;
      for (;;) {
        const b = buf[pos++]!;
        result |= BigInt(b & 0x7f) << shift;
        if ((b & 0x80) === 0) return result;
        shift += 7n;
      }
    };
    while (pos < buf.length) {
      const key = Number(varint());
      const field = key >>> 3;
      const wireType = key & 7;
      let f: { wireType: number; bytes?: Buffer; varint?: bigint };
      if (wireType === 0) f = { wireType, varint: varint() };
      else if (wireType === 1) {
        f = { wireType };
        pos += 8;
      } else if (wireType === 2) {
        const len = Number(varint());
        f = { wireType, bytes: buf.subarray(pos, pos + len) };
        pos += len;
        assert.ok(pos <= buf.length, 'truncated field');
      } else throw new Error(`unexpected wire type ${wireType}`);
      const list = this.fields.get(field) ?? [];
      list.push(f);
      this.fields.set(field, list);
    }
  }
  has(n: number): boolean {
    return this.fields.has(n);
  }
  msgs(n: number): Msg[] {
    return (this.fields.get(n) ?? []).map((f) => new Msg(f.bytes!));
  }
  msg(n: number): Msg | undefined {
    return this.msgs(n).at(-1);
  }
  strs(n: number): string[] {
    return (this.fields.get(n) ?? []).map((f) => f.bytes!.toString('utf8'));
  }
  str(n: number): string {
    return this.strs(n).at(-1) ?? '';
  }
}

function named(list: Msg[]): Map<string, Msg> {
  return new Map(list.map((m) => [m.str(1), m.msg(2)!]));
}
