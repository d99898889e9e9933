// hearth serves HTTP/2 (ALPN h2) with HTTP/1.1 as the fallback, as kube-apiserver does: requests
// and watches over h2 with node:http2 and the admin client certificate, many watch streams on one
// connection, x509 identities per connection, a slow stream reset without hurting the others, and
// close() ending open sessions at once.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import https from 'node:https';
import tls from 'node:tls';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { issueClientCertificate, ensurePki } from '../../../server/pki/certificates.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let s: TestServer;
const sessions: http2.ClientHttp2Session[] = [];

before(async () => {
  s = await startTestServer();
  await s.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'h2' } } });
});

after(async () => {
  for (const c of sessions) c.destroy();
  await s.stop();
});

/** An HTTP/2 session with the admin certificate, another identity's, or none (anonymous). */
function connect(creds: { cert: string; key: string } | null = { cert: s.pki.adminCertPem, key: s.pki.adminKeyPem }): Promise<http2.ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const c = http2.connect(s.url, { ca: s.pki.caCertPem, ...(creds ?? {}) });
    sessions.push(c);
    // Ready once the server's SETTINGS arrived (its stream limit is known then).
    c.once('remoteSettings', () => resolve(c));
    c.once('error', reject);
  });
}

interface H2Response {
  status: number;
  headers: http2.IncomingHttpHeaders;
  text: string;
  json(): any;
}

function h2request(c: http2.ClientHttp2Session, method: string, path: string, body?: unknown): Promise<H2Response> {
  return new Promise((resolve, reject) => {
    const headers: http2.OutgoingHttpHeaders = { ':method': method, ':path': path, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const req = c.request(headers, { endStream: body === undefined });
    let head: http2.IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    req.on('response', (h) => (head = h));
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      resolve({ status: Number(head[':status']), headers: head, text, json: () => JSON.parse(text) });
    });
    req.on('error', reject);
    if (body !== undefined) req.end(JSON.stringify(body));
  });
}

interface Watch {
  stream: http2.ClientHttp2Stream;
  headers: Promise<http2.IncomingHttpHeaders>;
  events: any[];
  /** Resolves once `n` events arrived (rejects if the stream closes first). */
  waitFor(n: number, ms?: number): Promise<any[]>;
  /** Resolves with the RST_STREAM code (0 for a clean end) when the stream closes. */
  closed: Promise<number>;
}

function h2watch(c: http2.ClientHttp2Session, path: string): Watch {
  const stream = c.request({ ':path': path, accept: 'application/json' });
  const events: any[] = [];
  let line = '';
  const waiters = new Set<() => void>();
  stream.setEncoding('utf8');
  stream.on('data', (d: string) => {
    line += d;
    let nl: number;
    while ((nl = line.indexOf('\n')) >= 0) {
      events.push(JSON.parse(line.slice(0, nl)));
      line = line.slice(nl + 1);
    }
    for (const w of waiters) w();
  });
  const closed = new Promise<number>((resolve) => stream.on('close', () => resolve(stream.rstCode ?? 0)));
  closed.then(() => {
    for (const w of waiters) w();
  });
  stream.on('error', () => {});
  let isClosed = false;
  closed.then(() => (isClosed = true));
  return {
    stream,
    headers: new Promise((resolve) => stream.once('response', resolve)),
    events,
    closed,
    waitFor(n, ms = 10_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => done(new Error(`timed out with ${events.length} of ${n} events`)), ms);
        const check = () => {
          if (events.length >= n) done();
          else if (isClosed) done(new Error(`stream closed after ${events.length} of ${n} events`));
        };
        const done = (err?: Error) => {
          clearTimeout(timer);
          waiters.delete(check);
          if (err) reject(err);
          else resolve(events);
        };
        waiters.add(check);
        check();
      });
    },
  };
}

/** Fails instead of hanging when `p` does not settle in time. */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)))]).finally(() => clearTimeout(timer));
}

const configMap = (name: string, data: Record<string, string> = { k: 'v' }) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'h2' }, data });

async function listRv(c: http2.ClientHttp2Session, path: string): Promise<string> {
  const r = await h2request(c, 'GET', path);
  assert.equal(r.status, 200, r.text);
  return r.json().metadata.resourceVersion;
}

test('ALPN: h2 is chosen when offered, http/1.1 otherwise', async () => {
  const u = new URL(s.url);
  const alpn = (protocols: string[] | undefined) =>
    new Promise<string | false>((resolve, reject) => {
      const sock = tls.connect({ host: u.hostname, port: Number(u.port), ca: s.pki.caCertPem, servername: 'localhost', ALPNProtocols: protocols }, () => {
        resolve(sock.alpnProtocol ?? false);
        sock.destroy();
      });
      sock.on('error', reject);
    });
  assert.equal(await alpn(['h2', 'http/1.1']), 'h2');
  assert.equal(await alpn(['http/1.1']), 'http/1.1');
  assert.equal(await alpn(undefined), false);
});

test('the server advertises kube-apiserver’s HTTP/2 settings', async () => {
  const c = await connect();
  assert.equal(c.remoteSettings.maxConcurrentStreams, 100);
  assert.equal(c.remoteSettings.initialWindowSize, 256 * 1024);
  assert.equal(c.alpnProtocol, 'h2');
});

test('requests over HTTP/2: get, create, patch, errors as Status; no connection-specific headers', async () => {
  const c = await connect();
  const list = await h2request(c, 'GET', '/api/v1/namespaces');
  assert.equal(list.status, 200, list.text);
  assert.equal(list.headers['content-type'], 'application/json');
  assert.ok(list.json().items.some((n: any) => n.metadata.name === 'h2'));
  for (const h of ['connection', 'transfer-encoding', 'keep-alive']) assert.equal(list.headers[h], undefined, h);

  const created = await h2request(c, 'POST', '/api/v1/namespaces/h2/configmaps', configMap('over-h2'));
  assert.equal(created.status, 201, created.text);
  assert.equal(created.json().metadata.name, 'over-h2');
  const patched = await new Promise<H2Response>((resolve, reject) => {
    const req = c.request({ ':method': 'PATCH', ':path': '/api/v1/namespaces/h2/configmaps/over-h2', 'content-type': 'application/merge-patch+json', accept: 'application/json' });
    const chunks: Buffer[] = [];
    let head: http2.IncomingHttpHeaders = {};
    req.on('response', (h) => (head = h));
    req.on('data', (d) => chunks.push(d));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString();
      resolve({ status: Number(head[':status']), headers: head, text, json: () => JSON.parse(text) });
    });
    req.on('error', reject);
    req.end(JSON.stringify({ data: { k: 'patched' } }));
  });
  assert.equal(patched.status, 200, patched.text);
  assert.equal(patched.json().data.k, 'patched');

  const missing = await h2request(c, 'GET', '/api/v1/namespaces/h2/configmaps/nope');
  assert.equal(missing.status, 404);
  assert.equal(missing.json().kind, 'Status');
  assert.equal(missing.json().reason, 'NotFound');
  // HEAD and 304 paths through Koa over the compat API.
  const version = await h2request(c, 'GET', '/version');
  assert.equal(version.status, 200);
  assert.equal(version.json().major, '1');
});

test('a watch over HTTP/2 streams each event as it commits, then ends with a bookmark at timeoutSeconds', async () => {
  const c = await connect();
  const rv = await listRv(c, '/api/v1/namespaces/h2/configmaps');
  const w = h2watch(c, `/api/v1/namespaces/h2/configmaps?watch=1&resourceVersion=${rv}&allowWatchBookmarks=true&timeoutSeconds=2`);
  const head = await w.headers;
  assert.equal(head[':status'], 200);
  assert.equal(head['content-type'], 'application/json');
  assert.equal(head['transfer-encoding'], undefined);
  await h2request(c, 'POST', '/api/v1/namespaces/h2/configmaps', configMap('watched'));
  const [added] = await w.waitFor(1);
  assert.equal(added.type, 'ADDED');
  assert.equal(added.object.metadata.name, 'watched');
  await h2request(c, 'DELETE', '/api/v1/namespaces/h2/configmaps/watched');
  const events = await w.waitFor(2);
  assert.equal(events[1].type, 'DELETED');
  // timeoutSeconds: a clean END_STREAM (no reset) after a final bookmark at the last delivered version.
  assert.equal(await within(w.closed, 10_000, 'the watch did not end at timeoutSeconds'), 0);
  const last = w.events[w.events.length - 1];
  assert.equal(last.type, 'BOOKMARK');
  assert.equal(last.object.metadata.resourceVersion, events[1].object.metadata.resourceVersion);
});

test('100 concurrent watch streams on one connection each receive every event, in order', async () => {
  const c = await connect();
  const writer = await connect();
  const rv = await listRv(c, '/api/v1/namespaces/h2/configmaps');
  const watches = Array.from({ length: 100 }, () => h2watch(c, `/api/v1/namespaces/h2/configmaps?watch=1&resourceVersion=${rv}&labelSelector=fan%3Dout`));
  await Promise.all(watches.map((w) => w.headers));
  const created: string[] = [];
  // Concurrent creates: several land in one commit batch and reach the streams in one write.
  await Promise.all(
    Array.from({ length: 20 }, async (_, i) => {
      // The watches take all 100 streams the server allows on their connection: writes use another, as a Go client would.
      const r = await h2request(writer, 'POST', '/api/v1/namespaces/h2/configmaps', { ...configMap(`fan-${i}`), metadata: { name: `fan-${i}`, namespace: 'h2', labels: { fan: 'out' } } });
      assert.equal(r.status, 201, r.text);
      created.push(r.json().metadata.resourceVersion);
    }),
  );
  created.sort((a, b) => Number(a) - Number(b));
  for (const w of watches) {
    const events = await w.waitFor(20);
    assert.deepEqual(events.map((e) => e.object.metadata.resourceVersion), created);
    assert.ok(events.every((e) => e.type === 'ADDED'));
  }
  for (const w of watches) w.stream.close();
});

test('a watch from a resourceVersion not yet reached resumes when it commits, and gets that event once', async () => {
  // The watch waits for the version, then replays it from the log; the commit's batch reaches
  // the resource's watchers (here a bystander's) after that, and must not bring the event again.
  const c = await connect();
  const bystander = h2watch(c, '/api/v1/namespaces/default/configmaps?watch=1');
  await bystander.headers;
  const rv = Number(await listRv(c, '/api/v1/namespaces/h2/configmaps'));
  const w = h2watch(c, `/api/v1/namespaces/h2/configmaps?watch=1&resourceVersion=${rv + 1}&labelSelector=future%3Dyes`);
  await new Promise((r) => setTimeout(r, 100));
  const names = ['future-0', 'future-1'];
  for (const name of names) {
    const r = await h2request(c, 'POST', '/api/v1/namespaces/h2/configmaps', { ...configMap(name), metadata: { name, namespace: 'h2', labels: { future: 'yes' } } });
    assert.equal(r.status, 201, r.text);
  }
  assert.equal((await w.headers)[':status'], 200);
  await w.waitFor(1);
  await new Promise((r) => setTimeout(r, 300));
  // Events after rv+1 only: future-1 (rv+2), exactly once.
  assert.deepEqual(w.events.map((e) => [e.type, e.object.metadata.name]), [['ADDED', 'future-1']]);
  w.stream.close();
  bystander.stream.close();
});

test('x509 identities over HTTP/2: admin, another user, anonymous, an untrusted CA — each per connection', async () => {
  const alice = await issueClientCertificate(s.pki, { commonName: 'alice', organizations: ['devs'] });
  const ca2Dir = mkdtempSync(join(tmpdir(), 'hearth-h2-ca-'));
  try {
    const other = await ensurePki(ca2Dir);
    const asAdmin = await connect();
    const asAlice = await connect({ cert: alice.certPem, key: alice.keyPem! });
    const asNobody = await connect(null);
    const asStranger = await connect({ cert: other.adminCertPem, key: other.adminKeyPem });
    // Interleaved on four connections: each keeps its own identity.
    for (let i = 0; i < 2; i++) {
      assert.equal((await h2request(asAdmin, 'GET', '/api/v1/namespaces')).status, 200);
      const denied = await h2request(asAlice, 'GET', '/api/v1/namespaces');
      assert.equal(denied.status, 403);
      assert.match(denied.json().message, /User "alice" cannot list resource "namespaces"/);
      const anon = await h2request(asNobody, 'GET', '/api/v1/namespaces');
      assert.equal(anon.status, 403);
      assert.match(anon.json().message, /User "system:anonymous"/);
      const stranger = await h2request(asStranger, 'GET', '/api/v1/namespaces');
      assert.equal(stranger.status, 401);
      assert.equal(stranger.json().reason, 'Unauthorized');
    }
    // A watch is authenticated the same way.
    const w = h2watch(asAlice, '/api/v1/namespaces/h2/configmaps?watch=1');
    assert.equal((await w.headers)[':status'], 403);
  } finally {
    rmSync(ca2Dir, { recursive: true, force: true });
  }
});

test('HTTP/1.1 still works: requests and a chunked watch', async () => {
  const agent = new https.Agent({ ca: s.pki.caCertPem, cert: s.pki.adminCertPem, key: s.pki.adminKeyPem });
  try {
    const get = (path: string) =>
      new Promise<{ version: string; status: number; headers: Record<string, any>; body: string }>((resolve, reject) => {
        https.get(`${s.url}${path}`, { agent, headers: { accept: 'application/json' } }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (d) => (body += d));
          res.on('end', () => resolve({ version: res.httpVersion, status: res.statusCode!, headers: res.headers, body }));
        }).on('error', reject);
      });
    const r = await get('/api/v1/namespaces/h2/configmaps');
    assert.equal(r.version, '1.1');
    assert.equal(r.status, 200);
    const rv = JSON.parse(r.body).metadata.resourceVersion;
    const events: any[] = [];
    const head = await new Promise<Record<string, any>>((resolve, reject) => {
      https
        .get(`${s.url}/api/v1/namespaces/h2/configmaps?watch=1&resourceVersion=${rv}&timeoutSeconds=1`, { agent, headers: { accept: 'application/json' } }, (res) => {
          let line = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => {
            line += d;
            let nl: number;
            while ((nl = line.indexOf('\n')) >= 0) {
              events.push(JSON.parse(line.slice(0, nl)));
              line = line.slice(nl + 1);
            }
          });
          res.on('end', () => resolve(res.headers));
        })
        .on('error', reject);
      setTimeout(() => void s.request('POST', '/api/v1/namespaces/h2/configmaps', { body: configMap('over-h1') }), 100);
    });
    assert.equal(head['transfer-encoding'], 'chunked');
    assert.deepEqual(events.map((e) => [e.type, e.object.metadata.name]), [['ADDED', 'over-h1']]);
  } finally {
    agent.destroy();
  }
});

test('a stream that is not read is reset past 8 MiB of backlog; the connection’s other streams go on', async () => {
  const c = await connect();
  // As Go's client does: a large connection window, so one stalled stream cannot hold up the others.
  c.setLocalWindowSize(256 * 1024 * 1024);
  const rv = await listRv(c, '/api/v1/namespaces/h2/configmaps');
  const path = `/api/v1/namespaces/h2/configmaps?watch=1&resourceVersion=${rv}&labelSelector=big%3Dyes`;
  const slow = h2watch(c, path);
  const fast = h2watch(c, path);
  await Promise.all([slow.headers, fast.headers]);
  // Never read: its stream window (64 KiB) fills and the server's backlog for it grows.
  slow.stream.pause();
  const big = 'x'.repeat(900_000);
  const writer = await connect();
  for (let i = 0; i < 12; i++) {
    const r = await h2request(writer, 'POST', '/api/v1/namespaces/h2/configmaps', { ...configMap(`big-${i}`, { v: big }), metadata: { name: `big-${i}`, namespace: 'h2', labels: { big: 'yes' } } });
    assert.equal(r.status, 201, r.text);
  }
  assert.equal(await within(slow.closed, 20_000, 'the unread stream was not reset'), http2.constants.NGHTTP2_CANCEL);
  const events = await fast.waitFor(12, 20_000);
  assert.deepEqual(events.map((e) => e.object.metadata.name), Array.from({ length: 12 }, (_, i) => `big-${i}`));
  // The connection itself is fine.
  assert.equal((await h2request(c, 'GET', '/api/v1/namespaces/h2/configmaps?limit=1')).status, 200);
  fast.stream.close();
});

// Last: it stops the file's server (stop() is idempotent, after() calls it again).
test('close() ends open HTTP/2 sessions and watches at once', async () => {
  const c = await connect();
  const w = h2watch(c, '/api/v1/namespaces/default/configmaps?watch=1');
  await w.headers;
  const idle = await connect();
  const sessionClosed = new Promise((r) => idle.once('close', r));
  const started = performance.now();
  await s.stop();
  assert.ok(performance.now() - started < 3000, `close took ${performance.now() - started} ms`);
  await within(w.closed, 3000, 'the watch stream was not closed');
  await within(sessionClosed, 3000, 'the idle session was not closed');
});
