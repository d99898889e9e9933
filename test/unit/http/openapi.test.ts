import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { ResourceCatalog } from '../../../server/schema/catalog.ts';
import { TypeModel } from '../../../server/schema/model.ts';
import { OpenApi, operationGroupVersion, operationTag } from '../../../server/http/openapi.ts';

type Json = Record<string, any>;

function setup(): { catalog: ResourceCatalog; o: OpenApi } {
  const catalog = ResourceCatalog.loadBuiltins();
  return { catalog, o: new OpenApi(catalog, TypeModel.loadBuiltins(), catalog.kubernetesVersion) };
}

const parse = (b: Buffer): Json => JSON.parse(b.toString('utf8'));

const widget = {
  group: 'example.com',
  version: 'v1',
  resource: 'widgets',
  kind: 'Widget',
  listKind: 'WidgetList',
  singularName: 'widget',
  namespaced: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  subresources: { status: { verbs: ['get', 'patch', 'update'] } },
};

/** Every $ref string in a document. */
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

/** kubectl's QueryParamVerifierV3 check: the PATCH operations tagged with the GVK carry the query param. */
function supportsQueryParam(doc: Json, gvk: { group: string; version: string; kind: string }, param: string): boolean {
  let found = false;
  for (const item of Object.values<Json>(doc.paths)) {
    const op = item.patch;
    if (!op) continue;
    const g = op['x-kubernetes-group-version-kind'];
    if (!g || g.group !== gvk.group || g.version !== gvk.version || g.kind !== gvk.kind) continue;
    // kubectl stops at the first matching PATCH it sees (map order), so every one must carry it.
    if (!(op.parameters ?? []).some((p: Json) => p.name === param && p.in === 'query')) return false;
    found = true;
  }
  return found;
}

test('operation id and tag words follow kube', () => {
  assert.equal(operationGroupVersion('apps', 'v1'), 'AppsV1');
  assert.equal(operationGroupVersion('', 'v1'), 'CoreV1');
  assert.equal(operationGroupVersion('rbac.authorization.k8s.io', 'v1'), 'RbacAuthorizationV1');
  assert.equal(operationGroupVersion('flowcontrol.apiserver.k8s.io', 'v1beta3'), 'FlowcontrolApiserverV1beta3');
  assert.equal(operationGroupVersion('stable.example.com', 'v1'), 'StableExampleComV1');
  assert.equal(operationTag('rbac.authorization.k8s.io', 'v1'), 'rbacAuthorization_v1');
  assert.equal(operationTag('', 'v1'), 'core_v1');
  assert.equal(operationTag('apps'), 'apps');
});

test('v3 index lists every document with a hash that matches its body', () => {
  const { o } = setup();
  const index = o.v3Index() as Json;
  for (const name of ['api', 'api/v1', 'apis', 'apis/apps', 'apis/apps/v1', 'version']) {
    const entry = index.paths[name];
    assert.ok(entry, `index has ${name}`);
    const doc = o.v3(name)!;
    const hash = createHash('sha512').update(doc.body).digest('hex').toUpperCase();
    assert.equal(entry.serverRelativeURL, `/openapi/v3/${name}?hash=${hash}`);
    assert.equal(doc.hash, hash);
    assert.equal(doc.etag, hash);
  }
  assert.equal(o.v3('apis/apps/v9'), undefined);
  assert.equal(o.v3('apis/nope.example.com/v1'), undefined);
  assert.equal(o.v3('nonsense'), undefined);
  assert.equal(o.v3('/apis/apps/v1/'), o.v3('apis/apps/v1'));
});

test('v3 apps/v1: deployments paths, operation ids, kube extensions', () => {
  const { o } = setup();
  const doc = parse(o.v3('apis/apps/v1')!.body);
  assert.equal(doc.openapi, '3.0.0');
  assert.equal(doc.info.title, 'Kubernetes');
  const gvk = { group: 'apps', kind: 'Deployment', version: 'v1' };

  const collection = doc.paths['/apis/apps/v1/namespaces/{namespace}/deployments'];
  assert.equal(collection.get.operationId, 'listAppsV1NamespacedDeployment');
  assert.equal(collection.get['x-kubernetes-action'], 'list');
  assert.deepEqual(collection.get['x-kubernetes-group-version-kind'], gvk);
  assert.deepEqual(collection.get.tags, ['apps_v1']);
  const listParams = collection.get.parameters.map((p: Json) => p.name);
  for (const p of ['allowWatchBookmarks', 'continue', 'fieldSelector', 'labelSelector', 'limit', 'resourceVersion', 'resourceVersionMatch', 'sendInitialEvents', 'timeoutSeconds', 'watch']) {
    assert.ok(listParams.includes(p), `list has ${p}`);
  }
  assert.equal(collection.get.parameters.find((p: Json) => p.name === 'limit').schema.type, 'integer');
  assert.deepEqual(collection.parameters.map((p: Json) => p.name), ['namespace', 'pretty']);
  assert.equal(collection.parameters[0].in, 'path');
  assert.equal(collection.parameters[0].required, true);
  const listContent = collection.get.responses['200'].content;
  assert.deepEqual(listContent['application/json'].schema, { $ref: '#/components/schemas/io.k8s.api.apps.v1.DeploymentList' });
  assert.ok(listContent['application/json;stream=watch']);
  assert.ok(listContent['application/yaml']);
  assert.ok(listContent['application/vnd.kubernetes.protobuf']);

  assert.equal(collection.post.operationId, 'createAppsV1NamespacedDeployment');
  assert.equal(collection.post['x-kubernetes-action'], 'post');
  assert.deepEqual(collection.post.requestBody, { content: { '*/*': { schema: { $ref: '#/components/schemas/io.k8s.api.apps.v1.Deployment' } } }, required: true });
  assert.deepEqual(Object.keys(collection.post.responses), ['200', '201', '202', '401']);
  assert.deepEqual(collection.post.parameters.map((p: Json) => p.name), ['dryRun', 'fieldManager', 'fieldValidation']);

  assert.equal(collection.delete.operationId, 'deleteAppsV1CollectionNamespacedDeployment');
  assert.equal(collection.delete['x-kubernetes-action'], 'deletecollection');

  const item = doc.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}'];
  assert.equal(item.get.operationId, 'readAppsV1NamespacedDeployment');
  assert.equal(item.put.operationId, 'replaceAppsV1NamespacedDeployment');
  assert.equal(item.put['x-kubernetes-action'], 'put');
  assert.equal(item.delete.operationId, 'deleteAppsV1NamespacedDeployment');
  const delParams = item.delete.parameters.map((p: Json) => p.name);
  for (const p of ['dryRun', 'gracePeriodSeconds', 'orphanDependents', 'propagationPolicy']) assert.ok(delParams.includes(p), `delete has ${p}`);
  assert.deepEqual(item.delete.requestBody.content['*/*'].schema, { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions' });
  assert.deepEqual(item.parameters.map((p: Json) => p.name), ['name', 'namespace', 'pretty']);

  const patch = item.patch;
  assert.equal(patch.operationId, 'patchAppsV1NamespacedDeployment');
  assert.deepEqual(patch['x-kubernetes-group-version-kind'], gvk);
  assert.deepEqual(patch.parameters.map((p: Json) => p.name), ['dryRun', 'fieldManager', 'fieldValidation', 'force']);
  assert.equal(patch.parameters.find((p: Json) => p.name === 'fieldValidation').in, 'query');
  assert.deepEqual(Object.keys(patch.requestBody.content).sort(), [
    'application/apply-patch+yaml',
    'application/json-patch+json',
    'application/merge-patch+json',
    'application/strategic-merge-patch+json',
  ]);
  assert.deepEqual(patch.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/io.k8s.api.apps.v1.Deployment' });

  const all = doc.paths['/apis/apps/v1/deployments'];
  assert.equal(all.get.operationId, 'listAppsV1DeploymentForAllNamespaces');
  assert.ok(all.parameters.some((p: Json) => p.name === 'watch'));

  const scale = doc.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale'];
  assert.equal(scale.patch.operationId, 'patchAppsV1NamespacedDeploymentScale');
  assert.deepEqual(scale.patch['x-kubernetes-group-version-kind'], { group: 'autoscaling', kind: 'Scale', version: 'v1' });
  assert.deepEqual(scale.get.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/io.k8s.api.autoscaling.v1.Scale' });
  assert.equal(scale.parameters[0].description, 'name of the Scale');

  const status = doc.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}/status'];
  assert.equal(status.get.operationId, 'readAppsV1NamespacedDeploymentStatus');
  assert.deepEqual(status.patch['x-kubernetes-group-version-kind'], gvk);

  assert.equal(doc.paths['/apis/apps/v1/'].get.operationId, 'getAppsV1APIResources');
});

test('v3: kubectl finds fieldValidation on the PATCH of every built-in kind with patch', () => {
  const { catalog, o } = setup();
  for (const r of catalog.resources()) {
    if (!r.verbs.includes('patch')) continue;
    const name = r.group ? `apis/${r.group}/${r.version}` : `api/${r.version}`;
    const doc = parse(o.v3(name)!.body);
    assert.ok(supportsQueryParam(doc, { group: r.group, version: r.version, kind: r.kind }, 'fieldValidation'), `${r.resource}.${r.group}/${r.version}`);
  }
});

test('v3 core: cluster-scoped and namespaced operation ids; only served subresources', () => {
  const { o } = setup();
  const doc = parse(o.v3('api/v1')!.body);
  assert.equal(doc.paths['/api/v1/namespaces/{name}'].get.operationId, 'readCoreV1Namespace');
  assert.equal(doc.paths['/api/v1/namespaces'].get.operationId, 'listCoreV1Namespace');
  assert.equal(doc.paths['/api/v1/namespaces/{name}'].get.parameters, undefined);
  assert.deepEqual(doc.paths['/api/v1/namespaces/{name}'].parameters.map((p: Json) => p.name), ['name', 'pretty']);
  assert.equal(doc.paths['/api/v1/namespaces/{namespace}/pods/{name}/status'].patch.operationId, 'patchCoreV1NamespacedPodStatus');
  assert.equal(doc.paths['/api/v1/pods'].get.operationId, 'listCoreV1PodForAllNamespaces');
  assert.equal(doc.paths['/api/v1/namespaces/{namespace}/pods/{name}/exec'], undefined);
  assert.equal(doc.paths['/api/v1/namespaces/{namespace}/pods/{name}/log'], undefined);
  assert.equal(doc.paths['/api/v1/namespaces/{name}/finalize'], undefined);
  assert.equal(doc.paths['/api/v1/'].get.operationId, 'getCoreV1APIResources');
  // A cluster-scoped kind has no all-namespaces list path and no namespace parameter.
  assert.equal(doc.paths['/api/v1/nodes'].parameters.some((p: Json) => p.name === 'namespace'), false);
});

test('v3 schemas: Deployment with its GVK, the closure, no dangling or foreign refs', () => {
  const { o } = setup();
  const doc = parse(o.v3('apis/apps/v1')!.body);
  const schemas = doc.components.schemas as Json;
  assert.deepEqual(schemas['io.k8s.api.apps.v1.Deployment']['x-kubernetes-group-version-kind'], [{ group: 'apps', kind: 'Deployment', version: 'v1' }]);
  for (const n of ['io.k8s.api.core.v1.PodSpec', 'io.k8s.api.core.v1.Container', 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta', 'io.k8s.api.autoscaling.v1.Scale', 'io.k8s.apimachinery.pkg.apis.meta.v1.Status']) {
    assert.ok(schemas[n], `closure has ${n}`);
  }
  const all = refs(doc);
  assert.ok(all.length > 100);
  for (const r of all) {
    assert.ok(r.startsWith('#/components/schemas/'), `v3 ref form: ${r}`);
    assert.ok(schemas[r.slice('#/components/schemas/'.length)], `dangling ${r}`);
  }
  // The closure is exact: every schema is reachable from the paths (no unrelated alpha/beta types).
  const reachable = new Set<string>();
  const stack = refs(doc.paths).map((r) => r.slice('#/components/schemas/'.length));
  while (stack.length) {
    const n = stack.pop()!;
    if (reachable.has(n)) continue;
    reachable.add(n);
    for (const r of refs(schemas[n])) stack.push(r.slice('#/components/schemas/'.length));
  }
  assert.deepEqual([...reachable].sort(), Object.keys(schemas).sort());
  assert.ok(!Object.keys(schemas).some((n) => /\.v1(alpha|beta)\d+\./.test(n)));
  // $ref with siblings is wrapped in allOf (OpenAPI 3.0 ignores $ref siblings).
  const strategy = schemas['io.k8s.api.apps.v1.DeploymentSpec'].properties.strategy;
  assert.equal(strategy['x-kubernetes-patch-strategy'], 'retainKeys');
  assert.deepEqual(strategy.allOf, [{ $ref: '#/components/schemas/io.k8s.api.apps.v1.DeploymentStrategy' }]);
  assert.equal(strategy.$ref, undefined);
});

test('v3 non-resource documents: api, apis, apis/<group>, version', () => {
  const { o } = setup();
  const api = parse(o.v3('api')!.body);
  assert.equal(api.paths['/api/'].get.operationId, 'getCoreAPIVersions');
  assert.ok(api.components.schemas['io.k8s.apimachinery.pkg.apis.meta.v1.APIVersions']);
  const apis = parse(o.v3('apis')!.body);
  assert.equal(apis.paths['/apis/'].get.operationId, 'getAPIVersions');
  const group = parse(o.v3('apis/apps')!.body);
  assert.equal(group.paths['/apis/apps/'].get.operationId, 'getAppsAPIGroup');
  assert.ok(group.components.schemas['io.k8s.apimachinery.pkg.apis.meta.v1.APIGroup']);
  const version = parse(o.v3('version')!.body);
  assert.equal(version.paths['/version/'].get.operationId, 'getCodeVersion');
  assert.ok(version.components.schemas['io.k8s.apimachinery.pkg.version.Info']);
});

test('v2: swagger 2.0 with info, paths and resolving definitions', () => {
  const { catalog, o } = setup();
  const doc = parse(o.v2().body);
  assert.equal(doc.swagger, '2.0');
  assert.deepEqual(doc.info, { title: 'Kubernetes', version: catalog.kubernetesVersion });
  assert.ok(doc.definitions['io.k8s.api.apps.v1.Deployment']['x-kubernetes-group-version-kind']);
  assert.ok(doc.definitions['io.k8s.api.core.v1.PodSpec']);
  const patch = doc.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}'].patch;
  assert.equal(patch.operationId, 'patchAppsV1NamespacedDeployment');
  assert.ok(patch.consumes.includes('application/strategic-merge-patch+json'));
  assert.ok(patch.parameters.some((p: Json) => p.name === 'fieldValidation' && p.in === 'query'));
  assert.deepEqual(patch.parameters[0], { in: 'body', name: 'body', required: true, schema: { $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch' } });
  assert.deepEqual(patch.responses['200'], { description: 'OK', schema: { $ref: '#/definitions/io.k8s.api.apps.v1.Deployment' } });
  assert.ok(doc.paths['/api/v1/namespaces/{namespace}/pods']);
  assert.ok(doc.paths['/apis/']);
  assert.ok(doc.paths['/version/']);
  for (const r of refs(doc)) {
    assert.ok(r.startsWith('#/definitions/'), `v2 ref form: ${r}`);
    assert.ok(doc.definitions[r.slice('#/definitions/'.length)], `dangling ${r}`);
  }
  assert.match(o.v2().etag, /^[0-9A-F]{128}$/);
});

test('caching: same buffers until the catalog changes; unchanged documents keep their hash', () => {
  const { catalog, o } = setup();
  const v2 = o.v2();
  const index = o.v3Index();
  const apps = o.v3('apis/apps/v1')!;
  assert.equal(o.v2(), v2);
  assert.equal(o.v2().body, v2.body);
  assert.equal(o.v3Index(), index);
  assert.equal(o.v3('apis/apps/v1'), apps);
  assert.equal(o.v3('apis/apps/v1')!.body, apps.body);
  assert.equal((index as Json).paths['apis/example.com/v1'], undefined);

  catalog.add({ ...widget });
  const v2b = o.v2();
  assert.notEqual(v2b, v2);
  assert.notEqual(v2b.etag, v2.etag);
  assert.notEqual(o.v3Index(), index);
  const indexB = o.v3Index() as Json;
  assert.ok(indexB.paths['apis/example.com/v1']);
  assert.ok(indexB.paths['apis/example.com']);
  // Clients cache per-GV documents by hash: an unrelated change keeps apps/v1's.
  assert.equal(indexB.paths['apis/apps/v1'].serverRelativeURL, (index as Json).paths['apis/apps/v1'].serverRelativeURL);
  assert.deepEqual(o.v3('apis/apps/v1')!.body, apps.body);

  const crd = parse(o.v3('apis/example.com/v1')!.body);
  const patch = crd.paths['/apis/example.com/v1/namespaces/{namespace}/widgets/{name}'].patch;
  assert.equal(patch.operationId, 'patchExampleComV1NamespacedWidget');
  assert.ok(supportsQueryParam(crd, { group: 'example.com', version: 'v1', kind: 'Widget' }, 'fieldValidation'));
  // No strategic merge for custom resources; no schema in the model → untyped object, never a dangling ref.
  assert.equal(patch.requestBody.content['application/strategic-merge-patch+json'], undefined);
  assert.deepEqual(patch.responses['200'].content['application/json'].schema, { type: 'object' });
  assert.equal(crd.paths['/apis/example.com/v1/namespaces/{namespace}/widgets/{name}/status'].put.operationId, 'replaceExampleComV1NamespacedWidgetStatus');
  assert.ok(parse(v2b.body).paths['/apis/example.com/v1/widgets']);

  catalog.remove('example.com', 'v1', 'widgets');
  assert.equal(o.v3('apis/example.com/v1'), undefined);
  assert.equal((o.v3Index() as Json).paths['apis/example.com/v1'], undefined);
});
