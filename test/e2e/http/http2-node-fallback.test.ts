// --http2-implementation=node: HTTP/2 served by Node's node:http2 instead of hearth's own stack,
// through the same request handler. kubectl (HTTP/2) and @kubernetes/client-node (HTTP/1.1 beside
// it) work against it, a watch streams over it, and the listener's limits it can keep hold: an
// incomplete request body is answered 504 after the request timeout, and a connection over the
// limits is answered 429, then GOAWAY.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import * as k8s from '@kubernetes/client-node';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { RawH2, T, F, E, errorCode, statusOf } from '../../helpers/h2-frames.ts';

let s: TestServer;
/** A second server with small limits: a 1 s request timeout, one connection per client address. */
let strict: TestServer;

before(async () => {
  s = await startTestServer({ options: { http2Implementation: 'node' } });
  strict = await startTestServer({ options: { http2Implementation: 'node', connectionLimits: { requestTimeoutMs: 1000, maxConnectionsPerClient: 1 } } });
});

after(async () => {
  await s.stop();
  await strict.stop();
});

/** A raw HTTP/2 connection: the admin's, or with `anonymous` one without a client certificate (the admin is never refused for load). */
function raw(server: TestServer, opts: { anonymous?: boolean } = {}): Promise<RawH2> {
  const creds = opts.anonymous ? {} : { cert: server.pki.adminCertPem, key: server.pki.adminKeyPem };
  return RawH2.connect(server.url, { ca: server.pki.caCertPem, ...creds });
}

test('h2 connections are served by node:http2: it resets a request with a connection-specific header, where hearth’s stack answers 400', async () => {
  const c = await raw(s);
  try {
    c.request(1, 'GET', '/version', { extra: [['connection', 'keep-alive']] });
    const bad = await c.response(1, 'the request with a Connection header');
    assert.ok(bad.rst, c.summary());
    assert.equal(errorCode(bad.rst), E.PROTOCOL_ERROR);
    c.request(3, 'GET', '/version');
    const ok = await c.response(3, 'GET /version');
    assert.equal(statusOf(ok.headers[0]), 200);
    assert.equal(JSON.parse(ok.body.toString()).major, '1');
  } finally {
    c.close();
  }
});

test('kubectl works over it: apply, get, patch, delete', async () => {
  const manifest = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'via-node-h2', namespace: 'default' }, data: { a: '1' } });
  const applied = await s.kubectl(['apply', '-f', '-'], { input: manifest });
  assert.equal(applied.code, 0, applied.stderr);
  assert.match(applied.stdout, /configmap\/via-node-h2 created/);
  const patched = await s.kubectl(['patch', 'configmap', 'via-node-h2', '-p', '{"data":{"b":"2"}}']);
  assert.equal(patched.code, 0, patched.stderr);
  const got = await s.kubectl(['get', 'configmap', 'via-node-h2', '-o', 'json']);
  assert.equal(got.code, 0, got.stderr);
  assert.deepEqual(JSON.parse(got.stdout).data, { a: '1', b: '2' });
  const listed = await s.kubectl(['get', 'namespaces']);
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(listed.stdout, /kube-system/);
  const deleted = await s.kubectl(['delete', 'configmap', 'via-node-h2']);
  assert.equal(deleted.code, 0, deleted.stderr);
});

test('a watch streams over it', async () => {
  const session = http2.connect(s.url, { ca: s.pki.caCertPem, cert: s.pki.adminCertPem, key: s.pki.adminKeyPem });
  try {
    // (only its own ConfigMap: the namespace's kube-root-ca.crt would be the initial ADDED)
    const stream = session.request({ ':path': '/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=20&fieldSelector=metadata.name%3Dwatched', accept: 'application/json' });
    const events: { type: string; object: { metadata: { name: string } } }[] = [];
    const twoEvents = new Promise<void>((resolve, reject) => {
      let buf = '';
      stream.on('data', (d: Buffer) => {
        buf += d.toString();
        for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
          events.push(JSON.parse(buf.slice(0, nl)));
          buf = buf.slice(nl + 1);
        }
        if (events.length >= 2) resolve();
      });
      stream.on('error', reject);
    });
    await new Promise((resolve) => stream.once('response', resolve));
    const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'watched' }, data: { n: '1' } };
    assert.equal((await s.request('POST', '/api/v1/namespaces/default/configmaps', { body })).status, 201);
    assert.equal((await s.request('DELETE', '/api/v1/namespaces/default/configmaps/watched')).status, 200);
    await twoEvents;
    assert.deepEqual(events.map((e) => [e.type, e.object.metadata.name]), [['ADDED', 'watched'], ['DELETED', 'watched']]);
    stream.close();
  } finally {
    session.destroy();
  }
});

test('@kubernetes/client-node works against it', async () => {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(s.kubeconfigPath);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const namespace = 'default';
  const created = await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'cn-node-h2' }, data: { a: '1' } } });
  assert.ok(created.metadata?.uid);
  const read = await core.readNamespacedConfigMap({ name: 'cn-node-h2', namespace });
  assert.equal(read.data?.a, '1');
  await assert.rejects(core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'cn-node-h2' } } }), (e: { code?: number }) => e.code === 409);
  await core.deleteNamespacedConfigMap({ name: 'cn-node-h2', namespace });
});

test('limits it keeps: an incomplete body is answered 504 after the request timeout, then the stream is reset NO_ERROR', async () => {
  const c = await raw(strict);
  try {
    c.request(1, 'POST', '/api/v1/namespaces/default/configmaps', { endStream: false, extra: [['content-type', 'application/json'], ['content-length', '100']] });
    const started = Date.now();
    const r = await c.response(1, 'the answer to an incomplete body', 5000);
    assert.ok(Date.now() - started >= 900, `answered after ${Date.now() - started} ms`);
    assert.equal(statusOf(r.headers[0]), 504);
    assert.equal(JSON.parse(r.body.toString()).message, 'Timeout: request did not complete within the allotted timeout');
    // the answer ends (END_STREAM), then the request's stream is reset
    assert.ok(!r.rst && c.frames.some((f) => f.streamId === 1 && f.type === T.DATA && f.flags & F.END_STREAM), c.summary());
    const rst = await c.waitFor((f) => f.streamId === 1 && f.type === T.RST_STREAM, 'RST_STREAM after the answer');
    assert.equal(errorCode(rst), E.NO_ERROR);
  } finally {
    c.close();
  }
});

test('limits it keeps: a connection over the limits is answered 429, then GOAWAY', async () => {
  const first = await raw(strict, { anonymous: true });
  try {
    await first.ping();
    const second = await raw(strict, { anonymous: true });
    try {
      second.request(1, 'GET', '/version');
      const r = await second.response(1, 'the refused connection’s first request');
      assert.equal(statusOf(r.headers[0]), 429);
      assert.equal(JSON.parse(r.body.toString()).message, 'Too many connections from 127.0.0.1, please try again later.');
      const goAway = await second.waitFor((f) => f.type === T.GOAWAY, 'GOAWAY');
      assert.equal(errorCode(goAway), E.NO_ERROR);
    } finally {
      second.close();
    }
  } finally {
    first.close();
  }
});
