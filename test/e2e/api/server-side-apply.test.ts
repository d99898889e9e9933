// Server-Side Apply over HTTP and with kubectl: the seed's scenarios, conflicts, force,
// managedFields on every write, resets, status, no-op applies.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import YAML from 'yaml';
import { useTestServer, availableKubectls, manifestWriter } from '../../helpers/server.ts';
import { installRuleCrd, ruleCrd } from '../../helpers/cel-crd.ts';

const s = useTestServer();

const deployment = (name: string, replicas?: number, image = 'nginx:1') => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: {
    ...(replicas === undefined ? {} : { replicas }),
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image }] } },
  },
});

const apply = (path: string, body: unknown, manager: string | undefined, extra = '') =>
  s.request('PATCH', `${path}?${manager === undefined ? '' : `fieldManager=${manager}`}${extra}`, { raw: YAML.stringify(body, { version: '1.1' }), headers: { 'content-type': 'application/apply-patch+yaml' } });

const D = '/apis/apps/v1/namespaces/default/deployments';
const managers = (o: any) => (o.metadata.managedFields ?? []).map((m: any) => `${m.manager}:${m.operation}${m.subresource ? '/' + m.subresource : ''}`).sort();

test('apply creates (201), records an Apply entry in FieldsV1, and an unchanged re-apply writes nothing', async () => {
  const r = await apply(`${D}/web`, deployment('web', 2), 'alice');
  assert.equal(r.status, 201);
  const o = r.json();
  assert.deepEqual(managers(o), ['alice:Apply']);
  const fields = o.metadata.managedFields[0].fieldsV1;
  assert.deepEqual(fields['f:spec']['f:replicas'], {});
  assert.ok(fields['f:spec']['f:template']['f:spec']['f:containers']['k:{"name":"app"}']['f:image']);
  const again = await apply(`${D}/web`, deployment('web', 2), 'alice');
  assert.equal(again.status, 200);
  assert.equal(again.json().metadata.resourceVersion, o.metadata.resourceVersion, 'no-op apply keeps the resourceVersion');
});

test('an apply configuration whose values do not fit the schema is refused as kube refuses it (500, structured-merge-diff\'s typed conversion), nothing written', async () => {
  const bad = deployment('typed-apply', 2) as any;
  bad.metadata.labels = { a: 5 };
  bad.spec.replicas = '2';
  bad.spec.paused = 1;
  bad.spec.minReadySeconds = { n: 1 };
  bad.spec.strategy = 'Recreate';
  bad.spec.template.spec.containers[0].args = 'x';
  bad.spec.template.spec.containers[0].resources = { limits: { cpu: ['1'] } };
  const r = await apply(`${D}/typed-apply`, bad, 'alice');
  assert.equal(r.status, 500);
  const st = r.json();
  assert.equal(st.reason, undefined, 'an error that is not a Status: reason unknown');
  const problems = st.message.split('\n').slice(1).map((l: string) => l.trim()).sort();
  assert.equal(st.message.split('\n')[0], 'failed to create typed patch object (default/typed-apply; apps/v1, Kind=Deployment): errors:');
  assert.deepEqual(problems, [
    '.metadata.labels.a: expected string, got &value.valueUnstructured{Value:5}',
    '.spec.minReadySeconds: expected numeric (int or float), got map[string]interface {}',
    '.spec.paused: expected boolean, got &{1}',
    '.spec.replicas: expected numeric (int or float), got string',
    '.spec.strategy: expected map, got &{Recreate}',
    '.spec.template.spec.containers[name="app"].args: expected list, got &{x}',
    '.spec.template.spec.containers[name="app"].resources.limits.cpu: expected any scalar, got &{[1]}',
  ]);
  assert.equal((await s.request('GET', `${D}/typed-apply`)).status, 404);
  // One problem is the message itself; values that fit (an int for a Quantity, a string timestamp) pass.
  const one = await apply(`${D}/typed-apply`, { ...deployment('typed-apply'), metadata: { name: 'typed-apply', annotations: { a: true } } }, 'alice');
  assert.equal(one.json().message, 'failed to create typed patch object (default/typed-apply; apps/v1, Kind=Deployment): .metadata.annotations.a: expected string, got &value.valueUnstructured{Value:true}');
  const fine = deployment('typed-apply') as any;
  fine.spec.template.spec.containers[0].resources = { limits: { cpu: 1 } };
  assert.equal((await apply(`${D}/typed-apply`, fine, 'alice')).status, 201);
});

test('an apply configuration of another group-version is a 400 in structured-merge-diff\'s words, of another kind a 500 (no type for it); nothing written', async () => {
  const C = '/api/v1/namespaces/default/configmaps';
  const cm = (extra: object) => ({ kind: 'ConfigMap', metadata: { name: 'target', namespace: 'default' }, ...extra });
  for (const [apiVersion, specified] of [[undefined, ''], ['apps/v1', 'apps/v1'], ['a/b/c', ''], [5, '']] as const) {
    const r = await apply(`${C}/target`, cm(apiVersion === undefined ? {} : { apiVersion }), 'alice');
    assert.equal(r.status, 400, String(apiVersion));
    assert.equal(r.json().message, `Incorrect version specified in apply patch. Specified patch version: ${specified}, expected: v1`);
  }
  const noKind = await apply(`${C}/target`, { apiVersion: 'v1', metadata: { name: 'target', namespace: 'default' } }, 'alice');
  assert.equal(noKind.status, 500);
  assert.equal(noKind.json().message, 'failed to create typed patch object (default/target; /v1, Kind=): no corresponding type for /v1, Kind=');
  const otherKind = await apply(`${D}/target`, { ...deployment('target'), kind: 'Widget' }, 'alice');
  assert.equal(otherKind.json().message, 'failed to create typed patch object (/target; apps/v1, Kind=Widget): no corresponding type for apps/v1, Kind=Widget');
  assert.equal((await s.request('GET', `${C}/target`)).status, 404);
});

test('conflicts → 409 naming field and manager, nothing written; same value shares; force takes over', async () => {
  await apply(`${D}/shared`, deployment('shared', 2), 'alice');
  const before = (await s.request('GET', `${D}/shared`)).json();
  const c = await apply(`${D}/shared`, deployment('shared', 3), 'bob');
  assert.equal(c.status, 409);
  const st = c.json();
  assert.equal(st.reason, 'Conflict');
  assert.match(st.message, /^Apply failed with 1 conflict: conflict with "alice": \.spec\.replicas$/);
  assert.deepEqual(st.details.causes, [{ reason: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.spec.replicas' }]);
  assert.equal((await s.request('GET', `${D}/shared`)).json().metadata.resourceVersion, before.metadata.resourceVersion);

  const same = await apply(`${D}/shared`, deployment('shared', 2), 'bob');
  assert.equal(same.status, 200, 'the same value is shared ownership, not a conflict');
  // force reads as kube reads a boolean parameter: "FALSE" is false, any value but 0/false is true.
  assert.equal((await apply(`${D}/shared`, deployment('shared', 4), 'carol', '&force=FALSE')).status, 409);
  const forced = await apply(`${D}/shared`, deployment('shared', 4), 'carol', '&force=True');
  assert.equal(forced.status, 200);
  assert.equal(forced.json().spec.replicas, 4);
  const carol = forced.json().metadata.managedFields.find((m: any) => m.manager === 'carol');
  assert.ok(carol.fieldsV1['f:spec']['f:replicas']);
  for (const m of forced.json().metadata.managedFields.filter((x: any) => x.manager !== 'carol')) {
    assert.equal(m.fieldsV1['f:spec']?.['f:replicas'], undefined, `${m.manager} lost .spec.replicas`);
  }
});

test("the seed's HPA handover: a temporary manager takes replicas, then the user drops it", async () => {
  // The user applies replicas; the HPA-like controller updates it; ownership moves without conflicts.
  await apply(`${D}/nginx`, deployment('nginx', 3), 'handover-user');
  // Move ownership of replicas to a temporary manager with the same value (shared), then release.
  assert.equal((await apply(`${D}/nginx`, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'nginx' }, spec: { replicas: 3 } }, 'handover-to-hpa')).status, 200);
  const dropped = await apply(`${D}/nginx`, deployment('nginx'), 'handover-user');
  assert.equal(dropped.status, 200);
  assert.equal(dropped.json().spec.replicas, 3, 'still owned by the temporary manager, so not removed');
  // The controller (an Update manager) now changes replicas without conflict for anyone.
  const scaled = await s.request('PATCH', `${D}/nginx/scale?fieldManager=hpa-controller`, { raw: '{"spec":{"replicas":6}}', headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(scaled.status, 200);
  const later = await apply(`${D}/nginx`, deployment('nginx', undefined, 'nginx:2'), 'handover-user');
  assert.equal(later.status, 200, 'the user no longer manages replicas: no conflict');
  assert.equal(later.json().spec.replicas, 6);
});

test('dropping a field removes it when nobody else owns it', async () => {
  const withLabel = deployment('drop', 1) as any;
  withLabel.metadata.labels = { team: 'a', keep: 'y' };
  await apply(`${D}/drop`, withLabel, 'dropper');
  delete withLabel.metadata.labels.team;
  const r = await apply(`${D}/drop`, withLabel, 'dropper');
  assert.deepEqual(r.json().metadata.labels, { keep: 'y' });
});

test('Update entries on POST/PUT/patch with fieldManager or the User-Agent; reset with [{}]; managedFields in an apply body → 400', async () => {
  const created = await s.request('POST', '/api/v1/namespaces/default/configmaps?fieldManager=creator', { body: { metadata: { name: 'mf' }, data: { a: '1' } } });
  assert.deepEqual(managers(created.json()), ['creator:Update']);
  const ua = await s.request('PATCH', '/api/v1/namespaces/default/configmaps/mf', { raw: '{"data":{"b":"2"}}', headers: { 'content-type': 'application/merge-patch+json', 'user-agent': 'my-controller/v1.2 (linux)' } });
  assert.deepEqual(managers(ua.json()), ['creator:Update', 'my-controller:Update']);
  const reset = await s.request('PATCH', '/api/v1/namespaces/default/configmaps/mf', { raw: '{"metadata":{"managedFields":[{}]}}', headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(reset.json().metadata.managedFields, undefined);
  const jp = await s.request('POST', '/api/v1/namespaces/default/configmaps?fieldManager=x', { body: { metadata: { name: 'mf2' }, data: { a: '1' } } });
  assert.ok(jp.json().metadata.managedFields);
  const reset2 = await s.request('PATCH', '/api/v1/namespaces/default/configmaps/mf2', { raw: '[{"op":"replace","path":"/metadata/managedFields","value":[{}]}]', headers: { 'content-type': 'application/json-patch+json' } });
  assert.equal(reset2.json().metadata.managedFields, undefined);

  const bad = await apply('/api/v1/namespaces/default/configmaps/mf', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'mf', managedFields: [{ manager: 'x' }] } }, 'x');
  assert.equal(bad.status, 400);
  assert.match(bad.json().message, /metadata.managedFields must be nil/);
  const noManager = await apply('/api/v1/namespaces/default/configmaps/mf', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'mf' } }, undefined);
  assert.equal(noManager.status, 422);
  assert.match(noManager.json().message, /fieldManager: Required value: is required for apply patch/);
  const forceOnMerge = await s.request('PATCH', '/api/v1/namespaces/default/configmaps/mf?force=true', { raw: '{}', headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(forceOnMerge.status, 422);
});

test('apply to /status changes only status and records the status subresource', async () => {
  await apply(`${D}/st`, deployment('st', 1), 'owner');
  const r = await apply(`${D}/st/status`, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'st' }, status: { replicas: 1, readyReplicas: 1 }, spec: { replicas: 9 } }, 'status-writer');
  assert.equal(r.status, 200);
  assert.equal(r.json().status.readyReplicas, 1);
  assert.equal(r.json().spec.replicas, 1);
  assert.ok(managers(r.json()).includes('status-writer:Apply/status'));
});

test('what an applier leaves is removed as structured-merge-diff removes it: a container emptied stays null for its owner (pruned by the schema where it may not be null)', async () => {
  const T = await installRuleCrd(
    s,
    ruleCrd('smd.example.com', 'trees', 'Tree', {
      type: 'object',
      properties: {
        tree: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        nullable: { type: 'object', nullable: true, properties: { name: { type: 'string' } } },
        plain: { type: 'object', properties: { name: { type: 'string' } } },
      },
    }),
  );
  const tree = (spec?: object) => ({ apiVersion: 'smd.example.com/v1', kind: 'Tree', metadata: { name: 't' }, ...(spec ? { spec } : {}) });
  const put = async (manager: string, spec: object) => {
    const rv = (await s.request('GET', `${T}/t`)).json().metadata.resourceVersion;
    const r = await s.request('PUT', `${T}/t?fieldManager=${manager}`, { body: { ...tree(spec), metadata: { name: 't', resourceVersion: rv } } });
    assert.equal(r.status, 200, r.text);
  };
  const owned = (o: any) => Object.fromEntries(o.metadata.managedFields.map((m: any) => [m.manager, m.fieldsV1]));

  // structured-merge-diff's multiple_appliers_recursive_map_deduced, under spec.tree.
  assert.equal((await apply(`${T}/t`, tree({ tree: { a: { b: null }, c: { d: null } } }), 'apply-one')).status, 201);
  assert.equal((await apply(`${T}/t`, tree({ tree: { a: null, c: { d: null } } }), 'apply-two')).status, 200);
  await put('controller-one', { tree: { a: { b: { c: null } }, c: { d: { e: null } } } });
  await put('controller-two', { tree: { a: { b: { c: { d: null } } }, c: { d: { e: { f: null } } } } });
  await put('controller-one', { tree: { a: { b: { c: { d: { e: null } } } }, c: { d: { e: { f: { g: null } } } } } });
  const left = await apply(`${T}/t`, tree(), 'apply-one');
  assert.equal(left.status, 200, left.text);
  assert.deepEqual(left.json().spec, { tree: { a: null, c: { d: { e: { f: { g: null } } } } } });
  const fields = owned(left.json());
  assert.deepEqual(Object.keys(fields).sort(), ['apply-two', 'controller-one', 'controller-two']);
  assert.deepEqual(fields['apply-two'], { 'f:spec': { 'f:tree': { 'f:a': {}, 'f:c': { '.': {}, 'f:d': {} } } } });
  assert.deepEqual(fields['controller-one'], { 'f:spec': { 'f:tree': { 'f:c': { 'f:d': { 'f:e': { '.': {}, 'f:f': { 'f:g': {} } } } } } } });

  // nested_test.go struct_apply_remove_dangling: a struct applied null keeps null, its owner's.
  assert.equal((await apply(`${T}/t`, tree({ nullable: { name: 'a' }, plain: { name: 'a' } }), 'structs')).status, 200);
  const dangling = await apply(`${T}/t`, tree({ nullable: null, plain: null }), 'structs');
  assert.equal(dangling.status, 200, dangling.text);
  // (kube's schema coercion drops a null a field may not hold: plain goes, the owner keeps it)
  assert.deepEqual(dangling.json().spec, { tree: { a: null, c: { d: { e: { f: { g: null } } } } }, nullable: null });
  assert.deepEqual(owned(dangling.json()).structs, { 'f:spec': { 'f:nullable': {}, 'f:plain': {} } });
  assert.deepEqual((await s.request('GET', `${T}/t`)).json().spec, dangling.json().spec);
});

const manifest = manifestWriter('hearth-ssa-');
for (const { version, path } of availableKubectls()) {
  describe(`kubectl ${version} server-side apply`, () => {
    const name = `k-${version.replace('.', '-')}`;
    const file = (replicas: number, image = 'nginx:1') => {
      return manifest(`${name}-${replicas}-${image.replace(':', '')}`, { ...deployment(name, replicas, image), metadata: { name, namespace: 'default' } });
    };
    const k = (...args: string[]) => s.kubectl(args, { binary: path });
    test('apply --server-side, conflicts, --force-conflicts, --field-manager, --dry-run=server, diff', async () => {
      let r = await k('apply', '--server-side', '-f', file(2));
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /serverside-applied/);
      r = await k('apply', '--server-side', '--field-manager=other', '-f', file(3));
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /conflict with "kubectl".*\.spec\.replicas/);
      r = await k('apply', '--server-side', '--field-manager=other', '--dry-run=server', '--force-conflicts', '-f', file(4));
      assert.equal(r.code, 0, r.stderr);
      assert.equal((await k('get', 'deploy', name, '-o', 'jsonpath={.spec.replicas}')).stdout, '2');
      r = await k('diff', '--server-side', '--force-conflicts', '--field-manager=other', '-f', file(4));
      assert.equal(r.code, 1, 'diff exits 1 when there are differences');
      assert.match(r.stdout, /- {2}replicas: 2\n\+ {2}replicas: 4/);
      r = await k('apply', '--server-side', '--field-manager=other', '--force-conflicts', '-f', file(4));
      assert.equal(r.code, 0, r.stderr);
      assert.equal((await k('get', 'deploy', name, '-o', 'jsonpath={.spec.replicas}')).stdout, '4');
    });
    test('upgrade from client-side apply and back without conflicts', async () => {
      const csa = `${name}-csa`;
      const write = (replicas: number) => manifest(csa, { ...deployment(csa, replicas), metadata: { name: csa, namespace: 'default' } });
      const f = write(2);
      let r = await k('apply', '-f', f);
      assert.equal(r.code, 0, r.stderr);
      write(3);
      r = await k('apply', '--server-side', '-f', f);
      assert.equal(r.code, 0, `upgrade to server-side apply must not conflict: ${r.stderr}`);
      write(4);
      r = await k('apply', '-f', f);
      assert.equal(r.code, 0, `downgrade to client-side apply: ${r.stderr}`);
      assert.equal((await k('get', 'deploy', csa, '-o', 'jsonpath={.spec.replicas}')).stdout, '4');
    });
  });
}

test('apply-patch+cbor, and one watch event per effective apply (none for a no-op)', async () => {
  const { Encoder } = await import('cbor-x');
  const https = await import('node:https');
  const enc = new Encoder({ useRecords: false, mapsAsObjects: true });
  const cfg = (v: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cbor-apply' }, data: { v } });
  const applyCbor = (v: string) =>
    s.request('PATCH', '/api/v1/namespaces/default/configmaps/cbor-apply?fieldManager=cbor', { raw: Buffer.concat([Buffer.from([0xd9, 0xd9, 0xf7]), enc.encode(cfg(v))]), headers: { 'content-type': 'application/apply-patch+cbor' } });
  const first = await applyCbor('1');
  assert.equal(first.status, 201);
  const rv = first.json().metadata.resourceVersion;
  const events: any[] = [];
  const req = https.request(`${s.url}/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${rv}&fieldSelector=metadata.name%3Dcbor-apply`, { ca: s.pki.caCertPem, cert: s.pki.adminCertPem, key: s.pki.adminKeyPem }, (res) => {
    res.on('data', (d) => String(d).split('\n').filter(Boolean).forEach((l) => events.push(JSON.parse(l))));
  });
  req.end();
  await new Promise((r) => setTimeout(r, 100));
  assert.equal((await applyCbor('1')).status, 200); // no-op
  assert.equal((await applyCbor('2')).status, 200);
  assert.equal((await applyCbor('2')).status, 200); // no-op
  await new Promise((r) => setTimeout(r, 200));
  req.destroy();
  assert.deepEqual(events.map((e) => `${e.type} ${e.object.data.v}`), ['MODIFIED 2']);
});
