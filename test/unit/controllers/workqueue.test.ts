// The controllers' work queue (server/controllers/workqueue.ts) against client-go's workqueue
// semantics, on a clock the test moves by hand: de-duplication, a key never handed out twice at
// once, per-key exponential backoff (5 ms doubling to 1000 s) with the overall token bucket,
// Forget on success, delayed adds keeping the sooner time, and the worker loop's retries.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { newLogger } from '../../../server/logging/logger.ts';
import {
  BucketRateLimiter,
  ExponentialFailureRateLimiter,
  WorkQueue,
  defaultControllerRateLimiter,
  type Clock,
  type HandlerResult,
} from '../../../server/controllers/workqueue.ts';

/** A clock that only moves when told; timers and deferred calls run as it passes their time. */
class FakeClock implements Clock {
  private t = 1_000;
  private seq = 0;
  private readonly timers = new Map<number, { at: number; fn: () => void }>();

  now(): number {
    return this.t;
  }

  after(ms: number, fn: () => void): () => void {
    const id = this.seq++;
    this.timers.set(id, { at: this.t + ms, fn });
    return () => this.timers.delete(id);
  }

  soon(fn: () => void): void {
    this.after(0, fn);
  }

  /** Timers not run yet. */
  pending(): number {
    return this.timers.size;
  }

  /** Moves time forward by ms, running what comes due in time order (and what that schedules, when due). */
  step(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const e of this.timers) if (e[1].at <= end && (next === undefined || e[1].at < next[1].at || (e[1].at === next[1].at && e[0] < next[0]))) next = e;
      if (next === undefined) break;
      this.timers.delete(next[0]);
      this.t = Math.max(this.t, next[1].at);
      next[1].fn();
    }
    this.t = end;
  }
}

/** Lets the handlers' promises settle (one turn of the event loop; no time passes on the clock). */
const settle = () => new Promise<void>((r) => setImmediate(r));

/** Takes every ready key, in order. */
function drain<K>(q: WorkQueue<K>): K[] {
  const out: K[] = [];
  for (let k = q.get(); k !== undefined; k = q.get()) out.push(k);
  return out;
}

describe('rate limiters', () => {
  it('per key: 5 ms doubling on each failure, at most the ceiling; keys apart; forget starts over', () => {
    const r = new ExponentialFailureRateLimiter<string>(5, 1000_000);
    assert.deepEqual([1, 2, 3, 4, 5].map(() => r.when('a')), [5, 10, 20, 40, 80]);
    assert.equal(r.when('b'), 5, 'another key has its own count');
    assert.equal(r.numRequeues('a'), 5);
    r.forget('a');
    assert.equal(r.numRequeues('a'), 0);
    assert.equal(r.when('a'), 5);
    // 5 ms · 2^18 = 1310.72 s: the 19th failure waits the ceiling, 1000 s, and so does every later one.
    const c = new ExponentialFailureRateLimiter<string>(5, 1000_000);
    const waits = Array.from({ length: 25 }, () => c.when('k'));
    assert.equal(waits[17], 5 * 2 ** 17);
    assert.deepEqual(waits.slice(18), Array(7).fill(1000_000));
  });

  it('the bucket: 100 retries at once, then 10 a second; it refills with time', () => {
    const clock = new FakeClock();
    const b = new BucketRateLimiter<string>(10, 100, clock);
    const first = Array.from({ length: 100 }, () => b.when());
    assert.deepEqual(first, Array(100).fill(0));
    assert.equal(b.when(), 100, 'the 101st waits for a token: 100 ms');
    assert.equal(b.when(), 200);
    clock.step(1000);
    // Ten tokens came back in that second; two were owed.
    assert.deepEqual(Array.from({ length: 8 }, () => b.when()), Array(8).fill(0));
    assert.equal(b.when(), 100);
  });

  it('the default controller limiter takes the longer of the two', () => {
    const clock = new FakeClock();
    const r = defaultControllerRateLimiter<string>(clock);
    assert.equal(r.when('a'), 5);
    for (let i = 0; i < 99; i++) r.when(`k${i}`);
    // The bucket is empty now: 100 ms beats the key's 10 ms.
    assert.equal(r.when('a'), 100);
    assert.equal(r.numRequeues('a'), 2);
    r.forget('a');
    assert.equal(r.numRequeues('a'), 0);
  });
});

describe('the queue', () => {
  it('hands keys out in order, each once however often it was added', () => {
    const q = new WorkQueue<string>({ name: 't', clock: new FakeClock() });
    for (const k of ['a', 'b', 'a', 'c', 'b']) q.add(k);
    assert.equal(q.len(), 3);
    assert.deepEqual(drain(q), ['a', 'b', 'c']);
    assert.equal(q.get(), undefined);
  });

  it('a key being processed is not handed out again; added meanwhile, it comes back once after done', () => {
    const q = new WorkQueue<string>({ name: 't', clock: new FakeClock() });
    q.add('a');
    assert.equal(q.get(), 'a');
    q.add('a');
    q.add('a');
    assert.equal(q.get(), undefined, 'not while it is processed');
    q.done('a');
    assert.deepEqual(drain(q), ['a']);
    q.done('a');
    assert.equal(q.get(), undefined, 'done without being added again: gone');
  });

  it('addAfter: due after its time; a second delay keeps the sooner one; ≤ 0 adds at once', () => {
    const clock = new FakeClock();
    const q = new WorkQueue<string>({ name: 't', clock });
    q.addAfter('late', 100);
    q.addAfter('late', 300);
    q.addAfter('soon', 200);
    q.addAfter('soon', 50);
    q.addAfter('now', 0);
    assert.deepEqual(drain(q), ['now']);
    clock.step(49);
    assert.equal(q.get(), undefined);
    clock.step(1);
    assert.deepEqual(drain(q), ['soon']);
    clock.step(50);
    assert.deepEqual(drain(q), ['late']);
    clock.step(1000);
    assert.equal(q.get(), undefined, 'the later times were dropped, not queued again');
  });

  it('addRateLimited waits each key out on its own backoff; forget starts it over', () => {
    const clock = new FakeClock();
    const q = new WorkQueue<string>({ name: 't', clock });
    q.addRateLimited('a'); // 5 ms
    q.addRateLimited('a'); // 10 ms: the pending 5 ms stays
    q.addRateLimited('b'); // 5 ms
    assert.equal(q.numRequeues('a'), 2);
    clock.step(5);
    assert.deepEqual(drain(q).sort(), ['a', 'b']);
    q.done('a');
    q.done('b');
    q.addRateLimited('a'); // third failure: 20 ms
    clock.step(19);
    assert.equal(q.get(), undefined);
    clock.step(1);
    assert.equal(q.get(), 'a');
    q.done('a');
    q.forget('a');
    q.addRateLimited('a');
    clock.step(5);
    assert.equal(q.get(), 'a', 'forgotten: 5 ms again');
  });

  it('shutDown drops queued and waiting keys and takes no more', async () => {
    const clock = new FakeClock();
    const q = new WorkQueue<string>({ name: 't', clock });
    q.add('a');
    q.addAfter('b', 10);
    await q.shutDown();
    q.add('c');
    clock.step(100);
    assert.equal(q.get(), undefined);
  });
});

describe('the worker loop', () => {
  it('two failing keys are each retried on their own backoff (one never cancels the other) until they succeed', async () => {
    const clock = new FakeClock();
    const q = new WorkQueue<string>({ name: 't', clock });
    const failUntil = new Map([
      ['a', 3],
      ['b', 2],
    ]);
    const calls: string[] = [];
    q.run(async (key) => {
      calls.push(`${key}@${clock.now() - 1000}`);
      const left = failUntil.get(key)!;
      failUntil.set(key, left - 1);
      if (left > 0) return 'retry';
    }, 2);
    q.add('a');
    q.add('b');
    for (let i = 0; i < 10; i++) {
      clock.step(0);
      await settle();
      clock.step(5);
      await settle();
    }
    // a: at 0, 5 (after 5 ms), 15 (10 ms), 35 (20 ms); b: at 0, 5, 15. Then both forgotten.
    assert.deepEqual(calls.filter((c) => c.startsWith('a')), ['a@0', 'a@5', 'a@15', 'a@35']);
    assert.deepEqual(calls.filter((c) => c.startsWith('b')), ['b@0', 'b@5', 'b@15']);
    assert.equal(q.numRequeues('a'), 0);
    assert.equal(q.numRequeues('b'), 0);
  });

  it('a thrown error retries with backoff; requeueAfterMs comes back after that long, its failures kept', async () => {
    const clock = new FakeClock();
    const logged: string[] = [];
    const q = new WorkQueue<string>({ name: 'worker-loop test', clock, logger: newLogger({}, (line) => logged.push(line)) });
    const results: (HandlerResult | Error)[] = [new Error('expected by the test'), { requeueAfterMs: 1000 }, undefined];
    const seen: number[] = [];
    q.run(async () => {
      seen.push(clock.now() - 1000);
      const r = results.shift();
      if (r instanceof Error) throw r;
      return r;
    });
    q.add('k');
    clock.step(0);
    await settle();
    assert.equal(q.numRequeues('k'), 1);
    clock.step(5);
    await settle();
    assert.equal(q.numRequeues('k'), 1, 'a requeue after a time is no failure, nor a success');
    clock.step(999);
    await settle();
    assert.deepEqual(seen, [0, 5]);
    clock.step(1);
    await settle();
    assert.deepEqual(seen, [0, 5, 1005]);
    assert.equal(q.numRequeues('k'), 0, 'success forgets');
    assert.equal(logged.length, 1, 'the thrown error was logged once');
    assert.match(logged[0], /^E\d{4} .*\] "Processing failed" err="expected by the test" controller="worker-loop test" key="k" stacktrace=</, logged[0]);
  });

  it('never runs one key twice at once; added while it runs, it runs once more after', async () => {
    const clock = new FakeClock();
    const q = new WorkQueue<string>({ name: 't', clock });
    let running = 0;
    let most = 0;
    let runs = 0;
    const release: (() => void)[] = [];
    q.run(async () => {
      runs++;
      most = Math.max(most, ++running);
      await new Promise<void>((r) => release.push(r));
      running--;
    }, 4);
    q.add('k');
    clock.step(0);
    await settle();
    q.add('k');
    q.add('k');
    clock.step(0);
    await settle();
    assert.equal(runs, 1, 'the second add waits for the first run');
    release.shift()!();
    await settle();
    clock.step(0);
    await settle();
    assert.equal(runs, 2);
    release.shift()!();
    await settle();
    clock.step(0);
    await settle();
    assert.equal(runs, 2, 'the two adds made one more run');
    assert.equal(most, 1);
  });

  it('runs different keys side by side, up to the workers asked for; shutDown waits for them', async () => {
    const clock = new FakeClock();
    const q = new WorkQueue<string>({ name: 't', clock });
    let running = 0;
    let most = 0;
    const release: (() => void)[] = [];
    q.run(async () => {
      most = Math.max(most, ++running);
      await new Promise<void>((r) => release.push(r));
      running--;
    }, 2);
    for (const k of ['a', 'b', 'c']) q.add(k);
    clock.step(0);
    await settle();
    assert.equal(running, 2);
    let stopped = false;
    const stopping = q.shutDown().then(() => (stopped = true));
    await settle();
    assert.equal(stopped, false, 'two keys still running');
    for (const r of release.splice(0)) r();
    await stopping;
    assert.equal(most, 2);
    assert.equal(running, 0);
    clock.step(0);
    await settle();
    assert.equal(release.length, 0, 'c, queued, never ran after the shutdown');
  });
});
