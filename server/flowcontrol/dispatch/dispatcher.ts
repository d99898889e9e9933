// The dispatching half of API Priority and Fairness (kube's apf_controller.go and apf_filter.go):
// one QueueSet per priority level of the live configuration (config/, through
// FlowControlConfiguration), the seats of each (nominal, lendable, borrowable, and the current
// limit re-derived every 10 s from observed demand), each request's work estimate, the 429's
// Retry-After, the debug dumps. The HTTP side is filter.ts.
//
// Node serves one request at a time: a seat bounds how many requests are inside the server at
// once (from flow control to the response), not threads. Nothing here awaits: a request runs at
// once, waits in a queue (its promise is the only one made), or is refused.
import { performance } from 'node:perf_hooks';
import type { Classification, FlowControlConfiguration, PriorityLevelRef, PriorityLevelSpec, RequestDigest } from '../types.ts';
import { Dealer, hashFlowId } from './shuffle-sharding.ts';
import { QueueSet, seatSecondsString, type Decision, type FlowRequest, type QueuingConfig } from './queueset.ts';
import { SeatDemandStats, computeConcurrencyAllocation, type AllocProblemItem } from './allocation.ts';
import { estimateWork, WatchTracker } from './work-estimator.ts';
import { DroppedRequestsTracker } from './retry-after.ts';
import type { FlowControlMetrics, FlowMetrics } from './metrics.ts';
import { tabwrite } from './tabwriter.ts';

/** How often the current limits are re-derived from seat demand (borrowingAdjustmentPeriod). */
const BORROWING_ADJUSTMENT_PERIOD_MS = 10_000;
/** priorityLevelMaxSeatsPercent. */
const MAX_SEATS_PERCENT = 0.15;
/** Queuing defaults of flowcontrol/v1 (stored objects are defaulted; these cover a partial spec). */
const DEFAULT_QUEUES = 64;
const DEFAULT_HAND_SIZE = 8;
const DEFAULT_QUEUE_LENGTH_LIMIT = 50;
const DEFAULT_LIMITED_SHARES = 30;

export interface DispatcherOptions {
  /** --max-requests-inflight + --max-mutating-requests-inflight. */
  serverConcurrencyLimit: number;
  metrics: FlowControlMetrics;
  /** Current objects of a resource ("pods", "deployments.apps"), kept in memory (object-count.ts). */
  objectCount(resource: string): number | undefined;
  /** Reports a configuration it cannot use (a broken queuing spec). */
  log?: (line: string) => void;
  now?: () => number;
}

class LevelState {
  queues!: QueueSet;
  quiescing = false;
  nominalCL = 0;
  minCL = 0;
  maxCL = 0;
  currentCL = 0;
  /** The widest request the work estimator may give this level (0: the estimator's own limit). */
  maxSeats = 0;
  readonly demand = new SeatDemandStats();
  exempt: boolean;

  constructor(public pl: PriorityLevelRef) {
    this.exempt = pl.spec.type === 'Exempt';
  }
}

/** One admitted request's bookkeeping, from admission to finish(). */
export class Ticket {
  executedAtMs = 0;
  private finished = false;

  constructor(
    private readonly d: Dispatcher,
    readonly level: LevelState,
    readonly request: FlowRequest,
    readonly flow: FlowMetrics,
    readonly isWatch: boolean,
  ) {}

  /** The request's (first phase of) execution is over: its seats go back. */
  finish(): void {
    if (this.finished) return;
    this.finished = true;
    const seconds = (this.d.now() - this.executedAtMs) / 1000;
    (this.isWatch ? this.flow.executionWatch : this.flow.executionRegular).observe(seconds);
    this.level.queues.finish(this.request);
    if (this.level.quiescing && this.level.queues.isIdle()) this.d.reconfigure();
  }
}

export type Admission =
  | { kind: 'execute'; ticket: Ticket }
  | { kind: 'queued'; decided: Promise<Ticket | undefined>; cancel: () => void }
  | { kind: 'reject'; retryAfter: number };

export class Dispatcher {
  readonly now: () => number;
  private levels = new Map<string, LevelState>();
  private nominalCLSum = 0;
  private readonly watches = new WatchTracker();
  private readonly dropped = new DroppedRequestsTracker();
  private timer: NodeJS.Timeout | undefined;
  private readonly sources: { objectCount: (r: string) => number | undefined; watchCount: (d: RequestDigest) => number };

  constructor(
    private readonly config: FlowControlConfiguration,
    private readonly opts: DispatcherOptions,
  ) {
    this.now = opts.now ?? (() => performance.now());
    this.sources = { objectCount: opts.objectCount, watchCount: (d) => this.watches.interested(d) };
    this.reconfigure();
    config.onChange(() => this.reconfigure());
  }

  /** Starts the periodic seat-borrowing adjustment. */
  start(): void {
    this.timer ??= setInterval(() => this.updateBorrowing(), BORROWING_ADJUSTMENT_PERIOD_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** kube's lockAndDigestConfigObjects + finishQueueSetReconfigsLocked: the levels, their shares and seats. */
  reconfigure(): void {
    const next = new Map<string, LevelState>();
    let shareSum = 0;
    for (const pl of this.config.priorityLevels()) {
      const state = this.levels.get(pl.name) ?? new LevelState(pl);
      const queuing = queuingConfig(pl);
      const dealer = queuing.desiredNumQueues > 0 ? Dealer.of(queuing.desiredNumQueues, queuing.handSize) : undefined;
      if (typeof dealer === 'string') {
        this.opts.log?.(`Ignoring PriorityLevelConfiguration object ${pl.name} because its spec is broken: ${dealer}`);
        continue;
      }
      state.pl = pl;
      state.exempt = pl.spec.type === 'Exempt';
      state.quiescing = false;
      if (state.queues) state.queues.reconfigure(queuing, dealer);
      else state.queues = new QueueSet(queuing, dealer, this.now);
      next.set(pl.name, state);
      shareSum += commons(pl.spec).shares;
    }
    // Levels gone from the configuration drain their queues first, still counted in the shares.
    for (const [name, state] of this.levels) {
      if (next.has(name) || state.queues.isIdle()) continue;
      state.quiescing = true;
      next.set(name, state);
      shareSum += commons(state.pl.spec).shares;
    }
    const serverCL = this.opts.serverConcurrencyLimit;
    let sum = 0;
    for (const [name, state] of next) {
      const { shares, lendablePercent, borrowingLimitPercent } = commons(state.pl.spec);
      const nominal = shareSum > 0 ? Math.ceil((serverCL * shares) / shareSum) : 0;
      const lendable = Math.round((nominal * lendablePercent) / 100);
      const borrowing = borrowingLimitPercent === undefined ? serverCL : Math.round((nominal * borrowingLimitPercent) / 100);
      this.opts.metrics.setLevelLimits(name, nominal, nominal - lendable, nominal + borrowing);
      const isNew = !this.levels.has(name);
      state.nominalCL = nominal;
      state.minCL = nominal - lendable;
      state.maxCL = nominal + borrowing;
      sum += nominal;
      const q = state.queues.config;
      state.maxSeats = q.desiredNumQueues > 0 ? Math.max(1, Math.min(Math.ceil(nominal * MAX_SEATS_PERCENT), Math.floor(nominal / q.handSize))) : 0;
      if (isNew) state.currentCL = nominal - Math.trunc(lendable / 2);
    }
    this.levels = next;
    this.nominalCLSum = sum;
    this.updateBorrowing();
  }

  /** updateBorrowingLocked: each level's current limit from its seat demand over the last period. */
  private updateBorrowing(): void {
    const states = [...this.levels.entries()];
    const items: AllocProblemItem[] = [];
    for (const [, s] of states) {
      s.demand.update(s.queues.seatDemand.reset());
      const minCurrentCL = Math.max(s.minCL, Math.min(s.nominalCL, s.demand.highWatermark));
      items.push({ lowerBound: minCurrentCL, upperBound: s.maxCL, target: Math.max(minCurrentCL, s.demand.smoothed) });
    }
    if (items.length === 0) return;
    const result = computeConcurrencyAllocation(this.nominalCLSum, items);
    if (typeof result === 'string') this.opts.log?.(`Unable to derive new concurrency limits: ${result}`);
    for (const [idx, [name, s]] of states.entries()) {
      const currentCL = typeof result === 'string' ? s.currentCL : Math.round(result.allocs[idx]);
      s.currentCL = currentCL;
      this.opts.metrics.noteAdjustment(name, s.demand.highWatermark, s.demand.avg, s.demand.stdDev, s.demand.smoothed, items[idx].target, currentCL);
      s.queues.setConcurrencyLimit(currentCL);
    }
    if (typeof result !== 'string') this.opts.metrics.setFairFrac(result.fairProp);
  }

  /**
   * Admits a classified request: estimates its work, then its level runs it now, queues it (for
   * at most waitLimitMs) or refuses it. A watch's seats are held until its initialization ends.
   */
  admit(c: Classification, digest: RequestDigest, query: () => URLSearchParams, waitLimitMs: number): Admission {
    let level = this.levels.get(c.priorityLevel.name);
    if (!level) {
      this.reconfigure();
      level = this.levels.get(c.priorityLevel.name);
      if (!level) return { kind: 'reject', retryAfter: 1 };
    }
    const fsName = c.flowSchema.name;
    const flow = this.opts.metrics.flow(level.pl.name, fsName);
    const we = estimateWork(digest, query, level.maxSeats, this.sources, (n) => flow.watchCount.observe(n));
    flow.estimatedSeats.observe(Math.max(we.initialSeats, we.finalSeats));
    const qs = level.queues;
    const numQueues = qs.config.desiredNumQueues;
    const distinguisher = numQueues > 1 ? c.flowDistinguisher : '';
    const hash = numQueues > 1 ? hashFlowId(fsName, distinguisher) : 0n;
    const startedMs = this.now();
    const outcome = qs.start(fsName, distinguisher, hash, we, flow, digest);
    const isWatch = digest.verb === 'watch';
    if (outcome.kind === 'execute') return { kind: 'execute', ticket: this.dispatched(level, outcome.request, flow, isWatch, startedMs) };
    if (outcome.kind === 'reject') {
      if (!level.exempt) flow.waitRejected.observe((this.now() - startedMs) / 1000);
      return { kind: 'reject', retryAfter: this.dropped429(level) };
    }
    const req = outcome.request;
    const decided = new Promise<Ticket | undefined>((resolve) => {
      req.decide = (d: Decision) => {
        if (d === 'execute') return resolve(this.dispatched(level, req, flow, isWatch, startedMs));
        flow.waitRejected.observe((this.now() - startedMs) / 1000);
        resolve(undefined);
      };
    });
    req.waitTimer = setTimeout(() => {
      if (qs.eject(req, 'time-out')) req.decide?.('reject');
    }, waitLimitMs);
    const cancel = () => {
      if (qs.eject(req, 'cancelled')) {
        clearTimeout(req.waitTimer);
        req.decide?.('cancel');
      }
    };
    return { kind: 'queued', decided, cancel };
  }

  /** The Retry-After of a refused request of this level, once its refusal is counted. */
  private dropped429(level: LevelState): number {
    this.dropped.record(level.pl.name);
    return this.dropped.retryAfter(level.pl.name);
  }

  /** What a refused request (queued, then timed out or cancelled) answers with. */
  retryAfterFor(priorityLevel: string): number {
    this.dropped.record(priorityLevel);
    return this.dropped.retryAfter(priorityLevel);
  }

  private dispatched(level: LevelState, req: FlowRequest, flow: FlowMetrics, isWatch: boolean, startedMs: number): Ticket {
    const now = this.now();
    if (!level.exempt) flow.waitExecuted.observe((now - startedMs) / 1000);
    flow.dispatchedCount++;
    level.queues.totRequestsDispatched++;
    const t = new Ticket(this, level, req, flow, isWatch);
    t.executedAtMs = now;
    return t;
  }

  /** RegisterWatch: counted for the mutating work estimate until the returned function is called. */
  registerWatch(digest: RequestDigest): () => void {
    return this.watches.register(digest);
  }

  /** The level names in order, with their states (tests and dumps). */
  levelStates(): [string, LevelState][] {
    return [...this.levels.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  /** /debug/api_priority_and_fairness/dump_priority_levels. */
  dumpPriorityLevels(): string {
    const lines = [row('PriorityLevelName', 'ActiveQueues', 'IsIdle', 'IsQuiescing', 'WaitingRequests', 'ExecutingRequests', 'DispatchedRequests', 'RejectedRequests', 'TimedoutRequests', 'CancelledRequests')];
    for (const [name, s] of this.levelStates()) {
      const qs = s.queues;
      const active = qs.queues.filter((q) => q.waiting.length > 0).length;
      lines.push(row(name, String(active), String(qs.isIdle()), String(s.quiescing), String(qs.totRequestsWaiting), String(qs.totRequestsExecuting), String(qs.totRequestsDispatched), String(qs.totRequestsRejected), String(qs.totRequestsTimedout), String(qs.totRequestsCancelled)));
    }
    return tabwrite(lines);
  }

  /** /debug/api_priority_and_fairness/dump_queues. */
  dumpQueues(): string {
    const lines = [row('PriorityLevelName', 'Index', 'PendingRequests', 'ExecutingRequests', 'SeatsInUse', 'NextDispatchR', 'InitialSeatsSum', 'MaxSeatsSum', 'TotalWorkSum')];
    for (const [name, s] of this.levelStates()) {
      for (const [i, q] of s.queues.queues.entries()) {
        lines.push(row(name, String(i), String(q.waiting.length), String(q.executing), String(q.seatsInUse), seatSecondsString(q.nextDispatchR), String(q.initialSeatsSum), String(q.maxSeatsSum), seatSecondsString(q.totalWorkSum)));
      }
    }
    return tabwrite(lines);
  }

  /** /debug/api_priority_and_fairness/dump_requests: the waiting requests, one row each. */
  dumpRequests(includeDetails: boolean): string {
    let header = row('PriorityLevelName', 'FlowSchemaName', 'QueueIndex', 'RequestIndexInQueue', 'FlowDistingsher', 'ArriveTime', 'InitialSeats', 'FinalSeats', 'AdditionalLatency');
    if (includeDetails) header += ',\t' + row('UserName', 'Verb', 'APIPath', 'Namespace', 'Name', 'APIVersion', 'Resource', 'SubResource');
    const lines = [header];
    for (const [name, s] of this.levelStates()) {
      for (const [iq, q] of s.queues.queues.entries()) {
        for (const [ir, r] of q.waiting.entries()) {
          const we = r.workEstimate;
          let line = row(name, r.fsName, String(iq), String(ir), r.flowDistinguisher, rfc3339Nano(r.arrivalWallMs), String(we.initialSeats), String(we.finalSeats), goDuration(we.additionalLatencyMs));
          if (includeDetails) {
            const d = r.digest;
            line += ',\t' + row(d.user.name, d.verb, d.path, d.namespace, d.name, d.apiGroup ? `${d.apiGroup}/${d.apiVersion}` : d.apiVersion, d.resource, d.subresource);
          }
          lines.push(line);
        }
      }
    }
    return tabwrite(lines);
  }
}

function row(...columns: string[]): string {
  return columns.join(',\t');
}

/** Go's time.RFC3339Nano in UTC (trailing zeros of the fraction dropped). */
function rfc3339Nano(ms: number): string {
  const iso = new Date(ms).toISOString();
  const [main, frac] = iso.slice(0, -1).split('.');
  const f = (frac ?? '').replace(/0+$/, '');
  return `${main}${f ? '.' + f : ''}Z`;
}

/** Go's time.Duration.String() of a number of milliseconds. */
function goDuration(ms: number): string {
  if (ms === 0) return '0s';
  const ns = Math.round(ms * 1e6);
  if (ns < 1000) return `${ns}ns`;
  if (ns < 1e6) return `${trim(ns / 1e3)}µs`;
  if (ns < 1e9) return `${trim(ns / 1e6)}ms`;
  return `${trim(ns / 1e9)}s`;
}

function trim(x: number): string {
  return String(Number(x.toFixed(9)));
}

/** plSpecCommons: shares, lendable and borrowing-limit percents of either kind of level. */
function commons(spec: PriorityLevelSpec): { shares: number; lendablePercent: number; borrowingLimitPercent: number | undefined } {
  if (spec.type === 'Exempt') return { shares: spec.exempt?.nominalConcurrencyShares ?? 0, lendablePercent: spec.exempt?.lendablePercent ?? 0, borrowingLimitPercent: undefined };
  const l = spec.limited;
  return { shares: l?.nominalConcurrencyShares ?? DEFAULT_LIMITED_SHARES, lendablePercent: l?.lendablePercent ?? 0, borrowingLimitPercent: l?.borrowingLimitPercent };
}

/** queueSetCompleterForPL's QueuingConfig. */
function queuingConfig(pl: PriorityLevelRef): QueuingConfig {
  if (pl.spec.type === 'Exempt') return { name: pl.name, desiredNumQueues: -1, queueLengthLimit: 0, handSize: 0 };
  const r = pl.spec.limited?.limitResponse;
  if (!r || r.type !== 'Queue') return { name: pl.name, desiredNumQueues: 0, queueLengthLimit: 0, handSize: 0 };
  const q = r.queuing ?? {};
  return { name: pl.name, desiredNumQueues: q.queues ?? DEFAULT_QUEUES, queueLengthLimit: q.queueLengthLimit ?? DEFAULT_QUEUE_LENGTH_LIMIT, handSize: q.handSize ?? DEFAULT_HAND_SIZE };
}
