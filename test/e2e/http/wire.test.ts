// What the HTTP path answers on the wire, for the requests its fast paths touch: resource
// requests that bypass the router, query parameters read from the raw query string, header
// order of written responses, bodies read in chunks or refused as too large, and the routes the
// router still serves (allowedMethods included). These held before the fast paths were added.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { decode as decodeCbor } from 'cbor-x';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

let s: TestServer;
before(async () => {
  s = await startTestServer();
  await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'wire' } } });
  for (const [name, tier] of [['a-b', 'x'], ['c', 'y'], ['d', 'x']]) {
    const r = await s.request('POST', '/api/v1/namespaces/wire/configmaps', { body: { metadata: { name, labels: { tier } }, data: { v: '1' } } });
    assert.equal(r.status, 201);
  }
});
after(async () => {
  await s.stop();
});

const names = (r: { json(): any }) => r.json().items.map((o: any) => o.metadata.name);
const headerNames = (raw: Buffer | undefined, rawHeaders: string[]) => rawHeaders.filter((_, i) => i % 2 === 0).map((h) => h.toLowerCase());

test('resource requests with methods no verb maps to: 405 Status, as JSON', async () => {
  for (const method of ['OPTIONS', 'PROPFIND']) {
    const r = await s.request(method, '/api/v1/namespaces/wire/configmaps');
    assert.equal(r.status, 405, method);
    assert.equal(r.headers['content-type'], 'application/json');
    assert.equal(r.json().kind, 'Status');
    assert.equal(r.json().reason, 'MethodNotAllowed');
  }
});

test("a method the URL has no route for is kube's 405 Status: PUT or PATCH on a collection, POST on an object, DELETE of a collection without deletecollection", async () => {
  const routeless = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'the server does not allow this method on the requested resource', reason: 'MethodNotAllowed', details: {}, code: 405 };
  const cases: [string, string, string?][] = [
    ['PUT', '/api/v1/namespaces/wire/configmaps', JSON.stringify({ metadata: { name: 'c' }, data: { v: '2' } })],
    ['PATCH', '/api/v1/namespaces/wire/configmaps', JSON.stringify({ data: { v: '2' } })],
    ['POST', '/api/v1/namespaces/wire/configmaps/made-by-post', JSON.stringify({ metadata: { name: 'made-by-post' } })],
    ['PUT', '/api/v1/nodes', JSON.stringify({ metadata: { name: 'n' } })],
    ['POST', '/api/v1/namespaces/wire', JSON.stringify({ metadata: { name: 'wire' } })],
    ['DELETE', '/api/v1/namespaces'],
    ['DELETE', '/api/v1/configmaps'],
  ];
  for (const [method, path, raw] of cases) {
    const headers = method === 'PATCH' ? { 'content-type': 'application/merge-patch+json' } : { 'content-type': 'application/json' };
    const r = await s.request(method, path, raw === undefined ? {} : { raw, headers });
    assert.deepEqual([r.status, r.json()], [405, routeless], `${method} ${path}`);
  }
  // Nothing was written.
  assert.equal((await s.request('GET', '/api/v1/namespaces/wire/configmaps/made-by-post')).status, 404);
  assert.deepEqual((await s.request('GET', '/api/v1/namespaces/wire/configmaps/c')).json().data, { v: '1' });
});

test('unknown resources and paths: 404 Status', async () => {
  for (const path of ['/api/v1/namespaces/wire/nosuchthings', '/apis/nosuch.group/v1/things', '/nosuchpath', '/api/v1/namespaces/wire/configmaps/c/extra/part']) {
    const r = await s.request('GET', path);
    assert.equal(r.status, 404, path);
    assert.equal(r.json().reason, 'NotFound', path);
    assert.equal(r.json().message, 'the server could not find the requested resource', path);
    // kube's NotFound handler makes details with nothing set: written as {}.
    assert.deepEqual(r.json().details, {}, path);
  }
});

test('Status details: empty where kube makes them empty, and members left unset are absent (also in CBOR)', async () => {
  const failedTest = await s.request('PATCH', '/api/v1/namespaces/wire/configmaps/c', { raw: '[{"op":"test","path":"/data/v","value":"nope"}]', headers: { 'content-type': 'application/json-patch+json' } });
  assert.equal(failedTest.status, 422);
  assert.deepEqual(failedTest.json(), { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'the server rejected our request due to an error in our request', reason: 'Invalid', details: {}, code: 422 });
  const missing = await s.request('GET', '/api/v1/namespaces/wire/configmaps/zz', { headers: { accept: 'application/cbor' } });
  assert.equal(missing.status, 404);
  const status = decodeCbor(missing.raw);
  assert.deepEqual(status.details, { name: 'zz', kind: 'configmaps' }); // (strict: a group: undefined member fails it)
});

test('paths the router serves: discovery with and without a trailing slash, version, health', async () => {
  for (const path of ['/api/v1', '/api/v1/', '/apis/apps/v1', '/apis/apps/v1/']) {
    const r = await s.request('GET', path);
    assert.equal(r.status, 200, path);
    assert.equal(r.json().kind, 'APIResourceList', path);
  }
  assert.equal((await s.request('GET', '/apis/apps')).json().kind, 'APIGroup');
  assert.equal((await s.request('GET', '/version')).json().gitCommit, 'hearth');
  assert.equal((await s.request('GET', '/livez?verbose')).text.includes('[+]ping ok'), true);
  assert.equal((await s.request('GET', '/livez?exclude=ping&verbose')).text.includes('[+]ping excluded: ok'), true);
});

test('router paths with other methods: the 404 Status (the fallback answers before allowedMethods would)', async () => {
  for (const method of ['OPTIONS', 'POST', 'PROPFIND']) {
    const r = await s.request(method, '/version');
    assert.equal(r.status, 404, method);
    assert.equal(r.json().reason, 'NotFound', method);
    assert.equal(r.headers.allow, undefined, method);
  }
});

test('empty path segments count for nothing in resource paths', async () => {
  const r = await s.request('GET', '//api//v1/namespaces//wire/configmaps/');
  assert.equal(r.status, 200);
  // (the namespace's kube-root-ca.crt, which the root CA publisher adds, is not this test's)
  assert.deepEqual(names(r).filter((n: string) => n !== 'kube-root-ca.crt'), ['a-b', 'c', 'd']);
  const one = await s.request('GET', '/api/v1/namespaces/wire/configmaps/c/');
  assert.equal(one.json().metadata.name, 'c');
});

test('percent-encoded names and namespaces are decoded', async () => {
  const r = await s.request('GET', '/api/v1/namespaces/w%69re/configmaps/a%2Db');
  assert.equal(r.status, 200);
  assert.equal(r.json().metadata.name, 'a-b');
});

test('query parameters: encoded, repeated, plus as space, fragments ignored, bad values refused', async () => {
  assert.deepEqual(names(await s.request('GET', '/api/v1/namespaces/wire/configmaps?labelSelector=tier%3Dx')), ['a-b', 'd']);
  assert.deepEqual(names(await s.request('GET', '/api/v1/namespaces/wire/configmaps?labelSelector=tier+in+(y)')), ['c']);
  assert.deepEqual(names(await s.request('GET', '/api/v1/namespaces/wire/configmaps?labelSelector=tier%20notin%20%28y%29&limit=1')), ['a-b']);
  assert.deepEqual(names(await s.request('GET', '/api/v1/namespaces/wire/configmaps?limit=1&labelSelector=tier=y#frag')), ['c']);
  const bad = await s.request('GET', '/api/v1/namespaces/wire/configmaps?limit=abc');
  assert.equal(bad.status, 400);
  assert.equal(bad.json().message, 'strconv.ParseInt: parsing "abc": invalid syntax');
  // Integer parameters are decoded as kube decodes them: an int64 or a 400; a limit of 0 or less is no limit.
  for (const [param, why] of [['limit=', 'invalid syntax'], ['limit=1.5', 'invalid syntax'], ['timeoutSeconds=x', 'invalid syntax'], ['limit=9223372036854775808', 'value out of range']]) {
    const r = await s.request('GET', `/api/v1/namespaces/wire/configmaps?${param}`);
    assert.equal(r.status, 400, param);
    assert.equal(r.json().message, `strconv.ParseInt: parsing "${param.split('=')[1]}": ${why}`);
  }
  const all = names(await s.request('GET', '/api/v1/namespaces/wire/configmaps'));
  assert.ok(all.length > 1);
  assert.deepEqual(names(await s.request('GET', '/api/v1/namespaces/wire/configmaps?limit=-1')), all);
  assert.deepEqual(names(await s.request('GET', '/api/v1/namespaces/wire/configmaps?limit=0')), all);
  const badDelete = await s.request('DELETE', '/api/v1/namespaces/wire/configmaps/c?gracePeriodSeconds=soon');
  assert.equal(badDelete.status, 400);
  assert.equal(badDelete.json().message, 'strconv.ParseInt: parsing "soon": invalid syntax');
  const pretty = await s.request('GET', '/api/v1/namespaces/wire/configmaps/c?pretty=1');
  assert.match(pretty.text, /^\{\n {2}"kind": "ConfigMap"/);
  const dry = await s.request('GET', '/api/v1/namespaces/wire/configmaps?dryRun=Nope&dryRun=All');
  assert.equal(dry.status, 200); // reads take no dryRun
  const badDry = await s.request('POST', '/api/v1/namespaces/wire/configmaps?dryRun=All&dryRun=Nope', { body: { metadata: { name: 'e' } } });
  assert.equal(badDry.status, 400);
  assert.equal(badDry.json().message, 'dryRun: Unsupported value: "Nope": supported values: "All"');
  // ?watch=1 makes a GET a watch; ?watch=false does not.
  const list = await s.request('GET', '/api/v1/namespaces/wire/configmaps?watch=false');
  assert.equal(list.json().kind, 'ConfigMapList');
  // A named GET stays a get with ?watch=1 (kube's RequestInfo); the deprecated /watch/ path watches it.
  const named = await s.request('GET', '/api/v1/namespaces/wire/configmaps/c?watch=1&timeoutSeconds=1'); // (a watch would end after 1 s)
  assert.equal(named.status, 200);
  assert.equal(named.json().kind, 'ConfigMap');
  const watched = await s.request('GET', '/api/v1/watch/namespaces/wire/configmaps/c?timeoutSeconds=1');
  assert.equal(watched.status, 200);
  assert.deepEqual(watched.text.trim().split('\n').map((l) => [JSON.parse(l).type, JSON.parse(l).object.metadata.name]), [['ADDED', 'c']]);
});

test('timeout must be a Go duration on requests that are not long-running: 400 with time.ParseDuration\'s words; watches do not read it', async () => {
  const bad = async (value: string) => {
    const r = await s.request('GET', `/api/v1/namespaces/wire/configmaps?timeout=${encodeURIComponent(value)}`);
    assert.equal(r.status, 400, value);
    assert.equal(r.json().reason, 'BadRequest');
    return r.json().message.replace('invalid timeout specified in the request URL - ', '');
  };
  assert.equal(await bad('abc'), 'time: invalid duration "abc"');
  assert.equal(await bad('10'), 'time: missing unit in duration "10"');
  assert.equal(await bad('1d'), 'time: unknown unit "d" in duration "1d"');
  assert.equal(await bad('.s'), 'time: invalid duration ".s"');
  assert.equal(await bad('-'), 'time: invalid duration "-"');
  assert.equal(await bad('9999999999h'), 'time: invalid duration "9999999999h"');
  assert.equal(await bad('1é'), 'time: unknown unit "\\xc3\\xa9" in duration "1\\xc3\\xa9"');
  for (const ok of ['32s', '1m30s', '1.5h', '0', '-1s', '500ms', '2µs', '.5s']) {
    assert.equal((await s.request('GET', `/api/v1/namespaces/wire/configmaps?timeout=${encodeURIComponent(ok)}`)).status, 200, ok);
  }
  const watch = await s.request('GET', '/api/v1/namespaces/wire/configmaps?watch=1&timeout=abc&timeoutSeconds=1');
  assert.equal(watch.status, 200);
});

test('a Table watch sends the column definitions with its first event only (later ones: null, as kube)', async () => {
  const r = await s.request('GET', '/api/v1/namespaces/wire/configmaps?watch=1&timeoutSeconds=1', { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } });
  assert.equal(r.status, 200);
  const events = r.text.trim().split('\n').map((l) => JSON.parse(l));
  assert.ok(events.length >= 3);
  assert.deepEqual(events.map((e) => e.object.kind), events.map(() => 'Table'));
  assert.deepEqual(events[0].object.columnDefinitions.map((c: any) => c.name), ['Name', 'Data', 'Age']);
  for (const e of events.slice(1)) {
    assert.equal(e.object.columnDefinitions, null);
    assert.equal(e.object.rows.length, 1);
  }
});

test('JSON is written as Go writes it: <, > and & escaped for HTML, and U+2028/U+2029, in objects, lists, watch events, Tables and errors', async () => {
  const ns = '/api/v1/namespaces/wire';
  const rv = (await s.request('GET', `${ns}/configmaps`)).json().metadata.resourceVersion;
  const data = { cmd: 'a && b > /dev/null < x', sep: 'x\u2028y\u2029z' };
  const escaped = '"cmd":"a \\u0026\\u0026 b \\u003e /dev/null \\u003c x","sep":"x\\u2028y\\u2029z"';
  const created = await s.request('POST', `${ns}/configmaps`, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'html' }, data } });
  assert.equal(created.status, 201);
  assert.ok(created.text.includes(escaped), created.text);
  assert.deepEqual(created.json().data, data, 'the same JSON');
  assert.ok((await s.request('GET', `${ns}/configmaps/html`)).text.includes(escaped));
  assert.ok((await s.request('GET', `${ns}/configmaps`)).text.includes(escaped));
  assert.ok((await s.request('GET', `${ns}/configmaps/html?pretty=true`)).text.includes('"cmd": "a \\u0026\\u0026 b'));
  const watched = await s.request('GET', `${ns}/configmaps?watch=1&resourceVersion=${rv}&timeoutSeconds=1`);
  assert.ok(watched.text.includes(escaped), watched.text);
  // A Table's "<none>" cells, and an error message quoting the request.
  assert.equal((await s.request('POST', `${ns}/pods`, { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'html' }, spec: { containers: [{ name: 'c', image: 'i' }] } } })).status, 201);
  const table = await s.request('GET', `${ns}/pods/html`, { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } });
  assert.equal(table.status, 200);
  assert.ok(table.text.includes('"\\u003cnone\\u003e"') && !table.text.includes('<none>'), table.text);
  const bad = await s.request('POST', `${ns}/configmaps`, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'Bad<Name>' } } });
  assert.equal(bad.status, 422);
  assert.ok(bad.text.includes('Bad\\u003cName\\u003e') && !bad.text.includes('<'), bad.text);
});

test('the scale subresource answers a Table (kube printScale) and PartialObjectMetadata, on GET and on writes', async () => {
  const d = { metadata: { name: 'sc' }, spec: { replicas: 2, selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } } };
  assert.equal((await s.request('POST', '/apis/apps/v1/namespaces/wire/deployments', { body: d })).status, 201);
  const table = { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' };
  const got = await s.request('GET', '/apis/apps/v1/namespaces/wire/deployments/sc/scale', { headers: table });
  assert.equal(got.status, 200);
  const t = got.json();
  assert.equal(t.kind, 'Table');
  assert.deepEqual(t.columnDefinitions.map((c: any) => [c.name, c.type, c.format]), [['Name', 'string', ''], ['Desired', 'integer', ''], ['Available', 'integer', ''], ['Age', 'string', '']]);
  assert.deepEqual(t.rows[0].cells.slice(0, 3), ['sc', 2, 0]);
  assert.equal(t.rows[0].object.kind, 'PartialObjectMetadata');
  const put = await s.request('PUT', '/apis/apps/v1/namespaces/wire/deployments/sc/scale', { headers: table, body: { kind: 'Scale', apiVersion: 'autoscaling/v1', metadata: { name: 'sc' }, spec: { replicas: 4 } } });
  assert.equal(put.status, 200);
  assert.deepEqual(put.json().rows[0].cells.slice(0, 3), ['sc', 4, 0]);
  const meta = await s.request('GET', '/apis/apps/v1/namespaces/wire/deployments/sc/scale', { headers: { accept: 'application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io' } });
  assert.equal(meta.json().kind, 'PartialObjectMetadata');
  assert.equal(meta.json().metadata.name, 'sc');
});

test('DeleteOptions are validated as kube validates them: one 422 naming DeleteOptions, nothing deleted', async () => {
  assert.equal((await s.request('POST', '/api/v1/namespaces/wire/configmaps', { body: { metadata: { name: 'del-opts' } } })).status, 201);
  const both = await s.request('DELETE', '/api/v1/namespaces/wire/configmaps/del-opts', { body: { orphanDependents: false, propagationPolicy: 'Bogus' } });
  assert.equal(both.status, 422);
  assert.equal(
    both.json().message,
    'DeleteOptions.meta.k8s.io "" is invalid: [propagationPolicy: Invalid value: "Bogus": orphanDependents and deletionPropagation cannot be both set, propagationPolicy: Unsupported value: "Bogus": supported values: "Foreground", "Background", "Orphan", "nil"]',
  );
  assert.deepEqual(both.json().details.causes.map((c: any) => c.reason), ['FieldValueInvalid', 'FieldValueNotSupported']);
  // The query's orphanDependents counts as set too; a collection delete validates the same way.
  const query = await s.request('DELETE', '/api/v1/namespaces/wire/configmaps/del-opts?orphanDependents=true&propagationPolicy=Orphan');
  assert.equal(query.status, 422);
  assert.equal(query.json().details.causes[0].message, 'Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set');
  const collection = await s.request('DELETE', '/api/v1/namespaces/wire/configmaps?propagationPolicy=Later');
  assert.equal(collection.status, 422);
  assert.equal(collection.json().details.kind, 'DeleteOptions');
  assert.equal((await s.request('GET', '/api/v1/namespaces/wire/configmaps/del-opts')).status, 200);
  assert.equal((await s.request('DELETE', '/api/v1/namespaces/wire/configmaps/del-opts?orphanDependents=true')).status, 200);
});

test('write options are validated as kube validates Create/Update/PatchOptions: one 422 naming the options kind', async () => {
  const bad = await s.request('POST', '/api/v1/namespaces/wire/configmaps?fieldValidation=bogus', { body: { metadata: { name: 'opt' } } });
  assert.equal(bad.status, 422);
  assert.equal(bad.json().message, 'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "bogus": supported values: "", "Ignore", "Strict", "Warn"');
  assert.deepEqual(bad.json().details, { group: 'meta.k8s.io', kind: 'CreateOptions', causes: [{ reason: 'FieldValueNotSupported', message: 'Unsupported value: "bogus": supported values: "", "Ignore", "Strict", "Warn"', field: 'fieldValidation' }] });
  // Every problem is reported, one cause per unprintable character (its byte offset, Go's %#U).
  const manager = `${'m'.repeat(127)}\u00e9\u0001\u00a0`;
  const put = await s.request('PUT', `/api/v1/namespaces/wire/configmaps/c?fieldManager=${encodeURIComponent(manager)}`, { body: { metadata: { name: 'c' } } });
  assert.equal(put.status, 422);
  assert.equal(put.json().details.kind, 'UpdateOptions');
  const quoted = `"${'m'.repeat(127)}\u00e9\\x01\\u00a0"`;
  assert.deepEqual(put.json().details.causes.map((c: any) => [c.reason, c.field, c.message]), [
    ['FieldValueTooLong', 'fieldManager', 'Too long: may not be more than 128 bytes'],
    ['FieldValueInvalid', 'fieldManager', `Invalid value: ${quoted}: invalid character U+0001 (at position 129)`],
    ['FieldValueInvalid', 'fieldManager', `Invalid value: ${quoted}: invalid character U+00A0 (at position 130)`],
  ]);
  const patch = await s.request('PATCH', '/api/v1/namespaces/wire/configmaps/c?force=true&fieldValidation=x', { body: { data: { v: '2' } }, headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(patch.status, 422);
  assert.equal(patch.json().message, 'PatchOptions.meta.k8s.io "" is invalid: [force: Forbidden: may not be specified for non-apply patch, fieldValidation: Unsupported value: "x": supported values: "", "Ignore", "Strict", "Warn"]');
  assert.equal((await s.request('GET', '/api/v1/namespaces/wire/configmaps/c')).json().data.v, '1', 'nothing written');
  // An empty fieldValidation is the default (Warn); printable non-ASCII managers are fine; DELETE takes neither option.
  const ok = await s.request('POST', `/api/v1/namespaces/wire/configmaps?fieldValidation=&fieldManager=${encodeURIComponent('équipe')}`, { body: { metadata: { name: 'opt' }, bogus: 1 } });
  assert.equal(ok.status, 201);
  assert.equal(ok.headers.warning, `299 - "unknown field \\"bogus\\""`);
  assert.equal(ok.json().metadata.managedFields[0].manager, 'équipe');
  const del = await s.request('DELETE', '/api/v1/namespaces/wire/configmaps/opt?fieldValidation=bogus&fieldManager=%01');
  assert.equal(del.status, 200);
});

test('a DELETE body with dryRun makes the delete a dry run; a body that does not fit DeleteOptions is a 400 and deletes nothing', async () => {
  const r = await s.request('DELETE', '/api/v1/namespaces/wire/configmaps/d', { body: { kind: 'DeleteOptions', apiVersion: 'v1', dryRun: ['All'] } });
  assert.equal(r.status, 200);
  assert.equal((await s.request('GET', '/api/v1/namespaces/wire/configmaps/d')).status, 200);
  for (const [body, message] of [
    [{ dryRun: 'All' }, 'json: cannot unmarshal string into Go struct field DeleteOptions.dryRun of type []string'],
    [{ gracePeriodSeconds: '5' }, 'json: cannot unmarshal string into Go struct field DeleteOptions.gracePeriodSeconds of type int64'],
    [{ preconditions: { uid: 5 } }, 'json: cannot unmarshal number into Go struct field Preconditions.preconditions.uid of type string'],
  ] as const) {
    const bad = await s.request('DELETE', '/api/v1/namespaces/wire/configmaps/d', { body });
    assert.equal(bad.status, 400, JSON.stringify(body));
    assert.equal(bad.json().message, message);
  }
  assert.equal((await s.request('GET', '/api/v1/namespaces/wire/configmaps/d')).status, 200, 'still there');
});

test('written responses: Audit-Id and Cache-Control as the filters of kube set them, verbatim Content-Type, then Content-Length matching the body', async () => {
  const res = await rawRequest('POST', '/api/v1/namespaces/wire/configmaps', JSON.stringify({ metadata: { name: 'hdr' } }), { 'content-type': 'application/json' });
  assert.equal(res.status, 201);
  // (APF's X-Kubernetes-PF-* headers, on every classified response, aside: kube sorts them among the handler's)
  const withoutPf = (names: string[]) => names.filter((n) => !n.startsWith('x-kubernetes-pf-'));
  assert.deepEqual(withoutPf(res.headerNames).slice(0, 4), ['audit-id', 'cache-control', 'content-type', 'content-length']);
  assert.match(res.headers['audit-id'], /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(res.headers['cache-control'], 'no-cache, private');
  // The client's own audit ID is answered back; every request gets its own otherwise.
  assert.equal((await rawRequest('GET', '/api/v1/namespaces/wire/configmaps/hdr', undefined, { 'audit-id': 'trace-1' })).headers['audit-id'], 'trace-1');
  assert.notEqual((await rawRequest('GET', '/version', undefined, {})).headers['audit-id'], res.headers['audit-id']);
  assert.equal(res.headers['content-type'], 'application/json');
  assert.equal(Number(res.headers['content-length']), res.body.length);
  const yaml = await rawRequest('GET', '/api/v1/namespaces/wire/configmaps/hdr', undefined, { accept: 'application/yaml' });
  assert.deepEqual(withoutPf(yaml.headerNames).slice(2, 4), ['content-type', 'content-length']);
  assert.equal(yaml.headers['content-type'], 'application/yaml');
  const err = await rawRequest('GET', '/api/v1/namespaces/wire/configmaps/nope', undefined, {});
  assert.equal(err.status, 404);
  assert.deepEqual(withoutPf(err.headerNames).slice(0, 4), ['audit-id', 'cache-control', 'content-type', 'content-length']);
  assert.equal(err.headers['content-type'], 'application/json');
});

test('bodies arriving in many chunks are read whole; an oversized body is 413 and the connection stays usable', async () => {
  const big = { metadata: { name: 'big' }, data: { v: 'x'.repeat(600_000) } };
  const r = await rawRequest('POST', '/api/v1/namespaces/wire/configmaps', JSON.stringify(big), { 'content-type': 'application/json' }, 16 * 1024);
  assert.equal(r.status, 201);
  assert.equal(JSON.parse(r.body.toString()).data.v.length, 600_000);
  // Chunked (no Content-Length): the limit is enforced while reading.
  const tooBig = await rawRequest('POST', '/api/v1/namespaces/wire/configmaps', 'x'.repeat(3 * 1024 * 1024 + 10), { 'content-type': 'application/json', 'transfer-encoding': 'chunked' }, 64 * 1024);
  assert.equal(tooBig.status, 413);
  assert.equal(JSON.parse(tooBig.body.toString()).reason, 'RequestEntityTooLarge');
  const after = await s.request('GET', '/api/v1/namespaces/wire/configmaps/c');
  assert.equal(after.status, 200);
  const empty = await s.request('POST', '/api/v1/namespaces/wire/configmaps', { raw: '', headers: { 'content-type': 'application/json' } });
  assert.equal(empty.status, 400);
  assert.equal(empty.json().message, 'the object provided is unrecognized (must be of type ConfigMap): couldn\'t get version/kind; json parse error: unexpected end of JSON input (<empty>)');
});

test('a create or update without Content-Type is read as JSON (kubectl create --raw sends none); a patch without one is 415', async () => {
  const created = await s.request('POST', '/api/v1/namespaces/wire/configmaps', { raw: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'no-type' }, data: { a: '1' } }) });
  assert.equal(created.status, 201, created.text);
  const replaced = await s.request('PUT', '/api/v1/namespaces/wire/configmaps/no-type', { raw: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'no-type' }, data: { a: '2' } }) });
  assert.equal(replaced.status, 200, replaced.text);
  assert.equal(replaced.json().data.a, '2');
  const patched = await s.request('PATCH', '/api/v1/namespaces/wire/configmaps/no-type', { raw: '{"data":{"a":"3"}}' });
  assert.equal(patched.status, 415);
  assert.equal(patched.json().reason, 'UnsupportedMediaType');
});

test('HTTP/1.1 headers: 200 KB of them are served (kube allows 1 MiB), past 1 MiB the answer is 431', async () => {
  const ok = await s.request('GET', '/api/v1/namespaces/wire/configmaps/c', { headers: { 'x-padding': 'p'.repeat(200_000) } });
  assert.equal(ok.status, 200);
  assert.equal(ok.json().metadata.name, 'c');
  const tooLarge = await s.request('GET', '/api/v1/namespaces/wire/configmaps/c', { headers: { 'x-padding': 'p'.repeat((1 << 20) + 1) } });
  assert.equal(tooLarge.status, 431);
  assert.equal((await s.request('GET', '/api/v1/namespaces/wire/configmaps/c')).status, 200);
});

test('the field manager comes from the User-Agent up to its first slash, per request', async () => {
  for (const [ua, manager] of [['tool-one/1.2 (linux)', 'tool-one'], ['tool-two/3', 'tool-two'], ['tool-one/9', 'tool-one'], ['', 'unknown']]) {
    const name = `ua-${manager}-${Math.random().toString(36).slice(2, 7)}`;
    const r = await s.request('POST', '/api/v1/namespaces/wire/configmaps', { body: { metadata: { name }, data: { a: '1' } }, headers: { 'user-agent': ua } });
    assert.equal(r.status, 201);
    assert.equal(r.json().metadata.managedFields[0].manager, manager, ua);
  }
});

test('anonymous requests: public paths allowed, resources forbidden; the admin certificate is system:masters', async () => {
  assert.equal((await s.request('GET', '/version', { anonymous: true })).status, 200);
  const denied = await s.request('GET', '/api/v1/namespaces/wire/configmaps', { anonymous: true });
  assert.equal(denied.status, 403);
  assert.equal(denied.json().message, 'configmaps is forbidden: User "system:anonymous" cannot list resource "configmaps" in API group "" in the namespace "wire"');
  const path = await s.request('GET', '/api', { anonymous: true });
  assert.equal(path.status, 403);
  assert.equal(path.json().message, 'forbidden: User "system:anonymous" cannot get path "/api"');
  assert.deepEqual(path.json().details, {}); // kube's NewForbidden with no group, resource or name
  assert.deepEqual(denied.json().details, { kind: 'configmaps' });
  assert.equal((await s.request('GET', '/api/v1/namespaces/wire/configmaps')).status, 200);
});

/** One request on its own connection, the body written in chunks of `chunk` bytes; raw header order kept. */
async function rawRequest(method: string, path: string, body: string | undefined, headers: Record<string, string>, chunk = 0) {
  const https = await import('node:https');
  return new Promise<{ status: number; headers: Record<string, any>; headerNames: string[]; body: Buffer }>((resolve, reject) => {
    const h: Record<string, string> = { ...headers };
    if (body !== undefined && !h['transfer-encoding']) h['content-length'] = String(Buffer.byteLength(body));
    const req = https.request(`${s.url}${path}`, { method, headers: h, agent: false, ca: s.pki.caCertPem, cert: s.pki.adminCertPem, key: s.pki.adminKeyPem }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, headerNames: headerNames(undefined, res.rawHeaders), body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    if (body !== undefined) {
      const buf = Buffer.from(body);
      if (chunk > 0) for (let i = 0; i < buf.length; i += chunk) req.write(buf.subarray(i, i + chunk));
      else req.write(buf);
    }
    req.end();
  });
}
