// A large LIST is read a page at a time, yielding to the event loop between pages, and its body
// is written a slice per turn: other clients are answered while it runs (read back from the audit
// log's stage timestamps), yet the list is one consistent snapshot at its resourceVersion though
// writes land between its pages, and its body is whole (Content-Length as sent). A whole list
// asked again while nothing of its resource changed is answered from the list cache: at the
// newest resourceVersion, and never once the resource has changed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import http2 from 'node:http2';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { goJsonText } from '../../../server/go/json.ts';

const dir = mkdtempSync(join(tmpdir(), 'hearth-large-lists-'));
const tokenFile = join(dir, 'tokens.csv');
writeFileSync(tokenFile, 'reader-token,reader,reader-uid,"readers"\n');
const logPath = join(dir, 'audit.log');
const policyFile = join(dir, 'policy.yaml');
writeFileSync(policyFile, 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n');

const NS = 'big';
/** Objects in the namespace: a list of them is far more than one page (64 rows) and one body slice (64 KiB). */
const OBJECTS = 1000;
const BLOB = 'x'.repeat(1024);
const reader = { anonymous: true, headers: { authorization: 'Bearer reader-token' } };

let s: TestServer;
before(async () => {
  // (without the root CA publisher: the tests count the namespace's ConfigMaps)
  s = await startTestServer({
    options: {
      tokenAuthFile: tokenFile,
      controllers: ['*', '-root-ca-certificate-publisher-controller'],
      audit: { policyFile, log: { path: logPath, maxAgeDays: 0, maxBackups: 0, maxSizeMegabytes: 0, format: 'json', mode: 'blocking' } },
    },
  });
  assert.equal((await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } })).status, 201);
  const view = { metadata: { name: 'readers-view', namespace: NS }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'readers' }] };
  assert.equal((await s.request('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, { body: view })).status, 201);
  for (let i = 0; i < OBJECTS; i += 50) {
    const batch = Array.from({ length: 50 }, (_, j) => s.request('POST', `/api/v1/namespaces/${NS}/configmaps`, { body: { metadata: { name: `cm-${String(i + j).padStart(4, '0')}` }, data: { blob: BLOB } } }));
    for (const r of await Promise.all(batch)) assert.equal(r.status, 201, r.text);
  }
});
after(async () => {
  await s.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface Stamped {
  auditID: string;
  stage: string;
  requestReceivedTimestamp: string;
  stageTimestamp: string;
}

function auditEvents(): Stamped[] {
  return readFileSync(logPath, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Stamped);
}

/** The microsecond timestamps of one request: when it was received, when it completed. */
async function stamps(auditID: string): Promise<{ received: string; completed: string }> {
  for (let i = 0; i < 200; i++) {
    const done = auditEvents().find((e) => e.auditID === auditID && e.stage === 'ResponseComplete');
    if (done) return { received: done.requestReceivedTimestamp, completed: done.stageTimestamp };
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.fail(`no ResponseComplete event for ${auditID}`);
}

/**
 * Rounds of a large LIST by the admin (asking for `accept`; its rows read from storage, or
 * `cached`) with a GET by the reader (its own identity and priority level) sent just after it:
 * in some round the server must receive the GET after the LIST, and every such GET complete
 * before its LIST. Which of the two the server
 * receives first is up to the network: rounds in which the GET came first say nothing.
 */
async function getAnsweredDuringList(accept: string, cached: boolean): Promise<void> {
  let overlapped = 0;
  for (let round = 0; round < 20 && overlapped < 3; round++) {
    if (cached) {
      // The rows come from the list cache at once: what takes turns is decoding and encoding them.
      assert.equal((await s.request('GET', `/api/v1/namespaces/${NS}/configmaps`)).status, 200);
    } else {
      // A write first: the list is read from storage, not answered again from the list cache.
      assert.equal((await s.request('PATCH', `/api/v1/namespaces/${NS}/configmaps/cm-0001`, { raw: JSON.stringify({ data: { round: String(round) } }), headers: { 'content-type': 'application/merge-patch+json' } })).status, 200);
    }
    const listId = randomUUID();
    const getId = randomUUID();
    const listing = s.request('GET', `/api/v1/namespaces/${NS}/configmaps`, { headers: { accept, 'audit-id': listId } });
    await new Promise((r) => setTimeout(r, 2));
    const got = await s.request('GET', `/api/v1/namespaces/${NS}/configmaps/cm-0500`, { headers: { ...reader.headers, 'audit-id': getId }, anonymous: true });
    assert.equal(got.status, 200, got.text);
    const listed = await listing;
    assert.equal(listed.status, 200);
    assert.equal(listed.json()[accept.includes('as=Table') ? 'rows' : 'items'].length >= OBJECTS, true);
    const [list, get] = [await stamps(listId), await stamps(getId)];
    if (get.received <= list.received) continue;
    overlapped++;
    // (RFC 3339 with microseconds, all in UTC: the strings order as the times)
    assert.ok(get.completed < list.completed, `the GET received at ${get.received}, after the LIST received at ${list.received}, completed at ${get.completed}, after the LIST's ${list.completed}`);
  }
  assert.ok(overlapped > 0, 'in no round did the server receive the GET after the LIST');
}

const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';

test('a GET that arrives while a large LIST runs is answered before the LIST completes', async () => {
  await getAnsweredDuringList('application/json', false);
});

test('so is one that arrives while a large Table is made, whose JSON is byte for byte what one encoding writes', async () => {
  await getAnsweredDuringList(TABLE, true);
  // Made in pieces, the answers equal the object path's one encoding (pretty, made compact):
  // a Table, PartialObjectMetadata, and a list read row by row (a label selector).
  for (const [accept, path] of [
    [TABLE, `/api/v1/namespaces/${NS}/configmaps`],
    ['application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io', `/api/v1/namespaces/${NS}/configmaps`],
    ['application/json', `/api/v1/namespaces/${NS}/configmaps?labelSelector=${encodeURIComponent('!absent')}`],
  ]) {
    const pieces = await s.request('GET', path, { headers: { accept } });
    const whole = await s.request('GET', `${path}${path.includes('?') ? '&' : '?'}pretty=true`, { headers: { accept } });
    assert.equal(pieces.status, 200, pieces.text);
    assert.equal(whole.status, 200, whole.text);
    assert.equal(Number(pieces.headers['content-length']), Buffer.byteLength(pieces.text));
    const body = JSON.parse(pieces.text);
    assert.ok((body.rows ?? body.items).length > 64, accept);
    // (the same list; a Table row's last cell is the object's age, which may have moved on)
    const ageless = (text: string) => text.replace(/,"[0-9smhdy]+"\],"object"/g, ',"AGE"],"object"');
    assert.equal(ageless(pieces.text), ageless(goJsonText(JSON.stringify(JSON.parse(whole.text))) + '\n'), accept);
  }
});

test('a list whose pages are read across turns is the state at its resourceVersion, though writes land between them', async () => {
  for (let round = 0; round < 5; round++) {
    const listing = s.request('GET', `/api/v1/namespaces/${NS}/configmaps`, { ...reader });
    // Writes throughout the key range: new names before and after every existing one, deletions
    // and updates of existing ones.
    const writes = await Promise.all([
      ...[0, 1, 2].map((k) => s.request('POST', `/api/v1/namespaces/${NS}/configmaps`, { body: { metadata: { name: `a-${round}-${k}` }, data: { blob: BLOB } } })),
      ...[0, 1, 2].map((k) => s.request('POST', `/api/v1/namespaces/${NS}/configmaps`, { body: { metadata: { name: `zz-${round}-${k}` }, data: { blob: BLOB } } })),
      s.request('DELETE', `/api/v1/namespaces/${NS}/configmaps/cm-${String(900 + round).padStart(4, '0')}`),
      s.request('DELETE', `/api/v1/namespaces/${NS}/configmaps/cm-${String(100 + round).padStart(4, '0')}`),
      s.request('PATCH', `/api/v1/namespaces/${NS}/configmaps/cm-0950`, { raw: JSON.stringify({ data: { round: String(round) } }), headers: { 'content-type': 'application/merge-patch+json' } }),
    ]);
    for (const w of writes) assert.ok(w.status === 200 || w.status === 201, w.text);
    const listed = await listing;
    assert.equal(listed.status, 200);
    // The whole body, as its Content-Length said.
    assert.equal(Number(listed.headers['content-length']), Buffer.byteLength(listed.text));
    const list = listed.json();
    // The same state read from the event log at that resourceVersion: the same objects, each at
    // the same resourceVersion.
    const exact = await s.request('GET', `/api/v1/namespaces/${NS}/configmaps?resourceVersion=${list.metadata.resourceVersion}&resourceVersionMatch=Exact`, { ...reader });
    assert.equal(exact.status, 200, exact.text);
    const versions = (l: { items: Array<{ metadata: { name: string; resourceVersion: string } }> }) => l.items.map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`);
    assert.deepEqual(versions(list), versions(exact.json()));
    // And each write is in it exactly when the write's resourceVersion is not newer than the list's.
    const listRv = Number(list.metadata.resourceVersion);
    const byName = new Map(list.items.map((o: { metadata: { name: string; resourceVersion: string } }) => [o.metadata.name, o.metadata.resourceVersion]));
    for (const w of writes) {
      const o = w.json();
      const name = o.metadata?.name ?? o.details?.name;
      const rv = Number(o.metadata?.resourceVersion);
      if (o.kind === 'ConfigMap' && w.status === 201) assert.equal(byName.has(name), rv <= listRv, `created ${name} at ${rv}, list at ${listRv}`);
      if (o.kind === 'ConfigMap' && w.status === 200 && o.data?.round !== undefined) assert.equal(byName.get(name) === String(rv), rv <= listRv, `updated ${name} at ${rv}, list at ${listRv}`);
    }
  }
});

test('a chunked list pages through a large collection with continue tokens, every object once', async () => {
  const seen: string[] = [];
  let cont = '';
  let pages = 0;
  do {
    const r = await s.request('GET', `/api/v1/namespaces/${NS}/configmaps?limit=150${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`, { ...reader });
    assert.equal(r.status, 200, r.text);
    const page = r.json();
    seen.push(...page.items.map((o: { metadata: { name: string } }) => o.metadata.name));
    cont = page.metadata.continue ?? '';
    if (cont) assert.equal(page.metadata.remainingItemCount, (await s.request('GET', `/api/v1/namespaces/${NS}/configmaps`)).json().items.length - seen.length);
    pages++;
  } while (cont);
  const all = (await s.request('GET', `/api/v1/namespaces/${NS}/configmaps`)).json().items.map((o: { metadata: { name: string } }) => o.metadata.name);
  assert.deepEqual(seen, all);
  assert.equal(pages, Math.ceil(all.length / 150));
});

test('a list asked again is the same objects at the newest resourceVersion, and shows every write to its resource at once', async () => {
  const names = (r: { json(): { items: Array<{ metadata: { name: string } }> } }) => r.json().items.map((o) => o.metadata.name);
  const first = await s.request('GET', `/api/v1/namespaces/${NS}/configmaps`, { ...reader });
  assert.equal(first.status, 200);
  // A write to another resource: the same ConfigMaps, at a newer resourceVersion.
  const secret = await s.request('POST', `/api/v1/namespaces/${NS}/secrets`, { body: { metadata: { name: 'unrelated' }, stringData: { k: 'v' } } });
  assert.equal(secret.status, 201, secret.text);
  const again = await s.request('GET', `/api/v1/namespaces/${NS}/configmaps`, { ...reader });
  assert.equal(again.status, 200);
  assert.deepEqual(names(again), names(first));
  assert.equal(again.json().metadata.resourceVersion, secret.json().metadata.resourceVersion);
  assert.equal(again.text.replace(/"resourceVersion":"\d+"/, ''), first.text.replace(/"resourceVersion":"\d+"/, ''));
  // Every kind of write to the resource, by the admin, each seen by the reader's next list; a
  // write to the resource in another namespace is seen by the list of all namespaces.
  assert.equal((await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'big-other' } } })).status, 201);
  const listAll = () => s.request('GET', '/api/v1/configmaps');
  const steps: Array<[string, () => Promise<{ status: number }>, (items: Array<{ metadata: { name: string; namespace: string }; data?: Record<string, string> }>) => boolean]> = [
    ['create', () => s.request('POST', `/api/v1/namespaces/${NS}/configmaps`, { body: { metadata: { name: 'cached-new' }, data: { v: '1' } } }), (items) => items.some((o) => o.metadata.name === 'cached-new' && o.data?.v === '1')],
    ['update', () => s.request('PATCH', `/api/v1/namespaces/${NS}/configmaps/cached-new`, { raw: '{"data":{"v":"2"}}', headers: { 'content-type': 'application/merge-patch+json' } }), (items) => items.some((o) => o.metadata.name === 'cached-new' && o.data?.v === '2')],
    ['delete', () => s.request('DELETE', `/api/v1/namespaces/${NS}/configmaps/cached-new`), (items) => !items.some((o) => o.metadata.name === 'cached-new')],
  ];
  for (const [what, write, shows] of steps) {
    // (asked twice first: the second answer comes from the cache)
    for (let i = 0; i < 2; i++) assert.equal((await s.request('GET', `/api/v1/namespaces/${NS}/configmaps`, { ...reader })).status, 200);
    const w = await write();
    assert.ok(w.status === 200 || w.status === 201, what);
    const after = await s.request('GET', `/api/v1/namespaces/${NS}/configmaps`, { ...reader });
    assert.ok(shows(after.json().items), `the list after the ${what} does not show it`);
  }
  for (let i = 0; i < 2; i++) assert.equal((await listAll()).status, 200);
  assert.equal((await s.request('POST', '/api/v1/namespaces/big-other/configmaps', { body: { metadata: { name: 'elsewhere' } } })).status, 201);
  assert.ok((await listAll()).json().items.some((o: { metadata: { name: string; namespace: string } }) => o.metadata.namespace === 'big-other' && o.metadata.name === 'elsewhere'));
});

test('a large list reaches HTTP/2 clients whole: node:http2, and kubectl (Go) as JSON and as a Table', async () => {
  const session = http2.connect(s.url, { ca: s.pki.caCertPem, cert: s.pki.adminCertPem, key: s.pki.adminKeyPem });
  try {
    const { headers, body } = await new Promise<{ headers: http2.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      const req = session.request({ ':path': `/api/v1/namespaces/${NS}/configmaps`, accept: 'application/json' });
      const chunks: Buffer[] = [];
      let head: http2.IncomingHttpHeaders = {};
      req.on('response', (h) => (head = h));
      req.on('data', (d: Buffer) => chunks.push(d));
      req.on('end', () => resolve({ headers: head, body: Buffer.concat(chunks) }));
      req.on('error', reject);
      req.end();
    });
    assert.equal(headers[':status'], 200);
    assert.equal(Number(headers['content-length']), body.length);
    const list = JSON.parse(body.toString('utf8'));
    const expected = (await s.request('GET', `/api/v1/namespaces/${NS}/configmaps`)).json().items.length;
    assert.equal(list.items.length, expected);
    // kubectl speaks HTTP/2 to a TLS server: the plain JSON list, then the Table it prints.
    const json = await s.kubectl(['get', 'configmaps', '-n', NS, '-o', 'json']);
    assert.equal(json.code, 0, json.stderr);
    assert.equal(JSON.parse(json.stdout).items.length, expected);
    const table = await s.kubectl(['get', 'configmaps', '-n', NS, '--no-headers']);
    assert.equal(table.code, 0, table.stderr);
    assert.equal(table.stdout.trim().split('\n').length, expected);
  } finally {
    session.close();
  }
});
