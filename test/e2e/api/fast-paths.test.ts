// The fast paths of the write and list hot spots must answer exactly as the general ones:
// JSON lists joined by SQLite or transcoded from the stored bytes, duplicate fields of JSON text sent as YAML (apply),
// PUTs that no longer deep-clone with structuredClone.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { goJsonText } from '../../../server/go/json.ts';

let s: TestServer;
before(async () => {
  // (without the root CA publisher: these tests count the ConfigMaps of their namespaces)
  s = await startTestServer({ options: { controllers: ['*', '-root-ca-certificate-publisher-controller'] } });
  assert.equal((await s.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'fast' } } })).status, 201);
});
after(async () => {
  await s.stop();
});

/** The object path's serialization of a list: compact JSON of what the pretty (object path) answer holds. */
async function viaObjectPath(path: string): Promise<string> {
  const pretty = await s.request('GET', `${path}${path.includes('?') ? '&' : '?'}pretty=true`);
  assert.equal(pretty.status, 200);
  return goJsonText(JSON.stringify(JSON.parse(pretty.text))) + '\n';
}

test('a JSON list transcoded from storage is byte for byte the object path answer', async () => {
  const tricky = {
    quote: 'say "hi"',
    backslash: 'C:\\dir',
    controls: 'tab\tnewline\ncr\rnul\u0000bell\u0007',
    unicode: 'é 日本 😀 \u2028',
    '10': 'integer-like key',
    '2': 'another',
  };
  for (let i = 0; i < 30; i++) {
    const r = await s.request('POST', '/api/v1/namespaces/fast/configmaps', {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${String(i).padStart(2, '0')}`, labels: { n: String(i % 3) } }, data: { ...tricky, i: String(i) } },
    });
    assert.equal(r.status, 201);
  }
  for (const path of [
    '/api/v1/namespaces/fast/configmaps',
    '/api/v1/configmaps',
    '/api/v1/namespaces/fast/configmaps?labelSelector=n%3D1',
    '/api/v1/namespaces/fast/configmaps?limit=7',
  ]) {
    const fast = await s.request('GET', path);
    assert.equal(fast.status, 200);
    assert.equal(fast.headers['content-type'], 'application/json');
    assert.equal(fast.text, await viaObjectPath(path), path);
  }
  const all = (await s.request('GET', '/api/v1/namespaces/fast/configmaps')).json();
  assert.equal(all.kind, 'ConfigMapList');
  assert.equal(all.items.length, 30);
  assert.deepEqual(all.items[0].data, { ...tricky, i: '0' });
  assert.equal(all.items[0].kind, 'ConfigMap');
  assert.equal(all.items[0].apiVersion, 'v1');
  // Pages: continue tokens and remainingItemCount as before.
  const page = (await s.request('GET', '/api/v1/namespaces/fast/configmaps?limit=7')).json();
  assert.equal(page.items.length, 7);
  assert.equal(page.metadata.remainingItemCount, 23);
  const next = (await s.request('GET', `/api/v1/namespaces/fast/configmaps?limit=7&continue=${encodeURIComponent(page.metadata.continue)}`)).json();
  assert.equal(next.items[0].metadata.name, 'cm-07');
});

test('lists read joined from storage: pages, all namespaces and older resourceVersions answer as the object path', async () => {
  const ns = 'fast-joined';
  const base = `/api/v1/namespaces/${ns}/configmaps`;
  assert.equal((await s.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } })).status, 201);
  for (const name of ['c', 'a', 'e', 'b', 'd']) {
    assert.equal((await s.request('POST', base, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { v: name } } })).status, 201);
  }
  const before = (await s.request('GET', base)).json();
  assert.deepEqual(before.items.map((i: any) => i.metadata.name), ['a', 'b', 'c', 'd', 'e']);
  const rv = before.metadata.resourceVersion;
  // Changes after rv: an update, a deletion, a creation.
  const c = before.items[2];
  assert.equal((await s.request('PUT', `${base}/c`, { body: { ...c, data: { v: 'changed' } } })).status, 200);
  assert.equal((await s.request('DELETE', `${base}/d`)).status, 200);
  assert.equal((await s.request('POST', base, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'f' }, data: { v: 'f' } } })).status, 201);

  const names = async (path: string) => (await s.request('GET', path)).json().items.map((i: any) => `${i.metadata.name}=${i.data.v}`);
  assert.deepEqual(await names(base), ['a=a', 'b=b', 'c=changed', 'e=e', 'f=f']);
  const exact = `${base}?resourceVersion=${rv}&resourceVersionMatch=Exact`;
  assert.deepEqual(await names(exact), ['a=a', 'b=b', 'c=c', 'd=d', 'e=e']);

  for (const path of [base, exact, `${exact}&limit=2`, `/api/v1/configmaps?resourceVersion=${rv}&resourceVersionMatch=Exact`, `${base}?limit=3`]) {
    const r = await s.request('GET', path);
    assert.equal(r.status, 200, path);
    assert.equal(r.text, await viaObjectPath(path), path);
  }
  // Pages of the older state: each at rv, with the count of what follows.
  const p1 = (await s.request('GET', `${exact}&limit=2`)).json();
  assert.deepEqual(p1.items.map((i: any) => i.metadata.name), ['a', 'b']);
  assert.equal(p1.metadata.remainingItemCount, 3);
  const p2 = (await s.request('GET', `${base}?limit=2&continue=${encodeURIComponent(p1.metadata.continue)}`)).json();
  assert.deepEqual(p2.items.map((i: any) => `${i.metadata.name}=${i.data.v}`), ['c=c', 'd=d']);
  assert.equal(p2.metadata.resourceVersion, rv);
  const p3 = (await s.request('GET', `${base}?limit=2&continue=${encodeURIComponent(p2.metadata.continue)}`)).json();
  assert.deepEqual(p3.items.map((i: any) => i.metadata.name), ['e']);
  assert.equal(p3.metadata.continue, undefined);
  // A page that ends exactly at the last object has no continue token.
  const last = (await s.request('GET', `${base}?limit=5`)).json();
  assert.equal(last.items.length, 5);
  assert.equal(last.metadata.continue, undefined);
  assert.equal(last.metadata.remainingItemCount, undefined);
  // All namespaces, a page at a time: the pages end where each page's last key says.
  const all = await names('/api/v1/configmaps');
  const paged: string[] = [];
  let token = '';
  do {
    const page = (await s.request('GET', `/api/v1/configmaps?limit=4${token ? `&continue=${encodeURIComponent(token)}` : ''}`)).json();
    paged.push(...page.items.map((i: any) => `${i.metadata.name}=${i.data.v}`));
    token = page.metadata.continue ?? '';
  } while (token);
  assert.deepEqual(paged, all);
  assert.ok(all.length > 5);
  // An empty list is a list with no items.
  const none = await s.request('GET', '/api/v1/namespaces/fast-joined/secrets');
  assert.deepEqual(none.json().items, []);
  assert.equal(none.text, await viaObjectPath('/api/v1/namespaces/fast-joined/secrets'));
});

test('a watch\'s initial state framed from storage is the per-object path\'s events, byte for byte', async () => {
  const ns = 'fast-watch';
  const base = `/api/v1/namespaces/${ns}/configmaps`;
  assert.equal((await s.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } })).status, 201);
  for (const name of ['w2', 'w1', 'w3']) {
    const data = { v: name, tricky: 'quote " backslash \\ nul \u0000 é 😀' };
    assert.equal((await s.request('POST', base, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data } })).status, 201);
  }
  // A field selector every object matches takes the per-object path; the watches end after 1 s.
  const events = async (path: string) => (await s.request('GET', `${path}${path.includes('?') ? '&' : '?'}watch=1&timeoutSeconds=1`)).text;
  const everything = 'fieldSelector=metadata.name%21%3Dnone';
  const framed = await events(base);
  assert.equal(framed, await events(`${base}?${everything}`));
  const lines = framed.trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(lines.map((e) => [e.type, e.object.kind, e.object.apiVersion, e.object.metadata.name]), [
    ['ADDED', 'ConfigMap', 'v1', 'w1'],
    ['ADDED', 'ConfigMap', 'v1', 'w2'],
    ['ADDED', 'ConfigMap', 'v1', 'w3'],
  ]);
  // A streaming list: the same events, then the bookmark that ends them.
  const streamed = await events(`${base}?sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=&allowWatchBookmarks=true`);
  assert.ok(streamed.startsWith(framed), streamed.slice(0, 300));
  assert.equal(JSON.parse(streamed.slice(framed.length).split('\n')[0]).type, 'BOOKMARK');
  // Cluster-scoped and all-namespace watches too.
  assert.equal(await events('/api/v1/namespaces'), await events(`/api/v1/namespaces?${everything}`));
  assert.equal(await events('/api/v1/configmaps'), await events(`/api/v1/configmaps?${everything}`));

  // Live events: each the object's JSON as the write answered it, framed as JSON.stringify frames it.
  const rv = (await s.request('GET', base)).json().metadata.resourceVersion;
  const live = events(`${base}?resourceVersion=${rv}`);
  await new Promise((r) => setTimeout(r, 200));
  const created = await s.request('POST', base, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'w4' }, data: { v: 'é' } } });
  const patched = await s.request('PATCH', `${base}/w4`, { raw: '{"data":{"v":"changed"}}', headers: { 'content-type': 'application/merge-patch+json' } });
  assert.deepEqual([created.status, patched.status], [201, 200]);
  assert.equal((await s.request('DELETE', `${base}/w4`)).status, 200);
  // A watch from rv replays them from the log: framed by SQLite, byte for byte the per-object path.
  const replay = await events(`${base}?resourceVersion=${rv}`);
  assert.equal(replay, await events(`${base}?resourceVersion=${rv}&${everything}`));
  assert.equal(replay, await live);
  assert.equal(await events(`/api/v1/configmaps?resourceVersion=${rv}`), replay);
  const [added, modified, deleted] = (await live).trim().split('\n');
  assert.equal(added, `{"type":"ADDED","object":${created.text.trim()}}`);
  assert.equal(modified, `{"type":"MODIFIED","object":${patched.text.trim()}}`);
  assert.equal(deleted, JSON.stringify(JSON.parse(deleted)));
  assert.equal(JSON.parse(deleted).type, 'DELETED');
});

test('objects stored in one version and listed in another carry the listed apiVersion', async () => {
  const hpa = {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: 'h' },
    spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'd' }, minReplicas: 1, maxReplicas: 3 },
  };
  assert.equal((await s.request('POST', '/apis/autoscaling/v2/namespaces/fast/horizontalpodautoscalers', { body: hpa })).status, 201);
  for (const v of ['v1', 'v2']) {
    const path = `/apis/autoscaling/${v}/namespaces/fast/horizontalpodautoscalers`;
    const r = await s.request('GET', path);
    assert.equal(r.status, 200);
    assert.equal(r.json().items[0].apiVersion, `autoscaling/${v}`);
    assert.equal(r.text, await viaObjectPath(path));
  }
});

test('apply with a JSON body: duplicate fields reported as for JSON (Warn, Strict)', async () => {
  const body = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"applied","labels":{"a":"1","a":"2"}},"data":{"k":"v"}}';
  const headers = { 'content-type': 'application/apply-patch+yaml' };
  const strict = await s.request('PATCH', '/api/v1/namespaces/fast/configmaps/applied?fieldManager=m&fieldValidation=Strict', { raw: body, headers });
  assert.equal(strict.status, 400);
  assert.match(strict.json().message, /strict decoding error: duplicate field "metadata.labels.a"/);
  const warn = await s.request('PATCH', '/api/v1/namespaces/fast/configmaps/applied?fieldManager=m', { raw: body, headers });
  assert.equal(warn.status, 201);
  assert.match(([] as string[]).concat(warn.headers.warning as any).join('\n'), /duplicate field \\"metadata.labels.a\\"/);
  assert.equal(warn.json().metadata.labels.a, '2');
  // Flow-style YAML that is not JSON still goes through the YAML parser.
  const flow = await s.request('PATCH', '/api/v1/namespaces/fast/configmaps/applied?fieldManager=m&fieldValidation=Strict', {
    raw: '{apiVersion: v1, kind: ConfigMap, metadata: {name: applied}, data: {k: v, k: w}}',
    headers,
  });
  assert.equal(flow.status, 400);
  assert.match(flow.json().message, /duplicate field "data.k"/);
});

test('PUT and apply keep the stored object intact between writes (no shared state)', async () => {
  const path = '/apis/apps/v1/namespaces/fast/deployments';
  const dep = (image: string, replicas: number) => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', labels: { app: 'web' } },
    spec: {
      replicas,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image }] } },
    },
  });
  const created = await s.request('POST', path, { body: dep('nginx:1', 1) });
  assert.equal(created.status, 201);
  assert.equal(created.json().metadata.generation, 1);
  // Defaults came with the create: a PUT omitting them is not a spec change.
  const same = await s.request('PUT', `${path}/web`, { body: dep('nginx:1', 1) });
  assert.equal(same.status, 200);
  assert.equal(same.json().metadata.resourceVersion, created.json().metadata.resourceVersion);
  assert.equal(same.json().spec.template.spec.containers[0].imagePullPolicy, 'IfNotPresent');
  const changed = await s.request('PUT', `${path}/web`, { body: dep('nginx:latest', 2) });
  assert.equal(changed.status, 200);
  assert.equal(changed.json().metadata.generation, 2);
  assert.equal(changed.json().spec.template.spec.containers[0].imagePullPolicy, 'Always');
  const applied = await s.request('PATCH', `${path}/web?fieldManager=team&force=true`, {
    raw: JSON.stringify(dep('nginx:2', 3)),
    headers: { 'content-type': 'application/apply-patch+yaml' },
  });
  assert.equal(applied.status, 200);
  const got = (await s.request('GET', `${path}/web`)).json();
  assert.equal(got.spec.replicas, 3);
  assert.equal(got.spec.template.spec.containers[0].image, 'nginx:2');
  assert.equal(got.metadata.generation, 3);
  const managers = got.metadata.managedFields.map((m: any) => `${m.manager}/${m.operation}`).sort();
  assert.ok(managers.includes('team/Apply'), managers.join(','));
});
