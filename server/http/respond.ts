// Writing responses: one place encodes bodies and renders errors as Status objects.
import { ApiError, internalError } from '../errors.ts';
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

/** A body already encoded in fmt. */
export function sendEncoded(ctx: HttpContext, code: number, bytes: Buffer, fmt: OutputFormat): void {
  ctx.state.audit?.logResponseBytes(bytes, fmt.encoding === 'json');
  ctx.status = code;
  // Verbatim (no charset), as kube-apiserver answers. Set before the body: Koa then keeps it
  // rather than typing the Buffer application/octet-stream (a MIME lookup) to be overwritten.
  // Straight on the response (what ctx.set does for one string value, minus its arrays).
  if (!ctx.res.headersSent) ctx.res.setHeader('Content-Type', fmt.contentType);
  ctx.body = bytes;
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
