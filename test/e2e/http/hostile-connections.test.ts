// Hostile clients against the listener and the HTTP/2 layer (server/http/h2/THREATS.md): each
// attack is made on loopback, bounded in frames, bytes and connections, and each test asserts the
// server's answer (GOAWAY code, RST_STREAM, closed socket, 401, 429, 504) and that the server
// still serves a normal request afterwards. The attacks need no credentials unless said, and the
// server that takes them refuses anonymous requests (--anonymous-auth=false). Its timeouts are
// set small (2 s) so that the slowloris tests wait for seconds, not kube's 32 s and 60 s; the tests
// wait for the server's move, never measure how long it took.
import { test, before, after, mock } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import tls from 'node:tls';
import http2 from 'node:http2';
import https from 'node:https';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { RawH2, T, F, E, S, encodeFrame, hpackEncode, hpackIndexed, statusOf, errorCode, describe, rstStreamPayload, settingsPayload, windowUpdatePayload, type Frame, type ConnectOptions } from '../../helpers/h2-frames.ts';
import { ensurePki, type ServerPki } from '../../../server/pki/certificates.ts';
import { DEFAULT_CONNECTION_LIMITS } from '../../../server/http/listener.ts';

/** The timeouts of the strict server: small, but far above a loopback handshake or request. */
const TIMEOUT_MS = 2000;
/** How long a test waits for the server to act on a timeout before it fails. */
const WAIT_MS = 30_000;

let strict: TestServer;
let few: TestServer;
let other: ServerPki;
let otherDir: string;
const conns: RawH2[] = [];
const sockets: net.Socket[] = [];

before(async () => {
  strict = await startTestServer({ options: { anonymousAuth: false, connectionLimits: { tlsHandshakeTimeoutMs: TIMEOUT_MS, headerTimeoutMs: TIMEOUT_MS, requestTimeoutMs: TIMEOUT_MS, keepAliveTimeoutMs: TIMEOUT_MS } } });
  few = await startTestServer({ options: { connectionLimits: { maxConnections: 4, maxConnectionsPerClient: 2 } } });
  // Another cluster's PKI: its CA has the same subject name as the test server's (CN=hearth-ca).
  otherDir = mkdtempSync(join(tmpdir(), 'hearth-other-pki-'));
  other = await ensurePki(otherDir);
});

after(async () => {
  for (const c of conns) c.close();
  for (const s of sockets) s.destroy();
  await strict.stop();
  await few.stop();
  rmSync(otherDir, { recursive: true, force: true });
});

/** A raw HTTP/2 connection to `s`: anonymous unless `admin`. */
async function raw(s: TestServer, opts: Partial<ConnectOptions> & { admin?: boolean } = {}): Promise<RawH2> {
  const creds = opts.admin ? { cert: s.pki.adminCertPem, key: s.pki.adminKeyPem } : {};
  const c = await RawH2.connect(s.url, { ca: s.pki.caCertPem, ...creds, ...opts });
  conns.push(c);
  return c;
}

/** A connection whose SETTINGS exchange is done both ways. */
async function ready(s: TestServer, opts: Partial<ConnectOptions> & { admin?: boolean } = {}): Promise<RawH2> {
  const c = await raw(s, opts);
  await c.waitFor((f) => f.type === T.SETTINGS && (f.flags & F.ACK) !== 0, 'the server’s SETTINGS ACK');
  await c.ping();
  return c;
}

const isGoaway = (f: Frame) => f.type === T.GOAWAY;
const rstOn = (id: number) => (f: Frame) => f.type === T.RST_STREAM && f.streamId === id;

/** Waits until the server sent GOAWAY with `code` (and debug data matching `why`) and closed the connection. */
async function assertGoaway(c: RawH2, code: number, what: string, why?: RegExp): Promise<void> {
  const goaway = await c.waitFor(isGoaway, `${what}: GOAWAY`, WAIT_MS);
  const debug = goaway.payload.subarray(8).toString();
  assert.equal(errorCode(goaway), code, `${what}: ${describe(goaway)} ${debug}`);
  if (why) assert.match(debug, why, what);
  await c.waitClosed(`${what}: after GOAWAY`, WAIT_MS);
}

/**
 * A request as the admin over HTTP/1.1 on a connection of its own (the helper's kept-alive ones
 * would race the strict server's 2 s keep-alive timeout).
 */
function request(
  s: TestServer,
  method: string,
  path: string,
  opts: { body?: unknown; credentials?: { cert: string; key: string } | null } = {},
): Promise<{ status: number; text: string; headers: Record<string, string | string[] | undefined>; json(): any }> {
  const credentials = opts.credentials === undefined ? { cert: s.pki.adminCertPem, key: s.pki.adminKeyPem } : (opts.credentials ?? {});
  return new Promise((resolve, reject) => {
    const payload = opts.body === undefined ? undefined : Buffer.from(JSON.stringify(opts.body));
    const headers = payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {};
    const req = https.request(`${s.url}${path}`, { method, headers, agent: false, ca: s.pki.caCertPem, ...credentials }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, text, headers: res.headers, json: () => JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** The server still answers: /version as the admin over HTTP/1.1 and over HTTP/2. */
async function assertServes(s: TestServer, what: string): Promise<void> {
  const r = await request(s, 'GET', '/version');
  assert.equal(r.status, 200, `${what}: ${r.text}`);
  const c = await ready(s, { admin: true });
  c.request(1, 'GET', '/version');
  const res = await c.response(1, `${what}: /version over HTTP/2`);
  assert.equal(statusOf(res.headers[0]), 200, what);
  assert.equal(JSON.parse(res.body.toString()).gitVersion?.startsWith('v1.'), true, what);
  c.close();
}

/** Writes `b` and resolves once the socket took it (false if the socket is gone). */
function writeAll(socket: net.Socket, b: Buffer): Promise<boolean> {
  return new Promise((resolve) => {
    if (socket.destroyed) return resolve(false);
    socket.write(b, (err) => resolve(!err));
  });
}

/** Resolves once `socket` closes; rejects after WAIT_MS. */
function closed(socket: net.Socket, what: string): Promise<void> {
  if (socket.destroyed) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what}: the server did not close the connection within ${WAIT_MS} ms`)), WAIT_MS);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** Resolves after `ms` (the pace of a slowloris client's bytes: the test waits for the server, not for this). */
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Writes piece(i) every 100 ms until the server closes the socket, at most `max` pieces; returns how many went. */
async function drip(socket: net.Socket, piece: (i: number) => string, max: number): Promise<number> {
  let n = 0;
  while (!socket.destroyed && n < max) {
    await writeAll(socket, Buffer.from(piece(n), 'latin1'));
    n++;
    await pause(100);
  }
  return n;
}

// ───────────── the CONTINUATION flood ─────────────

/**
 * The attack of issue #30, as an anonymous client: SETTINGS_INITIAL_WINDOW_SIZE 0, GET /version
 * (its answer can never be sent, so a stream stays open and the idle timer never runs), then a
 * header block that never ends, in CONTINUATION frames of `fragment` bytes. Returns how many the
 * client sent before the server closed the connection.
 */
async function continuationFlood(fragment: Buffer): Promise<{ c: RawH2; sent: number }> {
  const c = await ready(strict, { settings: [[S.INITIAL_WINDOW_SIZE, 0]] });
  c.request(1, 'GET', '/version');
  const answer = await c.waitFor((f) => f.type === T.HEADERS && f.streamId === 1, 'the 401 HEADERS of /version');
  assert.equal(statusOf(answer), 401, 'anonymous requests are refused on this server');
  c.send(T.HEADERS, F.END_STREAM, 3, hpackIndexed(2) /* :method GET */);
  const batch = Buffer.concat(Array.from({ length: 100 }, () => encodeFrame(T.CONTINUATION, 0, 3, fragment)));
  let sent = 0;
  // At most 10,000 frames: the server must close the connection long before.
  while (sent < 10_000 && !c.closed && !c.frames.some(isGoaway)) {
    if (!(await writeAll(c.socket, batch))) break;
    sent += 100;
    await new Promise((r) => setImmediate(r));
  }
  return { c, sent };
}

test('the CONTINUATION flood of issue #30 (anonymous, window 0, empty CONTINUATION frames) ends in GOAWAY ENHANCE_YOUR_CALM', async () => {
  const { c, sent } = await continuationFlood(Buffer.alloc(0));
  await assertGoaway(c, E.ENHANCE_YOUR_CALM, `after ${sent} empty CONTINUATION frames`, /CONTINUATION/);
  assert.ok(sent < 10_000, `${sent} frames sent before the server closed the connection`);
  await assertServes(strict, 'after the flood');
});

test('a CONTINUATION flood of 1-byte fragments ends in GOAWAY ENHANCE_YOUR_CALM', async () => {
  const { c, sent } = await continuationFlood(Buffer.from([0x82]));
  await assertGoaway(c, E.ENHANCE_YOUR_CALM, `after ${sent} tiny CONTINUATION frames`, /CONTINUATION/);
  assert.ok(sent < 10_000, `${sent} frames sent before the server closed the connection`);
  await assertServes(strict, 'after the flood');
});

test('a header block may take 65 CONTINUATION frames (1 MiB in 16 KiB frames), empty ones included; the 66th is a GOAWAY ENHANCE_YOUR_CALM', async () => {
  const c = await ready(strict, { admin: true });
  const block = hpackEncode([[':method', 'GET'], [':scheme', 'https'], [':authority', c.authority], [':path', '/version']]);
  const sendBlock = (id: number, continuations: number) => {
    // The block's bytes in the first CONTINUATION frames, then empty ones; END_HEADERS on the last.
    c.send(T.HEADERS, F.END_STREAM, id, block.subarray(0, 4));
    for (let i = 1; i <= continuations; i++) c.send(T.CONTINUATION, i === continuations ? F.END_HEADERS : 0, id, i === 1 ? block.subarray(4) : Buffer.alloc(0));
  };
  sendBlock(1, 65);
  const r = await c.response(1, 'a block in 65 CONTINUATION frames');
  assert.equal(statusOf(r.headers[0]), 200);
  sendBlock(3, 66);
  await assertGoaway(c, E.ENHANCE_YOUR_CALM, 'a block in 66 CONTINUATION frames', /CONTINUATION/);
});

test('a header block that never ends is a GOAWAY ENHANCE_YOUR_CALM after the header timeout, even with a stream open', async () => {
  const c = await ready(strict, { settings: [[S.INITIAL_WINDOW_SIZE, 0]] });
  c.request(1, 'GET', '/version');
  await c.waitFor((f) => f.type === T.HEADERS && f.streamId === 1, 'the 401 HEADERS of /version');
  c.send(T.HEADERS, F.END_STREAM, 3, hpackIndexed(2));
  await assertGoaway(c, E.ENHANCE_YOUR_CALM, 'a header block left open', /not completed in time/);
  await assertServes(strict, 'after the open header block');
});

test('a SETTINGS frame of more than 32 entries is a GOAWAY ENHANCE_YOUR_CALM; one that repeats an entry, PROTOCOL_ERROR (as Go)', async () => {
  const entries = (n: number) => settingsPayload(Array.from({ length: n }, (_, i): [number, number] => [0x100 + i, 1]));
  const ok = await ready(strict);
  ok.send(T.SETTINGS, 0, 0, entries(32));
  await ok.ping();
  assert.equal(ok.frames.some(isGoaway), false, '32 entries are fine');
  ok.send(T.SETTINGS, 0, 0, entries(33));
  await assertGoaway(ok, E.ENHANCE_YOUR_CALM, '33 SETTINGS entries');
  const twice = await ready(strict);
  twice.send(T.SETTINGS, 0, 0, settingsPayload([[S.INITIAL_WINDOW_SIZE, 1000], [S.MAX_FRAME_SIZE, 16_384], [S.INITIAL_WINDOW_SIZE, 2000]]));
  await assertGoaway(twice, E.PROTOCOL_ERROR, 'a repeated SETTINGS entry');
  await assertServes(strict, 'after the SETTINGS');
});

// ───────────── slowloris ─────────────

test('a TLS handshake dripped a byte at a time is closed after the handshake timeout', async () => {
  const socket = net.connect(strict.port, '127.0.0.1');
  sockets.push(socket);
  socket.on('error', () => {});
  await new Promise((r) => socket.once('connect', r));
  const gone = closed(socket, 'a dripped TLS handshake');
  // A TLS record header announcing a 512-byte ClientHello, then its bytes one by one: each byte
  // is activity (Node's own handshake timer starts again with it), the record never complete.
  await writeAll(socket, Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00]));
  const dripped = await drip(socket, () => '\x01', 200);
  await gone;
  assert.ok(dripped < 200, 'the server waited for the whole dripped handshake');
  await assertServes(strict, 'after the dripped handshake');
});

/** A TLS connection that negotiated HTTP/1.1, as the admin unless `anonymous`. */
async function http1(s: TestServer, anonymous = false): Promise<tls.TLSSocket> {
  const socket = tls.connect({ host: '127.0.0.1', port: s.port, ca: s.pki.caCertPem, servername: 'localhost', ALPNProtocols: ['http/1.1'], ...(anonymous ? {} : { cert: s.pki.adminCertPem, key: s.pki.adminKeyPem }) });
  sockets.push(socket);
  socket.on('error', () => {});
  await new Promise((r) => socket.once('secureConnect', r));
  assert.equal(socket.alpnProtocol, 'http/1.1');
  return socket;
}

/** Everything the server sent on `socket` until it closed it. */
function allReceived(socket: net.Socket): Promise<string> {
  const chunks: Buffer[] = [];
  socket.on('data', (d: Buffer) => chunks.push(d));
  return closed(socket, 'the HTTP/1.1 connection').then(() => Buffer.concat(chunks).toString('utf8'));
}

test('HTTP/1.1 request headers dripped a line at a time: the connection is closed after the header timeout, unanswered', async () => {
  const socket = await http1(strict);
  const received = allReceived(socket);
  await writeAll(socket, Buffer.from('GET /version HTTP/1.1\r\nHost: localhost\r\n'));
  const lines = await drip(socket, (i) => `X-Drip-${i}: 1\r\n`, 200);
  assert.equal(await received, '', 'Go’s server closes a connection whose headers are late without answering');
  assert.ok(lines < 200, 'the server waited for every header line');
  await assertServes(strict, 'after the dripped headers');
});

test('HTTP/1.1 headers of a second request on a kept-alive connection are timed too', async () => {
  const socket = await http1(strict);
  const received = allReceived(socket);
  await writeAll(socket, Buffer.from('GET /version HTTP/1.1\r\nHost: localhost\r\n\r\n'));
  // The first answer, then the next request's headers begin and never end.
  await new Promise((r) => socket.once('data', r));
  await writeAll(socket, Buffer.from('GET /version HTTP/1.1\r\nHost: localhost\r\n'));
  const lines = await drip(socket, (i) => `X-Drip-${i}: 1\r\n`, 1000);
  const text = await received;
  assert.equal(text.match(/HTTP\/1\.1 200/g)?.length, 1, text);
  assert.ok(lines < 1000);
});

const CM_PATH = '/api/v1/namespaces/default/configmaps';

test('an HTTP/1.1 request body that never completes is answered 504 Timeout (kube’s words) and its connection closed; nothing is created', async () => {
  const socket = await http1(strict);
  const received = allReceived(socket);
  const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'slow-h1' }, data: { a: 'b' } });
  await writeAll(socket, Buffer.from(`POST ${CM_PATH} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`));
  const text = await received;
  const [head, payload] = text.split('\r\n\r\n');
  assert.match(head, /^HTTP\/1\.1 504 /, text);
  assert.match(head, /\r\nconnection: close\r\n/i, head);
  const status = JSON.parse(payload);
  assert.deepEqual(status, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Timeout: request did not complete within the allotted timeout', reason: 'Timeout', details: {}, code: 504 });
  const get = await request(strict, 'GET', `${CM_PATH}/slow-h1`);
  assert.equal(get.status, 404, get.text);
});

test('an HTTP/1.1 request answered before its body (401), whose body never completes, is closed at the request timeout', async () => {
  const socket = await http1(strict, true);
  const received = allReceived(socket);
  await writeAll(socket, Buffer.from(`POST ${CM_PATH} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`));
  const dripped = await drip(socket, () => ' ', 500);
  const text = await received;
  assert.match(text, /^HTTP\/1\.1 401 /, text);
  assert.ok(dripped < 500);
  await assertServes(strict, 'after the slow body');
});

test('an HTTP/2 POST whose body never comes is answered 504 Timeout, then RST_STREAM NO_ERROR; nothing is created and the connection goes on', async () => {
  const c = await ready(strict, { admin: true });
  c.request(1, 'POST', CM_PATH, { extra: [['content-type', 'application/json']], endStream: false });
  c.send(T.DATA, 0, 1, Buffer.from('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"slow-h2"'));
  const r = await c.response(1, 'the timed-out POST', WAIT_MS);
  assert.equal(statusOf(r.headers[0]), 504);
  assert.equal(JSON.parse(r.body.toString()).reason, 'Timeout');
  await c.waitFor(rstOn(1), 'RST_STREAM after the complete answer');
  assert.equal(errorCode(c.frames.find(rstOn(1))!), E.NO_ERROR);
  c.request(3, 'GET', `${CM_PATH}/slow-h2`);
  const get = await c.response(3, 'the GET after it');
  assert.equal(statusOf(get.headers[0]), 404, get.body.toString());
  assert.equal(c.frames.some(isGoaway), false);
});

test('an HTTP/2 answer the client never lets through (window 0) is reset (CANCEL) after the request timeout', async () => {
  const c = await ready(strict, { settings: [[S.INITIAL_WINDOW_SIZE, 0]] });
  c.request(1, 'GET', '/version');
  const rst = await c.waitFor(rstOn(1), 'the reset of the stalled answer', WAIT_MS);
  assert.equal(errorCode(rst), E.CANCEL);
  assert.equal(c.frames.filter((f) => f.type === T.DATA && f.streamId === 1).length, 0);
});

// ───────────── rapid reset (CVE-2023-44487) ─────────────

/**
 * Rapid reset: POSTs whose handler waits for the body, each followed by `reset` (a frame that ends
 * the stream), in rounds of 50 with a PING between: each handler has settled before the next round,
 * so only the reset budget, not the handler slots, can end the connection. At most 5,000.
 */
async function rapidReset(reset: (id: number) => Buffer): Promise<void> {
  const before = (await request(strict, 'GET', CM_PATH)).json().items.length;
  const c = await ready(strict, { admin: true });
  const block = c.requestBlock('POST', CM_PATH, [['content-type', 'application/json']]);
  let id = 1;
  let pairs = 0;
  while (pairs < 5000 && !c.closed && !c.frames.some(isGoaway)) {
    const round: Buffer[] = [];
    for (let i = 0; i < 50; i++, id += 2) round.push(encodeFrame(T.HEADERS, F.END_HEADERS, id, block), reset(id));
    c.write(Buffer.concat(round));
    pairs += 50;
    await c.ping().catch(() => undefined);
  }
  const goaway = await c.waitFor(isGoaway, 'GOAWAY', WAIT_MS);
  assert.equal(errorCode(goaway), E.ENHANCE_YOUR_CALM, describe(goaway));
  const last = goaway.payload.readUInt32BE(0);
  const accepted = (last + 1) / 2;
  assert.ok(accepted > 1000, `GOAWAY after ${accepted} streams: the budget is 1000 resets at once`);
  assert.ok(pairs < 5000, 'no GOAWAY within 5000 resets');
  const answered = c.frames.filter((f) => (f.type === T.HEADERS || f.type === T.DATA) && f.streamId > 0);
  assert.deepEqual(answered.map(describe), [], 'a stream reset while its handler ran was answered');
  const list = await request(strict, 'GET', CM_PATH);
  assert.equal(list.json().items.length, before, 'a POST reset before its body created something');
  await assertServes(strict, 'after the rapid reset');
}

test('rapid reset: streams reset while their handler waits for the body draw on a budget of 1000; past it, GOAWAY ENHANCE_YOUR_CALM; a reset stream is never answered', () =>
  rapidReset((id) => encodeFrame(T.RST_STREAM, 0, id, rstStreamPayload(E.CANCEL))));

test('“MadeYouReset”: streams the server resets for the client’s stream error (WINDOW_UPDATE of 0) draw on the same budget', () =>
  rapidReset((id) => encodeFrame(T.WINDOW_UPDATE, 0, id, windowUpdatePayload(0))));

test('handlers of reset streams keep their slot: 100 run, 400 wait, the next stream is a GOAWAY ENHANCE_YOUR_CALM', async () => {
  const c = await ready(strict, { admin: true });
  // Watches from a resourceVersion not reached yet: each handler waits (up to 3 s, on a timer the
  // test holds still) for the version, so a reset leaves it running.
  const future = Number((await request(strict, 'GET', '/api/v1/namespaces')).json().metadata.resourceVersion) + 1_000_000;
  const block = c.requestBlock('GET', `/api/v1/namespaces?watch=1&resourceVersion=${future}`);
  mock.timers.enable({ apis: ['setTimeout'] });
  try {
    const pairs: Buffer[] = [];
    for (let id = 1; id <= 2 * 600; id += 2) pairs.push(encodeFrame(T.HEADERS, F.END_HEADERS | F.END_STREAM, id, block), encodeFrame(T.RST_STREAM, 0, id, rstStreamPayload(E.CANCEL)));
    c.write(Buffer.concat(pairs));
    const goaway = await c.waitFor(isGoaway, 'GOAWAY');
    assert.equal(errorCode(goaway), E.ENHANCE_YOUR_CALM, describe(goaway));
    // Stream 1001 (the 501st) found 100 handlers running and 400 waiting.
    assert.equal(goaway.payload.readUInt32BE(0), 1001, describe(goaway));
  } finally {
    mock.timers.tick(3000);
    mock.timers.reset();
  }
  await assertServes(strict, 'after the resets');
});

// ───────────── output the client does not read ─────────────

test('a PING flood from a client that never reads is cut off (past 1000 queued ACKs, as nghttp2 counts them), and the server goes on', async () => {
  const c = await ready(strict);
  c.socket.pause();
  const ping = encodeFrame(T.PING, 0, 0, Buffer.alloc(8, 7));
  const batch = Buffer.concat(Array.from({ length: 10_000 }, () => ping));
  let sent = 0;
  // The kernel's socket buffers take a few MB of PING ACKs first; at most 2,000,000 PINGs (34 MB).
  while (sent < 2_000_000 && (await writeAll(c.socket, batch))) sent += 10_000;
  await closed(c.socket, 'the PING flood');
  assert.ok(sent < 2_000_000, `${sent} PINGs sent and the connection still open`);
  await assertServes(strict, 'after the PING flood');
});

test('watches on a connection that takes no data are reset once it holds 64 MiB unsent, each under its own 8 MiB', async () => {
  const c = await ready(strict, { admin: true, autoWindowUpdate: false });
  const ns = 'slow-reader';
  assert.equal((await request(strict, 'POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } })).status, 201);
  // 12 watches; the client never returns window, so all but 64 KiB of each stays on the server.
  const ids = Array.from({ length: 12 }, (_, i) => 1 + 2 * i);
  for (const id of ids) c.request(id, 'GET', `/api/v1/namespaces/${ns}/configmaps?watch=1`);
  for (const id of ids) await c.waitFor((f) => f.type === T.HEADERS && f.streamId === id, `watch ${id}`);
  await c.ping();
  // 6 ConfigMaps of 1 MB: 6 MB for each watch (under 8 MiB), 72 MB for the connection (over 64 MiB).
  const value = 'x'.repeat(1_000_000);
  for (let i = 0; i < 6; i++) {
    const r = await request(strict, 'POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `big-${i}` }, data: { v: value } } });
    assert.equal(r.status, 201, r.text);
  }
  const reset = await c.waitFor((f) => f.type === T.RST_STREAM && ids.includes(f.streamId), 'a watch reset');
  assert.equal(errorCode(reset), E.CANCEL);
  await c.ping();
  assert.equal(c.frames.some(isGoaway), false, 'the connection itself goes on');
  c.send(T.WINDOW_UPDATE, 0, 0, windowUpdatePayload(2 ** 31 - 1 - 65_535));
  await assertServes(strict, 'after the slow reader');
});

// ───────────── connection limits ─────────────

test('the default connection limit leaves room under the process’s open-files limit', () => {
  const soft = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
  assert.ok(soft, 'Linux: /proc/self/limits');
  assert.ok(DEFAULT_CONNECTION_LIMITS.maxConnections + 64 + 128 <= Number(soft[1]), `${DEFAULT_CONNECTION_LIMITS.maxConnections} connections, ${soft[1]} open files`);
});

/** A request on a new HTTP/2 connection from `address`: its status, body and frames. */
async function firstAnswer(address: string, opts: { admin?: boolean } = {}): Promise<{ c: RawH2; status: number | undefined; body: any; headers: Array<[string, string]> }> {
  const c = await raw(few, { localAddress: address, admin: opts.admin });
  c.request(1, 'GET', '/version');
  const r = await c.response(1, `/version from ${address}`);
  return { c, status: statusOf(r.headers[0]), body: JSON.parse(r.body.toString()), headers: r.headers[0].fields ?? [] };
}

/** `n` connections from `address`, each served (200). */
async function served(address: string, n: number): Promise<Array<Awaited<ReturnType<typeof firstAnswer>>>> {
  const answers = [];
  for (let i = 0; i < n; i++) {
    const r = await firstAnswer(address);
    assert.equal(r.status, 200, `connection ${i + 1} from ${address}: ${JSON.stringify(r.body)}`);
    answers.push(r);
  }
  return answers;
}

test('connections past the limit per client address, then in total, are refused: 429 TooManyRequests naming the address, then GOAWAY; the admin is still served', async () => {
  // 2 per address, 4 in all (few); 127.0.0.2 and .3 are other clients.
  const a = await served('127.0.0.1', 2);
  const a3 = await firstAnswer('127.0.0.1');
  assert.equal(a3.status, 429, JSON.stringify(a3.body));
  assert.deepEqual(a3.body, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Too many connections from 127.0.0.1, please try again later.', reason: 'TooManyRequests', details: { retryAfterSeconds: 1 }, code: 429 });
  assert.ok(a3.headers.some(([k, v]) => k === 'retry-after' && v === '1'));
  await assertGoaway(a3.c, E.NO_ERROR, 'the refused connection');
  // Over HTTP/1.1 as well.
  const refusedH1 = await request(few, 'GET', '/version', { credentials: null });
  assert.equal(refusedH1.status, 429, refusedH1.text);
  assert.equal(refusedH1.json().reason, 'TooManyRequests');
  assert.equal(refusedH1.headers.connection, 'close');
  // Another address is another client, up to the total.
  const b = await served('127.0.0.2', 2);
  const d1 = await firstAnswer('127.0.0.3');
  assert.equal(d1.status, 429, JSON.stringify(d1.body));
  // The admin (system:masters) is served past the limits, as kube never turns it away for load.
  const admin = await firstAnswer('127.0.0.1', { admin: true });
  assert.equal(admin.status, 200, JSON.stringify(admin.body));
  for (const x of [...a, ...b, admin]) x.c.close();
  await servedAgain('127.0.0.1');
});

/** Room again for `address` once the connections closed (the server sees their closes soon after the client). */
async function servedAgain(address: string): Promise<void> {
  let status: number | string | undefined;
  for (let attempt = 0; attempt < 50 && status !== 200; attempt++) {
    if (attempt > 0) await pause(100);
    try {
      const r = await firstAnswer(address);
      status = r.status;
      r.c.close();
      await r.c.whenClosed;
    } catch (e) {
      status = (e as Error).message; // closed on accept: still far past the limits
    }
  }
  assert.equal(status, 200, `${address} still refused`);
}

test('a connection flood past the limits and the refusals in progress is closed at once, before TLS', async () => {
  // Connections that never start TLS hold their slot (for the handshake timeout, 32 s here): 2
  // within the per-address limit, then 64 refusals in progress; the next is closed on accept.
  const held: net.Socket[] = [];
  for (let i = 0; i < 2 + 64; i++) {
    const s = net.connect({ host: '127.0.0.1', port: few.port, localAddress: '127.0.0.4' });
    s.on('error', () => {});
    sockets.push(s);
    held.push(s);
    await new Promise((r) => s.once('connect', r));
  }
  // (the server accepts connections in the order they were made: these before the next one)
  const next = tls.connect({ host: '127.0.0.1', port: few.port, localAddress: '127.0.0.4', ca: few.pki.caCertPem, servername: 'localhost', ALPNProtocols: ['h2'] } as tls.ConnectionOptions);
  sockets.push(next);
  const outcome = await new Promise<string>((resolve) => {
    next.once('secureConnect', () => resolve('handshake completed'));
    next.once('error', (e) => resolve(`error ${(e as NodeJS.ErrnoException).code}`));
    next.once('close', () => resolve('closed'));
  });
  assert.notEqual(outcome, 'handshake completed');
  for (const s of held) s.destroy();
  await servedAgain('127.0.0.4');
});

// ───────────── a certificate of another CA with the same name ─────────────

test('client certificates of another CA named like hearth’s (its admin, with its chain, the CA itself) get 401 over HTTP/2 and HTTP/1.1, and the connection goes on', async () => {
  const variants: Array<[string, string, string]> = [
    ['another cluster’s admin certificate', other.adminCertPem, other.adminKeyPem],
    ['the same with its CA in the chain', other.adminCertPem + other.caCertPem, other.adminKeyPem],
    ['the other CA’s own certificate', other.caCertPem, other.caKeyPem],
  ];
  for (const [what, cert, key] of variants) {
    for (const s of [strict, few]) {
      const session = http2.connect(s.url, { ca: s.pki.caCertPem, cert, key });
      try {
        for (let i = 0; i < 2; i++) {
          const r = await new Promise<{ status: number; body: string }>((resolve, reject) => {
            const req = session.request({ ':path': '/api/v1/namespaces' });
            let body = '';
            let status = 0;
            req.on('response', (h) => (status = Number(h[':status'])));
            req.on('data', (d) => (body += d));
            req.on('end', () => resolve({ status, body }));
            req.on('error', reject);
          });
          assert.equal(r.status, 401, `${what}, HTTP/2 request ${i + 1}: ${r.body}`);
          assert.equal(JSON.parse(r.body).reason, 'Unauthorized');
        }
      } finally {
        session.destroy();
      }
      const h1 = await request(s, 'GET', '/api/v1/namespaces', { credentials: { cert, key } });
      assert.equal(h1.status, 401, `${what}, HTTP/1.1: ${h1.text}`);
      assert.equal(h1.json().reason, 'Unauthorized');
    }
  }
});
