// The watch hub: one subscription to the log's commits, handed out in batches to the open
// watches of each resource, spaced so that fanning out never starves requests.
import type { ResourceInfo } from '../../schema/types.ts';
import type { EventLog } from '../../storage/log/event-log.ts';
import type { LogEvent } from '../../storage/log/types.ts';
import type { GenericStore } from '../store.ts';
import { EventBatch, type BatchSubscriber, type WatchSource } from './events.ts';
import { ResourceWatch, type WatchOptions } from './resource-watch.ts';
import { fallbackLogger } from '../../logging/logger.ts';

/**
 * The share of the main thread that fanning events out to watchers may take (see scheduleFanOut).
 * All of it, in turns with requests: a smaller share (0.4 before) leaves the thread idle while
 * events wait, and with 1,000 watchers delivered later without serving requests any sooner.
 */
const FAN_OUT_DUTY = 1;

export class WatchHub implements WatchSource {
  /** Watchers by qualified resource: a commit reaches only the watchers of what it changed. */
  private readonly watchers = new Map<string, Set<BatchSubscriber>>();
  /** Committed events not yet handed to watchers, in resourceVersion order. */
  private pending: LogEvent[] = [];
  private fanOutScheduled = false;
  private lastFanOutStart = 0;
  private lastFanOutMs = 0;

  /**
   * `flush` sends what a fan-out wrote (the transport's hook: HTTP/2 connections queue their
   * frames until it), so that a fan-out's cost includes encrypting and sending them.
   */
  constructor(
    readonly log: EventLog,
    readonly store: GenericStore,
    private readonly flush: () => void = () => {},
  ) {
    log.onCommit((events) => {
      for (const e of events) if (this.watchers.has(e.key.res)) this.pending.push(e);
      if (this.pending.length) this.scheduleFanOut();
    });
  }

  /** A watch of info's resource; its options are checked here (400s), its events start with start(). */
  open(info: ResourceInfo, opts: WatchOptions): ResourceWatch {
    return new ResourceWatch(this, info, opts);
  }

  subscribe(res: string, w: BatchSubscriber): () => void {
    let set = this.watchers.get(res);
    if (!set) this.watchers.set(res, (set = new Set()));
    set.add(w);
    return () => {
      set!.delete(w);
      if (set!.size === 0) this.watchers.delete(res);
    };
  }

  /**
   * Commits reach watchers in batches. A write to a watcher costs about the same for one event as
   * for twenty, so commits that land while a fan-out waits share it, and fan-outs are spaced so
   * they take at most FAN_OUT_DUTY of the main thread: the next one starts once the last one's
   * cost (its own run, then Node's sends after it) has passed. With a few watchers there is no
   * wait at all; with thousands, the event loop goes round between fan-outs, so requests (and the
   * commits they make) get their turn, and the busier it is the larger the batches.
   */
  private scheduleFanOut(): void {
    if (this.fanOutScheduled) return;
    this.fanOutScheduled = true;
    // Spaced from the last one's start.
    const wait = this.lastFanOutStart + this.lastFanOutMs / FAN_OUT_DUTY - performance.now();
    if (wait >= 1) setTimeout(() => this.fanOut(), wait);
    // As a tick, not a microtask: Node runs ticks once the microtask queue is empty, so the
    // batch's writers (resolved right after this listener) are answered first, through every
    // await of their handlers, and the fan-out follows before any further I/O. A microtask ran
    // ahead of them and held every response of the batch behind the whole fan-out.
    else process.nextTick(() => this.fanOut());
  }

  private fanOut(): void {
    this.fanOutScheduled = false;
    const events = this.pending;
    this.pending = [];
    const start = performance.now();
    const byRes = new Map<string, LogEvent[]>();
    for (const e of events) {
      const list = byRes.get(e.key.res);
      if (list) list.push(e);
      else byRes.set(e.key.res, [e]);
    }
    for (const [res, list] of byRes) {
      const batch = new EventBatch(list);
      for (const w of this.watchers.get(res) ?? []) {
        try {
          w.onBatch(batch);
        } catch (e) {
          // Outside any request: one watcher's failure must not cost the others their events.
          fallbackLogger().error(e, 'watch: delivering a batch failed');
        }
      }
    }
    this.flush();
    this.lastFanOutStart = start;
    this.lastFanOutMs = performance.now() - start;
  }
}
