// The audit filter's HTTP side (kube's WithAudit and WithFailedAuthenticationAudit,
// k8s.io/apiserver/pkg/endpoints/filters/audit.go and authn_audit.go): the policy asked with the
// authenticated user and the request info; RequestReceived before the rest of the chain runs;
// ResponseStarted for long-running requests once their headers are out; ResponseComplete with the
// response's status, the impersonated user and the authorizer's decision and reason. Handlers log
// request and response objects through ctx.state.audit (only there when the request is audited).
import type Koa from 'koa';
import type { Auditor } from '../audit/auditor.ts';
import { eventUser, nowMicros, type AuditEvent } from '../audit/event.ts';
import type { AuditAttributes } from '../audit/policy.ts';
import type { HttpContext, HttpMiddleware, RequestState } from './state.ts';
import { toApiError } from './respond.ts';
import { isLongRunningRequest } from '../util/long-running.ts';


const DECISION_ANNOTATION = 'authorization.k8s.io/decision';
const REASON_ANNOTATION = 'authorization.k8s.io/reason';

function attributesOf(ctx: HttpContext, authenticated: boolean): AuditAttributes {
  const ri = ctx.state.requestInfo;
  return {
    user: authenticated ? ctx.state.user : undefined,
    verb: ri.verb,
    isResourceRequest: ri.isResourceRequest,
    path: ri.path,
    apiGroup: ri.apiGroup,
    namespace: ri.namespace,
    resource: ri.resource,
    subresource: ri.subresource,
    name: ri.name,
  };
}

/** A new event from what the request already carries; undefined at level None. */
function eventFor(auditor: Auditor, ctx: HttpContext, authenticated: boolean): AuditEvent | undefined {
  const received = nowMicros();
  const config = auditor.evaluate(attributesOf(ctx, authenticated));
  if (config.level === 'None') return undefined;
  const ri = ctx.state.requestInfo;
  const h = ctx.req.headers;
  let objectRef: AuditEvent['objectRef'];
  if (ri.isResourceRequest) {
    objectRef = {};
    if (ri.resource) objectRef.resource = ri.resource;
    if (ri.namespace) objectRef.namespace = ri.namespace;
    if (ri.name) objectRef.name = ri.name;
    if (ri.apiGroup) objectRef.apiGroup = ri.apiGroup;
    if (ri.apiVersion) objectRef.apiVersion = ri.apiVersion;
    if (ri.subresource) objectRef.subresource = ri.subresource;
  }
  return auditor.newEvent(
    config,
    {
      auditId: ctx.state.auditId,
      requestURI: ctx.req.url ?? ctx.url,
      verb: ri.verb,
      user: authenticated ? ctx.state.user : undefined,
      forwardedFor: h['x-forwarded-for'] as string | undefined,
      realIp: h['x-real-ip'] as string | undefined,
      remoteAddress: ctx.req.socket?.remoteAddress,
      userAgent: (h['user-agent'] as string | undefined) ?? '',
      objectRef,
    },
    received,
  );
}

/** responsewriters.InternalError's plain-text answer (what kube sends when a strict backend fails). */
function rejectForAudit(ctx: HttpContext): void {
  ctx.status = 500;
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.type = 'text/plain; charset=utf-8';
  ctx.body = `Internal Server Error: ${JSON.stringify(ctx.req.url ?? ctx.url)}: failed to store audit event\n`;
}

/** The audit filter: after authentication, before impersonation. */
export function auditMiddleware(auditor: Auditor): HttpMiddleware {
  return (ctx, next) => {
    const ev = eventFor(auditor, ctx, true);
    if (!ev) return next();
    ctx.state.audit = ev;
    const authenticatedUser = ctx.state.user;
    const received = auditor.process(ev, 'RequestReceived');
    const run = (stored: boolean): Promise<void> => {
      if (!stored) {
        auditor.countRejected();
        rejectForAudit(ctx);
        return Promise.resolve();
      }
      return next().then(
        () => finish(auditor, ctx, ev, authenticatedUser, undefined),
        (e: unknown) => {
          const done = finish(auditor, ctx, ev, authenticatedUser, e);
          return done ? done.then(() => Promise.reject(e)) : Promise.reject(e);
        },
      );
    };
    return received === true || received === false ? run(received) : received.then(run);
  };
}

/**
 * The response's stages: ResponseStarted for long-running requests, then ResponseComplete; a
 * promise only when a blocking backend has the response wait for its write.
 */
function finish(auditor: Auditor, ctx: HttpContext, ev: AuditEvent, authenticatedUser: RequestState['user'], error: unknown): Promise<void> | undefined {
  if (ctx.state.user !== authenticatedUser) ev.impersonatedUser = eventUser(ctx.state.user);
  const authz = ctx.state.authorization;
  if (authz) {
    if (authz.decision === 'allow') {
      ev.addAnnotation(DECISION_ANNOTATION, 'allow');
      ev.addAnnotation(REASON_ANNOTATION, authz.reason);
    } else if (authz.error) {
      ev.addAnnotation(REASON_ANNOTATION, 'internal error');
    } else {
      ev.addAnnotation(DECISION_ANNOTATION, 'forbid');
      ev.addAnnotation(REASON_ANNOTATION, authz.reason);
    }
  }
  if (error !== undefined) {
    // The Status statusErrors() will send (LogResponseObject copies its bounded fields).
    const status = toApiError(error).toStatus();
    ev.logResponseObject(status);
    ev.setResponseCode(status.code);
  } else {
    ev.setResponseCode(ctx.status);
  }
  if (isLongRunningRequest(ctx.state.requestInfo)) return finishLongRunning(auditor, ctx, ev);
  const stored = auditor.process(ev, 'ResponseComplete');
  return stored === true || stored === false ? undefined : stored.then(ignore);
}

const ignore = () => undefined;

async function finishLongRunning(auditor: Auditor, ctx: HttpContext, ev: AuditEvent): Promise<void> {
  await auditor.process(ev, 'ResponseStarted');
  // A watch streams on after its handler returned: complete when its response ends.
  if (ctx.respond === false && !ctx.res.writableEnded) {
    ctx.res.once('close', () => void auditor.process(ev, 'ResponseComplete'));
    return;
  }
  await auditor.process(ev, 'ResponseComplete');
}

/**
 * WithFailedAuthenticationAudit: a request authentication refuses (401) gets one event, at the
 * level the policy gives a request without a user, at stage ResponseStarted.
 */
export function withFailedAuthenticationAudit<S extends object>(auditor: Auditor | undefined, authenticate: Koa.Middleware<S>): Koa.Middleware<S> {
  if (!auditor) return authenticate;
  return (ctx, next) => {
    let authenticated = false;
    const onError = (e: unknown): Promise<never> => {
      const err = toApiError(e);
      if (!authenticated && err.code === 401) {
        const hc = ctx as unknown as HttpContext;
        const ev = eventFor(auditor, hc, false);
        if (ev) {
          ev.logResponseObject(err.toStatus());
          // (a blocking backend has it written before the 401 goes out)
          const stored = auditor.process(ev, 'ResponseStarted');
          if (stored !== true && stored !== false) return stored.then(() => Promise.reject(e));
        }
      }
      return Promise.reject(e);
    };
    try {
      return Promise.resolve(
        authenticate(ctx, () => {
          authenticated = true;
          return next();
        }),
      ).catch(onError);
    } catch (e) {
      return onError(e);
    }
  };
}
