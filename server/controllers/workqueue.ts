// The work queue the in-process controllers share, after client-go's workqueue: keys (not
// objects) are queued; a key queued twice is queued once; a key being processed is never handed
// out again until it is done (added meanwhile, it is processed once more after); a failed key
// comes back after its own backoff, and success forgets its failures. Written here because the
// controllers run in the server's own event loop: there is no Go runtime or library to lend them
// one, and the few hundred lines below are what client-go's queue, delaying queue and rate
// limiters amount to for a single thread.
//
// Time is read from a Clock so tests drive it by hand (no sleeps).
import { fallbackLogger, type Logger } from '../logging/logger.ts';

/** Time and timers, injectable. Milliseconds, monotonic. */
export interface Clock {
  now(): number;
  /** Calls fn after ms; returns what cancels it. */
  after(ms: number, fn: () => void): () => void;
  /** Calls fn once the current work is over (not inside the caller's stack). */
  soon(fn: () => void): void;
}

export const realClock: Clock = {
  now: () => performance.now(),
  after(ms, fn) {
    const t = setTimeout(fn, ms);
    t.unref(); // (a pending retry does not keep the process alive)
    return () => clearTimeout(t);
  },
  soon: (fn) => void setImmediate(fn),
};

// ---------------------------------------------------------------------------------------------
// Rate limiters (client-go util/workqueue/default_rate_limiters.go)

export interface RateLimiter<K> {
  /** How long the key waits before it is retried, counting this failure. */
  when(key: K): number;
  /** The key succeeded: its failures are forgotten. */
  forget(key: K): void;
  /** How many failures the key has now. */
  numRequeues(key: K): number;
}

/** base·2^failures per key, at most max (client-go's ItemExponentialFailureRateLimiter). */
export class ExponentialFailureRateLimiter<K> implements RateLimiter<K> {
  private readonly failures = new Map<K, number>();
  constructor(
    private readonly baseMs: number,
    private readonly maxMs: number,
  ) {}

  when(key: K): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    return Math.min(this.baseMs * 2 ** n, this.maxMs);
  }

  forget(key: K): void {
    this.failures.delete(key);
  }

  numRequeues(key: K): number {
    return this.failures.get(key) ?? 0;
  }
}

/**
 * One token bucket for all keys (client-go's BucketRateLimiter over golang.org/x/time/rate): `burst`
 * retries at once, then `perSecond`; each retry reserves a token and waits until it is there.
 */
export class BucketRateLimiter<K> implements RateLimiter<K> {
  private tokens: number;
  private last: number;
  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    private readonly clock: Clock = realClock,
  ) {
    this.tokens = burst;
    this.last = clock.now();
  }

  when(): number {
    const now = this.clock.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.perSecond);
    this.last = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.perSecond) * 1000;
  }

  forget(): void {}

  numRequeues(): number {
    return 0;
  }
}

/** The longest wait of several limiters (client-go's MaxOfRateLimiter). */
export class MaxOfRateLimiter<K> implements RateLimiter<K> {
  private readonly limiters: RateLimiter<K>[];
  constructor(...limiters: RateLimiter<K>[]) {
    this.limiters = limiters;
  }

  when(key: K): number {
    let ms = 0;
    for (const l of this.limiters) ms = Math.max(ms, l.when(key));
    return ms;
  }

  forget(key: K): void {
    for (const l of this.limiters) l.forget(key);
  }

  numRequeues(key: K): number {
    let n = 0;
    for (const l of this.limiters) n = Math.max(n, l.numRequeues(key));
    return n;
  }
}

/**
 * client-go's DefaultControllerRateLimiter: per key 5 ms doubling up to 1000 s, and 10 retries a
 * second (a burst of 100) overall. maxMs: another ceiling for the per-key backoff (kube's namespace
 * controller uses 60 s, so a namespace is looked at again at least every minute).
 */
export function defaultControllerRateLimiter<K>(clock: Clock = realClock, maxMs = 1000_000): RateLimiter<K> {
  return new MaxOfRateLimiter<K>(new ExponentialFailureRateLimiter<K>(5, maxMs), new BucketRateLimiter<K>(10, 100, clock));
}

// ---------------------------------------------------------------------------------------------
// The queue

/**
 * What a handler asks for its key: nothing (done: its failures forgotten); 'retry' (not done yet,
 * nothing to report: back after its backoff, a failure counted); or another look after ms.
 */
export type HandlerResult = void | 'retry' | { requeueAfterMs: number };

export interface WorkQueueOptions<K> {
  /** For log lines. */
  name: string;
  clock?: Clock;
  rateLimiter?: RateLimiter<K>;
  /** Where a handler's throw is logged (default: stderr). */
  logger?: Logger;
}

/** A min-heap of (time, key) entries; entries made stale by a sooner time are skipped when popped. */
interface Waiting<K> {
  at: number;
  key: K;
}

export class WorkQueue<K = string> {
  readonly name: string;
  private readonly clock: Clock;
  private readonly limiter: RateLimiter<K>;
  private readonly logger: Logger;
  /** Keys waiting to be handed out, in order. */
  private readonly queue: K[] = [];
  private head = 0;
  /** Keys that need processing (queued, or added again while processing). */
  private readonly dirty = new Set<K>();
  /** Keys handed out and not done yet. */
  private readonly processing = new Set<K>();
  /** Keys added with a delay: when each is due (the soonest asked for). */
  private readonly due = new Map<K, number>();
  private readonly heap: Waiting<K>[] = [];
  private timer: { at: number; cancel: () => void } | undefined;
  private shuttingDown = false;
  // The worker loop (run): its handler, how many may run, how many run.
  private handler: ((key: K) => Promise<HandlerResult>) | undefined;
  private workers = 0;
  private active = 0;
  private pumpScheduled = false;
  private drained: (() => void) | undefined;
  private stopped: Promise<void> | undefined;

  constructor(opts: WorkQueueOptions<K>) {
    this.name = opts.name;
    this.clock = opts.clock ?? realClock;
    this.limiter = opts.rateLimiter ?? defaultControllerRateLimiter<K>(this.clock);
    this.logger = opts.logger ?? fallbackLogger();
  }

  /** Queues the key unless it is queued already; a key being processed is processed again once done. */
  add(key: K): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.dirty.add(key);
    if (this.processing.has(key)) return;
    this.queue.push(key);
    this.schedulePump();
  }

  /** Adds the key after ms (at once for ms ≤ 0); waiting already, it keeps the sooner of the two times. */
  addAfter(key: K, ms: number): void {
    if (this.shuttingDown) return;
    if (!(ms > 0)) return this.add(key);
    const at = this.clock.now() + ms;
    const current = this.due.get(key);
    if (current !== undefined && current <= at) return;
    this.due.set(key, at);
    this.heapPush({ at, key });
    this.armTimer();
  }

  /** Adds the key after the rate limiter's wait for it (a failure counted). */
  addRateLimited(key: K): void {
    this.addAfter(key, this.limiter.when(key));
  }

  /** Forgets the key's failures (its backoff starts over). */
  forget(key: K): void {
    this.limiter.forget(key);
  }

  numRequeues(key: K): number {
    return this.limiter.numRequeues(key);
  }

  /** Keys queued and ready (not those waiting for their time). */
  len(): number {
    return this.queue.length - this.head;
  }

  /** The next key to process (now being processed), or undefined when none is ready. */
  get(): K | undefined {
    if (this.head >= this.queue.length) return undefined;
    const key = this.queue[this.head++];
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
    this.processing.add(key);
    this.dirty.delete(key);
    return key;
  }

  /** The key is processed; added meanwhile, it is queued again. */
  done(key: K): void {
    this.processing.delete(key);
    if (this.dirty.has(key) && !this.shuttingDown) {
      this.queue.push(key);
      this.schedulePump();
    }
  }

  /**
   * Processes keys with handler, up to `workers` at a time (never one key twice at once): a result
   * of nothing forgets the key's failures; 'retry' adds it after its backoff; `requeueAfterMs`
   * adds it after that long (its failures kept, as kube's namespace controller does while content
   * remains); a throw is logged and retried as 'retry' is.
   */
  run(handler: (key: K) => Promise<HandlerResult>, workers = 1): void {
    this.handler = handler;
    this.workers = workers;
    this.schedulePump();
  }

  /** Takes no more keys and cancels the waiting ones; resolves once the keys being processed are done. */
  shutDown(): Promise<void> {
    if (this.stopped) return this.stopped;
    this.shuttingDown = true;
    this.timer?.cancel();
    this.timer = undefined;
    this.queue.length = this.head = 0;
    this.dirty.clear();
    this.due.clear();
    this.heap.length = 0;
    this.stopped = this.active === 0 ? Promise.resolve() : new Promise((resolve) => (this.drained = resolve));
    return this.stopped;
  }

  private schedulePump(): void {
    if (this.handler === undefined || this.pumpScheduled || this.active >= this.workers) return;
    this.pumpScheduled = true;
    this.clock.soon(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    while (this.active < this.workers && !this.shuttingDown) {
      const key = this.get();
      if (key === undefined) return;
      this.active++;
      void this.process(key);
    }
  }

  private async process(key: K): Promise<void> {
    try {
      const result = await this.handler!(key);
      if (result === 'retry') this.addRateLimited(key);
      else if (result) this.addAfter(key, result.requeueAfterMs);
      else this.forget(key);
    } catch (e) {
      if (!this.shuttingDown) this.logger.error(e, 'Processing failed', 'controller', this.name, 'key', String(key));
      this.addRateLimited(key);
    } finally {
      this.active--;
      this.done(key);
      if (this.shuttingDown) {
        if (this.active === 0) this.drained?.();
      } else this.schedulePump();
    }
  }

  // -- the delayed keys --

  private armTimer(): void {
    const next = this.heap[0];
    if (next === undefined || this.shuttingDown) return;
    if (this.timer && this.timer.at <= next.at) return;
    this.timer?.cancel();
    const at = next.at;
    this.timer = { at, cancel: this.clock.after(Math.max(0, at - this.clock.now()), () => this.fireDue(at)) };
  }

  private fireDue(at: number): void {
    if (this.timer?.at === at) this.timer = undefined;
    const now = this.clock.now();
    while (this.heap.length > 0 && this.heap[0].at <= now) {
      const { at: when, key } = this.heapPop()!;
      // (an entry a sooner time replaced, or one already added)
      if (this.due.get(key) !== when) continue;
      this.due.delete(key);
      this.add(key);
    }
    this.armTimer();
  }

  private heapPush(w: Waiting<K>): void {
    const h = this.heap;
    h.push(w);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (h[p].at <= h[i].at) break;
      [h[p], h[i]] = [h[i], h[p]];
      i = p;
    }
  }

  private heapPop(): Waiting<K> | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0 && last !== undefined) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && h[l].at < h[m].at) m = l;
        if (r < h.length && h[r].at < h[m].at) m = r;
        if (m === i) break;
        [h[m], h[i]] = [h[i], h[m]];
        i = m;
      }
    }
    return top;
  }
}
