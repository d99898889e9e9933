// One priority level's queues and seats: kube's fairqueuing/queueset (queueset.go, types.go).
// A Limited level with limitResponse Queue has `queues` FIFO queues; a request is shuffle-sharded
// to the queue of its hand with the least waiting work, and requests leave the queues by fair
// queuing in virtual time: R advances at min(seats requested, concurrency limit) / active queues
// seat-seconds per second, each queue's next dispatch R grows by the work of what it dispatches,
// and the queue whose oldest request would finish first (smallest next dispatch R + its work)
// goes next, as long as its seats fit. A Reject level (no queues) only admits what fits now; the
// exempt level (desiredNumQueues < 0) admits everything and only counts.
//
// Node runs one request at a time: "seats" bound how many requests are inside the server (from
// flow control to the response) at once, not threads. Nothing here locks; a queued request is
// told its fate through one callback (its `decide`), set when it is queued.
import { performance } from 'node:perf_hooks';
import type { Dealer } from './shuffle-sharding.ts';
import type { RequestDigest } from '../types.ts';
import { Integrator } from './integrator.ts';

/** A request's work (kube's request.WorkEstimate): seats while it runs, seats held after it for additionalLatency. */
export interface WorkEstimate {
  initialSeats: number;
  finalSeats: number;
  additionalLatencyMs: number;
}

export type RejectReason = 'queue-full' | 'concurrency-limit' | 'time-out' | 'cancelled';

/** The metrics of one (priority level, FlowSchema) pair, label children made once (metrics.ts). */
export interface FlowStats {
  inQueue(delta: number, seats: number): void;
  executing(delta: number, seats: number): void;
  rejected(reason: RejectReason): void;
  queueLengthAfterEnqueue(length: number): void;
}

export interface QueuingConfig {
  name: string;
  /** < 0: exempt; 0: no queues (Reject); else the number of queues. */
  desiredNumQueues: number;
  queueLengthLimit: number;
  handSize: number;
}

/** kube's estimatedServiceDuration: the assumed length of a request's first phase, for virtual time. */
const ESTIMATED_SERVICE_SECONDS = 0.003;

export type Decision = 'execute' | 'reject' | 'cancel';

export class FlowRequest {
  queue: Queue | undefined;
  decision: Decision | undefined;
  /** Called once when a queued request is dispatched, timed out or cancelled. */
  decide: ((d: Decision) => void) | undefined;
  arrivalMs: number;
  readonly arrivalWallMs: number;
  arrivalR: number;
  startMs = 0;
  /** Seat-seconds: initial seats × the estimated service duration, plus final seats × the additional latency. */
  totalWork: number;
  finalWork: number;
  readonly maxSeats: number;
  waitTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly qs: QueueSet,
    readonly fsName: string,
    readonly flowDistinguisher: string,
    readonly workEstimate: WorkEstimate,
    readonly stats: FlowStats,
    readonly digest: RequestDigest,
    nowMs: number,
  ) {
    this.arrivalMs = nowMs;
    this.arrivalWallMs = Date.now();
    this.arrivalR = qs.currentR;
    this.finalWork = workEstimate.finalSeats * (workEstimate.additionalLatencyMs / 1000);
    this.totalWork = workEstimate.initialSeats * ESTIMATED_SERVICE_SECONDS + this.finalWork;
    this.maxSeats = Math.max(workEstimate.initialSeats, workEstimate.finalSeats);
  }
}

export class Queue {
  readonly waiting: FlowRequest[] = [];
  executing = 0;
  seatsInUse = 0;
  /** R at which this queue's next request is (virtually) dispatched. */
  nextDispatchR = 0;
  initialSeatsSum = 0;
  maxSeatsSum = 0;
  totalWorkSum = 0;

  constructor(public index: number) {}

  push(r: FlowRequest): void {
    this.waiting.push(r);
    this.initialSeatsSum += r.workEstimate.initialSeats;
    this.maxSeatsSum += r.maxSeats;
    this.totalWorkSum += r.totalWork;
  }

  remove(r: FlowRequest): boolean {
    const i = this.waiting.indexOf(r);
    if (i < 0) return false;
    this.waiting.splice(i, 1);
    this.initialSeatsSum -= r.workEstimate.initialSeats;
    this.maxSeatsSum -= r.maxSeats;
    this.totalWorkSum -= r.totalWork;
    if (this.waiting.length === 0) this.initialSeatsSum = this.maxSeatsSum = this.totalWorkSum = 0;
    return true;
  }
}

/** What start() answers: run now, wait for `decide`, or refused with a reason. */
export type StartOutcome = { kind: 'execute'; request: FlowRequest } | { kind: 'queued'; request: FlowRequest } | { kind: 'reject'; reason: RejectReason };

export class QueueSet {
  queues: Queue[] = [];
  currentR = 0;
  private lastRealMs: number;
  private robinIndex = -1;
  private enqueues = 0;
  concurrencyLimit = 0;
  totRequestsWaiting = 0;
  totRequestsExecuting = 0;
  totSeatsInUse = 0;
  totSeatsWaiting = 0;
  totRequestsDispatched = 0;
  totRequestsRejected = 0;
  totRequestsTimedout = 0;
  totRequestsCancelled = 0;
  /** Seat demand (seats in use + waiting), integrated for the borrowing adjustment. */
  readonly seatDemand: Integrator;

  constructor(
    public config: QueuingConfig,
    public dealer: Dealer | undefined,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.lastRealMs = now();
    this.seatDemand = new Integrator(now);
    this.reconfigure(config, dealer);
  }

  /** setConfiguration: more queues now; fewer by attrition, as queues go empty. */
  reconfigure(config: QueuingConfig, dealer: Dealer | undefined): void {
    this.syncTime();
    if (config.desiredNumQueues > this.queues.length) {
      for (let i = this.queues.length; i < config.desiredNumQueues; i++) this.queues.push(new Queue(i));
    } else if (config.desiredNumQueues <= 0) {
      config = { ...config, queueLengthLimit: this.config.queueLengthLimit, handSize: this.config.handSize };
    }
    this.config = config;
    this.dealer = dealer;
    this.dispatchAsMuchAsPossible();
  }

  setConcurrencyLimit(limit: number): void {
    this.syncTime();
    this.concurrencyLimit = limit;
    this.dispatchAsMuchAsPossible();
  }

  isIdle(): boolean {
    return this.totRequestsWaiting === 0 && this.totRequestsExecuting === 0;
  }

  /** StartRequest: dispatch, queue or reject. */
  start(fsName: string, flowDistinguisher: string, hash: bigint, we: WorkEstimate, stats: FlowStats, digest: RequestDigest): StartOutcome {
    const now = this.now();
    this.syncTime(now);
    const req = new FlowRequest(this, fsName, flowDistinguisher, we, stats, digest, now);
    if (this.config.desiredNumQueues < 1) {
      if (!this.canAccommodate(req.maxSeats)) {
        this.totRequestsRejected++;
        stats.rejected('concurrency-limit');
        return { kind: 'reject', reason: 'concurrency-limit' };
      }
      req.startMs = now;
      this.noteExecuting(req);
      return { kind: 'execute', request: req };
    }
    const queue = this.queues[this.shuffleShard(hash)];
    // Reject if all seats are taken and this queue is full.
    if (this.totSeatsInUse >= this.concurrencyLimit && queue.waiting.length >= this.config.queueLengthLimit) {
      this.totRequestsRejected++;
      stats.rejected('queue-full');
      return { kind: 'reject', reason: 'queue-full' };
    }
    req.queue = queue;
    if (queue.waiting.length === 0 && queue.executing === 0) queue.nextDispatchR = this.currentR;
    queue.push(req);
    this.totRequestsWaiting++;
    this.totSeatsWaiting += req.maxSeats;
    stats.inQueue(1, req.maxSeats);
    this.boundNextDispatch(queue);
    stats.queueLengthAfterEnqueue(queue.waiting.length);
    this.seatDemand.set(this.totSeatsInUse + this.totSeatsWaiting);
    this.dispatchAsMuchAsPossible();
    if (req.decision === 'execute') return { kind: 'execute', request: req };
    return { kind: 'queued', request: req };
  }

  /**
   * A queued request leaves its queue without running: its wait limit passed ('time-out') or its
   * client went away ('cancelled'). Answers false when it was already dispatched.
   */
  eject(req: FlowRequest, reason: 'time-out' | 'cancelled'): boolean {
    if (req.decision !== undefined) return false;
    this.syncTime();
    const queue = req.queue!;
    if (!queue.remove(req)) return false;
    req.decision = reason === 'time-out' ? 'reject' : 'cancel';
    this.totRequestsWaiting--;
    this.totSeatsWaiting -= req.maxSeats;
    this.totRequestsRejected++;
    if (reason === 'time-out') this.totRequestsTimedout++;
    else this.totRequestsCancelled++;
    req.stats.inQueue(-1, -req.maxSeats);
    req.stats.rejected(reason);
    this.boundNextDispatch(queue);
    this.seatDemand.set(this.totSeatsInUse + this.totSeatsWaiting);
    this.removeQueueIfUnwanted(queue);
    // A wide request at the head may have been what held the others back.
    this.dispatchAsMuchAsPossible();
    return true;
  }

  /** finishRequestAndDispatchAsMuchAsPossible: the request's first phase is over. */
  finish(req: FlowRequest): void {
    const now = this.now();
    this.syncTime(now);
    this.totRequestsExecuting--;
    req.stats.executing(-1, 0);
    const queue = req.queue;
    if (queue) {
      queue.executing--;
      // The queue's start R is corrected by what the request really took: (G - S) × width.
      queue.nextDispatchR -= req.workEstimate.initialSeats * (ESTIMATED_SERVICE_SECONDS - (now - req.startMs) / 1000);
      this.boundNextDispatch(queue);
    }
    if (req.workEstimate.additionalLatencyMs <= 0) {
      this.releaseSeats(req);
    } else {
      // The seats linger for the additional latency (watch fan-out), unseen by the client.
      setTimeout(() => {
        this.syncTime();
        this.releaseSeats(req);
        this.dispatchAsMuchAsPossible();
      }, req.workEstimate.additionalLatencyMs).unref();
    }
    this.dispatchAsMuchAsPossible();
  }

  private releaseSeats(req: FlowRequest): void {
    this.totSeatsInUse -= req.maxSeats;
    req.stats.executing(0, -req.maxSeats);
    this.seatDemand.set(this.totSeatsInUse + this.totSeatsWaiting);
    if (req.queue) {
      req.queue.seatsInUse -= req.maxSeats;
      this.removeQueueIfUnwanted(req.queue);
    }
  }

  private noteExecuting(req: FlowRequest): void {
    this.totRequestsExecuting++;
    this.totSeatsInUse += req.maxSeats;
    req.stats.executing(1, req.maxSeats);
    this.seatDemand.set(this.totSeatsInUse + this.totSeatsWaiting);
  }

  /** Queues beyond the desired number go when empty. */
  private removeQueueIfUnwanted(queue: Queue): void {
    if (this.queues.length <= Math.max(0, this.config.desiredNumQueues) || queue.waiting.length > 0 || queue.executing > 0 || queue.seatsInUse > 0) return;
    const i = this.queues.indexOf(queue);
    if (i < 0) return;
    this.queues.splice(i, 1);
    for (let k = i; k < this.queues.length; k++) this.queues[k].index = k;
    if (this.robinIndex >= i) this.robinIndex--;
  }

  private canAccommodate(seats: number): boolean {
    if (this.config.desiredNumQueues < 0) return true;
    // A request wider than the whole limit runs alone.
    if (seats > this.concurrencyLimit) return this.totRequestsExecuting === 0;
    return this.totSeatsInUse + seats <= this.concurrencyLimit;
  }

  private shuffleShard(hash: bigint): number {
    const hand = this.dealer!.deal(hash);
    const offset = this.enqueues % hand.length;
    this.enqueues++;
    let best = -1;
    let min = Infinity;
    for (let i = 0; i < hand.length; i++) {
      const qi = hand[(offset + i) % hand.length];
      const work = this.queues[qi].totalWorkSum;
      if (work < min) {
        min = work;
        best = qi;
      }
    }
    return best;
  }

  /** The anti-windup: a queue's dispatch never precedes (in R) its oldest request's arrival. */
  private boundNextDispatch(queue: Queue): void {
    const oldest = queue.waiting[0];
    if (oldest && queue.nextDispatchR < oldest.arrivalR) queue.nextDispatchR = oldest.arrivalR;
  }

  private dispatchAsMuchAsPossible(): void {
    while (this.totRequestsWaiting !== 0 && this.totSeatsInUse < this.concurrencyLimit && this.dispatchOne());
  }

  /** Dispatches the oldest request of the queue whose virtual finish is earliest, if its seats fit. */
  private dispatchOne(): boolean {
    const nq = this.queues.length;
    let minFinish = Infinity;
    let minQueue: Queue | undefined;
    let minIndex = 0;
    for (let k = 0; k < nq; k++) {
      this.robinIndex = (this.robinIndex + 1) % nq;
      const q = this.queues[this.robinIndex];
      const oldest = q.waiting[0];
      if (!oldest) continue;
      const finish = q.nextDispatchR + oldest.totalWork;
      if (finish < minFinish) {
        minFinish = finish;
        minQueue = q;
        minIndex = this.robinIndex;
      }
    }
    if (!minQueue) return false;
    const req = minQueue.waiting[0];
    if (!this.canAccommodate(req.maxSeats)) return false;
    minQueue.remove(req);
    // Final seats wider than the whole limit are narrowed, the work kept (a longer linger).
    if (req.workEstimate.finalSeats > this.concurrencyLimit && this.concurrencyLimit > 0) {
      const finalSeats = this.concurrencyLimit;
      const we = req.workEstimate as { finalSeats: number; additionalLatencyMs: number };
      we.additionalLatencyMs = (req.finalWork / finalSeats) * 1000;
      we.finalSeats = finalSeats;
    }
    this.robinIndex = minIndex;
    this.totRequestsWaiting--;
    this.totSeatsWaiting -= req.maxSeats;
    req.stats.inQueue(-1, -req.maxSeats);
    req.decision = 'execute';
    req.startMs = this.now();
    this.noteExecuting(req);
    minQueue.executing++;
    minQueue.seatsInUse += req.maxSeats;
    minQueue.nextDispatchR += req.totalWork;
    this.boundNextDispatch(minQueue);
    if (req.waitTimer) clearTimeout(req.waitTimer);
    // A request dispatched inside start() has no callback yet: start() answers 'execute'.
    req.decide?.('execute');
    return true;
  }

  /** Advances R by the time since the last change at the current rate. */
  private syncTime(now = this.now()): void {
    const dt = (now - this.lastRealMs) / 1000;
    this.lastRealMs = now;
    if (dt <= 0) return;
    let active = 0;
    let seatsRequested = 0;
    for (const q of this.queues) {
      seatsRequested += q.seatsInUse + q.maxSeatsSum;
      if (q.waiting.length > 0 || q.executing > 0) active++;
    }
    if (active === 0) return;
    this.currentR += (Math.min(seatsRequested, this.concurrencyLimit) / active) * dt;
  }
}

/** kube's SeatSeconds.String(): whole seat-seconds, then 8 decimals, then "ss". */
export function seatSecondsString(ss: number): string {
  const scaled = Math.round(Math.max(0, ss) * 1e8);
  const quo = Math.floor(scaled / 1e8);
  const rem = scaled - quo * 1e8;
  return `${quo}.${String(rem).padStart(8, '0')}ss`;
}
