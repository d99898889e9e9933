// HTTP/2 at the frame level (RFC 9113), as any correct server must behave: the server's SETTINGS
// and ACKs, PING, flow control in both directions, the concurrent-stream limit, CONTINUATION,
// request bodies in many DATA frames (and their content-length), unread bodies and the connection
// window, connection and stream errors, RST_STREAM and GOAWAY from the client, the header list
// limit. A raw client (test/helpers/h2-frames.ts) writes frames as given: the assertions are on
// frame types, flags, stream ids, error codes and DATA bytes; the header list tests also read the
// :status the client decodes from the server's header blocks; node:http2's client is used where a
// response's headers matter otherwise.
import { test, before, after, mock } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { RawH2, T, F, E, S, hpackEncode, hpackIndexed, hpackLiteral, statusOf, parseSettings, errorCode, describe, windowUpdatePayload, rstStreamPayload, goAwayPayload, dataOf, type Frame, type ConnectOptions } from '../../helpers/h2-frames.ts';

let s: TestServer;
const conns: RawH2[] = [];
const sessions: http2.ClientHttp2Session[] = [];

const NS = 'h2p';
/** 60 ConfigMaps of ~2 KB: a list of ~130 KB, far more than a 1000-byte stream window. */
const FLOW_NS = 'h2p-flow';
const FLOW_COUNT = 60;
/** 8 ConfigMaps of 512 KiB: a list of ~4 MiB. */
const BIG_NS = 'h2p-big';
const BIG_COUNT = 8;
const BIG_VALUE = 512 * 1024;

const configMap = (ns: string, name: string, data: Record<string, string>, labels?: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: ns, ...(labels ? { labels } : {}) },
  data,
});

async function create(path: string, body: unknown): Promise<void> {
  const r = await s.request('POST', path, { body });
  assert.equal(r.status, 201, r.text);
}

before(async () => {
  // (without the root CA publisher: the lists here are exactly the test's own ConfigMaps)
  s = await startTestServer({ options: { controllers: ['*', '-root-ca-certificate-publisher-controller'] } });
  for (const ns of [NS, FLOW_NS, BIG_NS]) await create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  const writes: Promise<void>[] = [];
  for (let i = 0; i < FLOW_COUNT; i++) writes.push(create(`/api/v1/namespaces/${FLOW_NS}/configmaps`, configMap(FLOW_NS, `cm-${String(i).padStart(2, '0')}`, { v: `${i}`.repeat(2048).slice(0, 2048) })));
  for (let i = 0; i < BIG_COUNT; i++) writes.push(create(`/api/v1/namespaces/${BIG_NS}/configmaps`, configMap(BIG_NS, `big-${i}`, { v: String.fromCharCode(97 + i).repeat(BIG_VALUE) })));
  await Promise.all(writes);
});

after(async () => {
  for (const c of conns) c.close();
  for (const c of sessions) c.destroy();
  await s.stop();
});

/** A raw h2 connection as the admin (preface and an empty SETTINGS sent unless opts say otherwise). */
async function raw(opts: Partial<ConnectOptions> = {}): Promise<RawH2> {
  const c = await RawH2.connect(s.url, { ca: s.pki.caCertPem, cert: s.pki.adminCertPem, key: s.pki.adminKeyPem, ...opts });
  conns.push(c);
  return c;
}

/** A raw connection whose SETTINGS exchange is complete both ways (the server's SETTINGS ACKed, ours ACKed). */
async function ready(opts: Partial<ConnectOptions> = {}): Promise<RawH2> {
  const c = await raw(opts);
  await c.waitFor((f) => f.type === T.SETTINGS && (f.flags & F.ACK) !== 0, 'the server’s SETTINGS ACK');
  await c.ping();
  return c;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function within<X>(p: Promise<X>, ms: number, what: string): Promise<X> {
  let timer: NodeJS.Timeout;
  return Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)))]).finally(() => clearTimeout(timer));
}

const isGoaway = (f: Frame) => f.type === T.GOAWAY;
const rstOn = (id: number) => (f: Frame) => f.type === T.RST_STREAM && f.streamId === id;
const headersOn = (id: number) => (f: Frame) => f.type === T.HEADERS && f.streamId === id;

/** Fails if the connection got a GOAWAY or closed. */
function assertAlive(c: RawH2, what: string): void {
  assert.equal(c.closed, false, `${what}: the connection closed; frames: ${c.summary()}`);
  const goaway = c.frames.find(isGoaway);
  assert.equal(goaway, undefined, `${what}: the server sent ${goaway && describe(goaway)}`);
}

/** A GET of the namespace list on `id` answers HEADERS and a NamespaceList body. */
async function assertNamespaceList(c: RawH2, id: number, what: string): Promise<void> {
  const r = await c.response(id, what);
  assert.equal(r.rst, undefined, `${what}: reset: ${r.rst && describe(r.rst)}`);
  assert.ok(r.headers.length >= 1, `${what}: no HEADERS`);
  const list = JSON.parse(r.body.toString('utf8'));
  assert.equal(list.kind, 'NamespaceList', `${what}: ${r.body.toString('utf8').slice(0, 300)}`);
  assert.ok(list.items.some((n: any) => n.metadata.name === NS), what);
}

/** The first watch event (a JSON line, maybe spread over DATA frames) on stream `id`. */
async function firstEvent(c: RawH2, id: number): Promise<any> {
  const chunks: Buffer[] = [];
  await c.waitFor((f) => {
    if (f.type === T.DATA && f.streamId === id) chunks.push(dataOf(f));
    return Buffer.concat(chunks).includes(0x0a);
  }, `the first event on watch ${id}`);
  const text = Buffer.concat(chunks).toString('utf8');
  return JSON.parse(text.slice(0, text.indexOf('\n')));
}

const watchPath = (label: string) => `/api/v1/namespaces/${NS}/configmaps?watch=1&labelSelector=${encodeURIComponent(`t=${label}`)}`;

test('the server’s first frame is its SETTINGS (100 streams, 256 KiB stream window), and it ACKs ours', async () => {
  const c = await raw({ settings: [[S.INITIAL_WINDOW_SIZE, 100_000]] });
  const ack = await c.waitFor((f) => f.type === T.SETTINGS && (f.flags & F.ACK) !== 0, 'SETTINGS ACK');
  const first = c.frames[0];
  assert.equal(first.type, T.SETTINGS, `first frame: ${describe(first)}`);
  assert.equal(first.flags & F.ACK, 0, 'the first SETTINGS is not an ACK');
  assert.equal(first.streamId, 0);
  assert.equal(first.payload.length % 6, 0);
  const settings = parseSettings(first.payload);
  assert.equal(settings.get(S.MAX_CONCURRENT_STREAMS), 100);
  assert.equal(settings.get(S.INITIAL_WINDOW_SIZE), 256 * 1024);
  assert.equal(ack.streamId, 0);
  assert.equal(ack.payload.length, 0, 'a SETTINGS ACK is empty');
  assertAlive(c, 'after the SETTINGS exchange');
});

test('PING is answered with a PING ACK carrying the same 8 bytes', async () => {
  const c = await ready();
  const data = Buffer.from([1, 2, 3, 4, 5, 6, 7, 0xff]);
  const from = c.frames.length;
  c.send(T.PING, 0, 0, data);
  const pong = await c.waitFor((f) => f.type === T.PING, 'PING ACK', 5000, from);
  assert.equal(pong.flags & F.ACK, F.ACK, describe(pong));
  assert.equal(pong.streamId, 0);
  assert.deepEqual(pong.payload, data);
});

test('flow control: a 1000-byte stream window holds the response until WINDOW_UPDATE; windows and the 16 KiB frame size are respected', async () => {
  const c = await raw({ settings: [[S.INITIAL_WINDOW_SIZE, 1000]], autoWindowUpdate: false });
  // The client's view of the server's send windows: they start at 1000 (stream, from our SETTINGS)
  // and 65535 (connection: SETTINGS do not change it), shrink by each DATA frame as it arrives and
  // grow by each WINDOW_UPDATE as we send it. Updates sent after a frame arrived cannot have let the
  // server send it, so a window below zero here means the server overran it.
  let streamWindow = 1000;
  let connWindow = 65535;
  let received = 0;
  let flowing = false;
  const violations: string[] = [];
  c.onFrame = (f) => {
    if (f.payload.length > 16384) violations.push(`frame larger than SETTINGS_MAX_FRAME_SIZE: ${describe(f)}`);
    if (f.type !== T.DATA) return;
    const n = f.payload.length;
    connWindow -= n;
    if (f.streamId === 1) {
      streamWindow -= n;
      received += n;
    }
    if (streamWindow < 0) violations.push(`stream window overrun by ${-streamWindow} at ${describe(f)} (flowing: ${flowing})`);
    if (connWindow < 0) violations.push(`connection window overrun by ${-connWindow} at ${describe(f)}`);
    if (flowing && n > 0) {
      c.send(T.WINDOW_UPDATE, 0, 0, windowUpdatePayload(n));
      connWindow += n;
      if (!(f.flags & F.END_STREAM)) {
        c.send(T.WINDOW_UPDATE, 0, f.streamId, windowUpdatePayload(n));
        streamWindow += n;
      }
    }
  };
  c.request(1, 'GET', `/api/v1/namespaces/${FLOW_NS}/configmaps`);
  await c.waitFor(headersOn(1), 'response HEADERS');
  // The server fills the 1000-byte window, then must wait.
  await c.waitFor(() => received >= 1000, 'DATA filling the 1000-byte stream window');
  await c.ping();
  await sleep(300);
  assert.equal(received, 1000, `bytes sent on the stream before any WINDOW_UPDATE; frames: ${c.summary()}`);
  assert.equal(c.frames.some((f) => f.streamId === 1 && (f.flags & F.END_STREAM) !== 0), false, 'the response ended inside 1000 bytes');
  assert.deepEqual(violations, []);
  // Open the windows: the stream by 8 KiB, the connection back to 65535; then return every byte as it arrives.
  flowing = true;
  c.send(T.WINDOW_UPDATE, 0, 1, windowUpdatePayload(8192));
  streamWindow += 8192;
  c.send(T.WINDOW_UPDATE, 0, 0, windowUpdatePayload(65535 - connWindow));
  connWindow = 65535;
  const r = await c.response(1, 'the rest of the list', 10_000);
  assert.equal(r.rst, undefined);
  assert.deepEqual(violations, []);
  assert.equal(r.body.length, received);
  assert.ok(r.body.length > 60 * 2048, `body of ${r.body.length} bytes`);
  const list = JSON.parse(r.body.toString('utf8'));
  assert.equal(list.kind, 'ConfigMapList');
  assert.deepEqual(
    list.items.map((i: any) => i.metadata.name),
    Array.from({ length: FLOW_COUNT }, (_, i) => `cm-${String(i).padStart(2, '0')}`),
  );
  assert.ok(list.items.every((i: any) => i.data.v.length === 2048));
  assertAlive(c, 'after the list');
});

test('a client with a 64 KiB stream window (node:http2) receives a 4 MiB list intact', async () => {
  const c = http2.connect(s.url, { ca: s.pki.caCertPem, cert: s.pki.adminCertPem, key: s.pki.adminKeyPem, settings: { initialWindowSize: 65535 } });
  sessions.push(c);
  c.on('error', () => {});
  const res = await within(
    new Promise<{ headers: http2.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      const req = c.request({ ':path': `/api/v1/namespaces/${BIG_NS}/configmaps`, accept: 'application/json' });
      let headers: http2.IncomingHttpHeaders = {};
      const chunks: Buffer[] = [];
      req.on('response', (h) => (headers = h));
      req.on('data', (d: Buffer) => chunks.push(d));
      req.on('end', () => resolve({ headers, body: Buffer.concat(chunks) }));
      req.on('error', reject);
      req.on('close', () => (req.rstCode ? reject(new Error(`stream reset with ${req.rstCode}`)) : undefined));
    }),
    15_000,
    'the 4 MiB list',
  );
  assert.equal(res.headers[':status'], 200);
  if (res.headers['content-length'] !== undefined) assert.equal(res.body.length, Number(res.headers['content-length']));
  assert.ok(res.body.length > BIG_COUNT * BIG_VALUE, `body of ${res.body.length} bytes`);
  const list = JSON.parse(res.body.toString('utf8'));
  assert.equal(list.items.length, BIG_COUNT);
  list.items.forEach((item: any, i: number) => assert.equal(item.data.v, String.fromCharCode(97 + i).repeat(BIG_VALUE)));
});

test(
  'stream concurrency: the 101st stream is refused while 100 watches are open; after one is cancelled a new stream is served',
  async () => {
    const c = await ready();
    const ids = Array.from({ length: 100 }, (_, i) => 1 + 2 * i);
    for (const id of ids) c.request(id, 'GET', watchPath('concurrency'));
    for (const id of ids) await c.waitFor(headersOn(id), `watch ${id} HEADERS`);
    c.request(201, 'GET', watchPath('concurrency'));
    const refused = await c.waitFor(rstOn(201), 'RST_STREAM on the 101st stream');
    // RFC 9113 §5.1.2: a stream error of type PROTOCOL_ERROR or REFUSED_STREAM. Go's server sends
    // REFUSED_STREAM only while its SETTINGS are not yet ACKed and PROTOCOL_ERROR once the client
    // ACKed them, as here; hearth always sends REFUSED_STREAM (it tells the client the request was
    // not processed and may be retried). Both are accepted.
    assert.ok([E.REFUSED_STREAM, E.PROTOCOL_ERROR].includes(errorCode(refused) as 7 | 1), describe(refused));
    assert.equal(c.frames.some(headersOn(201)), false, 'the refused stream got no response');
    await c.ping();
    assertAlive(c, 'after the refused stream');
    for (const id of ids) assert.equal(c.frames.some(rstOn(id)), false, `watch ${id} was reset`);
    // Cancel one: its slot frees at once (the RST_STREAM closes the stream), so stream 203 is served.
    c.send(T.RST_STREAM, 0, 1, rstStreamPayload(E.CANCEL));
    c.request(203, 'GET', watchPath('concurrency'));
    await c.waitFor(headersOn(203), 'HEADERS on a new stream after a cancel');
    assert.equal(c.frames.some(rstOn(203)), false);
    assertAlive(c, 'after the new stream');
  },
);

test('a header block in HEADERS and two CONTINUATION frames is one request', async () => {
  const c = await ready();
  const block = c.requestBlock('GET', '/api/v1/namespaces', [
    ['accept', 'application/json'],
    ['user-agent', 'h2-protocol-test'],
  ]);
  const a = Math.floor(block.length / 3);
  c.send(T.HEADERS, F.END_STREAM, 1, block.subarray(0, a));
  c.send(T.CONTINUATION, 0, 1, block.subarray(a, 2 * a));
  c.send(T.CONTINUATION, F.END_HEADERS, 1, block.subarray(2 * a));
  await assertNamespaceList(c, 1, 'the request in three header frames');
  assertAlive(c, 'after CONTINUATION');
});

test('a request body in 10-byte DATA frames is reassembled (a ConfigMap is created)', async () => {
  const c = await ready();
  const name = 'in-small-frames';
  const body = Buffer.from(JSON.stringify(configMap(NS, name, { greeting: 'hello over many small DATA frames' })));
  c.request(1, 'POST', `/api/v1/namespaces/${NS}/configmaps`, {
    extra: [
      ['content-type', 'application/json'],
      ['accept', 'application/json'],
    ],
    endStream: false,
  });
  for (let i = 0; i < body.length; i += 10) c.send(T.DATA, i + 10 >= body.length ? F.END_STREAM : 0, 1, body.subarray(i, i + 10));
  const r = await c.response(1, 'the create');
  assert.equal(r.rst, undefined);
  const created = JSON.parse(r.body.toString('utf8'));
  assert.equal(created.kind, 'ConfigMap', r.body.toString('utf8'));
  assert.equal(created.metadata.name, name);
  assert.ok(created.metadata.uid, 'a created object has a uid');
  assert.equal(created.data.greeting, 'hello over many small DATA frames');
  const got = await s.request('GET', `/api/v1/namespaces/${NS}/configmaps/${name}`);
  assert.equal(got.status, 200, got.text);
  assert.equal(got.json().metadata.uid, created.metadata.uid);
});

/**
 * The client's view of the server's connection receive window: 65,535, plus every WINDOW_UPDATE
 * the server sent on stream 0, minus the DATA bytes the client sent.
 */
interface ConnectionWindow {
  granted: number;
  sent: number;
}

function trackConnectionWindow(c: RawH2): ConnectionWindow {
  const increment = (f: Frame) => (f.type === T.WINDOW_UPDATE && f.streamId === 0 ? f.payload.readUInt32BE(0) & 0x7fffffff : 0);
  const w = { granted: 65_535 + c.frames.reduce((sum, f) => sum + increment(f), 0), sent: 0 };
  c.onFrame = (f) => (w.granted += increment(f));
  return w;
}

const BODY_CHUNK = Buffer.alloc(16_384, 0x61);

/** `bytes` of request body on `id` in 16 KiB DATA frames, never past the connection window (waits for WINDOW_UPDATE when it is used up). */
async function sendBody(c: RawH2, w: ConnectionWindow, id: number, bytes: number, what: string): Promise<void> {
  for (let off = 0; off < bytes; off += BODY_CHUNK.length) {
    const n = Math.min(BODY_CHUNK.length, bytes - off);
    if (w.granted - w.sent < n) {
      await c.waitFor(() => w.granted - w.sent >= n, `${what}: connection window for stream ${id} (${w.sent} bytes sent, ${w.granted} granted)`, 5000, c.frames.length);
    }
    c.send(T.DATA, 0, id, BODY_CHUNK.subarray(0, n));
    w.sent += n;
  }
}

// The server returns request-body bytes to the connection window as handlers read them. Bytes of a
// stream that closes before its handler read them (here: watches, which never read a body) must
// be returned when it closes, or every such stream shrinks the connection's receive window for
// good. The connection window is 100 × 256 KiB (25 MiB) and is returned in halves, so a leak shows
// only after more than 12.5 MiB of unread bodies; and only bodies that arrived while the stream was
// open test this (DATA on a stream that is already closed is returned where it is dropped): each
// body is sent, and a PING answered, before its stream ends.
const STREAM_WINDOW = 256 * 1024;

test('request bodies no handler read are returned to the connection window when the client resets their streams: more than the whole window gets through', async () => {
  const c = await ready();
  const w = trackConnectionWindow(c);
  const whole = w.granted;
  const perRound = 50;
  let id = 1;
  for (let round = 0; round < 3; round++) {
    const ids = Array.from({ length: perRound }, () => (id += 2) - 2);
    for (const i of ids) c.request(i, 'GET', watchPath('unread-reset'), { endStream: false });
    for (const i of ids) await c.waitFor(headersOn(i), `watch ${i} HEADERS`);
    for (const i of ids) await sendBody(c, w, i, STREAM_WINDOW, `round ${round}`);
    await c.ping();
    for (const i of ids) c.send(T.RST_STREAM, 0, i, rstStreamPayload(E.CANCEL));
  }
  await c.ping();
  assertAlive(c, 'after the unread bodies');
  assert.ok(w.sent > whole, `${w.sent} bytes sent, the window is ${whole}`);
  const returned = w.granted - whole;
  assert.ok(w.sent - returned < whole / 2, `${w.sent} bytes sent and dropped, ${returned} returned; frames: ${c.summary()}`);
});

test('request bodies no handler read are returned to the connection window when the handler ends the stream first (a watch timing out)', async () => {
  const c = await ready();
  const w = trackConnectionWindow(c);
  const whole = w.granted;
  // 100 watches (the stream limit) each take a stream window of body: the whole connection window.
  const ids = Array.from({ length: 100 }, (_, i) => 1 + 2 * i);
  const path = `${watchPath('unread-answered')}&timeoutSeconds=2`;
  const endOf = (i: number) => (f: Frame) => f.streamId === i && (f.type === T.DATA || f.type === T.HEADERS) && (f.flags & F.END_STREAM) !== 0;
  // The watches time out when the test says so, however long sending the bodies takes: their
  // timers are mocked while they start (only setTimeout; the client's waits never reach theirs).
  mock.timers.enable({ apis: ['setTimeout'] });
  try {
    for (const i of ids) c.request(i, 'GET', path, { endStream: false });
    for (const i of ids) await c.waitFor(headersOn(i), `watch ${i} HEADERS`);
    for (const i of ids) await sendBody(c, w, i, STREAM_WINDOW, 'the first 100 bodies');
    await c.ping();
    assert.equal(ids.filter((i) => c.frames.some(endOf(i))).length, 0, 'a watch ended before its body arrived: the test proves nothing');
    assert.equal(w.granted - w.sent, whole - ids.length * STREAM_WINDOW);
    // The server ends each watch (END_STREAM, then RST_STREAM NO_ERROR: the request body is not wanted).
    mock.timers.tick(2000);
    for (const i of ids) await c.waitFor(endOf(i), `the end of watch ${i}`);
    await c.ping();
  } finally {
    mock.timers.reset();
  }
  const returned = w.granted - whole;
  assert.ok(w.sent - returned < whole / 2, `${w.sent} bytes sent and dropped, ${returned} returned; frames: ${c.summary()}`);
  // The client can go on sending: another round of bodies fits.
  const more = [201, 203, 205, 207];
  for (const i of more) c.request(i, 'GET', watchPath('unread-answered'), { endStream: false });
  for (const i of more) await sendBody(c, w, i, STREAM_WINDOW, 'bodies after the first 100');
  for (const i of more) c.send(T.RST_STREAM, 0, i, rstStreamPayload(E.CANCEL));
  await c.ping();
  assertAlive(c, 'after the unread bodies');
});

test('a DATA frame past its stream window resets the stream (FLOW_CONTROL_ERROR) and its bytes still come back to the connection window', async () => {
  const c = await ready();
  const w = trackConnectionWindow(c);
  const whole = w.granted;
  const overrun = Buffer.alloc(STREAM_WINDOW, 0x62); // one frame as large as SETTINGS_MAX_FRAME_SIZE allows
  let id = 1;
  for (let round = 0; round < 3; round++) {
    const ids = Array.from({ length: 25 }, () => (id += 2) - 2);
    for (const i of ids) c.request(i, 'GET', watchPath('overrun'), { endStream: false });
    for (const i of ids) await c.waitFor(headersOn(i), `watch ${i} HEADERS`);
    for (const i of ids) {
      await sendBody(c, w, i, STREAM_WINDOW, `round ${round}`);
      if (w.granted - w.sent < overrun.length) await c.waitFor(() => w.granted - w.sent >= overrun.length, `round ${round}: connection window for the overrun on ${i}`, 5000, c.frames.length);
      c.send(T.DATA, 0, i, overrun);
      w.sent += overrun.length;
    }
    for (const i of ids) {
      const rst = await c.waitFor(rstOn(i), `RST_STREAM on ${i}`);
      assert.equal(errorCode(rst), E.FLOW_CONTROL_ERROR, describe(rst));
    }
  }
  await c.ping();
  assertAlive(c, 'after the overruns');
  const returned = w.granted - whole;
  assert.ok(w.sent - returned < whole / 2, `${w.sent} bytes sent and dropped, ${returned} returned; frames: ${c.summary()}`);
});

// RFC 9113 §8.1.1: a request whose content-length does not equal the sum of its DATA payloads is
// malformed, a stream error of type PROTOCOL_ERROR. The handler must not act on such a body: the
// bodies below are complete, valid ConfigMaps, so a server that ignored the mismatch would create them.
const postConfigMap = (c: RawH2, id: number, contentLength: string | undefined) =>
  c.request(id, 'POST', `/api/v1/namespaces/${NS}/configmaps`, {
    extra: [['content-type', 'application/json'], ['accept', 'application/json'], ...(contentLength === undefined ? [] : [['content-length', contentLength] as [string, string]])],
    endStream: false,
  });

const configMapBody = (name: string) => Buffer.from(JSON.stringify(configMap(NS, name, { k: 'v' })));

/** The stream ended in RST_STREAM PROTOCOL_ERROR without a response. */
async function assertMalformed(c: RawH2, id: number, what: string): Promise<void> {
  const r = await c.response(id, what);
  assert.ok(r.rst, `${what}: not reset; body: ${r.body.toString('utf8').slice(0, 300)}`);
  assert.equal(errorCode(r.rst), E.PROTOCOL_ERROR, `${what}: ${describe(r.rst)}`);
  assert.deepEqual(r.headers.map(describe), [], `${what}: a malformed request gets no response`);
}

/** The stream answered the created ConfigMap `name`. */
async function assertCreated(c: RawH2, id: number, name: string, what: string): Promise<void> {
  const r = await c.response(id, what);
  assert.equal(r.rst, undefined, `${what}: reset: ${r.rst && describe(r.rst)}`);
  const created = JSON.parse(r.body.toString('utf8'));
  assert.equal(created.kind, 'ConfigMap', `${what}: ${r.body.toString('utf8').slice(0, 300)}`);
  assert.equal(created.metadata.name, name, what);
}

async function assertNotCreated(name: string): Promise<void> {
  const got = await s.request('GET', `/api/v1/namespaces/${NS}/configmaps/${name}`);
  assert.equal(got.status, 404, `${name} was created: ${got.text}`);
}

test('content-length: a body longer than declared is malformed (RST_STREAM PROTOCOL_ERROR, nothing created); the connection goes on', async () => {
  const c = await ready();
  const body = configMapBody('cl-longer');
  const declared = body.length - 5;
  postConfigMap(c, 1, String(declared));
  c.send(T.DATA, 0, 1, body.subarray(0, declared));
  c.send(T.DATA, F.END_STREAM, 1, body.subarray(declared));
  await assertMalformed(c, 1, 'DATA past the content-length');
  // One frame past the content-length, before the handler could have read anything.
  const body2 = configMapBody('cl-longer-2');
  postConfigMap(c, 3, String(body2.length - 1));
  c.send(T.DATA, F.END_STREAM, 3, body2);
  await assertMalformed(c, 3, 'one DATA frame longer than the content-length');
  const good = configMapBody('cl-after-longer');
  postConfigMap(c, 5, String(good.length));
  c.send(T.DATA, F.END_STREAM, 5, good);
  await assertCreated(c, 5, 'cl-after-longer', 'a correct request after the malformed ones');
  await assertNotCreated('cl-longer');
  await assertNotCreated('cl-longer-2');
  assertAlive(c, 'after bodies longer than their content-length');
});

test('content-length: END_STREAM before the declared bytes is malformed, as are trailers with a pseudo-header field (RST_STREAM PROTOCOL_ERROR, nothing created); the connection goes on', async () => {
  const c = await ready();
  const body = configMapBody('cl-shorter');
  postConfigMap(c, 1, String(body.length + 10));
  c.send(T.DATA, 0, 1, body.subarray(0, 20));
  c.send(T.DATA, F.END_STREAM, 1, body.subarray(20));
  await assertMalformed(c, 1, 'END_STREAM 10 bytes short of the content-length');
  // Ended by trailers (a HEADERS frame with END_STREAM) short of the content-length.
  const body2 = configMapBody('cl-shorter-trailers');
  postConfigMap(c, 3, String(body2.length + 1));
  c.send(T.DATA, 0, 3, body2);
  c.send(T.HEADERS, F.END_HEADERS | F.END_STREAM, 3, hpackEncode([['x-trailer', 'done']]));
  await assertMalformed(c, 3, 'trailers 1 byte short of the content-length');
  // Trailers with a pseudo-header field (RFC 9113 §8.1), the body complete.
  const body3 = configMapBody('cl-pseudo-trailers');
  postConfigMap(c, 5, String(body3.length));
  c.send(T.DATA, 0, 5, body3);
  c.send(T.HEADERS, F.END_HEADERS | F.END_STREAM, 5, hpackEncode([[':path', '/elsewhere']]));
  await assertMalformed(c, 5, 'trailers with a pseudo-header field');
  // No DATA at all: HEADERS with END_STREAM and a content-length of 10.
  c.request(7, 'GET', '/api/v1/namespaces', { extra: [['accept', 'application/json'], ['content-length', '10']] });
  await assertMalformed(c, 7, 'a request without DATA declaring 10 bytes');
  const good = configMapBody('cl-after-shorter');
  postConfigMap(c, 9, String(good.length));
  c.send(T.DATA, 0, 9, good.subarray(0, 10));
  c.send(T.DATA, F.END_STREAM, 9, good.subarray(10));
  await assertCreated(c, 9, 'cl-after-shorter', 'a correct request after the malformed ones');
  await assertNotCreated('cl-shorter');
  await assertNotCreated('cl-shorter-trailers');
  await assertNotCreated('cl-pseudo-trailers');
  assertAlive(c, 'after bodies shorter than their content-length');
});

test('content-length: a value that is not a decimal number is malformed (RST_STREAM PROTOCOL_ERROR); the connection goes on', async () => {
  const c = await ready();
  const names = ['cl-abc', 'cl-negative', 'cl-spaces'];
  for (const [i, declared] of ['12abc', '-1', ' 12'].entries()) {
    const body = configMapBody(names[i]);
    postConfigMap(c, 1 + 2 * i, declared);
    c.send(T.DATA, F.END_STREAM, 1 + 2 * i, body);
    await assertMalformed(c, 1 + 2 * i, `content-length ${JSON.stringify(declared)}`);
  }
  c.request(7, 'GET', '/api/v1/namespaces');
  await assertNamespaceList(c, 7, 'a request after the malformed ones');
  for (const name of names) await assertNotCreated(name);
  assertAlive(c, 'after malformed content-lengths');
});

test('content-length: bodies that agree with it (padding not counted), bodies without it, and GET/HEAD without a body are served', async () => {
  const c = await ready();
  // 3 DATA frames, the middle one PADDED: the content-length counts data, not padding.
  const body = configMapBody('cl-exact');
  postConfigMap(c, 1, String(body.length));
  c.send(T.DATA, 0, 1, body.subarray(0, 10));
  const middle = body.subarray(10, 30);
  c.send(T.DATA, F.PADDED, 1, Buffer.concat([Buffer.from([7]), middle, Buffer.alloc(7)]));
  c.send(T.DATA, F.END_STREAM, 1, body.subarray(30));
  await assertCreated(c, 1, 'cl-exact', 'a body that agrees with its content-length');
  const body2 = configMapBody('cl-none');
  postConfigMap(c, 3, undefined);
  c.send(T.DATA, 0, 3, body2.subarray(0, 5));
  c.send(T.DATA, F.END_STREAM, 3, body2.subarray(5));
  await assertCreated(c, 3, 'cl-none', 'a body without a content-length');
  c.request(5, 'GET', '/api/v1/namespaces', { extra: [['accept', 'application/json'], ['content-length', '0']] });
  await assertNamespaceList(c, 5, 'a GET with content-length 0');
  c.request(7, 'GET', '/api/v1/namespaces');
  await assertNamespaceList(c, 7, 'a GET without content-length');
  c.request(9, 'HEAD', '/api/v1/namespaces');
  const head = await c.response(9, 'a HEAD');
  assert.equal(head.rst, undefined, head.rst && describe(head.rst));
  assert.equal(head.headers.length, 1);
  assert.equal(head.body.length, 0);
  assertAlive(c, 'after the requests');
});

// Header list size (RFC 9113 §6.5.2, §10.5.1): a request whose decoded header list is over the
// SETTINGS_MAX_HEADER_LIST_SIZE the server advertised is answered 431, as Go's http2 server
// (kube-apiserver's) answers it, and the connection goes on. HPACK state spans header blocks, so
// the server must decode the refused block in full: the requests after it use dynamic-table
// entries that block added. A block whose raw bytes are past that limit ends the connection.

/** A header block sent as HEADERS and CONTINUATION frames of 16 KiB. */
function sendHeaderBlock(c: RawH2, id: number, block: Buffer, endStream: boolean): void {
  const max = 16_384;
  c.send(T.HEADERS, (endStream ? F.END_STREAM : 0) | (block.length <= max ? F.END_HEADERS : 0), id, block.subarray(0, max));
  for (let off = max; off < block.length; off += max) c.send(T.CONTINUATION, off + max >= block.length ? F.END_HEADERS : 0, id, block.subarray(off, off + max));
}

/** :method GET and :scheme https from the static table, :authority as a literal (RFC 7541 Appendix A: 2, 7). */
const getPrefix = (c: RawH2) => Buffer.concat([hpackIndexed(2), hpackIndexed(7), hpackLiteral(':authority', c.authority)]);

function advertisedHeaderListSize(c: RawH2): number {
  const settings = c.frames.find((f) => f.type === T.SETTINGS && !(f.flags & F.ACK));
  const limit = settings && parseSettings(settings.payload).get(S.MAX_HEADER_LIST_SIZE);
  assert.ok(limit !== undefined && limit >= 1 << 20, `SETTINGS_MAX_HEADER_LIST_SIZE ${limit}: kube-apiserver (Go) accepts 1 MiB of headers`);
  return limit;
}

/** Literal fields of ~13 bytes each whose header list (name + value + 32 octets each) is just past `limit`. */
function fieldsPastListLimit(limit: number): Buffer {
  const name = (i: number) => `x-f-${String(i).padStart(5, '0')}`;
  const count = Math.ceil(limit / (name(0).length + 1 + 32)) + 1;
  return Buffer.concat(Array.from({ length: count }, (_, i) => hpackLiteral(name(i), 'v')));
}

/** The stream was answered 431 with END_STREAM and no reset. */
async function assertHeaderListTooLarge(c: RawH2, id: number, what: string): Promise<void> {
  const r = await c.response(id, what);
  assert.equal(r.rst, undefined, `${what}: reset: ${r.rst && describe(r.rst)}`);
  assert.equal(c.headerError, undefined);
  assert.equal(statusOf(r.headers[0]), 431, `${what}: ${JSON.stringify(r.headers[0]?.fields)} ${r.body.toString('utf8').slice(0, 200)}`);
}

/** The stream answered 200 and the namespace list. */
async function assertNamespaceListOk(c: RawH2, id: number, what: string): Promise<void> {
  await assertNamespaceList(c, id, what);
  const h = c.frames.find(headersOn(id))!;
  assert.equal(statusOf(h), 200, `${what}: ${JSON.stringify(h.fields)}`);
}

test('a header list over SETTINGS_MAX_HEADER_LIST_SIZE is answered 431 without reaching the handler; later requests use the dynamic-table entries its block added', async () => {
  const c = await ready();
  const limit = advertisedHeaderListSize(c);
  // Stream 1 adds x-first to the dynamic table: [x-first].
  sendHeaderBlock(c, 1, Buffer.concat([getPrefix(c), hpackLiteral(':path', '/api/v1/namespaces'), hpackLiteral('x-first', 'one', { index: true })]), true);
  await assertNamespaceListOk(c, 1, 'the first request');
  // Stream 3 adds :path and accept: [accept, :path, x-first] (62, 63, 64); then small fields (not
  // indexed) take the list past the limit, each charged 32 octets more than its ~13 raw bytes.
  const over = fieldsPastListLimit(limit);
  const block = Buffer.concat([getPrefix(c), hpackLiteral(':path', '/api/v1/namespaces', { index: true }), hpackLiteral('accept', 'application/json', { index: true }), over]);
  assert.ok(block.length < limit, `a block of ${block.length} bytes: within the limit, so that only its list is too large`);
  sendHeaderBlock(c, 3, block, true);
  await assertHeaderListTooLarge(c, 3, 'a list past the limit');
  // Stream 5 names its path, accept and x-first by index only: if the server had not decoded
  // stream 3's block, 63 would be out of range (a COMPRESSION_ERROR) and 62 would be x-first.
  sendHeaderBlock(c, 5, Buffer.concat([getPrefix(c), hpackIndexed(63), hpackIndexed(62), hpackIndexed(64)]), true);
  await assertNamespaceListOk(c, 5, 'a request after the 431, by dynamic-table indexes');
  // And a request that is too large without END_STREAM on its HEADERS (a body was to follow).
  sendHeaderBlock(c, 7, Buffer.concat([hpackIndexed(3) /* :method POST */, hpackIndexed(7), hpackLiteral(':authority', c.authority), hpackLiteral(':path', `/api/v1/namespaces/${NS}/configmaps`), over]), false);
  await assertHeaderListTooLarge(c, 7, 'a POST too large');
  sendHeaderBlock(c, 9, Buffer.concat([getPrefix(c), hpackIndexed(63), hpackIndexed(62)]), true);
  await assertNamespaceListOk(c, 9, 'a request after the second 431');
  await c.ping();
  assertAlive(c, 'after the 431s');
});

test('the header list limit counts the decoded list: one 4 KB field named by index ~260 times in a 5 KB block is answered 431', async () => {
  const c = await ready();
  const limit = advertisedHeaderListSize(c);
  const fill = 'f'.repeat(4000);
  const entry = 'x-fill'.length + fill.length + 32;
  const repeats = Math.ceil(limit / entry) + 1;
  const block = Buffer.concat([getPrefix(c), hpackLiteral(':path', '/api/v1/namespaces'), hpackLiteral('x-fill', fill, { index: true }), ...Array.from({ length: repeats }, () => hpackIndexed(62))]);
  assert.ok(block.length < 8192, `block of ${block.length} bytes`);
  sendHeaderBlock(c, 1, block, true);
  await assertHeaderListTooLarge(c, 1, `x-fill repeated ${repeats + 1} times`);
  // The field is in the table; once is fine.
  sendHeaderBlock(c, 3, Buffer.concat([getPrefix(c), hpackLiteral(':path', '/api/v1/namespaces'), hpackIndexed(62)]), true);
  await assertNamespaceListOk(c, 3, 'a request with x-fill once');
  assertAlive(c, 'after the 431');
});

test('a header block whose raw bytes are past SETTINGS_MAX_HEADER_LIST_SIZE is a connection error: GOAWAY ENHANCE_YOUR_CALM', async () => {
  const c = await ready();
  const limit = advertisedHeaderListSize(c);
  const big = 'b'.repeat(256 * 1024);
  const count = Math.ceil(limit / big.length);
  sendHeaderBlock(c, 1, Buffer.concat([getPrefix(c), hpackLiteral(':path', '/api/v1/namespaces'), ...Array.from({ length: count }, (_, i) => hpackLiteral(`x-big-${i}`, big))]), true);
  const goaway = await c.waitFor(isGoaway, 'GOAWAY');
  assert.equal(errorCode(goaway), E.ENHANCE_YOUR_CALM, describe(goaway));
  await c.waitClosed('after GOAWAY', 3000);
});

test('frames the client sent before it saw the server’s RST_STREAM (body DATA, trailers) are ignored: no STREAM_CLOSED, no GOAWAY', async () => {
  const c = await ready();
  // A 404 is answered before its body is read: complete response, then RST_STREAM NO_ERROR.
  c.request(1, 'POST', `/api/v1/namespaces/${NS}/nosuchthings`, { extra: [['content-type', 'application/json']], endStream: false });
  const r = await c.response(1, 'the 404');
  assert.equal(statusOf(r.headers[0]), 404);
  await c.waitFor(rstOn(1), 'RST_STREAM after the complete response');
  const resetsBefore = c.frames.filter(rstOn(1)).length;
  c.send(T.DATA, 0, 1, Buffer.from('{"kind":'));
  c.send(T.DATA, 0, 1, Buffer.from('"ConfigMap"'));
  c.send(T.HEADERS, F.END_HEADERS | F.END_STREAM, 1, hpackEncode([['x-trailer', '1']]));
  await c.ping();
  assert.equal(c.frames.filter(rstOn(1)).length, resetsBefore, `late frames answered: ${c.summary()}`);
  assertAlive(c, 'after late DATA and trailers on a stream the server reset');
  c.request(3, 'GET', '/api/v1/namespaces');
  await assertNamespaceList(c, 3, 'a request after them');
});

test('a bad connection preface (HTTP/1.1 bytes on an h2 connection) closes the connection', async () => {
  const c = await raw({ preface: false });
  c.write(Buffer.from('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n'));
  await c.waitClosed('after a bad preface', 3000);
});

test(
  'a bad connection preface is a PROTOCOL_ERROR: a GOAWAY, if the server sends one, says so',
  async () => {
    const c = await raw({ preface: false });
    c.write(Buffer.from('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n'));
    await c.waitClosed('after a bad preface', 3000);
    // RFC 9113 §3.4: a connection error of type PROTOCOL_ERROR; the GOAWAY may be left out (Go's server does).
    const goaway = c.frames.find(isGoaway);
    if (goaway) assert.equal(errorCode(goaway), E.PROTOCOL_ERROR, describe(goaway));
  },
);

test('DATA on stream 0 is a connection error: GOAWAY PROTOCOL_ERROR', async () => {
  const c = await ready();
  c.send(T.DATA, 0, 0, Buffer.from('x'));
  const goaway = await c.waitFor(isGoaway, 'GOAWAY');
  assert.equal(errorCode(goaway), E.PROTOCOL_ERROR, describe(goaway));
  assert.equal(goaway.streamId, 0);
});

// RFC 9113 §5.4.1: "After sending the GOAWAY frame for an error condition, the endpoint MUST close
// the TCP connection."
test(
  'after the GOAWAY for a connection error (DATA on stream 0) the server closes the connection',
  async () => {
    const c = await ready();
    c.send(T.DATA, 0, 0, Buffer.from('x'));
    await c.waitFor(isGoaway, 'GOAWAY');
    await c.waitClosed('after GOAWAY', 3000);
  },
);

test('a header name that is not a lowercase token, or a value with a control character, makes the request malformed: RST_STREAM PROTOCOL_ERROR, and the connection goes on', async () => {
  const c = await ready();
  const bad: Array<[string, string]> = [
    ['Accept', 'application/json'],
    ['x a', '1'],
    ['x:a', '1'],
    ['x-é', '1'],
    ['x-injected', 'a\r\nx-evil: 1'],
    ['x-nul', 'a\u0000b'],
    ['x-del', 'a\u007fb'],
  ];
  let id = 1;
  for (const field of bad) {
    c.request(id, 'GET', '/api/v1/namespaces', { extra: [field] });
    const rst = await c.waitFor(rstOn(id), `RST_STREAM on ${JSON.stringify(field)}`);
    assert.equal(errorCode(rst), E.PROTOCOL_ERROR, describe(rst));
    assert.equal(c.frames.some(headersOn(id)), false, `${JSON.stringify(field)}: a malformed request gets no response`);
    id += 2;
  }
  // a tab inside a value, and token punctuation in a name, are fine
  c.request(id, 'GET', '/api/v1/namespaces', { extra: [['x-tab', 'a\tb'], ["x-!#$%&'*+.^_`|~", '1']] });
  await assertNamespaceList(c, id, 'a request after the malformed ones');
  assertAlive(c, 'after the malformed requests');
});

test('connection-specific fields and a TE other than trailers are answered 400 as Go’s http2 server answers them; the connection goes on', async () => {
  const c = await ready();
  const cases: Array<[Array<[string, string]>, string]> = [
    [[['connection', 'keep-alive']], 'request header "Connection" is not valid in HTTP/2'],
    [[['upgrade', 'websocket'], ['keep-alive', '5']], 'request header "Keep-Alive" is not valid in HTTP/2'],
    [[['transfer-encoding', 'chunked']], 'request header "Transfer-Encoding" is not valid in HTTP/2'],
    [[['te', 'gzip']], 'request header "TE" may only be "trailers" in HTTP/2'],
  ];
  let id = 1;
  for (const [extra, message] of cases) {
    c.request(id, 'GET', '/api/v1/namespaces', { extra });
    const r = await c.response(id, message);
    assert.equal(r.rst, undefined, `${message}: reset`);
    assert.equal(statusOf(r.headers[0]), 400, `${message}: ${JSON.stringify(r.headers[0]?.fields)}`);
    assert.deepEqual(r.headers[0].fields!.filter(([n]) => n === 'content-type' || n === 'x-content-type-options'), [['content-type', 'text/plain; charset=utf-8'], ['x-content-type-options', 'nosniff']]);
    assert.equal(r.body.toString('utf8'), `${message}\n`);
    id += 2;
  }
  // te: trailers is the one TE allowed
  c.request(id, 'GET', '/api/v1/namespaces', { extra: [['te', 'trailers']] });
  await assertNamespaceList(c, id, 'te: trailers');
  assertAlive(c, 'after the 400s');
});

test('RST_STREAM CANCEL from the client ends a watch: no frames on it afterwards; other watches on the connection get the event', async () => {
  const c = await ready();
  c.request(1, 'GET', watchPath('cancel'));
  c.request(3, 'GET', watchPath('cancel'));
  await c.waitFor(headersOn(1), 'watch 1 HEADERS');
  await c.waitFor(headersOn(3), 'watch 3 HEADERS');
  c.send(T.RST_STREAM, 0, 1, rstStreamPayload(E.CANCEL));
  // Frames the server sent before it read the RST_STREAM may still arrive; none after the PING's answer.
  await c.ping();
  const mark = c.frames.length;
  c.request(5, 'GET', watchPath('cancel'));
  await c.waitFor(headersOn(5), 'watch 5 HEADERS');
  await create(`/api/v1/namespaces/${NS}/configmaps`, configMap(NS, 'after-cancel', { k: 'v' }, { t: 'cancel' }));
  for (const id of [3, 5]) {
    const event = await firstEvent(c, id);
    assert.deepEqual([event.type, event.object.metadata.name], ['ADDED', 'after-cancel']);
  }
  await c.ping();
  const after = c.frames.slice(mark).filter((f) => f.streamId === 1);
  assert.deepEqual(after.map(describe), [], 'frames on the cancelled stream');
  assert.equal(c.frames.some(rstOn(3)) || c.frames.some(rstOn(5)), false);
  assertAlive(c, 'after the cancel');
});

test('GOAWAY (NO_ERROR) from the client: the server finishes the open request and closes the connection', async () => {
  const c = await ready();
  c.request(1, 'GET', '/api/v1/namespaces');
  c.send(T.GOAWAY, 0, 0, goAwayPayload(0, E.NO_ERROR));
  await assertNamespaceList(c, 1, 'the request sent before GOAWAY');
  await c.waitClosed('after the client’s GOAWAY', 3000);
});

test(
  'WINDOW_UPDATE with increment 0 on a stream is a stream error: RST_STREAM PROTOCOL_ERROR',
  async () => {
    const onStream = await ready();
    onStream.request(1, 'GET', watchPath('window'));
    await onStream.waitFor(headersOn(1), 'watch HEADERS');
    onStream.send(T.WINDOW_UPDATE, 0, 1, windowUpdatePayload(0));
    const err = await onStream.waitFor((f) => rstOn(1)(f) || isGoaway(f), 'RST_STREAM for a zero increment');
    assert.equal(errorCode(err), E.PROTOCOL_ERROR, describe(err));
    // RFC 9113 §6.9 makes it a stream error; §5.4 lets an endpoint treat any stream error as a
    // connection error, so a GOAWAY PROTOCOL_ERROR is correct too. Go's server sends RST_STREAM.
    if (err.type === T.RST_STREAM) {
      onStream.request(3, 'GET', '/api/v1/namespaces');
      await assertNamespaceList(onStream, 3, 'a request after the stream error');
      assertAlive(onStream, 'after the stream error');
    }
  },
);

test(
  'WINDOW_UPDATE with increment 0 on stream 0 is a connection error: GOAWAY PROTOCOL_ERROR, then close',
  async () => {
    const c = await ready();
    c.send(T.WINDOW_UPDATE, 0, 0, windowUpdatePayload(0));
    const goaway = await c.waitFor(isGoaway, 'GOAWAY for a zero connection increment');
    assert.equal(errorCode(goaway), E.PROTOCOL_ERROR, describe(goaway));
    await c.waitClosed('after GOAWAY', 3000);
  },
);

test(
  'HEADERS on an even (server-initiated) stream id is a connection error: GOAWAY PROTOCOL_ERROR',
  async () => {
    const c = await ready();
    c.request(2, 'GET', '/api/v1/namespaces');
    const goaway = await c.waitFor(isGoaway, 'GOAWAY for stream 2');
    assert.equal(errorCode(goaway), E.PROTOCOL_ERROR, describe(goaway));
    assert.equal(c.frames.some(headersOn(2)), false);
    await c.waitClosed('after GOAWAY', 3000);
  },
);

test(
  'HEADERS on a stream id lower than an earlier one is a connection error: GOAWAY PROTOCOL_ERROR',
  async () => {
    const c = await ready();
    c.request(5, 'GET', '/api/v1/namespaces');
    await assertNamespaceList(c, 5, 'the request on stream 5');
    // RFC 9113 §5.1.1: a new stream's id must exceed every id the client used; stream 3 is closed
    // (implicitly, by the use of 5) and a HEADERS on it is "an unexpected stream identifier".
    c.request(3, 'GET', '/api/v1/namespaces');
    const goaway = await c.waitFor(isGoaway, 'GOAWAY for stream 3 after 5', 3000);
    assert.equal(errorCode(goaway), E.PROTOCOL_ERROR, describe(goaway));
    assert.equal(c.frames.some(headersOn(3)), false);
    await c.waitClosed('after GOAWAY', 3000);
  },
);
