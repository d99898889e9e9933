// A tiny raw HTTP/2 client for frame-level protocol tests: TLS with ALPN h2, the connection
// preface, frames written as given, and every incoming frame kept as {type, flags, streamId,
// payload}. Frames are written and read with the server's codec (server/http/h2/frames.ts); what
// is here is the tests' convenience on top of it. Requests are encoded with a minimal HPACK encoder (literal fields with new names and no
// Huffman, without indexing unless a test builds a block with hpackLiteral/hpackIndexed to use the
// server's dynamic table). Tests assert mostly on frame types, flags, stream ids, error codes and
// DATA bytes, which hold for any correct server; the server's header blocks are decoded too (with
// hearth's HPACK decoder, tested on its own against RFC 7541's examples) for the few assertions on
// a response's :status.
import net from 'node:net';
import tls from 'node:tls';
import { randomBytes } from 'node:crypto';
import { encodeInteger, HpackDecoder } from '../../server/http/h2/hpack.ts';
import { encodeFrame, errorCodeOf, Flag, FrameReader, FrameType, PREFACE, settingsPayload, unpadded, windowIncrement, windowUpdatePayload } from '../../server/http/h2/frames.ts';

// The codec is the server's (server/http/h2/frames.ts); the tests name its enums briefly.
export { FrameType as T, Flag as F, ErrorCode as E, Setting as S } from '../../server/http/h2/frames.ts';
export { encodeFrame, goAwayPayload, parseSettings, rstStreamPayload, settingsPayload, windowUpdatePayload } from '../../server/http/h2/frames.ts';

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
  if (f.type === FrameType.RST_STREAM || f.type === FrameType.GOAWAY) extra = ` code=${errorCode(f)}`;
  if (f.type === FrameType.WINDOW_UPDATE) extra = ` increment=${windowIncrement(f.payload)}`;
  return `${FrameType[f.type] ?? `type ${f.type}`} stream=${f.streamId} flags=0x${f.flags.toString(16)} len=${f.payload.length}${extra}`;
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

/** The error code of an RST_STREAM or GOAWAY frame. */
export function errorCode(f: Frame): number {
  return errorCodeOf(f.type, f.payload);
}

/** A DATA frame's data without its padding. */
export function dataOf(f: Frame): Buffer {
  return unpadded(f.flags, f.payload) ?? f.payload;
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
  /** Received frames are kept: their payloads are copied out of the reader's buffer. */
  private readonly reader = new FrameReader((type, flags, streamId, buf, start, end) => this.onFrameRead({ type, flags, streamId, payload: Buffer.from(buf.subarray(start, end)) }));
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
        if (opts.preface ?? true) c.write(Buffer.concat([PREFACE, encodeFrame(FrameType.SETTINGS, 0, 0, settingsPayload(opts.settings ?? []))]));
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
    this.send(FrameType.HEADERS, Flag.END_HEADERS | (opts.endStream === false ? 0 : Flag.END_STREAM), streamId, this.requestBlock(method, path, opts.extra));
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
    this.send(FrameType.PING, 0, 0, data);
    await this.waitFor((f) => f.type === FrameType.PING && (f.flags & Flag.ACK) !== 0 && f.payload.equals(data), 'PING ACK', ms);
    return data;
  }

  /** The stream's response: its HEADERS, the DATA bytes up to END_STREAM, or the RST_STREAM that ended it. */
  async response(streamId: number, what: string, ms = 5000): Promise<Response> {
    const end = await this.waitFor(
      (f) => f.streamId === streamId && (f.type === FrameType.RST_STREAM || ((f.type === FrameType.DATA || f.type === FrameType.HEADERS) && (f.flags & Flag.END_STREAM) !== 0)),
      what,
      ms,
    );
    const on = this.frames.filter((f) => f.streamId === streamId && this.frames.indexOf(f) <= this.frames.indexOf(end));
    return {
      headers: on.filter((f) => f.type === FrameType.HEADERS),
      body: Buffer.concat(on.filter((f) => f.type === FrameType.DATA).map(dataOf)),
      rst: end.type === FrameType.RST_STREAM ? end : undefined,
    };
  }

  /** Received frames as text, for assertion messages (the last `n`). */
  summary(n = 30): string {
    const list = this.frames.slice(-n).map(describe);
    return `${this.frames.length > n ? `(${this.frames.length - n} earlier) ` : ''}[${list.join('; ')}]`;
  }

  /** Gathers HEADERS + CONTINUATION and sets the HEADERS frame's `fields` at END_HEADERS. */
  private collectHeaders(f: Frame): void {
    if (f.type === FrameType.HEADERS) {
      let block = dataOf(f);
      if (f.flags & Flag.PRIORITY) block = block.subarray(5);
      this.headerBlock = { frame: f, chunks: [block] };
    } else if (f.type === FrameType.CONTINUATION && this.headerBlock) this.headerBlock.chunks.push(f.payload);
    else return;
    if (!(f.flags & Flag.END_HEADERS)) return;
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
    this.reader.push(d);
    this.wake();
  }

  private onFrameRead(f: Frame): void {
    this.collectHeaders(f);
    this.frames.push(f);
    this.onFrame?.(f);
    if (f.type === FrameType.SETTINGS && !(f.flags & Flag.ACK) && this.ackSettings) this.send(FrameType.SETTINGS, Flag.ACK, 0);
    if (f.type === FrameType.DATA && f.payload.length > 0 && this.autoWindowUpdate) {
      this.send(FrameType.WINDOW_UPDATE, 0, 0, windowUpdatePayload(f.payload.length));
      if (!(f.flags & Flag.END_STREAM)) this.send(FrameType.WINDOW_UPDATE, 0, f.streamId, windowUpdatePayload(f.payload.length));
    }
  }
}
