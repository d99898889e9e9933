// Writing responses: one place encodes bodies and renders errors as Status objects.
import { Readable } from 'node:stream';
import { ApiError, internalError } from '../errors.ts';
import { goJsonText } from '../go/json.ts';
import { encode, negotiateOutput, JSON_FORMAT, type OutputFormat } from './negotiation.ts';
import { queryOf } from './request-info.ts';
import type { HttpContext, HttpMiddleware } from './state.ts';
import { fallbackLogger, type Logger } from '../logging/logger.ts';

/** Go's strconv.ParseBool, true side (its false side and anything unparsable are false). */
const GO_TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
/** Clients kube-apiserver indents for unasked: curl, Wget and browsers. */
const PRETTY_AGENTS = /^(?:curl|Wget|Mozilla\/5\.0)/;

/**
 * Whether a JSON answer is indented, decided as kube-apiserver decides it: `pretty=1` on the
 * Accept type; else the `pretty` parameter when it has a value; else the client's User-Agent.
 */
export function prettyPrint(ctx: HttpContext): boolean {
  const accept = ctx.get('accept');
  if (accept.includes('pretty') && /;\s*pretty=1\s*(?:[;,]|$)/.test(accept)) return true;
  if (ctx.querystring.includes('pretty')) {
    const p = queryOf(ctx).get('pretty');
    if (p) return GO_TRUE.has(p);
  }
  return PRETTY_AGENTS.test(ctx.get('user-agent'));
}

export function send(ctx: HttpContext, code: number, body: unknown, fmt: OutputFormat, pretty = prettyPrint(ctx)): void {
  // (kube's WriteObjectNegotiated: the audit event takes a Status's fields, at RequestResponse the object)
  ctx.state.audit?.logResponseObject(body);
  let bytes = encode(body, fmt.encoding, pretty);
  if (!bytes) {
    // No protobuf form (custom resources): answer JSON, which every protobuf client also accepts.
    fmt = JSON_FORMAT;
    bytes = encode(body, 'json', pretty)!;
  }
  sendEncoded(ctx, code, bytes, fmt);
}

/** A body already encoded in fmt: one Buffer, or pieces to send one after another (a large list). */
export function sendEncoded(ctx: HttpContext, code: number, body: Buffer | readonly Buffer[], fmt: OutputFormat): void {
  ctx.state.audit?.logResponseBytes(body, fmt.encoding === 'json');
  ctx.status = code;
  // Verbatim (no charset), as kube-apiserver answers. Set before the body: Koa then keeps it
  // rather than typing the Buffer application/octet-stream (a MIME lookup) to be overwritten.
  // Straight on the response (what ctx.set does for one string value, minus its arrays).
  if (!ctx.res.headersSent) ctx.res.setHeader('Content-Type', fmt.contentType);
  if (Buffer.isBuffer(body)) {
    setBody(ctx, body);
    return;
  }
  let length = 0;
  for (const piece of body) length += piece.length;
  if (length <= SLICED_BODY_BYTES) ctx.body = Buffer.concat(body, length);
  else {
    ctx.body = new SlicedBody(body);
    ctx.length = length;
  }
}

/**
 * The compact JSON of `value` (as encode writes it) in pieces, the elements of its array member
 * `arrayKey` (a list's items, a Table's rows) encoded a page at a time with `pause` awaited
 * between pages: a large list's encoding, like its reading, must not hold the event loop.
 */
export async function jsonInTurns(value: Record<string, unknown>, arrayKey: string, pause: () => Promise<void>): Promise<Buffer[]> {
  const elements = value[arrayKey] as unknown[];
  const envelope = goJsonText(JSON.stringify({ ...value, [arrayKey]: [] }));
  // (a key can only appear structurally: quotes inside JSON strings are escaped)
  const marker = `"${arrayKey}":[]`;
  const at = envelope.lastIndexOf(marker) + marker.length - 1;
  const pieces = [Buffer.from(envelope.slice(0, at))];
  for (let i = 0; i < elements.length; i += JSON_ELEMENTS_PER_PAUSE) {
    const page = goJsonText(JSON.stringify(elements.slice(i, i + JSON_ELEMENTS_PER_PAUSE)));
    pieces.push(Buffer.from(`${i > 0 ? ',' : ''}${page.slice(1, -1)}`));
    await pause();
  }
  pieces.push(Buffer.from(`${envelope.slice(at)}\n`));
  return pieces;
}
const JSON_ELEMENTS_PER_PAUSE = 64;

/** Bodies longer than this are written a slice per turn of the event loop (SlicedBody), ... */
const SLICED_BODY_BYTES = 128 * 1024;
/** ... in slices of at most this. */
const BODY_SLICE_BYTES = 64 * 1024;

/** The response's body: a large one (the OpenAPI document) as a SlicedBody. */
export function setBody(ctx: HttpContext, body: Buffer): void {
  if (body.length <= SLICED_BODY_BYTES) {
    ctx.body = body;
    return;
  }
  ctx.body = new SlicedBody([body]);
  ctx.length = body.length;
}

/**
 * A large body written one slice per turn of the event loop, each after the I/O that came
 * meanwhile: TLS encrypts all that one write hands it before the write returns, so megabytes in
 * one write would hold the thread for milliseconds while other clients wait. Never copied whole.
 */
class SlicedBody extends Readable {
  private piece = 0;
  private at = 0;
  private started = false;

  constructor(private readonly pieces: readonly Buffer[]) {
    super({ highWaterMark: BODY_SLICE_BYTES });
  }

  override _read(): void {
    if (this.started) setImmediate(() => this.pushSlice());
    else {
      this.started = true;
      this.pushSlice();
    }
  }

  private pushSlice(): void {
    let current = this.pieces[this.piece];
    while (current !== undefined && this.at === current.length) {
      this.at = 0;
      current = this.pieces[++this.piece];
    }
    if (current === undefined) {
      this.push(null);
      return;
    }
    const end = Math.min(this.at + BODY_SLICE_BYTES, current.length);
    this.push(current.subarray(this.at, end));
    this.at = end;
  }
}

/** Outermost middleware: any thrown error becomes a Status in the client's encoding. */
export function statusErrors(logger: Logger = fallbackLogger()): HttpMiddleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (e) {
      const err = toApiError(e);
      // A client that went away mid-request (its body read failed: ECONNRESET) is no server fault.
      if (err.code === 500 && (e as { code?: unknown } | null)?.code !== 'ECONNRESET') logger.error(e, 'Internal error serving a request', 'verb', ctx.method, 'URI', ctx.url, 'audit-ID', ctx.state.auditId);
      if (err.headers) for (const [k, v] of Object.entries(err.headers)) ctx.set(k, v);
      if (ctx.headerSent || !ctx.writable) return;
      let fmt: OutputFormat;
      try {
        fmt = negotiateOutput(ctx.get('accept'), []);
      } catch {
        fmt = JSON_FORMAT;
      }
      send(ctx, err.code, err.toStatus(), fmt);
    }
  };
}

export function toApiError(e: unknown): ApiError {
  if (e instanceof ApiError) return e;
  return internalError((e as Error)?.message ?? String(e));
}
