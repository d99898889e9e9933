// The HTTP path's fast paths against their references: parseRequestInfo against the original
// split-and-filter parser, query parameters from the raw query string against koa's WHATWG URL,
// the synchronous authentication middleware against promise-returning authenticators, and the
// body reader on chunked and oversized bodies.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import Koa from 'koa';
import { parseRequestInfo, queryOf, type RequestInfo } from '../../../server/http/request-info.ts';
import { authenticationMiddleware, type Authenticator, type AuthResult } from '../../../server/authentication/authenticator.ts';
import { authorizationMiddleware, systemMastersAuthorizer } from '../../../server/authorization/authorizer.ts';
import { readBody, MAX_BODY_BYTES, mediaTypeOf, decodeAs, decodeBody, type Encoding } from '../../../server/http/negotiation.ts';
import { ApiError } from '../../../server/errors.ts';
import { ANONYMOUS } from '../../../server/authentication/user.ts';

/** The parser as it was before the fast path: the reference. */
function referenceRequestInfo(method: string, path: string, query: URLSearchParams): RequestInfo {
  const info: RequestInfo = { isResourceRequest: false, path, verb: method.toLowerCase(), apiPrefix: '', apiGroup: '', apiVersion: '', namespace: '', resource: '', subresource: '', name: '', extraParts: [] };
  const parts = path.split('/').filter((p) => p !== '');
  if (parts.length === 0) return info;
  let rest: string[];
  if (parts[0] === 'api') {
    if (parts.length < 3) return info;
    info.apiPrefix = 'api';
    info.apiVersion = parts[1];
    rest = parts.slice(2);
  } else if (parts[0] === 'apis') {
    if (parts.length < 4) return info;
    info.apiPrefix = 'apis';
    info.apiGroup = parts[1];
    info.apiVersion = parts[2];
    rest = parts.slice(3);
  } else return info;
  info.isResourceRequest = true;
  let watchPath = false;
  if (rest[0] === 'watch') {
    watchPath = true;
    rest = rest.slice(1);
  }
  if (rest[0] === 'namespaces' && rest.length > 1) {
    info.namespace = decodeURIComponent(rest[1]);
    if (rest.length > 2 && !['status', 'finalize'].includes(rest[2])) rest = rest.slice(2);
  }
  info.resource = rest[0] ?? '';
  if (rest.length > 1) info.name = decodeURIComponent(rest[1]);
  if (rest.length > 2) info.subresource = rest[2];
  if (rest.length > 3) info.extraParts = rest.slice(3);
  const w = query.get('watch');
  // kube's boolean parameter: present and neither "0" nor "false" (any case), the empty value included
  // kube's RequestInfoFactory: only a GET without a name becomes a watch by the parameter.
  const isWatch = watchPath || (!info.name && w !== null && w !== '0' && w.toLowerCase() !== 'false');
  const verbs: Record<string, string> = { POST: 'create', PUT: 'update', PATCH: 'patch' };
  if (method === 'GET' || method === 'HEAD') info.verb = isWatch ? 'watch' : info.name ? 'get' : 'list';
  else if (method === 'DELETE') info.verb = info.name ? 'delete' : 'deletecollection';
  else info.verb = verbs[method] ?? method.toLowerCase();
  return info;
}

const PATHS = [
  '', '/', '//', '*', 'api/v1/pods', '/api', '/api/', '/api/v1', '/api/v1/', '/api//v1', '/apis', '/apis/apps', '/apis/apps/v1', '/apis/apps/v1/',
  '/api/v1/pods', '/api/v1/pods/', '/api/v1/namespaces', '/api/v1/namespaces/', '/api/v1/namespaces/default', '/api/v1/namespaces/default/',
  '/api/v1/namespaces/default/status', '/api/v1/namespaces/default/finalize', '/api/v1/namespaces/default/finalize/x',
  '/api/v1/namespaces/default/configmaps', '/api/v1/namespaces/default/configmaps/x', '/api/v1/namespaces/default/configmaps/x/status',
  '/api/v1/namespaces/default/pods/p/exec/a/b', '/api/v1/namespaces/d%65fault/configmaps/a%2Fb', '/api/v1/namespaces/default/configmaps/%E2%9C%93',
  '/api/v1/watch/pods', '/api/v1/watch/namespaces/default/pods', '/api/v1/watch/namespaces/default/pods/p', '/api/v1/watch', '/api/v1/watch/',
  '/apis/apps/v1/deployments', '/apis/apps/v1/namespaces/ns/deployments/d/scale', '/apis/apps/v1/watch/namespaces/ns/deployments',
  '//api//v1//namespaces//default//configmaps//x//', '/api/v1/namespaces//configmaps', '/apis/g.example/v1beta1/namespaces/n/widgets/w/status/extra',
  '/API/v1/pods', '/version', '/healthz/ping', '/openapi/v3/apis/apps/v1', '/api/v1/namespaces/default/configmaps/x?y',
];
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'PROPFIND'];
const QUERIES = ['', 'watch=1', 'watch=true', 'watch=True', 'watch=yes', 'watch=false', 'watch=FALSE', 'watch=0', 'watch=', 'watch=1&watch=0', 'watch=0&watch=1'];

test('parseRequestInfo matches the reference parser on every path, method and watch parameter', () => {
  let n = 0;
  for (const path of PATHS) {
    for (const method of METHODS) {
      for (const q of QUERIES) {
        const got = parseRequestInfo(method, path, new URLSearchParams(q));
        const want = referenceRequestInfo(method, path, new URLSearchParams(q));
        assert.deepEqual({ ...got, extraParts: [...got.extraParts] }, want, `${method} ${path}?${q}`);
        n++;
      }
    }
  }
  assert.equal(n, PATHS.length * METHODS.length * QUERIES.length);
  // Malformed escapes still throw (the request becomes a 500, as before).
  assert.throws(() => parseRequestInfo('GET', '/api/v1/namespaces/%E0%A4%A/pods', new URLSearchParams()), URIError);
});

test('queryOf reads the same parameters as koa ctx.URL.searchParams, once per request', () => {
  const app = new Koa();
  const urls = [
    '/x', '/x?', '/x?a=1', '/x?a=1&a=2&b', '/x?labelSelector=a+in+(b,c)&limit=5', '/x?fieldSelector=metadata.name%3Dfoo%2Cbar',
    '/x?q=%ZZ&r=%', "/x?s='quoted'&t=\"dq\"&u=<>", '/x?v=caf\u00e9&w=%C3%A9', '/x?a=1#frag', '/x?#frag', '/x?a=b=c&&d==', '/x?%61=1',
    '/x/y?dryRun=All&dryRun=All&fieldManager=m&fieldValidation=Strict&pretty=true', '//x//?a=1',
  ];
  for (const url of urls) {
    const req = { url, headers: { host: 'h:6443' }, socket: {}, httpVersionMajor: 1 } as unknown as IncomingMessage;
    const ctx = app.createContext(req, {} as any);
    const want = [...ctx.URL.searchParams.entries()];
    const q = queryOf(ctx);
    assert.deepEqual([...q.entries()], want, url);
    assert.equal(queryOf(ctx), q, 'cached per request');
  }
});

const fakeCtx = () => ({ req: {}, state: {} as Record<string, any> }) as unknown as Koa.Context;
const user = (name: string, groups: string[]) => ({ name, uid: '', groups, extra: {} });

test('authentication: synchronous and promise-returning authenticators, in order, with the same outcomes', async () => {
  const sync = (r: AuthResult): Authenticator => ({ name: 's', authenticate: () => r });
  const later = (r: AuthResult): Authenticator => ({ name: 'p', authenticate: () => Promise.resolve(r) });
  const cases: { chain: Authenticator[]; anonymous: boolean; want: unknown }[] = [
    { chain: [sync({ user: user('a', ['g', 'system:authenticated']) })], anonymous: true, want: user('a', ['g', 'system:authenticated']) },
    { chain: [sync({ user: user('a', ['g']) })], anonymous: true, want: user('a', ['g', 'system:authenticated']) },
    { chain: [sync(undefined), later({ user: user('b', []) })], anonymous: true, want: user('b', ['system:authenticated']) },
    { chain: [later(undefined), sync(undefined), later({ user: user('c', []) }), sync({ user: user('d', []) })], anonymous: false, want: user('c', ['system:authenticated']) },
    { chain: [later(undefined), sync({ user: user('d', []) })], anonymous: false, want: user('d', ['system:authenticated']) },
    { chain: [sync(undefined), later(undefined)], anonymous: true, want: ANONYMOUS },
    { chain: [], anonymous: true, want: ANONYMOUS },
    { chain: [], anonymous: false, want: 401 },
    { chain: [later(undefined)], anonymous: false, want: 401 },
    // kube's union: an error does not stop the chain; a user named later wins, else the error is a 401.
    { chain: [sync({ error: 'bad' }), sync({ user: user('e', []) })], anonymous: true, want: user('e', ['system:authenticated']) },
    { chain: [sync({ error: 'bad' }), later({ user: user('f', []) })], anonymous: true, want: user('f', ['system:authenticated']) },
    { chain: [sync({ error: 'bad' }), sync(undefined)], anonymous: true, want: 401 },
    { chain: [later({ error: 'bad' })], anonymous: true, want: 401 },
    { chain: [later(undefined), sync({ error: 'bad' })], anonymous: true, want: 401 },
  ];
  for (const [i, c] of cases.entries()) {
    const ctx = fakeCtx();
    let nextCalls = 0;
    const mw = authenticationMiddleware(c.chain, { anonymous: c.anonymous });
    const outcome = await Promise.resolve()
      .then(() => mw(ctx, async () => void nextCalls++))
      .then(() => ctx.state.user, (e) => (e instanceof ApiError ? e.code : e));
    assert.deepEqual(outcome, c.want, `case ${i}`);
    assert.equal(nextCalls, typeof c.want === 'number' ? 0 : 1, `case ${i}`);
  }
});

test('authorization: allows system:masters, denies others with the Forbidden Status, passes next()\'s promise on', async () => {
  const mw = authorizationMiddleware([systemMastersAuthorizer]);
  const ri = parseRequestInfo('GET', '/api/v1/namespaces/n/pods/p', new URLSearchParams());
  const admin = { ...fakeCtx(), method: 'GET', state: { requestInfo: ri, user: user('admin', ['system:masters', 'system:authenticated']) } } as unknown as Koa.Context;
  const marker = Promise.resolve('downstream');
  assert.equal(await mw(admin, () => marker), 'downstream');
  const other = { ...fakeCtx(), method: 'GET', state: { requestInfo: ri, user: user('bob', ['system:authenticated']) } } as unknown as Koa.Context;
  await assert.rejects(Promise.resolve().then(() => mw(other, async () => {})), (e: ApiError) => e.code === 403 && e.message === 'pods "p" is forbidden: User "bob" cannot get resource "pods" in API group "" in the namespace "n"');
});

function bodyStream(chunks: Buffer[], headers: Record<string, string> = {}): IncomingMessage {
  const r = Readable.from(chunks, { objectMode: false }) as unknown as IncomingMessage;
  (r as any).headers = headers;
  return r;
}

test('readBody: one chunk as is, many chunks joined, an empty body, oversized by header or by content', async () => {
  const one = Buffer.from('{"a":1}');
  assert.equal(await readBody(bodyStream([one])), one);
  const parts = Array.from({ length: 50 }, (_, i) => Buffer.from(`chunk-${i};`));
  assert.deepEqual(await readBody(bodyStream(parts)), Buffer.concat(parts));
  assert.equal((await readBody(bodyStream([]))).length, 0);
  const tooLarge = (e: ApiError) => e.code === 413 && e.message === `Request entity too large: limit is ${MAX_BODY_BYTES}`;
  await assert.rejects(readBody(bodyStream([one], { 'content-length': String(MAX_BODY_BYTES + 1) })), tooLarge);
  const big = Array.from({ length: 4 }, () => Buffer.alloc(1024 * 1024, 0x61));
  const stream = bodyStream(big);
  await assert.rejects(readBody(stream), tooLarge);
  // The rest is drained, not left to stall the connection.
  if (!stream.readableEnded) await new Promise((r) => stream.once('end', r));
  assert.equal(stream.readableEnded, true);
  const ended = bodyStream([one]);
  await readBody(ended);
  assert.equal((await readBody(ended)).length, 0, 'an ended request reads as empty');
});

test('decodeBody gives the value, the text it parsed and whether YAML was JSON text', () => {
  // [encoding, body, value, YAML read as JSON]
  const cases: [Encoding, string | Buffer, unknown, boolean][] = [
    ['json', '{"a":1,"b":[1,2,{"c":"\u00e9"}]}', { a: 1, b: [1, 2, { c: '\u00e9' }] }, true],
    ['json', '{"a":1,"a":2}', { a: 2 }, true],
    ['json', '"just a string"', 'just a string', true],
    ['yaml', '{"kind":"ConfigMap","data":{"k":"v"}}', { kind: 'ConfigMap', data: { k: 'v' } }, true],
    ['yaml', '  {"a": 1}', { a: 1 }, true],
    ['yaml', '{a: 1, b: [x, z]}', { a: 1, b: ['x', 'z'] }, false],
    // YAML 1.1, as go-yaml v2 reads it for kube: y, yes and on are booleans, 0755 octal; timestamps stay strings.
    ['yaml', 'a: [y, yes, on, "y"]\nb: 0755\nc: 2001-12-14\nd: 1:20\n', { a: [true, true, true, 'y'], b: 493, c: '2001-12-14', d: '1:20' }, false],
    ['yaml', 'kind: ConfigMap\ndata:\n  k: v\n', { kind: 'ConfigMap', data: { k: 'v' } }, false],
    ['yaml', 'a: 1\na: 2\n', { a: 2 }, false],
    ['yaml', '', null, false],
    ['cbor', Buffer.from([0xd9, 0xd9, 0xf7, 0xa1, 0x61, 0x61, 0x01]), { a: 1 }, false],
    ['cbor', Buffer.from([0xa1, 0x61, 0x62, 0x02]), { b: 2 }, false],
  ];
  for (const [enc, raw, value, jsonText] of cases) {
    const body = Buffer.isBuffer(raw) ? raw : Buffer.from(raw);
    const d = decodeBody(body, enc);
    assert.deepEqual(d.value, value, `${enc} ${raw}`);
    assert.deepEqual(decodeAs(body, enc), value);
    assert.equal(d.text, enc === 'cbor' ? undefined : body.toString('utf8'));
    if (enc === 'yaml') assert.equal(d.jsonText, jsonText, `${raw}`);
  }
  for (const [enc, bad] of [['json', '{"a":'], ['yaml', 'a: [1'], ['cbor', '\xff']] as const) {
    assert.throws(() => decodeBody(Buffer.from(bad), enc), (e: ApiError) => e.code === 400 && e.message.startsWith(`error decoding ${enc.toUpperCase()} body: `));
  }
});

test('mediaTypeOf (cached per header) matches parsing every time', () => {
  const reference = (ct: string | undefined) => (ct ?? '').split(';')[0].trim().toLowerCase();
  const headers = [undefined, '', 'application/json', 'Application/JSON; charset=utf-8', ' application/yaml ;x=y', 'application/apply-patch+yaml', ';', 'text/plain;', 'application/vnd.kubernetes.protobuf'];
  for (let round = 0; round < 2; round++) for (const h of headers) assert.equal(mediaTypeOf(h), reference(h), String(h));
});
