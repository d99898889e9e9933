// The request and response of one HTTP/2 stream, shaped as the parts of Node's
// IncomingMessage/ServerResponse that koa and hearth's handlers use. They are plain event
// emitters rather than Node streams: a request body is a few chunks read once, and a response is
// written by koa's respond() or by a watch, so the stream machinery would only add cost.
import { EventEmitter } from 'node:events';
import type { TLSSocket } from 'node:tls';
import { ErrorCode } from './frames.ts';
import { CONNECTION_SPECIFIC } from './fields.ts';

/**
 * What a request and its response use of their stream and its connection (connection.ts's
 * H2Stream and H2Connection), named here so that this file does not import the connection.
 */
export interface H2StreamPort {
  readonly headersSent: boolean;
  /** Response bytes waiting for window (or for the socket to drain). */
  readonly pendingBytes: number;
  readonly conn: {
    readonly overBufferLimit: boolean;
    consumed(s: H2StreamPort, n: number): void;
    sendHeaders(s: H2StreamPort, status: number, headers: Array<[string, string]>, endStream: boolean): void;
    sendData(s: H2StreamPort, data: Buffer | undefined, end: boolean): boolean;
    reset(s: H2StreamPort, code: ErrorCode): void;
  };
}

/** A request handler; the promise it may return settles when it is done with the stream (see H2Connection.dispatch). */
export type H2Handler = (req: H2Request, res: H2Response) => void | PromiseLike<unknown>;

export class H2Request extends EventEmitter {
  readonly method: string;
  url: string;
  readonly httpVersion = '2.0';
  readonly httpVersionMajor = 2;
  readonly httpVersionMinor = 0;
  readableEnded = false;
  complete = false;
  aborted = false;
  /** Body chunks that arrived before anyone listened for 'data'. */
  private buffered: Buffer[] | undefined;
  private flowing = false;
  private ended = false;
  private endEmitted = false;
  private abortError: Error | undefined;

  constructor(
    private readonly h2: H2StreamPort,
    readonly headers: Record<string, string>,
    /** The connection's TLS socket: the x509 authenticator reads its peer certificate. */
    readonly socket: TLSSocket,
    /** The header fields as they came, repeated ones apart (impersonation reads Impersonate-Group this way). */
    private readonly fields: ReadonlyArray<readonly [string, string]> = [],
  ) {
    super();
    this.method = headers[':method'];
    this.url = headers[':path'];
  }

  /** Node's rawHeaders: name, value, name, value… in the order they came, pseudo-headers included. */
  get rawHeaders(): string[] {
    const raw: string[] = [];
    for (const [name, value] of this.fields) raw.push(name, value);
    return raw;
  }

  /** Listening for 'data' starts the flow, as on a Readable; chunks that waited follow on the next tick. */
  override on(event: string | symbol, listener: (...args: unknown[]) => void): this {
    super.on(event, listener);
    if (event === 'error' && this.abortError) {
      const err = this.abortError;
      process.nextTick(() => {
        if (this.rawListeners('error').includes(listener)) listener.call(this, err);
      });
    } else if (event === 'data' && !this.flowing) {
      this.flowing = true;
      if (this.buffered || this.ended) process.nextTick(() => this.release());
    }
    return this;
  }

  override addListener(event: string | symbol, listener: (...args: unknown[]) => void): this {
    return this.on(event, listener);
  }

  /** Reads and drops the body. */
  resume(): this {
    if (!this.flowing) this.on('data', noop);
    return this;
  }

  /** Body bytes from a DATA frame. */
  push(chunk: Buffer): void {
    if (this.flowing && !this.buffered) {
      this.emit('data', chunk);
      this.h2.conn.consumed(this.h2, chunk.length);
    } else (this.buffered ??= []).push(chunk);
  }

  /** END_STREAM from the peer. */
  pushEnd(): void {
    this.ended = true;
    if (!this.buffered && (this.flowing || this.listenerCount('end') === 0)) this.finishBody();
  }

  private release(): void {
    const chunks = this.buffered;
    this.buffered = undefined;
    if (chunks) for (const c of chunks) this.push(c);
    if (this.ended) this.finishBody();
  }

  private finishBody(): void {
    this.readableEnded = true;
    this.complete = true;
    // Without a reader, 'end' waits for one (a later 'data' listener gets it on the next tick);
    // readBody checks the flag first.
    if (this.flowing && !this.endEmitted) {
      this.endEmitted = true;
      this.emit('end');
    }
  }

  /** Drops body chunks no one read; returns their size. */
  discard(): number {
    let n = 0;
    if (this.buffered) for (const c of this.buffered) n += c.length;
    this.buffered = undefined;
    return n;
  }

  /**
   * The request will not complete: the peer reset the stream, the connection went, or the stream
   * failed (a body that disagrees with its content-length). An 'error' listener added later (a
   * handler that starts reading the body afterwards) gets the error too, instead of waiting for an
   * 'end' that never comes.
   */
  abort(message = 'aborted'): void {
    if (this.aborted) return;
    this.aborted = true;
    this.abortError = Object.assign(new Error(message), { code: 'ECONNRESET' });
    this.emit('aborted');
    if (this.listenerCount('error')) this.emit('error', this.abortError);
  }

  closed(): void {
    this.emit('close');
  }
}

export class H2Response extends EventEmitter {
  statusCode = 200;
  statusMessage = '';
  /** As koa checks it: there is no socket of the response's own, so it is writable until it ends. */
  readonly socket = null;
  private headers: Record<string, string | string[] | number> = Object.create(null);
  private ended = false;
  private done = false;
  private gone = false;

  constructor(private readonly stream: H2StreamPort) {
    super();
  }

  get headersSent(): boolean {
    return this.stream.headersSent;
  }
  get writableEnded(): boolean {
    return this.ended;
  }
  get finished(): boolean {
    return this.ended;
  }
  get writableFinished(): boolean {
    return this.done;
  }
  /** The stream is closed (ended, reset by either side, or its connection gone). */
  get destroyed(): boolean {
    return this.gone;
  }
  /** Response bytes not yet handed to the connection (waiting for flow-control window). */
  get writableLength(): number {
    return this.stream.pendingBytes;
  }
  /**
   * The connection holds more unsent response bytes, all its streams together, than it may: a
   * streaming response (a watch) on it stops, as when its own bytes pile up.
   */
  get connectionOverBufferLimit(): boolean {
    return this.stream.conn.overBufferLimit;
  }

  setHeader(name: string, value: string | string[] | number): this {
    this.headers[name.toLowerCase()] = value;
    return this;
  }
  getHeader(name: string): string | string[] | number | undefined {
    return this.headers[name.toLowerCase()];
  }
  hasHeader(name: string): boolean {
    return this.headers[name.toLowerCase()] !== undefined;
  }
  removeHeader(name: string): void {
    delete this.headers[name.toLowerCase()];
  }
  getHeaderNames(): string[] {
    return Object.keys(this.headers);
  }
  getHeaders(): Record<string, string | string[] | number> {
    return { ...this.headers };
  }

  writeHead(status: number, headers?: Record<string, string | string[] | number>): this {
    this.statusCode = status;
    if (headers) for (const k of Object.keys(headers)) this.setHeader(k, headers[k]);
    return this;
  }

  flushHeaders(): void {
    if (!this.stream.headersSent && !this.gone) this.sendHeaders(false);
  }

  write(chunk: Buffer | string): boolean {
    if (this.ended || this.gone) return false;
    if (!this.stream.headersSent) this.sendHeaders(false);
    return this.stream.conn.sendData(this.stream, typeof chunk === 'string' ? Buffer.from(chunk) : chunk, false);
  }

  end(chunk?: Buffer | string | (() => void), cb?: () => void): this {
    if (typeof chunk === 'function') {
      cb = chunk;
      chunk = undefined;
    }
    if (this.ended || this.gone) return this;
    this.ended = true;
    const body = chunk === undefined ? undefined : typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    if (!this.stream.headersSent) {
      if (!body || body.length === 0) this.sendHeaders(true);
      else {
        this.sendHeaders(false);
        this.stream.conn.sendData(this.stream, body, true);
      }
    } else this.stream.conn.sendData(this.stream, body, true);
    if (cb) this.once('finish', cb);
    return this;
  }

  /** Resets the stream (RST_STREAM CANCEL by default): what is queued is dropped. */
  reset(code: ErrorCode = ErrorCode.CANCEL): void {
    this.stream.conn.reset(this.stream, code);
  }

  /** END_STREAM is queued on the connection. */
  finishedSending(): void {
    if (this.done) return;
    this.done = true;
    this.emit('finish');
  }

  closed(): void {
    if (this.gone) return;
    this.gone = true;
    this.emit('close');
  }

  private sendHeaders(endStream: boolean): void {
    const fields: Array<[string, string]> = [];
    let hasDate = false;
    for (const name of Object.keys(this.headers)) {
      if (CONNECTION_SPECIFIC.has(name)) continue;
      if (name === 'date') hasDate = true;
      const v = this.headers[name];
      if (Array.isArray(v)) for (const one of v) fields.push([name, one]);
      else fields.push([name, typeof v === 'string' ? v : String(v)]);
    }
    if (!hasDate) fields.push(['date', httpDate()]);
    this.stream.conn.sendHeaders(this.stream, this.statusCode, fields, endStream);
  }
}

function noop(): void {}

let dateSecond = 0;
let dateText = '';
/** The Date header, formatted once a second. */
function httpDate(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateText = new Date(now).toUTCString();
  }
  return dateText;
}
