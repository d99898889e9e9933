// @kubernetes/client-node (1.x on Node 20) against a real server: typed CRUD, patches,
// errors, the generic object API, and a watch.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

let s: TestServer;
let kc: k8s.KubeConfig;
before(async () => {
  // (without the root CA publisher: a watch here counts a namespace's ConfigMaps)
  s = await startTestServer({ options: { controllers: ['*', '-root-ca-certificate-publisher-controller'] } });
  kc = new k8s.KubeConfig();
  kc.loadFromFile(s.kubeconfigPath);
});
after(async () => {
  await s.stop();
});

test('CoreV1Api ConfigMap CRUD with merge patch and 404/409 errors', async () => {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const namespace = 'default';
  const created = await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'cn' }, data: { a: '1' } } });
  assert.equal(created.metadata?.name, 'cn');
  assert.ok(created.metadata?.uid);

  const read = await core.readNamespacedConfigMap({ name: 'cn', namespace });
  assert.equal(read.data?.a, '1');

  const list = await core.listNamespacedConfigMap({ namespace });
  assert.ok(list.items.some((i) => i.metadata?.name === 'cn'));
  assert.match(list.metadata?.resourceVersion ?? '', /^\d+$/);

  read.data = { a: '2' };
  const replaced = await core.replaceNamespacedConfigMap({ name: 'cn', namespace, body: read });
  assert.equal(replaced.data?.a, '2');

  const patched = await core.patchNamespacedConfigMap(
    { name: 'cn', namespace, body: { data: { b: '3' } } },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
  );
  assert.deepEqual(patched.data, { a: '2', b: '3' });

  await assert.rejects(core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'cn' } } }), (e: any) => e.code === 409);
  await core.deleteNamespacedConfigMap({ name: 'cn', namespace });
  await assert.rejects(core.readNamespacedConfigMap({ name: 'cn', namespace }), (e: any) => e.code === 404);
});

test('AppsV1Api Deployment with strategic merge patch and the scale subresource', async () => {
  const apps = kc.makeApiClient(k8s.AppsV1Api);
  const namespace = 'default';
  await apps.createNamespacedDeployment({
    namespace,
    body: {
      metadata: { name: 'cn-web' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'cn-web' } },
        template: { metadata: { labels: { app: 'cn-web' } }, spec: { containers: [{ name: 'app', image: 'nginx' }] } },
      },
    },
  });
  const patched = await apps.patchNamespacedDeployment(
    { name: 'cn-web', namespace, body: { spec: { template: { spec: { containers: [{ name: 'app', image: 'nginx:2' }] } } } } },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch),
  );
  assert.equal(patched.spec?.template.spec?.containers.length, 1);
  assert.equal(patched.spec?.template.spec?.containers[0].image, 'nginx:2');
  assert.equal(patched.metadata?.generation, 2);

  const scale = await apps.readNamespacedDeploymentScale({ name: 'cn-web', namespace });
  assert.equal(scale.spec?.replicas, 1);
  await apps.replaceNamespacedDeploymentScale({ name: 'cn-web', namespace, body: { ...scale, spec: { replicas: 4 } } });
  assert.equal((await apps.readNamespacedDeployment({ name: 'cn-web', namespace })).spec?.replicas, 4);
});

test('KubernetesObjectApi reads and lists generically', async () => {
  const objects = k8s.KubernetesObjectApi.makeApiClient(kc);
  const ns = await objects.read({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kube-system' } });
  assert.equal(ns.metadata?.name, 'kube-system');
  const list = await objects.list('v1', 'Namespace');
  assert.ok(list.items.length >= 4);
});

test('Watch delivers ADDED, MODIFIED, DELETED for a namespace', async () => {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: 'cn-watch' } } });
  const list = await core.listNamespacedConfigMap({ namespace: 'cn-watch' });
  const seen: string[] = [];
  const watch = new k8s.Watch(kc);
  let done!: () => void;
  const finished = new Promise<void>((r) => (done = r));
  const req = await watch.watch(
    '/api/v1/namespaces/cn-watch/configmaps',
    { resourceVersion: list.metadata?.resourceVersion },
    (type, obj) => {
      seen.push(`${type} ${obj.metadata.name} ${obj.data?.v ?? ''}`.trim());
      if (type === 'DELETED') done();
    },
    () => {},
  );
  await core.createNamespacedConfigMap({ namespace: 'cn-watch', body: { metadata: { name: 'w' }, data: { v: '1' } } });
  await core.patchNamespacedConfigMap({ name: 'w', namespace: 'cn-watch', body: { data: { v: '2' } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
  await core.deleteNamespacedConfigMap({ name: 'w', namespace: 'cn-watch' });
  await finished;
  req.abort();
  assert.deepEqual(seen, ['ADDED w 1', 'MODIFIED w 2', 'DELETED w 2']);
});

test('KubernetesObjectApi server-side apply with a field manager, conflicts and force', async () => {
  const objects = k8s.KubernetesObjectApi.makeApiClient(kc);
  const spec = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cn-ssa', namespace: 'default' }, data: { owner: 'one' } };
  const created: any = await objects.patch(spec, undefined, undefined, 'manager-one', undefined, k8s.PatchStrategy.ServerSideApply);
  assert.equal(created.metadata?.managedFields?.[0].manager, 'manager-one');
  assert.equal(created.metadata?.managedFields?.[0].operation, 'Apply');
  await assert.rejects(
    objects.patch({ ...spec, data: { owner: 'two' } }, undefined, undefined, 'manager-two', undefined, k8s.PatchStrategy.ServerSideApply),
    (e: any) => e.code === 409,
  );
  const forced = await objects.patch({ ...spec, data: { owner: 'two' } }, undefined, undefined, 'manager-two', true, k8s.PatchStrategy.ServerSideApply);
  assert.equal((forced as any).data.owner, 'two');
});
