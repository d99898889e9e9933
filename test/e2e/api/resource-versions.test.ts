// resourceVersion semantics for list, get and watch; consistent chunked lists served from the
// log; compaction and 410 Gone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { useTestServer } from '../../helpers/server.ts';

// Without the root CA publisher: these tests count the ConfigMaps of their namespaces, and kube's API
// server integration tests too run without kube-controller-manager's kube-root-ca.crt.
const s = useTestServer({ options: { controllers: ['*', '-root-ca-certificate-publisher-controller'] } });

const cm = (name: string, data: Record<string, string> = { v: '1' }) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });

async function makeNamespace(name: string) {
  assert.equal((await s.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } })).status, 201);
}

async function createMany(ns: string, n: number, prefix = 'o') {
  const names = Array.from({ length: n }, (_, i) => `${prefix}-${String(i).padStart(5, '0')}`);
  for (let i = 0; i < names.length; i += 50) {
    await Promise.all(names.slice(i, i + 50).map(async (name) => {
      const r = await s.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: cm(name) });
      assert.equal(r.status, 201);
    }));
  }
  return names;
}

function expectStatus(r: { status: number; json(): any }, code: number, reason: string) {
  assert.equal(r.status, code, JSON.stringify(r.json()));
  assert.equal(r.json().reason, reason);
  return r.json();
}

const watch = (path: string, until: (events: any[]) => boolean) => s.watch(path, until);

test("the seed's chunking example: 1253 objects, limit 500 → 500/500/253 at one resourceVersion", async () => {
  await makeNamespace('chunks');
  await createMany('chunks', 1253);
  const base = '/api/v1/namespaces/chunks/configmaps?limit=500';
  const p1 = (await s.request('GET', base)).json();
  assert.equal(p1.items.length, 500);
  assert.equal(p1.metadata.remainingItemCount, 753);
  // Writes between pages must not show up in later pages.
  await s.request('POST', '/api/v1/namespaces/chunks/configmaps', { body: cm('zzz-late') });
  await s.request('DELETE', '/api/v1/namespaces/chunks/configmaps/o-01000');
  await s.request('PUT', '/api/v1/namespaces/chunks/configmaps/o-01100', { body: cm('o-01100', { v: 'changed' }) });
  const p2 = (await s.request('GET', `${base}&continue=${encodeURIComponent(p1.metadata.continue)}`)).json();
  assert.equal(p2.items.length, 500);
  assert.equal(p2.metadata.remainingItemCount, 253);
  const p3 = (await s.request('GET', `${base}&continue=${encodeURIComponent(p2.metadata.continue)}`)).json();
  assert.equal(p3.items.length, 253);
  assert.equal(p3.metadata.continue, undefined);
  assert.equal(p3.metadata.remainingItemCount, undefined);
  assert.equal(p1.metadata.resourceVersion, p2.metadata.resourceVersion);
  assert.equal(p2.metadata.resourceVersion, p3.metadata.resourceVersion);
  const all = [...p1.items, ...p2.items, ...p3.items];
  const names = all.map((i: any) => i.metadata.name);
  assert.equal(new Set(names).size, 1253);
  assert.ok(!names.includes('zzz-late'), 'created after the first page');
  assert.ok(names.includes('o-01000'), 'deleted after the first page, still in the snapshot');
  assert.equal(all.find((i: any) => i.metadata.name === 'o-01100').data.v, '1', 'the snapshot version, not the update');
  // The current list sees the writes.
  const now = (await s.request('GET', '/api/v1/namespaces/chunks/configmaps')).json();
  assert.equal(now.items.length, 1253);
  assert.ok(Number(now.metadata.resourceVersion) > Number(p1.metadata.resourceVersion));
});

test('list with resourceVersionMatch=Exact reads the log as of that version', async () => {
  await makeNamespace('exact');
  await s.request('POST', '/api/v1/namespaces/exact/configmaps', { body: cm('a', { v: '1' }) });
  const rv1 = (await s.request('GET', '/api/v1/namespaces/exact/configmaps')).json().metadata.resourceVersion;
  await s.request('PUT', '/api/v1/namespaces/exact/configmaps/a', { body: cm('a', { v: '2' }) });
  await s.request('POST', '/api/v1/namespaces/exact/configmaps', { body: cm('b') });
  const then = (await s.request('GET', `/api/v1/namespaces/exact/configmaps?resourceVersion=${rv1}&resourceVersionMatch=Exact`)).json();
  assert.equal(then.metadata.resourceVersion, rv1);
  assert.deepEqual(then.items.map((i: any) => `${i.metadata.name}=${i.data.v}`), ['a=1']);
  const notOlder = (await s.request('GET', `/api/v1/namespaces/exact/configmaps?resourceVersion=${rv1}&resourceVersionMatch=NotOlderThan`)).json();
  assert.deepEqual(notOlder.items.map((i: any) => `${i.metadata.name}=${i.data.v}`), ['a=2', 'b=1']);
  // All namespaces at an exact version.
  const across = (await s.request('GET', `/api/v1/configmaps?resourceVersion=${rv1}&resourceVersionMatch=Exact&fieldSelector=metadata.namespace%3Dexact`)).json();
  assert.equal(across.items.length, 1);
});

test('Exact lists at every version of a history of creates, updates, deletes and re-creates equal a model of it, paged or not', async () => {
  // Two namespaces, keys that are updated several times, deleted, re-created, created late:
  // each version's state comes from the current table or from what a later event replaced.
  const namespaces = ['hist-a', 'hist-b'];
  for (const ns of namespaces) await makeNamespace(ns);
  const model = new Map<string, string>(); // "ns/name" → data.v
  const snapshots: { rv: string; state: Map<string, string> }[] = [];
  let serial = 0;
  const step = async (method: string, ns: string, name: string) => {
    const v = String(++serial);
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    const r =
      method === 'POST' ? await s.request('POST', path, { body: cm(name, { v }) })
      : method === 'PUT' ? await s.request('PUT', `${path}/${name}`, { body: cm(name, { v }) })
      : await s.request('DELETE', `${path}/${name}`);
    assert.ok(r.status < 300, `${method} ${ns}/${name}: ${r.status} ${r.text}`);
    if (method === 'DELETE') model.delete(`${ns}/${name}`);
    else model.set(`${ns}/${name}`, v);
    const rv = (await s.request('GET', `${path}?limit=1`)).json().metadata.resourceVersion;
    snapshots.push({ rv, state: new Map(model) });
  };
  for (let round = 0; round < 4; round++) {
    for (let k = 0; k < 6; k++) {
      const ns = namespaces[k % 2];
      const name = `k${k}`;
      const exists = model.has(`${ns}/${name}`);
      if (!exists) await step('POST', ns, name);
      else if ((round + k) % 3 === 0) await step('DELETE', ns, name);
      else await step('PUT', ns, name);
    }
    await step('POST', namespaces[round % 2], `late${round}`);
  }
  // The first page at the exact version; continuation pages carry only the token (as kube requires).
  const listed = async (path: string, rv: string, limit?: number): Promise<string[]> => {
    const out: string[] = [];
    let query = `resourceVersion=${rv}&resourceVersionMatch=Exact${limit ? `&limit=${limit}` : ''}`;
    for (;;) {
      const page = (await s.request('GET', `${path}?${query}`)).json();
      assert.ok(Array.isArray(page.items), JSON.stringify(page));
      if (limit) assert.equal(page.metadata.resourceVersion, rv);
      for (const i of page.items) out.push(`${i.metadata.namespace}/${i.metadata.name}=${i.data.v}`);
      if (!page.metadata.continue) return out;
      query = `limit=${limit}&continue=${encodeURIComponent(page.metadata.continue)}`;
    }
  };
  for (const { rv, state } of snapshots) {
    const expected = [...state].map(([k, v]) => `${k}=${v}`).sort();
    assert.deepEqual((await listed('/api/v1/configmaps', rv)).filter((x) => x.startsWith('hist-')), expected, `all namespaces at ${rv}`);
    assert.deepEqual((await listed('/api/v1/configmaps', rv, 3)).filter((x) => x.startsWith('hist-')), expected, `all namespaces at ${rv}, pages of 3`);
    for (const ns of namespaces) {
      const inNs = expected.filter((x) => x.startsWith(`${ns}/`));
      assert.deepEqual(await listed(`/api/v1/namespaces/${ns}/configmaps`, rv), inNs, `${ns} at ${rv}`);
      assert.deepEqual(await listed(`/api/v1/namespaces/${ns}/configmaps`, rv, 2), inNs, `${ns} at ${rv}, pages of 2`);
    }
  }
});

test('illegal parameter combinations → 400 naming every error (kube-apiserver\'s words); a version from the future → 504 Timeout with Retry-After', async () => {
  const base = '/api/v1/namespaces/default/configmaps';
  const listOptionsInvalid = async (query: string, causes: [string, string, string][]) => {
    const st = expectStatus(await s.request('GET', `${base}?${query}`), 400, 'BadRequest');
    assert.deepEqual(st.details, { causes: causes.map(([field, reason, message]) => ({ reason, message, field })) });
    const text = causes.map(([field, , message]) => `${field}: ${message}`);
    assert.equal(st.message, text.length === 1 ? text[0] : `[${text.join(', ')}]`);
  };
  const F = 'FieldValueForbidden';
  await listOptionsInvalid('resourceVersionMatch=Exact', [['resourceVersionMatch', F, 'Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided']]);
  await listOptionsInvalid('resourceVersion=0&resourceVersionMatch=Exact', [['resourceVersionMatch', F, 'Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"']]);
  await listOptionsInvalid('resourceVersion=1&resourceVersionMatch=Sometimes', [
    ['resourceVersionMatch', 'FieldValueNotSupported', 'Unsupported value: "Sometimes": supported values: "Exact", "NotOlderThan", ""'],
  ]);
  await listOptionsInvalid('resourceVersionMatch=NotOlderThan&continue=abc&sendInitialEvents=false', [
    ['resourceVersionMatch', F, 'Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided'],
    ['resourceVersionMatch', F, 'Forbidden: resourceVersionMatch is forbidden when continue is provided'],
    ['sendInitialEvents', F, 'Forbidden: sendInitialEvents is forbidden for list'],
  ]);
  await listOptionsInvalid('watch=1&resourceVersionMatch=NotOlderThan', [['resourceVersionMatch', F, 'Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided']]);
  await listOptionsInvalid('watch=true&sendInitialEvents=true&resourceVersionMatch=Exact&continue=abc', [
    ['resourceVersionMatch', F, 'Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'],
    ['resourceVersionMatch', 'FieldValueNotSupported', 'Unsupported value: "Exact": supported values: "NotOlderThan"'],
    ['resourceVersionMatch', F, 'Forbidden: resourceVersionMatch is forbidden when continue is provided'],
  ]);
  // Selector syntax is read before the combinations are judged, as kube decodes before it validates.
  for (const q of ['', '&watch=1']) {
    const st = expectStatus(await s.request('GET', `${base}?labelSelector=a%3D%3D%3Db&resourceVersionMatch=Exact${q}`), 400, 'BadRequest');
    assert.doesNotMatch(st.message, /resourceVersionMatch/, q);
  }
  // These are storage's own checks: 400.
  expectStatus(await s.request('GET', `${base}?resourceVersion=abc`), 400, 'BadRequest');
  const p = (await s.request('GET', `${base}?limit=1`)).json();
  expectStatus(await s.request('GET', `${base}?limit=1&resourceVersion=5&continue=${encodeURIComponent(p.metadata.continue)}`), 400, 'BadRequest');

  const future = Number(p.metadata.resourceVersion) + 1_000_000;
  const r = await s.request('GET', `${base}?resourceVersion=${future}`);
  const st = expectStatus(r, 504, 'Timeout');
  assert.match(st.message, /Too large resource version/);
  assert.equal(st.details.causes[0].reason, 'ResourceVersionTooLarge');
  assert.equal(r.headers['retry-after'], '1');
});

test('a get or list for a version just ahead is answered once it commits', async () => {
  const rv = Number((await s.request('GET', '/api/v1/namespaces/default/configmaps')).json().metadata.resourceVersion);
  const pending = s.request('GET', `/api/v1/namespaces/default/configmaps?resourceVersion=${rv + 1}`);
  await new Promise((r) => setTimeout(r, 100));
  await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: cm('ahead') });
  const r = await pending;
  assert.equal(r.status, 200);
  assert.ok(r.json().items.some((i: any) => i.metadata.name === 'ahead'));
});

test('sendInitialEvents: initial ADDED events end with an annotated BOOKMARK', async () => {
  await makeNamespace('stream');
  await createMany('stream', 3, 's');
  const rv = (await s.request('GET', '/api/v1/namespaces/stream/configmaps')).json().metadata.resourceVersion;
  const { events } = await watch(`/api/v1/namespaces/stream/configmaps?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=${rv}`, (e) => e.some((x) => x.type === 'BOOKMARK'));
  assert.deepEqual(events.map((e) => e.type), ['ADDED', 'ADDED', 'ADDED', 'BOOKMARK']);
  const bm = events[3].object;
  assert.equal(bm.metadata.annotations['k8s.io/initial-events-end'], 'true');
  assert.ok(Number(bm.metadata.resourceVersion) >= Number(rv));
  // The kind's own order: ObjectMeta's for a built-in kind.
  assert.deepEqual([Object.keys(bm), Object.keys(bm.metadata)], [['kind', 'apiVersion', 'metadata'], ['resourceVersion', 'annotations']]);
});

test('sendInitialEvents without allowWatchBookmarks: the initial events, then live ones, with no bookmark (as kube serves it)', async () => {
  await makeNamespace('stream-nb');
  await createMany('stream-nb', 2, 's');
  const rv = (await s.request('GET', '/api/v1/namespaces/stream-nb/configmaps')).json().metadata.resourceVersion;
  const added = setTimeout(() => void s.request('POST', '/api/v1/namespaces/stream-nb/configmaps', { body: cm('later') }), 300);
  const { events } = await watch(`/api/v1/namespaces/stream-nb/configmaps?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=${rv}`, (e) => e.length >= 3);
  clearTimeout(added);
  assert.deepEqual(events.map((e) => [e.type, e.object.metadata.name]), [['ADDED', 's-00000'], ['ADDED', 's-00001'], ['ADDED', 'later']]);
});

test('boolean parameters read as kube reads them: anything but "0" or "false" is true', async () => {
  await makeNamespace('flags');
  await createMany('flags', 1, 'f');
  const rv = (await s.request('GET', '/api/v1/namespaces/flags/configmaps')).json().metadata.resourceVersion;
  // watch=True is a watch; allowWatchBookmarks=1 asks for bookmarks (the last one comes at the end).
  const { events } = await watch(`/api/v1/namespaces/flags/configmaps?watch=True&sendInitialEvents=yes&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=1&resourceVersion=${rv}`, (e) => e.some((x) => x.type === 'BOOKMARK'));
  assert.deepEqual(events.map((e) => e.type), ['ADDED', 'BOOKMARK']);
  assert.equal(events[1].object.metadata.annotations['k8s.io/initial-events-end'], 'true');
  // watch=false (any case) is a list.
  const listed = await s.request('GET', '/api/v1/namespaces/flags/configmaps?watch=FALSE');
  assert.equal(listed.status, 200);
  assert.equal(listed.json().kind, 'ConfigMapList');
});

test('watch timeoutSeconds ends the stream cleanly, with a final bookmark when asked', async () => {
  const started = Date.now();
  const { events } = await watch('/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=1&timeoutSeconds=1&allowWatchBookmarks=true', () => false);
  assert.ok(Date.now() - started >= 900);
  assert.equal(events[events.length - 1].type, 'BOOKMARK');
});

test('watch timeoutSeconds=0 takes the default timeout, a negative one ends the watch at once (as kube-apiserver)', async () => {
  await makeNamespace('timeouts');
  const rv = (await s.request('GET', '/api/v1/namespaces/timeouts/configmaps')).json().metadata.resourceVersion;
  const gone = await watch(`/api/v1/namespaces/timeouts/configmaps?watch=1&resourceVersion=${rv}&timeoutSeconds=-5`, () => false);
  assert.equal(gone.status, 200);
  assert.deepEqual(gone.events, [], 'ended without events');
  const open = watch(`/api/v1/namespaces/timeouts/configmaps?watch=1&resourceVersion=${rv}&timeoutSeconds=0`, (e) => e.length === 1);
  await new Promise((r) => setTimeout(r, 1200));
  assert.equal((await s.request('POST', '/api/v1/namespaces/timeouts/configmaps', { body: cm('late') })).status, 201);
  assert.deepEqual((await open).events.map((e) => [e.type, e.object.metadata.name]), [['ADDED', 'late']]);
});

test('compaction: old versions answer 410 Gone, current objects stay, continue tokens expire with a fresh hint', async () => {
  await makeNamespace('compact');
  await createMany('compact', 20, 'c');
  for (let i = 0; i < 5; i++) await s.request('PUT', '/api/v1/namespaces/compact/configmaps/c-00000', { body: cm('c-00000', { v: String(i) }) });
  await s.request('DELETE', '/api/v1/namespaces/compact/configmaps/c-00001');
  const page = (await s.request('GET', '/api/v1/namespaces/compact/configmaps?limit=5')).json();
  const oldRv = Number(page.metadata.resourceVersion) - 3;
  await s.request('POST', '/api/v1/namespaces/compact/configmaps', { body: cm('c-extra') });
  const before = (await s.request('GET', '/api/v1/namespaces/compact/configmaps')).json();

  const anon = await s.request('POST', '/admin/compact', { anonymous: true });
  expectStatus(anon, 403, 'Forbidden');
  const res = await s.request('POST', '/admin/compact');
  assert.equal(res.status, 200);
  const result = res.json();
  assert.ok(result.removedEvents >= 6, `removed ${result.removedEvents}`);
  assert.ok(Number(result.compactedResourceVersion) > Number(page.metadata.resourceVersion));

  const now = (await s.request('GET', '/api/v1/namespaces/compact/configmaps')).json();
  assert.deepEqual(now.items.map((i: any) => [i.metadata.name, i.data.v]), before.items.map((i: any) => [i.metadata.name, i.data.v]));
  const st = expectStatus(await s.request('GET', `/api/v1/namespaces/compact/configmaps?resourceVersion=${oldRv}&resourceVersionMatch=Exact`), 410, 'Expired');
  assert.match(st.message, /too old resource version/);
  const cont = expectStatus(await s.request('GET', `/api/v1/namespaces/compact/configmaps?limit=5&continue=${encodeURIComponent(page.metadata.continue)}`), 410, 'Expired');
  assert.ok(cont.metadata.continue, 'a fresh continue token to go on inconsistently');
  const rest = (await s.request('GET', `/api/v1/namespaces/compact/configmaps?limit=100&continue=${encodeURIComponent(cont.metadata.continue)}`)).json();
  assert.equal(rest.items.length, before.items.length - 5);

  const w = await watch(`/api/v1/namespaces/compact/configmaps?watch=1&resourceVersion=${oldRv}`, (e) => e.length > 0);
  assert.equal(w.status, 200);
  assert.equal(w.events[0].type, 'ERROR');
  assert.equal(w.events[0].object.code, 410);
  assert.equal(w.events[0].object.reason, 'Expired');
  // From the compacted version itself, a watch still works.
  const fromNow = now.metadata.resourceVersion;
  const pending = watch(`/api/v1/namespaces/compact/configmaps?watch=1&resourceVersion=${fromNow}`, (e) => e.length > 0);
  await new Promise((r) => setTimeout(r, 50));
  await s.request('POST', '/api/v1/namespaces/compact/configmaps', { body: cm('after-compaction') });
  assert.equal((await pending).events[0].object.metadata.name, 'after-compaction');
});

test('a watcher that stops reading is closed instead of buffering without bound', async () => {
  await makeNamespace('slow');
  const rv = (await s.request('GET', '/api/v1/namespaces/slow/configmaps')).json().metadata.resourceVersion;
  // The reader resumes only once every write is in, however long they took, so the server's
  // buffer has certainly passed its limit; a stream the server never ends fails after 30 s.
  let resumeReader: () => void = () => {};
  const ended = new Promise<{ bytes: number }>((resolve, reject) => {
    const req = https.request(`${s.url}/api/v1/namespaces/slow/configmaps?watch=1&resourceVersion=${rv}`, { ca: s.pki.caCertPem, cert: s.pki.adminCertPem, key: s.pki.adminKeyPem }, (res) => {
      res.pause(); // a reader that has stopped reading
      let bytes = 0;
      resumeReader = () => {
        res.on('data', (d) => (bytes += d.length));
        res.resume();
        setTimeout(() => reject(new Error(`the stream did not end (read ${bytes} bytes)`)), 30_000).unref();
      };
      res.on('end', () => resolve({ bytes }));
      res.on('error', () => resolve({ bytes }));
    });
    req.on('error', reject);
    req.end();
  });
  await new Promise((r) => setTimeout(r, 100));
  const big = 'x'.repeat(512 * 1024);
  const writes = 48; // 24 MiB of events: more than the server's per-watcher limit plus socket buffers
  await s.request('POST', '/api/v1/namespaces/slow/configmaps', { body: cm('big', { v: big }) });
  for (let i = 1; i < writes; i++) {
    const r = await s.request('PUT', '/api/v1/namespaces/slow/configmaps/big', { body: cm('big', { v: big.slice(i) }) });
    assert.equal(r.status, 200);
  }
  resumeReader();
  const { bytes } = await ended;
  assert.ok(bytes < writes * 512 * 1024, `the server ended the stream early (got ${bytes} bytes)`);
});

test('watch streams in CBOR (a sequence of self-described items) and as PartialObjectMetadata', async () => {
  const { decodeMultiple } = await import('cbor-x');
  await makeNamespace('wfmt');
  const rv = (await s.request('GET', '/api/v1/namespaces/wfmt/configmaps')).json().metadata.resourceVersion;
  await s.request('POST', '/api/v1/namespaces/wfmt/configmaps', { body: cm('one') });
  await s.request('POST', '/api/v1/namespaces/wfmt/configmaps', { body: cm('two') });
  const path = `/api/v1/namespaces/wfmt/configmaps?watch=1&resourceVersion=${rv}&timeoutSeconds=1`;
  const cbor = await s.request('GET', path, { headers: { accept: 'application/cbor' } });
  assert.equal(cbor.headers['content-type'], 'application/cbor-seq');
  const items: any[] = [];
  decodeMultiple(cbor.raw, (v: any) => {
    items.push(v);
  });
  assert.deepEqual(items.map((e) => `${e.type} ${e.object.metadata.name}`), ['ADDED one', 'ADDED two']);
  const pom = await s.request('GET', path, { headers: { accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1' } });
  const events = pom.text.trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(events.map((e) => e.object.kind), ['PartialObjectMetadata', 'PartialObjectMetadata']);
  assert.equal(events[0].object.data, undefined);
});

test('an update without a resourceVersion, or with "0", is unconditional where the kind allows it (a Node, kubectl replace) and Invalid where it does not (custom resources, leases)', async () => {
  const { manifestWriter } = await import('../../helpers/server.ts');
  const YAML = (await import('yaml')).default;
  const manifest = manifestWriter('hearth-rv0-');
  assert.equal((await s.request('POST', '/api/v1/nodes', { body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'rv0' } } })).status, 201);
  // What kubectl's own command tests do: read a Node, set its resourceVersion to "0", replace it.
  const read = YAML.parse((await s.kubectl(['get', 'node', 'rv0', '-o', 'yaml'])).stdout);
  read.metadata.resourceVersion = '0';
  read.metadata.labels = { replaced: 'done' };
  const file = manifest('node-rv0', read);
  const dry = await s.kubectl(['replace', '--dry-run=server', '-f', file]);
  assert.equal(dry.code, 0, dry.stderr);
  assert.equal((await s.request('GET', '/api/v1/nodes/rv0')).json().metadata.labels?.replaced, undefined, 'a dry run writes nothing');
  // The object changed meanwhile: "0" still writes over it, as an empty resourceVersion does.
  assert.equal((await s.request('PATCH', '/api/v1/nodes/rv0', { raw: '{"metadata":{"annotations":{"meanwhile":"x"}}}', headers: { 'content-type': 'application/merge-patch+json' } })).status, 200);
  const replaced = await s.kubectl(['replace', '-f', file]);
  assert.equal(replaced.code, 0, replaced.stderr);
  assert.equal((await s.request('GET', '/api/v1/nodes/rv0')).json().metadata.labels.replaced, 'done');
  const noRv = await s.request('PUT', '/api/v1/nodes/rv0', { body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'rv0', labels: { replaced: 'again' } } } });
  assert.equal(noRv.status, 200, noRv.text);
  // A stale one is still a conflict.
  const stale = await s.request('PUT', '/api/v1/nodes/rv0', { body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'rv0', resourceVersion: read.metadata.resourceVersion === '1' ? '2' : '1' } } });
  assert.equal(stale.status, 409, stale.text);

  // Leases (AllowUnconditionalUpdate false): the resource names the kind in kube's message.
  const lease = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l' }, spec: { holderIdentity: 'a' } };
  const created = await s.request('POST', '/apis/coordination.k8s.io/v1/namespaces/default/leases', { body: lease });
  assert.equal(created.status, 201);
  for (const resourceVersion of [undefined, '', '0']) {
    const r = await s.request('PUT', '/apis/coordination.k8s.io/v1/namespaces/default/leases/l', { body: { ...lease, metadata: { name: 'l', resourceVersion }, spec: { holderIdentity: 'b' } } });
    assert.equal(r.status, 422, r.text);
    assert.deepEqual(r.json(), {
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
      message: 'leases.coordination.k8s.io "l" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update',
      reason: 'Invalid',
      details: { name: 'l', group: 'coordination.k8s.io', kind: 'leases', causes: [{ reason: 'FieldValueInvalid', message: 'Invalid value: 0x0: must be specified for an update', field: 'metadata.resourceVersion' }] },
      code: 422,
    });
  }
  assert.equal((await s.request('GET', '/apis/coordination.k8s.io/v1/namespaces/default/leases/l')).json().spec.holderIdentity, 'a', 'nothing was written');
  const withRv = await s.request('PUT', '/apis/coordination.k8s.io/v1/namespaces/default/leases/l', { body: { ...lease, metadata: { name: 'l', resourceVersion: created.json().metadata.resourceVersion }, spec: { holderIdentity: 'b' } } });
  assert.equal(withRv.status, 200, withRv.text);
  // A patch that leaves the resourceVersion it read is no update without one.
  const patched = await s.request('PATCH', '/apis/coordination.k8s.io/v1/namespaces/default/leases/l', { raw: '{"spec":{"holderIdentity":"c"}}', headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(patched.status, 200, patched.text);

  // Custom resources: the same rule (apiextensions' customResourceStrategy).
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'gadgets.rv.hearth.test' },
    spec: { group: 'rv.hearth.test', scope: 'Namespaced', names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' }, versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }] },
  };
  assert.equal((await s.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crd })).status, 201);
  const G = '/apis/rv.hearth.test/v1/namespaces/default/gadgets';
  assert.equal((await s.request('POST', G, { body: { apiVersion: 'rv.hearth.test/v1', kind: 'Gadget', metadata: { name: 'g' }, size: 1 } })).status, 201);
  const cr = await s.request('PUT', `${G}/g`, { body: { apiVersion: 'rv.hearth.test/v1', kind: 'Gadget', metadata: { name: 'g', resourceVersion: '0' }, size: 2 } });
  assert.equal(cr.status, 422, cr.text);
  assert.equal(cr.json().message, 'gadgets.rv.hearth.test "g" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update');
  // (kubectl replace fills in the current resourceVersion when the manifest has none; "0" it sends.)
  const crReplace = await s.kubectl(['replace', '-f', manifest('gadget', { apiVersion: 'rv.hearth.test/v1', kind: 'Gadget', metadata: { name: 'g', namespace: 'default', resourceVersion: '0' }, size: 3 })]);
  assert.notEqual(crReplace.code, 0);
  assert.match(crReplace.stderr, /metadata\.resourceVersion: Invalid value: 0x0: must be specified for an update/);
  const noRvPut = await s.request('PUT', `${G}/g`, { body: { apiVersion: 'rv.hearth.test/v1', kind: 'Gadget', metadata: { name: 'g' }, size: 4 } });
  assert.equal(noRvPut.status, 422, noRvPut.text);
  assert.equal((await s.request('GET', `${G}/g`)).json().size, 1, 'nothing was written');
  // Its CRD too (the CRD strategy's AllowUnconditionalUpdate is false).
  const crdPut = await s.request('PUT', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.rv.hearth.test', { body: crd });
  assert.equal(crdPut.status, 422, crdPut.text);
  assert.match(crdPut.json().message, /^customresourcedefinitions\.apiextensions\.k8s\.io "gadgets\.rv\.hearth\.test" is invalid: metadata\.resourceVersion/);
});
