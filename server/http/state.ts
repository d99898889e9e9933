// What a request carries down the middleware chain (koa's ctx.state), declared once: the request
// info the first middleware parses, the user authentication names, and what is parsed or
// recorded once per request. Middleware and handlers take HttpContext, so every read of the
// state is typed.
import type Koa from 'koa';
import type { AuthenticatedState } from '../authentication/user.ts';
import type { RequestInfo } from './request-info.ts';
import type { WarningRecorder } from './warnings.ts';
import type { AuditEvent } from '../audit/event.ts';
import type { AuthorizationResult } from '../authorization/authorizer.ts';

export interface RequestState extends AuthenticatedState {
  /** The request's audit ID (the Audit-Id header the client sent, else a new UUID), set by the first middleware (app.ts). */
  auditId: string;
  /** Set by the first middleware after the Status errors (app.ts). */
  requestInfo: RequestInfo;
  /** The query parameters, parsed on first use (queryOf). */
  query?: URLSearchParams;
  /** The response's Warning headers, made on the first warning (addWarnings). */
  warnings?: WarningRecorder;
  /** The request's audit event, when the audit policy gives it a level above None (http/audit.ts). */
  audit?: AuditEvent;
  /** The authorizers' answer, kept for the audit event's decision and reason annotations. */
  authorization?: AuthorizationResult;
}

export type HttpContext = Koa.ParameterizedContext<RequestState>;
export type HttpMiddleware = Koa.Middleware<RequestState>;
