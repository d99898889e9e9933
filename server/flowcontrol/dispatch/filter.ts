// The flow-control filters on the request's path, after impersonation and before authorization
// (kube's WithPriorityAndFairness, server/filters/priority-and-fairness.go, and
// WithMaxInFlightLimit, maxinflight.go). With APF, each request is classified (config/), then its
// priority level runs it, queues it or refuses it; every classified response names the
// FlowSchema's and level's UIDs. A watch holds its seats only until its initial events are
// written (the watch handler calls deferWatchInitialization). Long-running requests other than
// watches are never classified. Without APF, two plain limits (mutating, read-only) apply and
// system:masters passes even when they are reached. A refusal is kube's 429: a text body and
// Retry-After.
import type { UserInfo } from '../../authentication/user.ts';
import { parseGoDuration } from '../../go/time.ts';
import type { FlowControlConfiguration, RequestDigest } from '../types.ts';
import type { Dispatcher, Ticket } from './dispatcher.ts';
import { isLongRunningRequest } from '../../util/long-running.ts';
import { nextTurn } from '../../util/turns.ts';

/** What the filters read of a request's state (http/state.ts declares it all). */
export interface FlowControlState {
  user: UserInfo;
  requestInfo: {
    isResourceRequest: boolean;
    path: string;
    verb: string;
    apiGroup: string;
    apiVersion: string;
    namespace: string;
    resource: string;
    subresource: string;
    name: string;
  };
}

/** The little of koa's context the filters use. */
export interface FlowControlContext {
  state: FlowControlState;
  req: object;
  res: { setHeader(name: string, value: string): unknown; once(event: 'close', listener: () => void): unknown };
  status: number;
  body: unknown;
  set(field: string, value: string): void;
}

type Next = () => Promise<unknown>;

const NON_MUTATING_VERBS: ReadonlySet<string> = new Set(['get', 'list', 'watch']);
/** getRequestWaitContext: a request waits at most a quarter of its deadline, never more than a minute. */
const MAX_WAIT_MS = 60_000;
const TOO_MANY_REQUESTS = 'Too many requests, please try again later.\n';


/** tooManyRequests: http.Error's plain text, and Retry-After. */
function tooManyRequests(ctx: FlowControlContext, retryAfter: number): void {
  ctx.status = 429;
  ctx.set('Retry-After', String(retryAfter));
  ctx.set('Content-Type', 'text/plain; charset=utf-8');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.body = TOO_MANY_REQUESTS;
}

/** A watch's seats, released once: when its initial events are written, or when it ends before. */
class WatchInitialization {
  deferred = false;
  private released = false;

  constructor(private readonly release: () => void) {}

  signal(): void {
    if (this.released) return;
    this.released = true;
    this.release();
  }
}

const watchInitializations = new WeakMap<object, WatchInitialization>();

/**
 * For the watch handler: takes over the signal that ends its watch's initialization (kube's
 * WatchInitialized), to be called once its initial events are written. Undefined when flow control
 * holds nothing for this request.
 */
export function deferWatchInitialization(req: object): (() => void) | undefined {
  const init = watchInitializations.get(req);
  if (!init) return undefined;
  init.deferred = true;
  return () => init.signal();
}

export interface PriorityAndFairnessOptions<C extends FlowControlContext> {
  config: FlowControlConfiguration;
  dispatcher: Dispatcher;
  /** --request-timeout: a request's deadline unless its ?timeout is shorter. */
  requestTimeoutMs: number;
  /** The request's query (parsed once per request, http's queryOf). */
  query(ctx: C): URLSearchParams;
}

/** WithPriorityAndFairness. */
export function priorityAndFairness<C extends FlowControlContext>(opts: PriorityAndFairnessOptions<C>) {
  const { config, dispatcher } = opts;
  const defaultWaitMs = Math.min(opts.requestTimeoutMs / 4, MAX_WAIT_MS);

  return async function flowControl(ctx: C, next: Next): Promise<void> {
    const info = ctx.state.requestInfo;
    const isWatch = info.verb === 'watch';
    if (!isWatch && isLongRunningRequest(info)) {
      await next();
      return;
    }
    const digest: RequestDigest = {
      user: ctx.state.user,
      isResourceRequest: info.isResourceRequest,
      verb: info.verb,
      path: info.path,
      apiGroup: info.apiGroup,
      apiVersion: info.apiVersion,
      resource: info.resource,
      subresource: info.subresource,
      namespace: info.namespace,
      name: info.name,
    };
    const c = config.classify(digest);
    // UIDs, not names: the names an administrator chose stay private.
    ctx.res.setHeader('X-Kubernetes-PF-FlowSchema-UID', c.flowSchema.uid);
    ctx.res.setHeader('X-Kubernetes-PF-PriorityLevel-UID', c.priorityLevel.uid);
    const query = () => opts.query(ctx);
    const admission = dispatcher.admit(c, digest, query, isWatch ? defaultWaitMs : waitLimitMs(query(), opts.requestTimeoutMs));
    let ticket: Ticket;
    if (admission.kind === 'reject') return tooManyRequests(ctx, admission.retryAfter);
    if (admission.kind === 'queued') {
      // The client may leave while its request waits: it leaves the queue ('cancelled').
      ctx.res.once('close', admission.cancel);
      const dispatched = await admission.decided;
      if (!dispatched) return tooManyRequests(ctx, dispatcher.retryAfterFor(c.priorityLevel.name));
      ticket = dispatched;
    } else ticket = admission.ticket;
    // A limited level's request starts on the event loop's next turn: every request that arrived
    // with it is classified (and queued or refused) first, and requests leaving a queue one after
    // another let the I/O between them in. Node runs a handler to its end once started: without
    // this hop a burst would never meet a busy level, and a queue would drain in one go.
    const hop = !ticket.level.exempt;
    if (!isWatch) {
      // The seats go back when the response is sent (or its client is gone): a body still being
      // written is still this request's work, as kube's handler holds its seats until it returns.
      ctx.res.once('close', ticket.finish.bind(ticket));
      if (hop) await nextTurn();
      return next() as Promise<void>;
    }
    // A watch: counted for the write estimates while it lasts; its seats go when it is initialized.
    const forgetWatch = dispatcher.registerWatch(digest);
    const init = new WatchInitialization(ticket.finish.bind(ticket));
    watchInitializations.set(ctx.req, init);
    ctx.res.once('close', () => {
      forgetWatch();
      init.signal();
    });
    if (hop) await nextTurn();
    try {
      await next();
    } finally {
      // Not taken over by the watch handler (an error, a refusal): nothing more to wait for.
      if (!init.deferred) init.signal();
    }
  };
}

/** The queue wait limit: a quarter of the request's deadline (?timeout, else --request-timeout), at most a minute. */
function waitLimitMs(q: URLSearchParams, requestTimeoutMs: number): number {
  let deadlineMs = requestTimeoutMs;
  const t = q.get('timeout');
  if (t) {
    const parsed = parseGoDuration(t);
    // (nanoseconds)
    if (typeof parsed === 'number' && parsed > 0 && parsed / 1e6 < deadlineMs) deadlineMs = parsed / 1e6;
  }
  return Math.min(deadlineMs / 4, MAX_WAIT_MS);
}

/** WithMaxInFlightLimit: the two limits of --enable-priority-and-fairness=false (0: no limit). */
export function maxInFlightLimit(nonMutatingLimit: number, mutatingLimit: number) {
  let readOnly = 0;
  let mutating = 0;
  const doneMutating = () => void mutating--;
  const doneReadOnly = () => void readOnly--;
  return async function maxInFlight(ctx: FlowControlContext, next: Next): Promise<void> {
    const info = ctx.state.requestInfo;
    if (isLongRunningRequest(info)) {
      await next();
      return;
    }
    const isMutating = !NON_MUTATING_VERBS.has(info.verb);
    const limit = isMutating ? mutatingLimit : nonMutatingLimit;
    if (limit === 0) {
      await next();
      return;
    }
    if ((isMutating ? mutating : readOnly) >= limit) {
      // A system:master always gets an answer: a super-admin, or the loopback connection.
      if (ctx.state.user.groups.includes('system:masters')) {
        await next();
        return;
      }
      return tooManyRequests(ctx, 1);
    }
    if (isMutating) mutating++;
    else readOnly++;
    // Counted until the response is sent or its client is gone.
    ctx.res.once('close', isMutating ? doneMutating : doneReadOnly);
    return next() as Promise<void>;
  };
}
