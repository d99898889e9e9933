import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { ResourceCatalog } from '../../../server/schema/catalog.ts';
import { Discovery, negotiateDiscovery, storageVersionHash, SERVED_SUBRESOURCES } from '../../../server/http/discovery.ts';

type Json = Record<string, any>;

function setup(): { catalog: ResourceCatalog; d: Discovery } {
  const catalog = ResourceCatalog.loadBuiltins();
  return { catalog, d: new Discovery(catalog) };
}

const widget = {
  group: 'example.com',
  version: 'v1',
  resource: 'widgets',
  kind: 'Widget',
  listKind: 'WidgetList',
  singularName: 'widget',
  namespaced: true,
  verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
  shortNames: ['wd'],
  subresources: { status: { verbs: ['get', 'patch', 'update'] } },
};

test('GET /api: APIVersions with v1 and the server address', () => {
  const { d } = setup();
  assert.deepEqual(d.apiVersions('10.0.0.1:6443'), {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '10.0.0.1:6443' }],
  });
});

test('GET /apis: every non-core group with versions and preferredVersion', () => {
  const { catalog, d } = setup();
  const list = d.apiGroupList() as Json;
  assert.equal(list.kind, 'APIGroupList');
  assert.equal(list.apiVersion, 'v1');
  assert.ok(!list.groups.some((g: Json) => g.name === ''), 'core group is served under /api, not /apis');
  assert.equal(list.groups.length, catalog.groups().filter((g) => g.name !== '').length);
  const apps = list.groups.find((g: Json) => g.name === 'apps');
  assert.deepEqual(apps, {
    name: 'apps',
    versions: [{ groupVersion: 'apps/v1', version: 'v1' }],
    preferredVersion: { groupVersion: 'apps/v1', version: 'v1' },
  });
  // Multi-version groups list the preferred version first, as the catalog orders them.
  const autoscaling = list.groups.find((g: Json) => g.name === 'autoscaling');
  assert.ok(autoscaling.versions.length >= 2);
  assert.equal(autoscaling.preferredVersion.version, autoscaling.versions[0].version);
  assert.equal(autoscaling.preferredVersion.groupVersion, `autoscaling/${autoscaling.versions[0].version}`);
});

test('GET /apis/<group>: APIGroup, undefined for unknown or core', () => {
  const { d } = setup();
  assert.deepEqual(d.apiGroup('apps'), {
    kind: 'APIGroup',
    apiVersion: 'v1',
    name: 'apps',
    versions: [{ groupVersion: 'apps/v1', version: 'v1' }],
    preferredVersion: { groupVersion: 'apps/v1', version: 'v1' },
  });
  assert.equal(d.apiGroup('nope.example.com'), undefined);
  assert.equal(d.apiGroup(''), undefined);
});

test('GET /apis/apps/v1: deployments with status and scale subresources', () => {
  const { d } = setup();
  const list = d.apiResourceList('apps', 'v1') as Json;
  assert.equal(list.kind, 'APIResourceList');
  assert.equal(list.apiVersion, 'v1');
  assert.equal(list.groupVersion, 'apps/v1');
  const byName = new Map<string, Json>(list.resources.map((r: Json) => [r.name, r]));
  assert.deepEqual(byName.get('deployments'), {
    name: 'deployments',
    singularName: 'deployment',
    namespaced: true,
    kind: 'Deployment',
    verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
    shortNames: ['deploy'],
    categories: ['all'],
    storageVersionHash: '8aSe+NMegvE=',
  });
  assert.deepEqual(byName.get('deployments/scale'), {
    name: 'deployments/scale',
    singularName: '',
    namespaced: true,
    group: 'autoscaling',
    version: 'v1',
    kind: 'Scale',
    verbs: ['get', 'patch', 'update'],
  });
  assert.deepEqual(byName.get('deployments/status'), {
    name: 'deployments/status',
    singularName: '',
    namespaced: true,
    kind: 'Deployment',
    verbs: ['get', 'patch', 'update'],
  });
  const names = list.resources.map((r: Json) => r.name);
  assert.deepEqual(names, [...names].sort(), 'resources are sorted by name');
  assert.equal(d.apiResourceList('apps', 'v9'), undefined);
  assert.equal(d.apiResourceList('nope.example.com', 'v1'), undefined);
});

test('GET /api/v1: no apiVersion (as kube), only served subresources', () => {
  const { d } = setup();
  const list = d.apiResourceList('', 'v1') as Json;
  assert.equal(list.kind, 'APIResourceList');
  assert.equal(list.groupVersion, 'v1');
  assert.equal('apiVersion' in list, false);
  const names: string[] = list.resources.map((r: Json) => r.name);
  assert.ok(names.includes('pods'));
  assert.ok(names.includes('pods/status'));
  assert.ok(names.includes('namespaces/status'));
  for (const n of names) {
    const sub = n.split('/')[1];
    if (sub) assert.ok(SERVED_SUBRESOURCES.includes(sub), `unserved subresource advertised: ${n}`);
  }
  assert.equal(list.resources.find((r: Json) => r.name === 'pods').storageVersionHash, 'xPOwRZ+Yhw8=');
  assert.equal(list.resources.find((r: Json) => r.name === 'pods/status').storageVersionHash, undefined);
});

test('storageVersionHash: sha256 of group/version/kind, first 8 bytes, base64 (kube values)', () => {
  assert.equal(storageVersionHash('', 'v1', 'Pod'), 'xPOwRZ+Yhw8=');
  assert.equal(storageVersionHash('apps', 'v1', 'Deployment'), '8aSe+NMegvE=');
  // events.k8s.io events are stored as core v1 Events; kube reports the stored type's hash.
  const { d } = setup();
  const ev = (d.apiResourceList('events.k8s.io', 'v1') as Json).resources.find((r: Json) => r.name === 'events');
  assert.equal(ev.storageVersionHash, 'r2yiGXH7wu8=');
});

test('aggregated v2: APIGroupDiscoveryList shape for /apis and /api', () => {
  const { d } = setup();
  const apis = d.aggregated('apis', 'v2') as Json;
  assert.equal(apis.kind, 'APIGroupDiscoveryList');
  assert.equal(apis.apiVersion, 'apidiscovery.k8s.io/v2');
  assert.deepEqual(apis.metadata, {});
  assert.ok(!apis.items.some((i: Json) => !i.metadata.name), 'no core group under /apis');
  const apps = apis.items.find((i: Json) => i.metadata.name === 'apps');
  assert.equal(apps.versions.length, 1);
  assert.equal(apps.versions[0].version, 'v1');
  assert.equal(apps.versions[0].freshness, 'Current');
  const deploy = apps.versions[0].resources.find((r: Json) => r.resource === 'deployments');
  assert.deepEqual(deploy, {
    resource: 'deployments',
    responseKind: { group: '', version: '', kind: 'Deployment' },
    scope: 'Namespaced',
    singularResource: 'deployment',
    verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
    shortNames: ['deploy'],
    categories: ['all'],
    subresources: [
      { subresource: 'scale', responseKind: { group: 'autoscaling', version: 'v1', kind: 'Scale' }, verbs: ['get', 'patch', 'update'] },
      { subresource: 'status', responseKind: { group: '', version: '', kind: 'Deployment' }, verbs: ['get', 'patch', 'update'] },
    ],
  });
  const ns = (d.aggregated('api', 'v2') as Json).items;
  assert.equal(ns.length, 1);
  assert.equal(ns[0].metadata.name, undefined);
  const namespaces = ns[0].versions[0].resources.find((r: Json) => r.resource === 'namespaces');
  assert.equal(namespaces.scope, 'Cluster');
  // Multi-version groups keep preferred-first order.
  const autoscaling = apis.items.find((i: Json) => i.metadata.name === 'autoscaling');
  const preferred = (d.apiGroup('autoscaling') as Json).preferredVersion.version;
  assert.equal(autoscaling.versions[0].version, preferred);
});

test('aggregated v2beta1 has the same items, its own apiVersion', () => {
  const { d } = setup();
  const v2 = d.aggregated('apis', 'v2') as Json;
  const beta = d.aggregated('apis', 'v2beta1') as Json;
  assert.equal(beta.apiVersion, 'apidiscovery.k8s.io/v2beta1');
  assert.deepEqual(beta.items, v2.items);
  assert.deepEqual(JSON.parse(d.aggregatedBody('apis', 'v2beta1').toString()), beta);
});

test('etag: unquoted uppercase sha512 of the v2 body, stable, changes with the catalog', () => {
  const { catalog, d } = setup();
  const tag = d.etag('apis');
  assert.match(tag, /^[0-9A-F]{128}$/);
  const expected = createHash('sha512').update(d.aggregatedBody('apis', 'v2')).digest('hex').toUpperCase();
  assert.equal(tag, expected);
  assert.equal(d.etag('apis'), tag);
  assert.notEqual(d.etag('api'), tag);
  const apiTag = d.etag('api');
  catalog.add({ ...widget });
  assert.notEqual(d.etag('apis'), tag);
  assert.equal(d.etag('api'), apiTag, 'a new group leaves the core document alone');
});

test('caching: same objects until the catalog changes, then rebuilt with the new resource', () => {
  const { catalog, d } = setup();
  const groups = d.apiGroupList();
  const apps = d.apiResourceList('apps', 'v1');
  const agg = d.aggregated('apis', 'v2');
  const body = d.aggregatedBody('apis', 'v2');
  assert.equal(d.apiGroupList(), groups);
  assert.equal(d.apiResourceList('apps', 'v1'), apps);
  assert.equal(d.aggregated('apis', 'v2'), agg);
  assert.equal(d.aggregatedBody('apis', 'v2'), body);
  assert.equal(d.apiResourceList('example.com', 'v1'), undefined);

  catalog.add({ ...widget });
  assert.notEqual(d.apiGroupList(), groups);
  assert.notEqual(d.aggregated('apis', 'v2'), agg);
  assert.notEqual(d.aggregatedBody('apis', 'v2'), body);
  const list = d.apiGroupList() as Json;
  assert.ok(list.groups.some((g: Json) => g.name === 'example.com'));
  const widgets = d.apiResourceList('example.com', 'v1') as Json;
  assert.deepEqual(
    widgets.resources.map((r: Json) => r.name),
    ['widgets', 'widgets/status'],
  );
  assert.equal(widgets.resources[0].storageVersionHash, storageVersionHash('example.com', 'v1', 'Widget'));
  const item = (d.aggregated('apis', 'v2') as Json).items.find((i: Json) => i.metadata.name === 'example.com');
  assert.equal(item.versions[0].resources[0].resource, 'widgets');
  assert.deepEqual(item.versions[0].resources[0].shortNames, ['wd']);

  catalog.remove('example.com', 'v1', 'widgets');
  assert.equal(d.apiResourceList('example.com', 'v1'), undefined);
  assert.ok(!(d.apiGroupList() as Json).groups.some((g: Json) => g.name === 'example.com'));
});

// The Accept headers client-go sends for discovery.
const KUBECTL_130 = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';
const KUBECTL_127 = 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';
const NOPEER = `application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;profile=nopeer,${KUBECTL_130}`;

test('negotiateDiscovery: kubectl Accept headers', () => {
  assert.deepEqual(negotiateDiscovery(KUBECTL_130), { form: 'aggregated-v2', contentType: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' });
  assert.deepEqual(negotiateDiscovery(KUBECTL_127), { form: 'aggregated-v2beta1', contentType: 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList' });
  assert.deepEqual(negotiateDiscovery(NOPEER), {
    form: 'aggregated-v2',
    contentType: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;profile=nopeer',
  });
  // Legacy-only clients and per-group-version requests.
  assert.deepEqual(negotiateDiscovery('application/json'), { form: 'legacy', contentType: 'application/json' });
  assert.deepEqual(negotiateDiscovery('application/json, */*'), { form: 'legacy', contentType: 'application/json' });
  assert.deepEqual(negotiateDiscovery(undefined), { form: 'legacy', contentType: 'application/json' });
  assert.deepEqual(negotiateDiscovery(''), { form: 'legacy', contentType: 'application/json' });
  assert.deepEqual(negotiateDiscovery('*/*'), { form: 'legacy', contentType: 'application/json' });
});

test('negotiateDiscovery: protobuf, unknown versions, parameter order, quality', () => {
  assert.equal(negotiateDiscovery('application/vnd.kubernetes.protobuf'), undefined);
  assert.equal(negotiateDiscovery('application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList'), undefined);
  assert.deepEqual(negotiateDiscovery('application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json')?.form, 'legacy');
  assert.equal(negotiateDiscovery('application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList'), undefined);
  assert.equal(negotiateDiscovery('application/json;g=meta.k8s.io;v=v1;as=Table'), undefined);
  assert.equal(negotiateDiscovery('text/html'), undefined);
  assert.equal(negotiateDiscovery('application/json;q=0'), undefined);
  assert.equal(negotiateDiscovery('application/json; as=APIGroupDiscoveryList; v=v2; g=apidiscovery.k8s.io')?.form, 'aggregated-v2');
  assert.equal(negotiateDiscovery('application/json;q=0.5, application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList')?.form, 'aggregated-v2beta1');
  assert.equal(negotiateDiscovery('application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;q=0.1, application/json')?.form, 'legacy');
  assert.equal(negotiateDiscovery('application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;profile=other'), undefined);
  assert.equal(negotiateDiscovery('application/json;charset=utf-8')?.form, 'legacy');
});
