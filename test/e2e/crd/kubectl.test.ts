// CustomResourceDefinitions with kubectl (three versions) and @kubernetes/client-node: install a
// CRD, wait for Established, create, get (printer columns), describe, explain, apply
// --server-side, watch, delete the objects and the CRD.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as k8s from '@kubernetes/client-node';
import { useTestServer, kubectlsToTest, manifestWriter } from '../../helpers/server.ts';

const s = useTestServer();

const kubectls = kubectlsToTest();
const manifest = manifestWriter('hearth-crd-kubectl-');

/** A cluster-scoped CronTab-like CRD per kubectl version, so the versions do not share state. */
function crd(group: string) {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `crontabs.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'crontabs', singular: 'crontab', kind: 'CronTab', shortNames: ['ct'] },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  properties: {
                    cronSpec: { type: 'string', description: 'When the job runs, in cron syntax.' },
                    image: { type: 'string' },
                    replicas: { type: 'integer', minimum: 1, maximum: 10, default: 1 },
                    ports: {
                      type: 'array',
                      'x-kubernetes-list-type': 'map',
                      'x-kubernetes-list-map-keys': ['name'],
                      items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, port: { type: 'integer' } } },
                    },
                  },
                },
                status: { type: 'object', properties: { phase: { type: 'string' } } },
              },
            },
          },
          subresources: { status: {} },
          additionalPrinterColumns: [
            { name: 'Spec', type: 'string', jsonPath: '.spec.cronSpec' },
            { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
            { name: 'Image', type: 'string', jsonPath: '.spec.image', priority: 1 },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
        },
      ],
    },
  };
}

for (const { version, path } of kubectls) {
  describe(`kubectl ${version} with a CRD`, () => {
    const group = `k${version.replace('.', '')}.hearth.test`;
    const k = async (...args: string[]) => {
      const r = await s.kubectl(args, { binary: path });
      assert.equal(r.code, 0, `kubectl ${args.join(' ')} failed:\n${r.stderr}`);
      return r.stdout;
    };

    test('apply the CRD, wait for Established, then create, get, describe and explain custom objects', async () => {
      await k('apply', '-f', manifest(`crd-${version}`, crd(group)));
      await k('wait', '--for', 'condition=established', '--timeout=10s', `crd/crontabs.${group}`);
      const res = await k('api-resources', '--api-group', group);
      assert.match(res, new RegExp(`^crontabs\\s+ct\\s+${group.replace(/\./g, '\\.')}/v1\\s+true\\s+CronTab$`, 'm'));

      await k('apply', '-f', manifest(`ct-${version}`, { apiVersion: `${group}/v1`, kind: 'CronTab', metadata: { name: 'nightly', namespace: 'default' }, spec: { cronSpec: '0 3 * * *', image: 'backup:1' } }));
      const table = await k('get', `crontabs.${group}`, '-n', 'default');
      assert.match(table, /^NAME\s+SPEC\s+REPLICAS\s+AGE$/m);
      assert.match(table, /^nightly\s+0 3 \* \* \*\s+1\s+\d+s$/m);
      const wide = await k('get', `ct.${group}`, '-n', 'default', '-o', 'wide');
      assert.match(wide, /^NAME\s+SPEC\s+REPLICAS\s+IMAGE\s+AGE$/m);
      assert.match(wide, /backup:1/);
      const desc = await k('describe', `crontab.${group}`, 'nightly', '-n', 'default');
      assert.match(desc, /Cron Spec:\s+0 3 \* \* \*/);
      const explain = await k('explain', `crontabs.${group}.spec.cronSpec`);
      assert.match(explain, /cronSpec\s*<string>/);
      assert.match(explain, /When the job runs, in cron syntax\./);

      // Repeated client-side apply patches the object (kubectl falls back to a merge patch for custom resources).
      await k('apply', '-f', manifest(`ct2-${version}`, { apiVersion: `${group}/v1`, kind: 'CronTab', metadata: { name: 'nightly', namespace: 'default' }, spec: { cronSpec: '0 4 * * *', image: 'backup:1' } }));
      const got = JSON.parse(await k('get', `crontabs.${group}`, 'nightly', '-n', 'default', '-o', 'json'));
      assert.equal(got.spec.cronSpec, '0 4 * * *');
    });

    test('apply --server-side merges list items by the schema keys; conflicts need --force-conflicts', async () => {
      const obj = (ports: object[], replicas?: number) => ({ apiVersion: `${group}/v1`, kind: 'CronTab', metadata: { name: 'ssa', namespace: 'default' }, spec: { cronSpec: '* * * * *', ...(replicas ? { replicas } : {}), ports } });
      await k('apply', '--server-side', '--field-manager', 'team-a', '-f', manifest(`ssa-a-${version}`, obj([{ name: 'http', port: 80 }])));
      await k('apply', '--server-side', '--field-manager', 'team-b', '-f', manifest(`ssa-b-${version}`, { apiVersion: `${group}/v1`, kind: 'CronTab', metadata: { name: 'ssa', namespace: 'default' }, spec: { ports: [{ name: 'grpc', port: 90 }] } }));
      const merged = JSON.parse(await k('get', `crontabs.${group}`, 'ssa', '-n', 'default', '-o', 'json'));
      assert.deepEqual(merged.spec.ports.map((p: any) => p.name).sort(), ['grpc', 'http']);
      const conflict = await s.kubectl(['apply', '--server-side', '--field-manager', 'team-b', '-f', manifest(`ssa-c-${version}`, { apiVersion: `${group}/v1`, kind: 'CronTab', metadata: { name: 'ssa', namespace: 'default' }, spec: { cronSpec: '1 1 * * *' } })], { binary: path });
      assert.notEqual(conflict.code, 0);
      assert.match(conflict.stderr, /conflict/i);
      await k('apply', '--server-side', '--force-conflicts', '--field-manager', 'team-b', '-f', manifest(`ssa-c-${version}`, { apiVersion: `${group}/v1`, kind: 'CronTab', metadata: { name: 'ssa', namespace: 'default' }, spec: { cronSpec: '1 1 * * *' } }));
      const forced = JSON.parse(await k('get', `crontabs.${group}`, 'ssa', '-n', 'default', '-o', 'json'));
      assert.equal(forced.spec.cronSpec, '1 1 * * *');
    });

    test('get -w sees changes; deleting the CRD removes its objects and the resource', async () => {
      const watcher = spawn(path, ['--kubeconfig', s.kubeconfigPath, 'get', `crontabs.${group}`, '-n', 'default', '-w', '--output-watch-events'], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      watcher.stdout.on('data', (c) => (out += c));
      const seen = (re: RegExp) =>
        new Promise<void>((resolve, reject) => {
          const t = setTimeout(() => reject(new Error(`watch output lacks ${re}:\n${out}`)), 15_000);
          const check = () => (re.test(out) ? (clearTimeout(t), resolve()) : setTimeout(check, 50));
          check();
        });
      try {
        await seen(/ADDED\s+nightly/);
        await k('delete', `crontabs.${group}`, 'nightly', '-n', 'default');
        await seen(/DELETED\s+nightly/);
      } finally {
        watcher.kill();
      }
      await k('delete', 'crd', `crontabs.${group}`, '--timeout=20s');
      const after = await s.kubectl(['get', `crontabs.${group}`, '-n', 'default'], { binary: path });
      assert.notEqual(after.code, 0);
    });
  });
}

test('@kubernetes/client-node: CRD through ApiextensionsV1Api, custom objects through CustomObjectsApi', async () => {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(s.kubeconfigPath);
  const ext = kc.makeApiClient(k8s.ApiextensionsV1Api);
  const objects = kc.makeApiClient(k8s.CustomObjectsApi);
  const group = 'client.hearth.test';
  // client-node's typed model names JSONSchemaProps.default `_default` and drops unknown keys.
  const typed = JSON.parse(JSON.stringify(crd(group)).replace(/"default":/g, '"_default":'));
  await ext.createCustomResourceDefinition({ body: typed });
  const got = await ext.readCustomResourceDefinition({ name: `crontabs.${group}` });
  assert.ok(got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True'));

  const body = { apiVersion: `${group}/v1`, kind: 'CronTab', metadata: { name: 'c1' }, spec: { cronSpec: '5 * * * *' } };
  const created: any = await objects.createNamespacedCustomObject({ group, version: 'v1', namespace: 'default', plural: 'crontabs', body });
  assert.equal(created.spec.replicas, 1);
  const list: any = await objects.listNamespacedCustomObject({ group, version: 'v1', namespace: 'default', plural: 'crontabs' });
  assert.deepEqual(list.items.map((i: any) => i.metadata.name), ['c1']);
  const patched: any = await objects.patchNamespacedCustomObject(
    { group, version: 'v1', namespace: 'default', plural: 'crontabs', name: 'c1', body: { ...body, spec: { cronSpec: '6 * * * *', ports: [{ name: 'x', port: 1 }] } }, fieldManager: 'client', force: true },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.ServerSideApply),
  );
  assert.equal(patched.spec.cronSpec, '6 * * * *');
  assert.ok(patched.metadata.managedFields.some((m: any) => m.manager === 'client' && m.operation === 'Apply'));
  await assert.rejects(objects.createNamespacedCustomObject({ group, version: 'v1', namespace: 'default', plural: 'crontabs', body: { ...body, metadata: { name: 'c2' }, spec: { replicas: 50 } } }), (e: any) => e.code === 422);
  await objects.deleteNamespacedCustomObject({ group, version: 'v1', namespace: 'default', plural: 'crontabs', name: 'c1' });
  await ext.deleteCustomResourceDefinition({ name: `crontabs.${group}` });
});
