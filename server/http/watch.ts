// Watch: a read of the event log from a resourceVersion onward, then live events as batches
// commit. Each watcher filters by resource, namespace and selectors; an object that stops
// matching arrives as DELETED, one that starts matching as ADDED.
import type { HttpContext } from './state.ts';
import { H2Response } from './h2/messages.ts';
import { flushAll } from './h2/connection.ts';
import type { ResourceInfo } from '../schema/types.ts';
import type { EventLog, LogEvent } from '../storage/event-log.ts';
import type { GenericStore } from '../registry/store.ts';
import { apiVersionOf, qualifiedResourceOf, parseResourceVersion, customObjectOrder, builtinConversionOf } from '../registry/store.ts';
import { convertTo } from '../registry/conversions/index.ts';
import { int64Param, queryFlag, queryOf, sendInitialEventsOf, type RequestInfo } from './request-info.ts';
import { validateListOptions } from '../registry/list-options.ts';
import { negotiateOutput, encode, type OutputFormat } from './negotiation.ts';
import { PROTOBUF_MEDIA_TYPE, definitionForKind, encodeWatchEventFrame } from './protobuf.ts';
import { parseLabelSelector, parseFieldSelector, fieldsOf, checkFieldSelectorFor, type LabelSelector, type FieldSelector } from '../registry/selectors.ts';
import { ApiError, internalError, tooLargeResourceVersion, tooOldResourceVersion } from '../errors.ts';
import type { Converter, ServiceLookup } from '../registry/crd/conversion.ts';
import { toTable, partialMetadata } from './handlers/shape.ts';
import { cloneJSON } from '../registry/apply/index.ts';
import { EVENT_CLOSE, EVENT_OPEN, servedAsStored, servedJsonPrefix, storedJsonOf } from '../storage/codec.ts';
import { goJsonText } from '../util/json.ts';

/** A watcher whose socket buffer grows past this is closed; the client re-lists. */
const MAX_BUFFERED_BYTES = 8 * 1024 * 1024;
const REPLAY_BATCH = 1000;
const BOOKMARK_INTERVAL_MS = 60_000;
/** kube-apiserver's default --min-request-timeout, randomized up to twice that. */
const MIN_REQUEST_TIMEOUT_S = 1800;
/** How long a watch from a resourceVersion the server has not reached waits for it. */
const TOO_LARGE_RV_WAIT_MS = 3000;
/**
 * The share of the main thread that fanning events out to watchers may take (see scheduleFanOut).
 * All of it, in turns with requests: a smaller share (0.4 before) leaves the thread idle while
 * events wait, and with 1,000 watchers delivered later without serving requests any sooner.
 */
const FAN_OUT_DUTY = 1;

type WatchType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/** A batch's bytes for one kind of watcher, and the last event of the batch it saw (if any). */
interface SharedBatch {
  bytes: Buffer | null;
  lastRv: number | undefined;
}
interface Watcher {
  /**
   * Takes a batch of events of its resource; watchers that would write the same bytes share them
   * through `shared`.
   */
  onBatch(events: LogEvent[], shared: Map<string, SharedBatch>): void;
}

/** Serialized forms of a log event, shared by all watchers; gone with the event. */
const wireCache = new WeakMap<LogEvent, Map<string, Buffer | null>>();

export class WatchService {
  /** Watchers by qualified resource: a commit reaches only the watchers of what it changed. */
  private readonly watchers = new Map<string, Set<Watcher>>();
  /** Committed events not yet handed to watchers, in resourceVersion order. */
  private pending: LogEvent[] = [];
  private fanOutScheduled = false;
  private lastFanOutStart = 0;
  private lastFanOutMs = 0;

  constructor(private readonly log: EventLog, private readonly store: GenericStore) {
    log.onCommit((events) => {
      for (const e of events) if (this.watchers.has(e.key.res)) this.pending.push(e);
      if (this.pending.length) this.scheduleFanOut();
    });
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
      const shared = new Map<string, SharedBatch>();
      for (const w of this.watchers.get(res) ?? []) {
        try {
          w.onBatch(list, shared);
        } catch (e) {
          // Outside any request: one watcher's failure must not cost the others their events.
          console.error('watch: delivering a batch failed', e);
        }
      }
    }
    // The HTTP/2 frames leave now, one TLS write per connection, so the fan-out's cost below
    // includes encrypting and sending them.
    flushAll();
    this.lastFanOutStart = start;
    this.lastFanOutMs = performance.now() - start;
  }

  get count(): number {
    let n = 0;
    for (const set of this.watchers.values()) n += set.size;
    return n;
  }

  private subscribe(res: string, w: Watcher): () => void {
    let set = this.watchers.get(res);
    if (!set) this.watchers.set(res, (set = new Set()));
    set.add(w);
    return () => {
      set!.delete(w);
      if (set!.size === 0) this.watchers.delete(res);
    };
  }

  /**
   * The same steps as serve() for a watch whose objects convert through a webhook: the initial
   * state (or replay) is read and the watch subscribed in one synchronous step, as there; the
   * conversions then run in order, so the stream still sees events in resourceVersion order.
   */
  private serveConverted(ctx: HttpContext, w: WatchStream, converter: Converter, info: ResourceInfo, scopeNs: string | undefined, initialState: boolean, fromRv: number | undefined, initialEventsEnd: boolean, timeoutSeconds: number, bookmarks: boolean): void {
    const res = qualifiedResourceOf(info);
    if (fromRv !== undefined && !initialState && fromRv < this.log.compactedRv) {
      w.write('ERROR', tooOldResourceVersion(fromRv, this.log.compactedRv).toStatus());
      w.closed = true;
      ctx.res.end();
      return;
    }
    const startRv = this.log.currentRv;
    const adapter = new ConvertingWatch(w, converter, this.store.services, info.version, initialState || fromRv === undefined ? startRv : fromRv);
    try {
      if (initialState) {
        w.lastRv = startRv;
        adapter.initial(this.store.listCurrent(info, scopeNs, w.fields, w.labels).filter((o) => w.matches(o)));
      } else if (fromRv === undefined) {
        w.lastRv = startRv;
      } else {
        w.lastRv = fromRv;
        const replay: LogEvent[] = [];
        for (let from = fromRv; ; ) {
          const batch = this.log.eventsAfter(from, REPLAY_BATCH, res);
          replay.push(...batch);
          if (batch.length < REPLAY_BATCH) break;
          from = batch[batch.length - 1].rv;
        }
        if (replay.length) adapter.onBatch(replay);
      }
    } catch (e) {
      return endWithError(w, ctx.res, e);
    }
    if (initialEventsEnd) {
      adapter.then(() => w.write('BOOKMARK', bookmarkObject(info, Math.max(w.lastRv, startRv), true)));
    }
    w.unsubscribe = this.subscribe(res, adapter);
    w.live = true;
    w.timeout = setTimeout(() => w.finish(), timeoutSeconds * 1000);
    if (bookmarks) w.ticker = setInterval(() => w.bookmark(), BOOKMARK_INTERVAL_MS);
    ctx.req.on('close', () => w.finish());
    ctx.res.on('error', () => w.finish());
  }

  async serve(ctx: HttpContext, info: ResourceInfo, ri: RequestInfo): Promise<void> {
    const q = queryOf(ctx);
    const fmt = { ...negotiateOutput(ctx.get('accept'), ['Table', 'PartialObjectMetadata'], !info.custom) };
    const labels = parseLabelSelector(q.get('labelSelector') ?? undefined);
    const fieldSel = q.get('fieldSelector') ?? undefined;
    const fields = parseFieldSelector(ri.name ? joinSelector(fieldSel, `metadata.name=${ri.name}`) : fieldSel);
    // (selector syntax first, as kube decodes the parameters before it validates them)
    const sendInitial = sendInitialEventsOf(q);
    validateListOptions({ resourceVersionMatch: q.get('resourceVersionMatch') ?? undefined, continue: q.get('continue') ?? undefined, sendInitialEvents: sendInitial }, true);
    checkFieldSelectorFor(info, fields);
    const rvParam = q.get('resourceVersion') ?? '';
    const fromRv = rvParam && rvParam !== '0' ? parseResourceVersion(rvParam) : undefined;
    // As kube-apiserver: 0 (or none) takes the randomized default; a negative timeout ends the watch at once.
    const timeoutSeconds = Math.max(0, int64Param(q, 'timeoutSeconds') || MIN_REQUEST_TIMEOUT_S * (1 + Math.random()));
    const bookmarks = queryFlag(q.get('allowWatchBookmarks'));
    // Initial state: always without a resourceVersion (or "0"); with sendInitialEvents=true, a state at least as new as rv.
    const initialState = sendInitial === true || (sendInitial === undefined && fromRv === undefined);
    // The initial events end with an annotated bookmark only for a watch that takes bookmarks.
    const initialEventsEnd = sendInitial === true && bookmarks;
    if (fromRv !== undefined && fromRv > this.log.currentRv && !(await this.log.waitForRv(fromRv, TOO_LARGE_RV_WAIT_MS))) {
      throw tooLargeResourceVersion(fromRv, this.log.currentRv);
    }
    const res = qualifiedResourceOf(info);
    const ns = info.namespaced ? ri.namespace : '';
    const scopeNs = info.namespaced && ri.namespace ? ri.namespace : undefined;
    const includeObject = q.get('includeObject');

    // Take over the response: a stream of events, flushed one by one.
    ctx.respond = false;
    const out = ctx.res;
    // Custom resources have no protobuf form: their watches stream JSON.
    if (fmt.encoding === 'protobuf' && !definitionForKind(apiVersionOf(info), info.kind)) fmt.encoding = 'json';
    const contentType = fmt.encoding === 'cbor' ? 'application/cbor-seq' : fmt.encoding === 'protobuf' ? `${PROTOBUF_MEDIA_TYPE};stream=watch` : fmt.encoding === 'json' ? 'application/json' : fmt.contentType;
    // No Transfer-Encoding: HTTP/1.1 chunks a body of unknown length by itself, and HTTP/2 forbids the header.
    out.writeHead(200, { 'Content-Type': contentType, 'Cache-Control': 'no-cache, private' });
    out.flushHeaders();

    // Events from the log are shared by every watcher: their bytes are made once per
    // representation and reused (a Table's first event differs only in carrying the columns).
    const representation = `${fmt.encoding}|${fmt.shape}|${fmt.metaVersion}|${apiVersionOf(info)}|${includeObject ?? ''}`;
    // Watchers that would write the same bytes for any batch (same representation, scope and
    // selectors; not Tables, whose first event differs) gather a batch once and share it.
    const shareKey = fmt.shape === 'Table' ? undefined : `${representation}|${scopeNs ?? ''}|${q.get('labelSelector') ?? ''}|${fieldSel ?? ''}|${ri.name ?? ''}`;
    // Custom resources that convert through a webhook: every event is converted on its way out.
    const converter = info.custom && !info.custom.converter.trivial ? info.custom.converter : undefined;
    const w = new WatchStream(this.log, out, info, fmt, res, scopeNs, labels, fields, includeObject, representation, converter ? undefined : shareKey, bookmarks);
    if (converter) return this.serveConverted(ctx, w, converter, info, scopeNs, initialState, fromRv, initialEventsEnd, timeoutSeconds, bookmarks);

    // Initial state and subscription happen in one synchronous step, so no commit falls between them.
    try {
      if (initialState) {
        w.lastRv = this.log.currentRv;
        // Every object, as stored: the rows framed as ADDED events, none decoded.
        const framed = w.writesStoredJson ? this.log.addedEventsJoined(res, scopeNs, servedJsonPrefix(apiVersionOf(info), info.kind, !!info.custom), !!info.custom) : undefined;
        if (framed) w.writeFramed(framed);
        else for (const item of this.store.listCurrent(info, scopeNs, w.fields, w.labels)) if (w.matches(item)) w.write('ADDED', item);
      } else if (fromRv === undefined) {
        w.lastRv = this.log.currentRv;
      } else if (fromRv < this.log.compactedRv) {
        // As kube-apiserver does: the stream opens, then says why it cannot go on.
        w.write('ERROR', tooOldResourceVersion(fromRv, this.log.compactedRv).toStatus());
        w.closed = true;
        out.end();
        return;
      } else {
        let from = fromRv;
        w.lastRv = from;
        const prefix = w.writesStoredJson ? servedJsonPrefix(apiVersionOf(info), info.kind, !!info.custom) : undefined;
        for (;;) {
          // The events as stored, framed, where the watch writes them as they are.
          const framed = prefix && this.log.framedEventsAfter(res, scopeNs, from, REPLAY_BATCH, prefix, !!info.custom);
          if (framed) {
            w.writeFramed(framed.bytes);
            w.lastRv = framed.last;
            if (framed.count < REPLAY_BATCH) break;
            from = framed.last;
            continue;
          }
          const batch = this.log.eventsAfter(from, REPLAY_BATCH, res);
          for (const e of batch) w.deliver(e);
          if (batch.length < REPLAY_BATCH) break;
          from = batch[batch.length - 1].rv;
        }
        w.lastRv = Math.max(w.lastRv, this.log.currentRv);
      }
    } catch (e) {
      // A stored object of the initial state or the replay cannot be read (a corrupt object).
      return endWithError(w, out, e);
    }
    if (initialEventsEnd) {
      w.write('BOOKMARK', bookmarkObject(info, w.lastRv || this.log.currentRv, true));
    }
    w.unsubscribe = this.subscribe(res, w);
    w.live = true;
    w.timeout = setTimeout(() => w.finish(), timeoutSeconds * 1000);
    if (bookmarks) w.ticker = setInterval(() => w.bookmark(), BOOKMARK_INTERVAL_MS);
    ctx.req.on('close', () => w.finish());
    out.on('error', () => w.finish());
    void ns;
  }
}

/**
 * One open watch. Its state lives in fields and its steps are methods rather than closures over
 * serve(): under tsx (esbuild keepNames) every named closure also gets a name property of its
 * own, about 300 bytes, and idle watches are meant to cost a few KB each.
 */
class WatchStream implements Watcher {
  firstTable = true;
  /** The last resourceVersion this watch has delivered (or started from). */
  lastRv = 0;
  closed = false;
  /** Set once the initial state is written: only then does a growing buffer mean a slow reader. */
  live = false;
  /** While a batch is gathered, bytes go here and leave in one write. */
  private sink: Buffer[] | undefined;
  unsubscribe: () => void = noop;
  timeout: NodeJS.Timeout | undefined;
  ticker: NodeJS.Timeout | undefined;

  constructor(
    private readonly log: EventLog,
    private readonly out: HttpContext['res'],
    private readonly info: ResourceInfo,
    private readonly fmt: OutputFormat,
    private readonly res: string,
    private readonly scopeNs: string | undefined,
    readonly labels: LabelSelector | undefined,
    readonly fields: FieldSelector | undefined,
    private readonly includeObject: string | null,
    private readonly representation: string,
    private readonly shareKey: string | undefined,
    private readonly bookmarks: boolean,
  ) {
    // Empty selectors are not kept: each is an object with a closure, and most watches have none.
    if (labels?.empty) this.labels = undefined;
    if (fields?.empty) this.fields = undefined;
  }

  matches(o: any): boolean {
    if (!o) return false;
    if (this.scopeNs !== undefined && (o.metadata?.namespace ?? '') !== this.scopeNs) return false;
    if (this.labels && !this.labels.matches(o.metadata?.labels)) return false;
    if (this.fields && !this.fields.matches(fieldsOf(this.info, o))) return false;
    return true;
  }

  deliver(e: LogEvent): void {
    if (e.key.res !== this.res) return;
    if (this.scopeNs !== undefined && e.key.ns !== this.scopeNs) return;
    this.lastRv = e.rv;
    const now = e.type === 'DELETED' ? false : this.matches(e.object);
    const before = e.type === 'ADDED' ? false : this.matches(e.prevObject ?? (e.type === 'DELETED' ? e.object : undefined));
    if (e.type === 'DELETED') {
      if (before || this.matches(e.object)) this.writeShared('DELETED', e);
    } else if (now && before) this.writeShared('MODIFIED', e);
    else if (now) this.writeShared('ADDED', e);
    else if (before) this.writeShared('DELETED', e);
  }

  onBatch(events: LogEvent[], shared: Map<string, SharedBatch>): void {
    if (this.closed) return;
    // Batches are handed out after their commit: a watch that started meanwhile already has the
    // older events from its initial state or replay, and gathers on its own.
    const whole = events[0].rv > this.lastRv;
    const known = whole && this.shareKey !== undefined ? shared.get(this.shareKey) : undefined;
    let batch: SharedBatch;
    if (known) {
      batch = known;
      if (batch.lastRv !== undefined) this.lastRv = batch.lastRv;
    } else {
      const before = this.lastRv;
      const bufs: Buffer[] = (this.sink = []);
      for (const e of events) if (e.rv > this.lastRv) this.deliver(e);
      this.sink = undefined;
      batch = { bytes: bufs.length === 0 ? null : bufs.length === 1 ? bufs[0] : Buffer.concat(bufs), lastRv: this.lastRv !== before ? this.lastRv : undefined };
      if (whole && this.shareKey !== undefined) shared.set(this.shareKey, batch);
    }
    // The batch leaves in one write: one DATA frame over HTTP/2, one chunk (one syscall) over HTTP/1.1.
    if (!batch.bytes || this.closed) return;
    this.emit(batch.bytes);
  }

  write(type: WatchType, object: any): void {
    if (this.closed) return;
    const buf = this.serialize(type, object);
    if (buf) this.emit(buf);
  }

  /**
   * Whether an event of this watch may be `{"type":…,"object":…}` around the object's stored
   * JSON: plain JSON, every object of its scope (no selectors), and for custom objects a schema
   * without defaults (read-time defaulting then only drops nulls: rows with one are decoded).
   */
  get writesStoredJson(): boolean {
    return this.fmt.encoding === 'json' && this.fmt.shape === 'object' && !this.info.custom?.compiled().hasDefaults && !this.labels && !this.fields;
  }

  /** Events already in this watch's wire form (see writesStoredJson). */
  writeFramed(bytes: Buffer): void {
    if (!this.closed && bytes.length > 0) this.emit(bytes);
  }

  bookmark(): void {
    this.write('BOOKMARK', bookmarkObject(this.info, this.lastRv || this.log.currentRv));
  }

  /** The end of the watch (timeout, client gone): a last bookmark if asked for, then the end of the response. */
  finish(): void {
    if (this.closed) return;
    if (this.bookmarks && !this.out.writableEnded && !this.out.destroyed) this.bookmark();
    this.stop();
    this.out.end();
  }

  private stop(): void {
    this.closed = true;
    this.unsubscribe();
    clearTimeout(this.timeout);
    clearInterval(this.ticker);
  }

  private writeShared(type: WatchType, e: LogEvent): void {
    if (this.closed) return;
    const first = this.fmt.shape === 'Table' && this.firstTable;
    const key = `${type}|${this.representation}|${first ? 1 : 0}`;
    const cache = (wireCache.get(e) ?? wireCache.set(e, new Map()).get(e))!;
    let buf = cache.get(key);
    if (buf === undefined) {
      buf = this.serialize(type, e.object) ?? null;
      cache.set(key, buf);
    } else if (first) {
      this.firstTable = false;
    }
    if (buf) this.emit(buf);
  }

  private emit(buf: Buffer): void {
    if (this.sink) {
      this.sink.push(buf);
      return;
    }
    // (A stream that is gone ignores writes; its 'close' ends the watch.)
    const out = this.out;
    out.write(buf);
    // Too slow: this watch's bytes pile up, or (HTTP/2) its connection's, all streams together.
    if (this.live && (out.writableLength > MAX_BUFFERED_BYTES || (out instanceof H2Response && out.connectionOverBufferLimit))) this.onSlowReader();
  }

  private onSlowReader(): void {
    const out = this.out as unknown;
    if (!(out instanceof H2Response)) return this.finish();
    // An HTTP/2 stream is reset (RST_STREAM CANCEL): its queued bytes are freed at once and the
    // connection's other streams go on. HTTP/1.1 ends the response after what is buffered.
    this.stop();
    out.reset();
  }

  private serialize(type: WatchType, object: any): Buffer | undefined {
    const { info, fmt } = this;
    if (type !== 'BOOKMARK' && type !== 'ERROR' && this.writesStoredJson) {
      // A committed object's stored JSON, when it is already as served: framed, not serialized again.
      const stored = storedJsonOf(object);
      if (stored && servedAsStored(stored, servedJsonPrefix(apiVersionOf(info), info.kind, !!info.custom), !!info.custom)) {
        return Buffer.concat([EVENT_OPEN[type], stored, EVENT_CLOSE]);
      }
    }
    let payload: unknown = object;
    if (type !== 'BOOKMARK' && type !== 'ERROR') {
      const o = info.custom ? defaultedCopy(info, object) : builtinPresented(info, object);
      if (fmt.shape === 'Table') {
        const t = toTable(info, [o], { resourceVersion: o.metadata?.resourceVersion }, fmt.metaVersion, this.includeObject);
        // Only the first event carries the columns; later ones are printed without headers, and
        // kube's Table (no omitempty) writes those as null.
        if (!this.firstTable) t.columnDefinitions = null;
        this.firstTable = false;
        payload = t;
      } else if (fmt.shape === 'PartialObjectMetadata') {
        payload = partialMetadata(o, fmt.metaVersion, !!info.custom);
      } else {
        payload = o;
      }
    }
    return fmt.encoding === 'json'
      ? Buffer.from(goJsonText(JSON.stringify({ type, object: payload })) + '\n')
      : fmt.encoding === 'protobuf'
        ? encodeWatchEventFrame({ type, object: payload })
        : encode({ type, object: payload }, fmt.encoding);
  }
}

/**
 * A BOOKMARK event's object: the kind with only a resourceVersion in its metadata, and the
 * `k8s.io/initial-events-end` annotation on the one that ends a streaming list's initial events;
 * in the kind's order (a custom object's keys sorted).
 */
function bookmarkObject(info: ResourceInfo, rv: number, initialEventsEnd = false): object {
  const metadata: Record<string, unknown> = { resourceVersion: String(rv) };
  if (initialEventsEnd) metadata.annotations = { 'k8s.io/initial-events-end': 'true' };
  const o = { kind: info.kind, apiVersion: apiVersionOf(info), metadata };
  return info.custom ? customObjectOrder(o) : o;
}

/**
 * A built-in object as a GET serves it: converted when it is kept in another version or group
 * (conversions/index.ts). A fresh object: the event's is shared by every watcher.
 */
function builtinPresented(info: ResourceInfo, object: any): any {
  const apiVersion = apiVersionOf(info);
  const builtin = object.apiVersion !== apiVersion || object.kind !== info.kind ? builtinConversionOf(info) : undefined;
  return builtin ? convertTo(builtin, object, apiVersion) : { ...object, apiVersion, kind: info.kind };
}

/**
 * A custom object as a GET serves it: its schema's defaults applied, which may be newer than the
 * stored event (a replay from the log). A copy: the event's object is shared by every watcher.
 */
function defaultedCopy(info: ResourceInfo, object: any): any {
  const o = cloneJSON(object);
  o.apiVersion = apiVersionOf(info);
  o.kind = info.kind;
  info.custom!.compiled().applyDefaults(o);
  return customObjectOrder(o);
}

/**
 * A watch of a custom resource whose versions convert through a webhook: events (and the initial
 * state or replay) are converted in order before the stream sees them. Nothing is shared with
 * other watches, since each conversion is its own round trip.
 */
class ConvertingWatch implements Watcher {
  private chain: Promise<void> = Promise.resolve();
  /** Events up to this version are queued already (replay overlaps the first live batches). */
  private queuedRv: number;

  constructor(
    private readonly stream: WatchStream,
    private readonly converter: Converter,
    private readonly services: ServiceLookup,
    private readonly version: string,
    startRv: number,
  ) {
    this.queuedRv = startRv;
  }

  /** Objects to write as ADDED (the initial state), converted first. */
  initial(objects: any[]): void {
    this.run(async () => {
      for (const o of await this.convert(objects)) if (!this.stream.closed) this.stream.write('ADDED', o);
    });
  }

  /** A step after everything queued so far. */
  then(step: () => void): void {
    this.run(async () => step());
  }

  onBatch(events: LogEvent[]): void {
    const fresh = events.filter((e) => e.rv > this.queuedRv);
    if (fresh.length === 0 || this.stream.closed) return;
    this.queuedRv = fresh[fresh.length - 1].rv;
    this.run(async () => {
      const objects = await this.convert(fresh.map((e) => e.object));
      const prev = await this.convert(fresh.map((e) => e.prevObject).filter((o) => o !== undefined));
      let p = 0;
      const converted = fresh.map((e, i) => ({ ...e, object: objects[i], prevObject: e.prevObject === undefined ? undefined : prev[p++] }));
      if (!this.stream.closed) this.stream.onBatch(converted, new Map());
    });
  }

  private async convert(objects: any[]): Promise<any[]> {
    return objects.length ? this.converter.convert(objects, this.version, this.services) : objects;
  }

  private run(step: () => Promise<void>): void {
    this.chain = this.chain.then(step).catch((e) => {
      if (this.stream.closed) return;
      const status = e instanceof ApiError ? e.toStatus() : internalError(String((e as Error)?.message ?? e)).toStatus();
      this.stream.write('ERROR', status);
      this.stream.finish();
    });
  }
}

function noop(): void {}

/**
 * Ends a watch whose response has begun with an ERROR event carrying the failure's Status, as
 * kube-apiserver's watch ends when an object from storage cannot be decoded; the stream would
 * otherwise stay open with nothing more to say.
 */
function endWithError(w: WatchStream, out: { end(): unknown }, e: unknown): void {
  if (!(e instanceof ApiError)) console.error('watch failed:', e);
  const status = e instanceof ApiError ? e.toStatus() : internalError(String((e as Error)?.message ?? e)).toStatus();
  w.write('ERROR', status);
  w.closed = true;
  out.end();
}

function joinSelector(a: string | undefined, b: string): string {
  return a ? `${a},${b}` : b;
}
