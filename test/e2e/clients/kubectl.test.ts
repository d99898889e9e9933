// kubectl end to end, against a real server, with three kubectl versions.
import { test, describe } from "node:test";
import assert from 'node:assert/strict';
import YAML from 'yaml';
import { spawn } from 'node:child_process';
import { useTestServer, kubectlsToTest, manifestWriter } from '../../helpers/server.ts';

const s = useTestServer();

const kubectls = kubectlsToTest();
const manifest = manifestWriter('hearth-kubectl-');

for (const { version, path } of kubectls) {
  describe(`kubectl ${version}`, () => {
    const ns = `kc-${version.replace('.', '-')}`;
    const k = async (...args: string[]) => {
      const r = await s.kubectl(args, { binary: path });
      assert.equal(r.code, 0, `kubectl ${args.join(' ')} failed:\n${r.stderr}`);
      return r.stdout;
    };
    const kFail = async (...args: string[]) => {
      const r = await s.kubectl(args, { binary: path });
      assert.notEqual(r.code, 0, `kubectl ${args.join(' ')} should have failed`);
      return r.stderr;
    };

    test('discovery: api-resources, api-versions, get --raw', async () => {
      const res = await k('api-resources');
      assert.match(res, /^deployments\s+deploy\s+apps\/v1\s+true\s+Deployment$/m);
      assert.match(res, /^namespaces\s+ns\s+v1\s+false\s+Namespace$/m);
      const versions = (await k('api-versions')).trim().split('\n');
      assert.ok(versions.includes('apps/v1') && versions.includes('v1') && versions.includes('autoscaling/v2'));
      const raw = JSON.parse(await k('get', '--raw', '/api/v1/namespaces/default'));
      assert.equal(raw.metadata.name, 'default');
    });

    test('explain reads the OpenAPI schema', async () => {
      const out = await k('explain', 'deployment.spec.replicas');
      assert.match(out, /replicas\s*<integer>/);
    });

    test('create, get in every output, label, annotate, delete', async () => {
      await k('create', 'namespace', ns);
      const file = manifest(`${ns}-cm`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm1', namespace: ns }, data: { a: '1', b: '2' } });
      assert.match(await k('create', '-f', file), /configmap\/cm1 created/);
      const table = await k('get', 'configmaps', '-n', ns);
      assert.match(table, /^NAME\s+DATA\s+AGE$/m);
      assert.match(table, /^cm1\s+2\s+\d+s$/m);
      assert.equal(YAML.parse(await k('get', 'cm', 'cm1', '-n', ns, '-o', 'yaml')).data.b, '2');
      assert.equal(JSON.parse(await k('get', 'cm', 'cm1', '-n', ns, '-o', 'json')).metadata.namespace, ns);
      assert.equal(await k('get', 'cm', 'cm1', '-n', ns, '-o', 'jsonpath={.data.a}'), '1');
      assert.match(await k('get', 'ns', ns, '-o', 'wide'), new RegExp(`^${ns}\\s+Active\\s+`, 'm'));
      await k('label', 'cm', 'cm1', '-n', ns, 'tier=web');
      await k('annotate', 'cm', 'cm1', '-n', ns, 'note=hello');
      const got = JSON.parse(await k('get', 'cm', 'cm1', '-n', ns, '-o', 'json'));
      assert.equal(got.metadata.labels.tier, 'web');
      assert.equal(got.metadata.annotations.note, 'hello');
      assert.match(await k('get', 'cm', '-n', ns, '-l', 'tier=web', '-o', 'name'), /configmap\/cm1/);
      assert.match(await kFail('create', '-f', file), /AlreadyExists|already exists/);
      assert.match(await k('delete', 'cm', 'cm1', '-n', ns), /configmap "cm1" deleted/);
      assert.match(await kFail('get', 'cm', 'cm1', '-n', ns), /NotFound|not found/);
    });

    test("a Job's generated selector survives apply, apply --server-side and diff (it belongs to no manager)", async () => {
      // (A job's template is immutable, but for a suspended job's scheduling directives: those move.)
      const job = (zone: string) =>
        manifest(`${ns}-job`, { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'gen', namespace: ns }, spec: { suspend: true, template: { metadata: { labels: { app: 'gen' } }, spec: { restartPolicy: 'Never', nodeSelector: { zone }, containers: [{ name: 'c', image: 'busybox' }] } } } });
      await k('apply', '-f', job('a'));
      const created = JSON.parse(await k('get', 'job', 'gen', '-n', ns, '-o', 'json'));
      const uid = created.metadata.uid;
      await k('apply', '-f', job('b'));
      await k('apply', '--server-side', '--force-conflicts', '-f', job('c'));
      const after = JSON.parse(await k('get', 'job', 'gen', '-n', ns, '-o', 'json'));
      assert.deepEqual(after.spec.template.spec.nodeSelector, { zone: 'c' });
      assert.deepEqual(after.spec.selector, { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } });
      assert.equal(after.spec.template.metadata.labels['batch.kubernetes.io/job-name'], 'gen');
      assert.equal(after.spec.template.metadata.labels.app, 'gen');
      // Nothing left to change: diff exits 0.
      assert.equal((await s.kubectl(['diff', '-f', job('c')], { binary: path })).code, 0);
      await k('delete', 'job', 'gen', '-n', ns);
    });

    test('apply -f again and again, replace, patch of every type', async () => {
      const d = {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web', namespace: ns, labels: { app: 'web' } },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: { containers: [{ name: 'app', image: 'nginx:1', ports: [{ containerPort: 80 }] }, { name: 'side', image: 'busybox' }] },
          },
        },
      };
      const file = manifest(`${ns}-deploy`, d);
      assert.match(await k('apply', '-f', file), /deployment.apps\/web created/);
      assert.match(await k('apply', '-f', file), /deployment.apps\/web unchanged/);
      // Change the image, drop the sidecar, add an env var: the three-way merge must do all three.
      const d2 = structuredClone(d);
      d2.spec.template.spec.containers = [{ name: 'app', image: 'nginx:2', ports: [{ containerPort: 80 }], env: [{ name: 'A', value: '1' }] } as any];
      manifest(`${ns}-deploy`, d2);
      assert.match(await k('apply', '-f', file), /deployment.apps\/web configured/);
      let live = JSON.parse(await k('get', 'deploy', 'web', '-n', ns, '-o', 'json'));
      assert.deepEqual(live.spec.template.spec.containers.map((c: any) => c.name), ['app']);
      assert.equal(live.spec.template.spec.containers[0].image, 'nginx:2');
      assert.equal(live.spec.template.spec.containers[0].env[0].name, 'A');
      assert.ok(live.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']);
      assert.match(await k('apply', '-f', file), /unchanged/);
      assert.match(await k('get', 'deploy', '-n', ns), /^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE$/m);

      await k('patch', 'deploy', 'web', '-n', ns, '--type', 'json', '-p', '[{"op":"replace","path":"/spec/replicas","value":3}]');
      await k('patch', 'deploy', 'web', '-n', ns, '--type', 'merge', '-p', '{"metadata":{"labels":{"merged":"yes"}}}');
      await k('patch', 'deploy', 'web', '-n', ns, '--type', 'strategic', '-p', '{"spec":{"template":{"spec":{"containers":[{"name":"extra","image":"redis"}]}}}}');
      live = JSON.parse(await k('get', 'deploy', 'web', '-n', ns, '-o', 'json'));
      assert.equal(live.spec.replicas, 3);
      assert.equal(live.metadata.labels.merged, 'yes');
      assert.deepEqual(live.spec.template.spec.containers.map((c: any) => c.name).sort(), ['app', 'extra']);

      const replaced = structuredClone(d);
      replaced.spec.replicas = 5;
      assert.match(await k('replace', '-f', manifest(`${ns}-replace`, replaced)), /deployment.apps\/web replaced/);
      live = JSON.parse(await k('get', 'deploy', 'web', '-n', ns, '-o', 'json'));
      assert.equal(live.spec.replicas, 5);
      assert.equal(live.spec.template.spec.containers.length, 2);
      await k('scale', 'deploy', 'web', '-n', ns, '--replicas=1');
      assert.equal(await k('get', 'deploy', 'web', '-n', ns, '-o', 'jsonpath={.spec.replicas}'), '1');
      // The scale subresource prints as kube's printScale: a Table the server makes.
      assert.match(await k('get', 'deploy', 'web', '-n', ns, '--subresource=scale'), /^NAME\s+DESIRED\s+AVAILABLE\s+AGE\nweb\s+1\s+0\s+\d+s$/m);
    });

    test('get -w --output-watch-events sees ADDED, MODIFIED, DELETED', async () => {
      const watcher = spawn(path, ['--kubeconfig', s.kubeconfigPath, 'get', 'configmaps', '-n', ns, '-w', '--output-watch-events'], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      watcher.stdout.on('data', (d) => (out += d));
      const seen = (re: RegExp) => waitUntil(() => re.test(out));
      await k('create', 'configmap', 'watched', '-n', ns, '--from-literal=a=1');
      await seen(/ADDED\s+watched\s+1/);
      await k('label', 'configmap', 'watched', '-n', ns, 'x=y');
      await seen(/MODIFIED\s+watched/);
      await k('delete', 'configmap', 'watched', '-n', ns);
      await seen(/DELETED\s+watched/);
      watcher.kill();
      assert.match(out, /^EVENT\s+NAME\s+DATA\s+AGE$/m);
    });

    test('delete --all and namespace deletion wait until gone', async () => {
      for (const n of ['x1', 'x2']) await k('create', 'configmap', n, '-n', ns, '--from-literal=k=v');
      assert.match(await k('delete', 'configmaps', '--all', '-n', ns), /configmap "x1" deleted[\s\S]*configmap "x2" deleted/);
      // (kube-root-ca.crt went too, and its publisher made it again at once, as in a kube cluster)
      assert.doesNotMatch(await k('get', 'configmaps', '-n', ns), /\bx[12]\b/);
      assert.match(await k('delete', 'namespace', ns), new RegExp(`namespace "${ns}" deleted`));
      assert.match(await kFail('get', 'namespace', ns), /not found/);
    });
  });
}

async function waitUntil(cond: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) assert.fail('timed out waiting for kubectl output');
    await new Promise((r) => setTimeout(r, 50));
  }
}
