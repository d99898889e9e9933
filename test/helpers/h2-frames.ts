// A tiny raw HTTP/2 client for frame-level protocol tests: TLS with ALPN h2, the connection
// preface, frames written as given, and every incoming frame kept as {type, flags, streamId,
// payload}. Requests are encoded with a minimal HPACK encoder (literal fields with new names and no
// Huffman, without indexing unless a test builds a block with hpackLiteral/hpackIndexed to use the
// server's dynamic table). Tests assert mostly on frame types, flags, stream ids, error codes and
// DATA bytes, which hold for any correct server; the server's header blocks are decoded too (with
// hearth's HPACK decoder, tested on its own against RFC 7541's examples) for the few assertions on
// a response's :status.
import net from 'node:net';
import tls from 'node:tls';
import { randomBytes } from 'node:crypto';
import { encodeInteger, HpackDecoder } from '../../server/http/h2/hpack.ts';

export const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

export const T = { DATA: 0x0, HEADERS: 0x1, PRIORITY: 0x2, RST_STREAM: 0x3, SETTINGS: 0x4, PUSH_PROMISE: 0x5, PING: 0x6, GOAWAY: 0x7, WINDOW_UPDATE: 0x8, CONTINUATION: 0x9 } as const;
export const F = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4, PADDED: 0x8, PRIORITY: 0x20 } as const;
export const E = {
  NO_ERROR: 0x0,
  PROTOCOL_ERROR: 0x1,
  INTERNAL_ERROR: 0x2,
  FLOW_CONTROL_ERROR: 0x3,
  SETTINGS_TIMEOUT: 0x4,
  STREAM_CLOSED: 0x5,
  FRAME_SIZE_ERROR: 0x6,
  REFUSED_STREAM: 0x7,
  CANCEL: 0x8,
  COMPRESSION_ERROR: 0x9,
  CONNECT_ERROR: 0xa,
  ENHANCE_YOUR_CALM: 0xb,
  INADEQUATE_SECURITY: 0xc,
  HTTP_1_1_REQUIRED: 0xd,
} as const;
export const S = { HEADER_TABLE_SIZE: 0x1, ENABLE_PUSH: 0x2, MAX_CONCURRENT_STREAMS: 0x3, INITIAL_WINDOW_SIZE: 0x4, MAX_FRAME_SIZE: 0x5, MAX_HEADER_LIST_SIZE: 0x6 } as const;

const TYPE_NAMES = Object.fromEntries(Object.entries(T).map(([k, v]) => [v, k])) as Record<number, string>;

export interface Frame {
  type: number;
  flags: number;
  streamId: number;
  payload: Buffer;
  /** On a HEADERS frame: the decoded header block, once its last CONTINUATION has arrived. */
  fields?: Array<[string, string]>;
}

/** A frame's description for assertion messages. */
export function describe(f: Frame): string {
  let extra = '';
  if (f.type === T.RST_STREAM || f.type === T.GOAWAY) extra = ` code=${errorCode(f)}`;
  if (f.type === T.WINDOW_UPDATE) extra = ` increment=${f.payload.readUInt32BE(0) & 0x7fffffff}`;
  return `${TYPE_NAMES[f.type] ?? `type ${f.type}`} stream=${f.streamId} flags=0x${f.flags.toString(16)} len=${f.payload.length}${extra}`;
}

export function encodeFrame(type: number, flags: number, streamId: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(streamId & 0x7fffffff, 5);
  return Buffer.concat([head, payload]);
}

function hpackString(s: string): Buffer {
  const bytes = Buffer.from(s, 'latin1');
  return Buffer.concat([encodeInteger(bytes.length, 7), bytes]);
}

/**
 * One literal field with a new name and no Huffman coding: without indexing (RFC 7541 §6.2.2) or,
 * with `index`, with incremental indexing (§6.2.1: the field becomes dynamic-table entry 62).
 */
export function hpackLiteral(name: string, value: string, opts: { index?: boolean } = {}): Buffer {
  return Buffer.concat([Buffer.from([opts.index ? 0x40 : 0x00]), hpackString(name), hpackString(value)]);
}

/** An indexed field (RFC 7541 §6.1): 1-61 the static table, 62 and up the dynamic table (newest first). */
export function hpackIndexed(index: number): Buffer {
  return encodeInteger(index, 7, 0x80);
}

/** A header block of literal fields without indexing, with new names and no Huffman coding (RFC 7541 §6.2.2). */
export function hpackEncode(headers: [string, string][]): Buffer {
  return Buffer.concat(headers.map(([name, value]) => hpackLiteral(name, value)));
}

/** The :status of a decoded response HEADERS frame. */
export function statusOf(f: Frame): number | undefined {
  const field = f.fields?.find(([name]) => name === ':status');
  return field ? Number(field[1]) : undefined;
}

export function settingsPayload(entries: [number, number][]): Buffer {
  const b = Buffer.alloc(entries.length * 6);
  entries.forEach(([id, value], i) => {
    b.writeUInt16BE(id, i * 6);
    b.writeUInt32BE(value, i * 6 + 2);
  });
  return b;
}

export function parseSettings(payload: Buffer): Map<number, number> {
  const m = new Map<number, number>();
  for (let i = 0; i + 6 <= payload.length; i += 6) m.set(payload.readUInt16BE(i), payload.readUInt32BE(i + 2));
  return m;
}

/** The error code of an RST_STREAM or GOAWAY frame. */
export function errorCode(f: Frame): number {
  return f.type === T.GOAWAY ? f.payload.readUInt32BE(4) : f.payload.readUInt32BE(0);
}

/** A DATA frame's data without its padding. */
export function dataOf(f: Frame): Buffer {
  if (!(f.flags & F.PADDED)) return f.payload;
  const pad = f.payload[0];
  return f.payload.subarray(1, f.payload.length - pad);
}

export function windowUpdatePayload(increment: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(increment & 0x7fffffff);
  return b;
}

export function rstPayload(code: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(code);
  return b;
}

export function goawayPayload(lastStreamId: number, code: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeUInt32BE(lastStreamId & 0x7fffffff, 0);
  b.writeUInt32BE(code, 4);
  return b;
}

export interface ConnectOptions {
  ca: string;
  cert?: string;
  key?: string;
  /** The client's own address (another loopback address is another client). */
  localAddress?: string;
  /** Send the connection preface and this SETTINGS frame at once (default: true, no entries). */
  preface?: boolean;
  settings?: [number, number][];
  /** ACK the server's SETTINGS frames (default true). */
  ackSettings?: boolean;
  /**
   * Return every received DATA frame's bytes to the server at once: WINDOW_UPDATE on the connection
   * and (unless it ended) on the stream (default true). Tests of flow control turn this off.
   */
  autoWindowUpdate?: boolean;
}

export interface Response {
  /** The HEADERS frames (response headers, maybe trailers) on the stream. */
  headers: Frame[];
  body: Buffer;
  /** The RST_STREAM frame that ended the stream, if one did. */
  rst?: Frame;
}

export class RawH2 {
  readonly frames: Frame[] = [];
  closed = false;
  readonly whenClosed: Promise<void>;
  /** Error of the socket (e.g. ECONNRESET), if one occurred. */
  socketError?: Error;
  autoWindowUpdate: boolean;
  /** Called with each frame as it arrives, before waiters see it (and before the automatic WINDOW_UPDATE). */
  onFrame?: (f: Frame) => void;
  private buf: Buffer = Buffer.alloc(0);
  private waiters = new Set<() => void>();
  private ackSettings: boolean;
  /** The :authority of requests on this connection. */
  readonly authority: string;
  /** The server's header blocks are decoded in order (the dynamic table spans them). */
  private decoder = new HpackDecoder();
  private headerBlock: { frame: Frame; chunks: Buffer[] } | undefined;
  /** The first header block that failed to decode, if one did. */
  headerError?: Error;

  private constructor(
    readonly socket: tls.TLSSocket,
    opts: ConnectOptions,
    authority: string,
  ) {
    this.ackSettings = opts.ackSettings ?? true;
    this.autoWindowUpdate = opts.autoWindowUpdate ?? true;
    this.authority = authority;
    socket.on('data', (d: Buffer) => this.onData(d));
    socket.on('error', (e) => (this.socketError = e));
    this.whenClosed = new Promise((resolve) =>
      socket.once('close', () => {
        this.closed = true;
        this.wake();
        resolve();
      }),
    );
  }

  static connect(url: string, opts: ConnectOptions): Promise<RawH2> {
    const u = new URL(url);
    return new Promise((resolve, reject) => {
      // (from another address: over a TCP socket bound to it)
      const tcp = opts.localAddress ? net.connect({ host: u.hostname, port: Number(u.port), localAddress: opts.localAddress }) : undefined;
      const socket = tls.connect({ socket: tcp, host: u.hostname, port: Number(u.port), ca: opts.ca, cert: opts.cert, key: opts.key, servername: 'localhost', ALPNProtocols: ['h2'] }, () => {
        socket.off('error', reject);
        if (socket.alpnProtocol !== 'h2') {
          socket.destroy();
          reject(new Error(`ALPN chose ${socket.alpnProtocol}, not h2`));
          return;
        }
        const c = new RawH2(socket, opts, `localhost:${u.port}`);
        if (opts.preface ?? true) c.write(Buffer.concat([PREFACE, encodeFrame(T.SETTINGS, 0, 0, settingsPayload(opts.settings ?? []))]));
        resolve(c);
      });
      socket.once('error', reject);
    });
  }

  write(b: Buffer): void {
    if (!this.socket.destroyed) this.socket.write(b);
  }

  send(type: number, flags: number, streamId: number, payload?: Buffer): void {
    this.write(encodeFrame(type, flags, streamId, payload));
  }

  /** The request pseudo-header fields for a path (then `extra`), as an HPACK block. */
  requestBlock(method: string, path: string, extra: [string, string][] = [['accept', 'application/json']]): Buffer {
    return hpackEncode([[':method', method], [':scheme', 'https'], [':authority', this.authority], [':path', path], ...extra]);
  }

  /** HEADERS with END_HEADERS (and END_STREAM unless `endStream` is false). */
  request(streamId: number, method: string, path: string, opts: { extra?: [string, string][]; endStream?: boolean } = {}): void {
    this.send(T.HEADERS, F.END_HEADERS | (opts.endStream === false ? 0 : F.END_STREAM), streamId, this.requestBlock(method, path, opts.extra));
  }

  close(): void {
    this.socket.destroy();
  }

  /** The first received frame (from index `from`) that matches, waiting up to `ms`; rejects on timeout or close. */
  waitFor(pred: (f: Frame) => boolean, what: string, ms = 5000, from = 0): Promise<Frame> {
    return new Promise((resolve, reject) => {
      let i = from;
      const check = () => {
        for (; i < this.frames.length; i++) {
          if (pred(this.frames[i])) return done(undefined, this.frames[i]);
        }
        if (this.closed) done(new Error(`${what}: the connection closed first; frames: ${this.summary()}`));
      };
      const timer = setTimeout(() => done(new Error(`${what}: not within ${ms} ms; frames: ${this.summary()}`)), ms);
      const done = (err?: Error, f?: Frame) => {
        clearTimeout(timer);
        this.waiters.delete(check);
        if (err) reject(err);
        else resolve(f!);
      };
      this.waiters.add(check);
      check();
    });
  }

  /** Resolves once the connection is closed; rejects after `ms`. */
  waitClosed(what: string, ms = 5000): Promise<void> {
    let timer: NodeJS.Timeout;
    return Promise.race([
      this.whenClosed,
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: the connection was not closed within ${ms} ms; frames: ${this.summary()}`)), ms))),
    ]).finally(() => clearTimeout(timer));
  }

  /** A PING round trip: every frame the server sent before handling our earlier frames has arrived then. */
  async ping(ms = 5000): Promise<Buffer> {
    const data = randomBytes(8);
    this.send(T.PING, 0, 0, data);
    await this.waitFor((f) => f.type === T.PING && (f.flags & F.ACK) !== 0 && f.payload.equals(data), 'PING ACK', ms);
    return data;
  }

  /** The stream's response: its HEADERS, the DATA bytes up to END_STREAM, or the RST_STREAM that ended it. */
  async response(streamId: number, what: string, ms = 5000): Promise<Response> {
    const end = await this.waitFor(
      (f) => f.streamId === streamId && (f.type === T.RST_STREAM || ((f.type === T.DATA || f.type === T.HEADERS) && (f.flags & F.END_STREAM) !== 0)),
      what,
      ms,
    );
    const on = this.frames.filter((f) => f.streamId === streamId && this.frames.indexOf(f) <= this.frames.indexOf(end));
    return {
      headers: on.filter((f) => f.type === T.HEADERS),
      body: Buffer.concat(on.filter((f) => f.type === T.DATA).map(dataOf)),
      rst: end.type === T.RST_STREAM ? end : undefined,
    };
  }

  /** Received frames as text, for assertion messages (the last `n`). */
  summary(n = 30): string {
    const list = this.frames.slice(-n).map(describe);
    return `${this.frames.length > n ? `(${this.frames.length - n} earlier) ` : ''}[${list.join('; ')}]`;
  }

  /** Gathers HEADERS + CONTINUATION and sets the HEADERS frame's `fields` at END_HEADERS. */
  private collectHeaders(f: Frame): void {
    if (f.type === T.HEADERS) {
      let block = dataOf(f);
      if (f.flags & F.PRIORITY) block = block.subarray(5);
      this.headerBlock = { frame: f, chunks: [block] };
    } else if (f.type === T.CONTINUATION && this.headerBlock) this.headerBlock.chunks.push(f.payload);
    else return;
    if (!(f.flags & F.END_HEADERS)) return;
    const hb = this.headerBlock!;
    this.headerBlock = undefined;
    try {
      hb.frame.fields = this.decoder.decode(Buffer.concat(hb.chunks));
    } catch (e) {
      this.headerError ??= e as Error;
    }
  }

  private wake(): void {
    for (const w of [...this.waiters]) w();
  }

  private onData(d: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
    while (this.buf.length >= 9) {
      const len = this.buf.readUIntBE(0, 3);
      if (this.buf.length < 9 + len) break;
      const f: Frame = { type: this.buf[3], flags: this.buf[4], streamId: this.buf.readUInt32BE(5) & 0x7fffffff, payload: Buffer.from(this.buf.subarray(9, 9 + len)) };
      this.buf = this.buf.subarray(9 + len);
      this.collectHeaders(f);
      this.frames.push(f);
      this.onFrame?.(f);
      if (f.type === T.SETTINGS && !(f.flags & F.ACK) && this.ackSettings) this.send(T.SETTINGS, F.ACK, 0);
      if (f.type === T.DATA && f.payload.length > 0 && this.autoWindowUpdate) {
        this.send(T.WINDOW_UPDATE, 0, 0, windowUpdatePayload(f.payload.length));
        if (!(f.flags & F.END_STREAM)) this.send(T.WINDOW_UPDATE, 0, f.streamId, windowUpdatePayload(f.payload.length));
      }
    }
    this.wake();
  }
}
