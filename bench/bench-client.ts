// A lean HTTP/1.1 client over one TLS connection, for benchmarks: on a 2-core machine Node's
// https client costs about as much CPU per request as the server does, so measuring with it
// measures the client. This one writes prebuilt request bytes and parses only the status line,
// Content-Length and body. One request at a time per connection (keep-alive, no pipelining).
import type net from 'node:net';
import tls from 'node:tls';
import { HpackDecoder, HpackEncoder } from '../server/http/h2/hpack.ts';
import { DEFAULT_WINDOW, encodeFrame, Flag, FRAME_HEADER_LENGTH, FrameReader, FrameType, parseSettings, PREFACE, Setting, settingsPayload, windowUpdatePayload, writeFrameHeader } from '../server/http/h2/frames.ts';

export interface TlsCredentials {
  ca: string;
  /** The client certificate and key; empty for a connection without one (a bearer-token user). */
  cert: string;
  key: string;
}

export interface LeanResponse {
  status: number;
  body: Buffer;
  /** The Retry-After header's seconds (a 429's), if there was one. */
  retryAfter?: number;
}

export class LeanConnection {
  private socket!: tls.TLSSocket;
  private buf: Buffer = Buffer.alloc(0);
  /** Once the head is parsed: body chunks gathered without re-copying (large lists). */
  private body?: { status: number; length: number; chunks: Buffer[]; have: number; retryAfter?: number };
  private pending?: { resolve: (r: LeanResponse) => void; reject: (e: Error) => void };
  private readonly hostHeader: string;

  private constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly creds: TlsCredentials,
    private readonly extraHeaders: string,
  ) {
    this.hostHeader = `${host}:${port}`;
  }

  /** `bearerToken`: sent as `Authorization: Bearer` with every request; `extraHeader` ("Name: value"): sent with every request. */
  static async open(url: string, creds: TlsCredentials, opts: { bearerToken?: string; extraHeader?: string } = {}): Promise<LeanConnection> {
    const u = new URL(url);
    const headers = (opts.bearerToken ? `Authorization: Bearer ${opts.bearerToken}\r\n` : '') + (opts.extraHeader ? `${opts.extraHeader}\r\n` : '');
    const c = new LeanConnection(u.hostname, Number(u.port), creds, headers);
    await c.connect();
    return c;
  }

  private async connect(): Promise<void> {
    this.buf = Buffer.alloc(0);
    this.body = undefined;
    await new Promise<void>((resolve, reject) => {
      this.socket = tls.connect({ host: this.host, port: this.port, ca: this.creds.ca, cert: this.creds.cert || undefined, key: this.creds.key || undefined, servername: 'localhost' }, resolve);
      this.socket.once('error', reject);
    });
    this.socket.setNoDelay(true);
    this.socket.on('data', (d) => this.onData(d));
    this.socket.on('error', (e) => this.pending?.reject(e));
    // The server closes a connection idle past its keep-alive timeout (65 s): a request then in
    // flight fails rather than waiting forever, and the next one opens a new connection.
    this.socket.on('close', () => {
      const p = this.pending;
      this.pending = undefined;
      p?.reject(new Error('connection closed by the server'));
    });
  }

  request(method: string, path: string, body?: Buffer, contentType = 'application/json'): Promise<LeanResponse> {
    if (this.socket.destroyed) return this.connect().then(() => this.request(method, path, body, contentType));
    let head = `${method} ${path} HTTP/1.1\r\nHost: ${this.hostHeader}\r\nAccept: application/json\r\n${this.extraHeaders}`;
    if (body) head += `Content-Type: ${contentType}\r\nContent-Length: ${body.length}\r\n`;
    head += '\r\n';
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      this.socket.write(body ? Buffer.concat([Buffer.from(head), body]) : head);
    });
  }

  private onData(d: Buffer): void {
    if (this.body) {
      this.body.chunks.push(d);
      this.body.have += d.length;
    } else {
      this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
      const end = this.buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = this.buf.subarray(0, end).toString('latin1');
      const m = /content-length:\s*(\d+)/i.exec(head);
      if (!m) throw new Error(`lean client needs Content-Length: ${head}`);
      const rest = this.buf.subarray(end + 4);
      this.buf = Buffer.alloc(0);
      const retryAfter = /retry-after:\s*(\d+)/i.exec(head)?.[1];
      this.body = { status: Number(head.slice(9, 12)), length: Number(m[1]), chunks: [rest], have: rest.length, retryAfter: retryAfter === undefined ? undefined : Number(retryAfter) };
    }
    const b = this.body;
    if (b.have < b.length) return;
    const all = b.chunks.length === 1 ? b.chunks[0] : Buffer.concat(b.chunks);
    this.body = undefined;
    this.buf = all.subarray(b.length);
    const p = this.pending!;
    this.pending = undefined;
    p.resolve({ status: b.status, body: all.subarray(0, b.length), retryAfter: b.retryAfter });
  }

  close(): void {
    this.socket.destroy();
  }
}

// ───────────────────────────── HTTP/2 ─────────────────────────────
// A lean HTTP/2 client over one TLS connection (ALPN h2), as a Go client (client-go) uses one:
// many concurrent streams, Go's flow-control windows, and a new connection only when the
// server's SETTINGS_MAX_CONCURRENT_STREAMS is reached. It sends requests as the server's HPACK
// encoder writes fields (no dynamic table of its own), decodes response heads only for their
// :status, and hands DATA over in place, so it costs little next to the server. Frames are read
// and written with the server's codec (server/http/h2/frames.ts).

/** Go's http2 Transport windows (transportDefaultStreamFlow / transportDefaultConnFlow). */
const STREAM_WINDOW = 4 << 20;
const CONN_WINDOW = 1 << 30;

export interface H2StreamHandler {
  /** The response head arrived with this :status. */
  headers(status: number): void;
  /** Response body bytes buf[start, end): valid only during the call. */
  data(buf: Buffer, start: number, end: number): void;
  /** The stream is over: END_STREAM, RST_STREAM, GOAWAY or the connection closed. */
  end(why: string): void;
}

interface H2Stream {
  handler: H2StreamHandler;
  /** Bytes received and not yet given back with WINDOW_UPDATE. */
  unacked: number;
}

export class LeanH2Session {
  private socket!: tls.TLSSocket;
  private readonly frames = new FrameReader((type, flags, id, buf, start, end) => this.frame(type, flags, id, buf, start, end));
  private nextId = 1;
  private readonly streams = new Map<number, H2Stream>();
  private connUnacked = 0;
  private readonly hpack = new HpackDecoder();
  private readonly hpackEncoder = new HpackEncoder();
  private readonly authority: string;
  private gotSettings!: () => void;
  /** The server's SETTINGS_MAX_CONCURRENT_STREAMS (unlimited until it says otherwise). */
  maxConcurrentStreams = Infinity;

  private constructor(host: string, port: number) {
    this.authority = `${host}:${port}`;
  }

  get openStreams(): number {
    return this.streams.size;
  }

  /**
   * Connects, sends the preface with Go's SETTINGS and connection window, and resolves once the
   * server's SETTINGS arrived. With readBuffer, decrypted bytes land in that (shared) buffer.
   */
  static async open(url: string, secureContext: tls.SecureContext, readBuffer?: Buffer): Promise<LeanH2Session> {
    const u = new URL(url);
    const s = new LeanH2Session(u.hostname, Number(u.port));
    const settings = new Promise<void>((resolve) => (s.gotSettings = resolve));
    await new Promise<void>((resolve, reject) => {
      // (onread is net's connect option, which tls.connect passes on; @types/node leaves it out of tls's)
      const options: tls.ConnectionOptions & net.ConnectOpts = { host: u.hostname, port: Number(u.port), secureContext, servername: 'localhost', ALPNProtocols: ['h2'] };
      if (readBuffer) {
        options.onread = {
          buffer: readBuffer,
          callback: (n: number, buf: Uint8Array) => {
            s.onBytes((buf as Buffer).subarray(0, n));
            return true;
          },
        };
      }
      s.socket = tls.connect(options, () => {
        if (s.socket.alpnProtocol !== 'h2') {
          reject(new Error(`server chose ALPN ${s.socket.alpnProtocol}, not h2`));
          s.socket.destroy();
          return;
        }
        resolve();
      });
      s.socket.once('error', reject);
    });
    s.socket.setNoDelay(true);
    if (!readBuffer) s.socket.on('data', (d: Buffer) => s.onBytes(d));
    s.socket.on('error', () => {});
    s.socket.on('close', () => s.endAll('connection closed'));
    const ours = settingsPayload([
      [Setting.ENABLE_PUSH, 0],
      [Setting.INITIAL_WINDOW_SIZE, STREAM_WINDOW],
    ]);
    s.socket.write(Buffer.concat([PREFACE, encodeFrame(FrameType.SETTINGS, 0, 0, ours), windowUpdate(0, CONN_WINDOW - DEFAULT_WINDOW)]));
    await settings;
    return s;
  }

  /** Opens a GET stream; its response reaches handler. Returns the stream id. */
  request(path: string, accept: string, handler: H2StreamHandler): number {
    return this.open('GET', path, accept, handler);
  }

  /** One request with a body, its whole response gathered (as LeanConnection.request). */
  send(method: string, path: string, body: Buffer, contentType = 'application/json'): Promise<LeanResponse> {
    return new Promise((resolve, reject) => {
      let status = 0;
      const chunks: Buffer[] = [];
      this.open(method, path, 'application/json', {
        headers: (s) => (status = s),
        data: (buf, start, end) => chunks.push(Buffer.from(buf.subarray(start, end))),
        end: (why) => (why === 'END_STREAM' ? resolve({ status, body: Buffer.concat(chunks) }) : reject(new Error(`${method} ${path}: ${why}`))),
      }, body, contentType);
    });
  }

  /** HEADERS (END_STREAM unless a body follows), then the body as one DATA frame. */
  private open(method: string, path: string, accept: string, handler: H2StreamHandler, body?: Buffer, contentType?: string): number {
    // One DATA frame within the protocol's default frame size and stream window (the benchmarks' objects are a few KB).
    if (body && body.length > 16_384) throw new Error(`lean HTTP/2 client: a body of ${body.length} bytes is more than one frame`);
    const id = this.nextId;
    this.nextId += 2;
    this.streams.set(id, { handler, unacked: 0 });
    // :method GET/POST and :scheme https are static-table entries; the rest are literals without
    // indexing, with their names from the static table.
    const fields: Array<[string, string]> = [[':method', method], [':scheme', 'https'], [':path', path], [':authority', this.authority], ['accept', accept]];
    if (body) fields.push(['content-type', contentType ?? 'application/json'], ['content-length', String(body.length)]);
    const block = this.hpackEncoder.encode(fields);
    const frame = Buffer.alloc(FRAME_HEADER_LENGTH + block.length + (body ? FRAME_HEADER_LENGTH + body.length : 0));
    writeFrameHeader(frame, 0, block.length, FrameType.HEADERS, (body ? 0 : Flag.END_STREAM) | Flag.END_HEADERS, id);
    block.copy(frame, FRAME_HEADER_LENGTH);
    if (body) {
      const at = FRAME_HEADER_LENGTH + block.length;
      writeFrameHeader(frame, at, body.length, FrameType.DATA, Flag.END_STREAM, id);
      body.copy(frame, at + FRAME_HEADER_LENGTH);
    }
    this.socket.write(frame);
    return id;
  }

  close(): void {
    this.socket.destroy();
  }

  private endAll(why: string): void {
    const all = [...this.streams.values()];
    this.streams.clear();
    for (const s of all) s.handler.end(why);
  }

  private onBytes(d: Buffer): void {
    this.frames.push(d);
  }

  private frame(type: number, flags: number, id: number, buf: Buffer, start: number, end: number): void {
    switch (type) {
      case FrameType.DATA: {
        const s = this.streams.get(id);
        const len = end - start;
        if (flags & Flag.PADDED) {
          end -= buf[start];
          start += 1;
        }
        // Window credit goes back once half a window is used, as Go's transport batches it.
        this.connUnacked += len;
        if (this.connUnacked >= CONN_WINDOW / 2) {
          this.socket.write(windowUpdate(0, this.connUnacked));
          this.connUnacked = 0;
        }
        if (!s) return;
        s.handler.data(buf, start, end);
        s.unacked += len;
        if (flags & Flag.END_STREAM) this.finish(id, 'END_STREAM');
        else if (s.unacked >= STREAM_WINDOW / 2) {
          this.socket.write(windowUpdate(id, s.unacked));
          s.unacked = 0;
        }
        return;
      }
      case FrameType.HEADERS: {
        const s = this.streams.get(id);
        if (flags & Flag.PADDED) end -= buf[start++];
        if (flags & Flag.PRIORITY) start += 5;
        // Every block is decoded, wanted or not: the server's dynamic table must stay in step.
        // (The server's response heads fit one frame: no CONTINUATION is expected.)
        const fields = this.hpack.decode(buf.subarray(start, end));
        if (!s) return;
        s.handler.headers(Number(fields.find(([name]) => name === ':status')?.[1] ?? 0));
        if (flags & Flag.END_STREAM) this.finish(id, 'END_STREAM');
        return;
      }
      case FrameType.RST_STREAM:
        this.finish(id, `RST_STREAM (error code ${buf.readUInt32BE(start)})`);
        return;
      case FrameType.SETTINGS: {
        if (flags & Flag.ACK) return;
        const limit = parseSettings(buf.subarray(start, end)).get(Setting.MAX_CONCURRENT_STREAMS);
        if (limit !== undefined) this.maxConcurrentStreams = limit;
        this.socket.write(encodeFrame(FrameType.SETTINGS, Flag.ACK, 0));
        this.gotSettings();
        return;
      }
      case FrameType.PING:
        if (flags & Flag.ACK) return;
        this.socket.write(encodeFrame(FrameType.PING, Flag.ACK, 0, buf.subarray(start, end)));
        return;
      case FrameType.GOAWAY:
        this.endAll(`GOAWAY (error code ${buf.readUInt32BE(start + 4)})`);
        return;
      default:
        // WINDOW_UPDATE, CONTINUATION of a head already judged, PRIORITY: nothing to do.
        return;
    }
  }

  private finish(id: number, why: string): void {
    const s = this.streams.get(id);
    if (!s) return;
    this.streams.delete(id);
    s.handler.end(why);
  }
}

function windowUpdate(id: number, increment: number): Buffer {
  return encodeFrame(FrameType.WINDOW_UPDATE, 0, id, windowUpdatePayload(increment));
}

// ───────────────────────────── watch event streams ─────────────────────────────
// What the watch benchmark's watchers do with the bytes of a JSON watch: split them into events
// and read each one's type, resourceVersion and send timestamp (data["bench-t"], a decimal of
// performance.timeOrigin + performance.now()) without making strings of them.

/** Where delivery latencies go (a histogram). */
export interface LatencySink {
  add(ms: number): void;
}

const TYPE_ADDED = Buffer.from('{"type":"ADDED"');
const RV_NEEDLE = Buffer.from('"resourceVersion":"');
/** Where RV_NEEDLE has its 'V'. */
const RV_V = RV_NEEDLE.indexOf('V');
const T_NEEDLE = Buffer.from('"bench-t":"');

/** One watch's event stream (newline-delimited JSON): records each event's resourceVersion and delivery latency. */
export class WatchStream {
  /** An event split across reads (copied: reads land in a shared buffer). */
  private partial: Buffer | null = null;
  rvs = new Uint32Array(1024);
  n = 0;
  last = 0;
  bytes = 0;
  ended = false;
  failures: string[] = [];
  /** Where the last event's resourceVersion needle had its 'V', from the event's start. */
  private rvAt = 0;

  /**
   * offsetMs: this clock minus the writer's. generalOnly: always search for the fields (the
   * reference the one-pass read of the usual layout is tested against).
   */
  constructor(private readonly hist: LatencySink, private readonly offsetMs: number, private readonly generalOnly = false) {}

  fail(msg: string): void {
    if (this.failures.length < 5) this.failures.push(msg);
  }

  /** Event-stream bytes buf[start, end): newline-terminated JSON events. Read in place (no view per call). */
  body(buf: Buffer, start: number, end: number, now: number): void {
    let s = start;
    if (this.partial) {
      const nl = buf.indexOf(0x0a, start);
      if (nl < 0 || nl >= end) {
        this.partial = Buffer.concat([this.partial, buf.subarray(start, end)]);
        return;
      }
      const ev = Buffer.concat([this.partial, buf.subarray(start, nl)]);
      this.partial = null;
      this.event(ev, 0, ev.length, now);
      s = nl + 1;
    }
    for (;;) {
      // The search may run past `end` into bytes of other streams: a newline there is not ours.
      const nl = buf.indexOf(0x0a, s);
      if (nl < 0 || nl >= end) break;
      this.event(buf, s, nl, now);
      s = nl + 1;
    }
    if (s < end) this.partial = Buffer.from(buf.subarray(s, end));
  }

  /**
   * The event b[s, nl), read in place: the send timestamp is the last data field, found from the
   * end backwards; the resourceVersion comes early in the metadata (after name, namespace and
   * uid, as kube orders ObjectMeta), found from the start. A thousand watchers parse half a
   * million events a second on the same two cores as the server.
   */
  private event(b: Buffer, s: number, nl: number, now: number): void {
    if (!startsWith(b, s, TYPE_ADDED)) {
      this.fail(`unexpected event: ${b.toString('utf8', s, Math.min(nl, s + 300))}`);
      return;
    }
    // The usual layout, `..."data":{"bench-t":"<t>","mode":"watched"}}}`, is read with one pass
    // backwards: the '-' of "bench-t" is the last one in the event. The first "resourceVersion"
    // after the event's start is the object's. Any other layout takes the general search.
    let tStart = -1;
    let ri = -1;
    let i = nl - 1;
    while (i > s && b[i] !== 0x2d) i--;
    if (!this.generalOnly && startsWith(b, i - 6, T_NEEDLE)) {
      tStart = i - 6;
      // Where the last event had it, give or take a few bytes (names grow a digit at a time);
      // else from the start.
      const near = s + Math.max(RV_V, this.rvAt - 8);
      ri = rvNeedleAt(b, near, tStart);
      if (ri < 0 && near > s + RV_V) ri = rvNeedleAt(b, s + RV_V, tStart);
      if (ri >= 0) this.rvAt = ri - s + RV_V;
    }
    if (ri < 0) {
      tStart = lastIndexOf(b, T_NEEDLE, nl - T_NEEDLE.length, s);
      ri = tStart < 0 ? -1 : lastIndexOf(b, RV_NEEDLE, tStart - RV_NEEDLE.length, s);
      if (ri < 0) {
        this.fail(`event without a resourceVersion or send timestamp: ${b.toString('utf8', s, Math.min(nl, s + 300))}`);
        return;
      }
    }
    let rv = 0;
    for (let k = ri + RV_NEEDLE.length; k < nl; k++) {
      const c = b[k];
      if (c < 0x30 || c > 0x39) break;
      rv = rv * 10 + (c - 0x30);
    }
    if (rv <= this.last) this.fail(`resourceVersion ${rv} after ${this.last} (duplicate or out of order)`);
    this.last = Math.max(this.last, rv);
    if (this.n === this.rvs.length) {
      const bigger = new Uint32Array(this.rvs.length * 2);
      bigger.set(this.rvs);
      this.rvs = bigger;
    }
    this.rvs[this.n++] = rv;
    // The timestamp is a decimal like 1763818448123.4567.
    let t = 0;
    let decimals = -1;
    for (let k = tStart + T_NEEDLE.length; k < nl; k++) {
      const c = b[k];
      if (c === 0x2e) {
        decimals = 0;
        continue;
      }
      if (c < 0x30 || c > 0x39) break;
      t = t * 10 + (c - 0x30);
      if (decimals >= 0) decimals++;
    }
    this.hist.add(now - this.offsetMs - (decimals > 0 ? t / POW10[decimals] : t));
  }
}

const POW10 = Array.from({ length: 23 }, (_, i) => 10 ** i);

/**
 * Where RV_NEEDLE starts, its 'V' looked for in [from, to), or -1. A loop over bytes: Buffer.indexOf
 * costs more per call than the bytes it would search; 'V' is rare in these events.
 */
function rvNeedleAt(b: Buffer, from: number, to: number): number {
  for (let k = from; k < to; k++) if (b[k] === 0x56 && startsWith(b, k - RV_V, RV_NEEDLE)) return k - RV_V;
  return -1;
}

function startsWith(b: Buffer, at: number, prefix: Buffer): boolean {
  if (at < 0 || at + prefix.length > b.length) return false;
  for (let k = 0; k < prefix.length; k++) if (b[at + k] !== prefix[k]) return false;
  return true;
}

/** The last occurrence of needle in b starting at or before `from` and not before `lo`; -1 if none. A plain loop: cheaper than Buffer#lastIndexOf's native call for these short scans. */
function lastIndexOf(b: Buffer, needle: Buffer, from: number, lo: number): number {
  const first = needle[0];
  for (let i = Math.min(from, b.length - needle.length); i >= lo; i--) {
    if (b[i] === first && startsWith(b, i, needle)) return i;
  }
  return -1;
}
