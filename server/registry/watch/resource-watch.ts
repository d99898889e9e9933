// One open watch of a resource: its options checked as kube checks them, its initial state (or a
// replay of the log from a resourceVersion), then each commit batch, filtered by namespace and
// selectors (an object that stops matching arrives as DELETED, one that starts as ADDED),
// bookmarks, and its end.
import type { ResourceInfo } from '../../schema/types.ts';
import type { LogEvent } from '../../storage/log/types.ts';
import { ApiError, internalError, tooLargeResourceVersion, tooOldResourceVersion } from '../../errors.ts';
import { servedJsonPrefix } from '../../storage/rows/codec.ts';
import type { Converter } from '../../schema/types.ts';
import { validateListOptions } from '../list-options.ts';
import { parseLabelSelector, parseFieldSelector, fieldsOf, checkFieldSelectorFor, type LabelSelector, type FieldSelector } from '../selectors.ts';
import { apiVersionOf, parseResourceVersion, qualifiedResourceOf } from '../store.ts';
import { ConvertingWatch } from './converting.ts';
import { EventBatch, PresentedObject, bookmarkObject, type BatchSubscriber, type NoticeType, type ObjectEventType, type WatchedObject, type WatchSink, type WatchSource } from './events.ts';
import { fallbackLogger } from '../../logging/logger.ts';

/** A watch's ListOptions, as the query gave them (kube's metav1.ListOptions). */
export interface WatchOptions {
  /** The namespace of the URL ("" for none). */
  namespace: string;
  /** The object a watch URL names ("" for none): its name joins the field selector. */
  name: string;
  labelSelector: string | undefined;
  fieldSelector: string | undefined;
  /** "" when absent. */
  resourceVersion: string;
  resourceVersionMatch: string | undefined;
  continue: string | undefined;
  sendInitialEvents: boolean | undefined;
  allowWatchBookmarks: boolean;
}

const REPLAY_BATCH = 1000;
const BOOKMARK_INTERVAL_MS = 60_000;
/** How long a watch from a resourceVersion the server has not reached waits for it. */
const TOO_LARGE_RV_WAIT_MS = 3000;

/**
 * One open watch. Its state lives in fields and its steps are methods rather than closures:
 * under tsx (esbuild keepNames) every named closure also gets a name property of its own, about
 * 300 bytes, and idle watches are meant to cost a few KB each.
 */
export class ResourceWatch implements BatchSubscriber {
  /** The last resourceVersion this watch has delivered (or started from). */
  lastRv = 0;
  closed = false;
  readonly labels: LabelSelector | undefined;
  readonly fields: FieldSelector | undefined;
  private readonly res: string;
  /** The namespace watched; undefined: every namespace (or a cluster-scoped kind). */
  private readonly scopeNs: string | undefined;
  /** The served version, apiVersion: objects are presented once per version for every watcher. */
  private readonly apiVersion: string;
  private readonly fromRv: number | undefined;
  private readonly initialState: boolean;
  private readonly initialEventsEnd: boolean;
  private readonly bookmarks: boolean;
  /** Custom resources that convert through a webhook: every event is converted on its way out. */
  private readonly converter: Converter | undefined;
  /** Watchers with the same key write the same bytes for any batch: the first one's are reused. */
  private shareKey: string | undefined;
  private sink!: WatchSink;
  private unsubscribe: () => void = noop;
  private timeout: NodeJS.Timeout | undefined;
  private ticker: NodeJS.Timeout | undefined;

  /** Checks the options, each refusal a 400 in kube's words and order. */
  constructor(private readonly source: WatchSource, readonly info: ResourceInfo, opts: WatchOptions) {
    const labels = parseLabelSelector(opts.labelSelector);
    const fields = parseFieldSelector(opts.name ? joinSelector(opts.fieldSelector, `metadata.name=${opts.name}`) : opts.fieldSelector);
    // (selector syntax first, as kube decodes the parameters before it validates them)
    const sendInitial = opts.sendInitialEvents;
    validateListOptions({ resourceVersionMatch: opts.resourceVersionMatch, continue: opts.continue, sendInitialEvents: sendInitial }, true);
    checkFieldSelectorFor(info, fields);
    const rv = opts.resourceVersion;
    this.fromRv = rv && rv !== '0' ? parseResourceVersion(rv) : undefined;
    this.bookmarks = opts.allowWatchBookmarks;
    // Initial state: always without a resourceVersion (or "0"); with sendInitialEvents=true, a state at least as new as rv.
    this.initialState = sendInitial === true || (sendInitial === undefined && this.fromRv === undefined);
    // The initial events end with an annotated bookmark only for a watch that takes bookmarks.
    this.initialEventsEnd = sendInitial === true && this.bookmarks;
    this.res = qualifiedResourceOf(info);
    this.scopeNs = info.namespaced && opts.namespace ? opts.namespace : undefined;
    this.apiVersion = apiVersionOf(info);
    this.converter = info.custom && !info.custom.converter.trivial ? info.custom.converter : undefined;
    // Empty selectors are not kept: each is an object with a closure, and most watches have none.
    this.labels = labels.empty ? undefined : labels;
    this.fields = fields.empty ? undefined : fields;
    this.shareKey = `${this.apiVersion}|${this.scopeNs ?? ''}|${opts.labelSelector ?? ''}|${opts.fieldSelector ?? ''}|${opts.name}`;
  }

  /**
   * Waits (briefly) for a resourceVersion the server has not reached, else 504 as kube answers;
   * undefined when there is nothing to wait for.
   */
  waitForResourceVersion(): Promise<void> | undefined {
    const { fromRv } = this;
    const log = this.source.log;
    if (fromRv === undefined || fromRv <= log.currentRv) return undefined;
    return log.waitForRv(fromRv, TOO_LARGE_RV_WAIT_MS).then((reached) => {
      if (!reached) throw tooLargeResourceVersion(fromRv, log.currentRv);
    });
  }

  /**
   * Whether this watch's objects are served as stored (their stored JSON may be written as it
   * is): a schema without read-time defaults (defaulting then only drops nulls: rows with one
   * are decoded), and every object of its scope (no selectors).
   */
  get servesStoredJson(): boolean {
    return !this.info.custom?.compiled().hasDefaults && !this.labels && !this.fields;
  }

  /**
   * Writes the initial state (or the replay) to the sink and subscribes, in one synchronous step
   * so that no commit falls between them; the watch ends after timeoutMs.
   */
  start(sink: WatchSink, timeoutMs: number): void {
    this.sink = sink;
    this.shareKey = sink.shareKey === undefined || this.converter ? undefined : `${sink.shareKey}|${this.shareKey}`;
    if (this.converter) return this.startConverted(this.converter, timeoutMs);
    const { info, res, scopeNs } = this;
    const { log, store } = this.source;
    try {
      if (this.initialState) {
        this.lastRv = log.currentRv;
        // Every object, as stored: the rows framed as ADDED events, none decoded.
        const framed = sink.writesStoredJson ? log.addedEventsJoined(res, scopeNs, servedJsonPrefix(this.apiVersion, info.kind, !!info.custom), !!info.custom) : undefined;
        if (framed) this.writeFramed(framed);
        else for (const item of store.listCurrent(info, scopeNs, this.fields, this.labels)) if (this.matches(item)) this.writeObject('ADDED', item);
      } else if (this.fromRv === undefined) {
        this.lastRv = log.currentRv;
      } else if (this.fromRv < log.compactedRv) {
        // As kube-apiserver does: the stream opens, then says why it cannot go on.
        return this.end(tooOldResourceVersion(this.fromRv, log.compactedRv));
      } else {
        this.replay(this.fromRv);
      }
    } catch (e) {
      // A stored object of the initial state or the replay cannot be read (a corrupt object).
      return this.fail(e);
    }
    if (this.initialEventsEnd) this.notice('BOOKMARK', bookmarkObject(info, this.lastRv || log.currentRv, true));
    this.goLive(this, timeoutMs);
  }

  /** The log's events after `from`, as stored JSON lines where the sink writes them as they are. */
  private replay(from: number): void {
    const { info, res, scopeNs } = this;
    const log = this.source.log;
    this.lastRv = from;
    const prefix = this.sink.writesStoredJson ? servedJsonPrefix(this.apiVersion, info.kind, !!info.custom) : undefined;
    for (;;) {
      const framed = prefix && log.framedEventsAfter(res, scopeNs, from, REPLAY_BATCH, prefix, !!info.custom);
      if (framed) {
        this.writeFramed(framed.bytes);
        this.lastRv = framed.last;
        if (framed.count < REPLAY_BATCH) break;
        from = framed.last;
        continue;
      }
      const events = log.eventsAfter(from, REPLAY_BATCH, res);
      const batch = new EventBatch(events);
      for (let i = 0; i < events.length; i++) this.deliver(batch, i);
      if (events.length < REPLAY_BATCH) break;
      from = events[events.length - 1].rv;
    }
    this.lastRv = Math.max(this.lastRv, log.currentRv);
  }

  /**
   * The same steps as start() for a watch whose objects convert through a webhook: the initial
   * state (or replay) is read and the watch subscribed in one synchronous step, as there; the
   * conversions then run in order, so the stream still sees events in resourceVersion order.
   */
  private startConverted(converter: Converter, timeoutMs: number): void {
    const { info, fromRv } = this;
    const { log, store } = this.source;
    if (fromRv !== undefined && !this.initialState && fromRv < log.compactedRv) return this.end(tooOldResourceVersion(fromRv, log.compactedRv));
    const startRv = log.currentRv;
    const adapter = new ConvertingWatch(this, converter, store.services, info.version, this.initialState || fromRv === undefined ? startRv : fromRv);
    try {
      if (this.initialState) {
        this.lastRv = startRv;
        adapter.initial(store.listCurrent(info, this.scopeNs, this.fields, this.labels).filter((o) => this.matches(o)));
      } else if (fromRv === undefined) {
        this.lastRv = startRv;
      } else {
        this.lastRv = fromRv;
        const replay: LogEvent[] = [];
        for (let from = fromRv; ; ) {
          const events = log.eventsAfter(from, REPLAY_BATCH, this.res);
          replay.push(...events);
          if (events.length < REPLAY_BATCH) break;
          from = events[events.length - 1].rv;
        }
        if (replay.length) adapter.onBatch(new EventBatch(replay));
      }
    } catch (e) {
      return this.fail(e);
    }
    if (this.initialEventsEnd) adapter.then(() => this.notice('BOOKMARK', bookmarkObject(info, Math.max(this.lastRv, startRv), true)));
    this.goLive(adapter, timeoutMs);
  }

  private goLive(subscriber: BatchSubscriber, timeoutMs: number): void {
    this.unsubscribe = this.source.subscribe(this.res, subscriber);
    this.sink.subscribed();
    this.timeout = setTimeout(() => this.finish(), timeoutMs);
    if (this.bookmarks) this.ticker = setInterval(() => this.bookmark(), BOOKMARK_INTERVAL_MS);
  }

  matches(o: WatchedObject | undefined): boolean {
    if (!o) return false;
    if (this.scopeNs !== undefined && (o.metadata?.namespace ?? '') !== this.scopeNs) return false;
    if (this.labels && !this.labels.matches(o.metadata?.labels)) return false;
    if (this.fields && !this.fields.matches(fieldsOf(this.info, o))) return false;
    return true;
  }

  /** Event i of the batch, as this watch's selection sees it: added, modified, deleted or none of its business. */
  private deliver(batch: EventBatch, i: number): void {
    const e = batch.events[i];
    if (e.key.res !== this.res) return;
    if (this.scopeNs !== undefined && e.key.ns !== this.scopeNs) return;
    this.lastRv = e.rv;
    const now = e.type === 'DELETED' ? false : this.matches(e.object);
    const before = e.type === 'ADDED' ? false : this.matches(e.prevObject ?? (e.type === 'DELETED' ? e.object : undefined));
    let type: ObjectEventType | undefined;
    if (e.type === 'DELETED') type = before || this.matches(e.object) ? 'DELETED' : undefined;
    else if (now && before) type = 'MODIFIED';
    else if (now) type = 'ADDED';
    else if (before) type = 'DELETED';
    if (type && !this.closed) this.sink.event(type, batch.presented(i, this.apiVersion, this.info, this.source.store));
  }

  onBatch(batch: EventBatch): void {
    if (this.closed) return;
    const events = batch.events;
    // Batches are handed out after their commit: a watch that started meanwhile already has the
    // older events from its initial state or replay, and gathers on its own.
    const shareKey = events[0].rv > this.lastRv ? this.shareKey : undefined;
    const known = shareKey !== undefined ? batch.written.get(shareKey) : undefined;
    let written: unknown;
    if (known) {
      written = known.written;
      if (known.lastRv !== undefined) this.lastRv = known.lastRv;
    } else {
      const before = this.lastRv;
      this.sink.beginBatch();
      for (let i = 0; i < events.length; i++) if (events[i].rv > this.lastRv) this.deliver(batch, i);
      written = this.sink.endBatch();
      if (shareKey !== undefined) batch.written.set(shareKey, { written, lastRv: this.lastRv !== before ? this.lastRv : undefined });
    }
    // The batch leaves in one write: one DATA frame over HTTP/2, one chunk (one syscall) over HTTP/1.1.
    if (!this.closed) this.sink.writeBatch(written);
  }

  /** An object written on its own (the initial state), not shared with other watchers. */
  writeObject(type: ObjectEventType, stored: WatchedObject): void {
    if (!this.closed) this.sink.event(type, new PresentedObject(stored, this.info, this.source.store, false));
  }

  notice(type: NoticeType, object: object): void {
    if (!this.closed) this.sink.notice(type, object);
  }

  private writeFramed(bytes: Buffer): void {
    if (!this.closed) this.sink.framed(bytes);
  }

  bookmark(): void {
    this.notice('BOOKMARK', bookmarkObject(this.info, this.lastRv || this.source.log.currentRv));
  }

  /** The end of the watch (timeout, client gone): a last bookmark if asked for, then the end of the stream. */
  finish(): void {
    if (this.closed) return;
    if (this.bookmarks && this.sink.writable) this.bookmark();
    this.stop();
    this.sink.end();
  }

  /** Stops the events; the stream is the sink's to end. */
  stop(): void {
    this.closed = true;
    this.unsubscribe();
    clearTimeout(this.timeout);
    clearInterval(this.ticker);
  }

  /**
   * Ends a watch whose stream has begun with an ERROR event carrying the failure's Status, as
   * kube-apiserver's watch ends when an object from storage cannot be decoded; the stream would
   * otherwise stay open with nothing more to say.
   */
  private fail(e: unknown): void {
    if (!(e instanceof ApiError)) fallbackLogger().error(e, 'watch failed');
    this.end(e instanceof ApiError ? e : internalError(String((e as Error)?.message ?? e)));
  }

  /** Ends the stream, before it went live, with an ERROR event saying why. */
  private end(error: ApiError): void {
    this.notice('ERROR', error.toStatus());
    this.closed = true;
    this.sink.end();
  }
}

function noop(): void {}

function joinSelector(a: string | undefined, b: string): string {
  return a ? `${a},${b}` : b;
}
