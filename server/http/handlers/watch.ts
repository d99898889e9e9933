// GET ?watch: the HTTP side of the store's watch (registry/watch/). It reads the watch's options
// from the query, takes over the response, and frames and encodes each event in the negotiated
// form: JSON lines, protobuf frames, CBOR or YAML, objects as they are, Table rows or
// PartialObjectMetadata. Events' bytes are made once per form and shared by every watcher.
import { apiVersionOf } from '../../registry/store.ts';
import type { PresentedObject, ResourceWatch, WatchSink, ObjectEventType, NoticeType } from '../../registry/watch/index.ts';
import { EVENT_CLOSE, EVENT_OPEN } from '../../storage/rows/codec.ts';
import { goJsonText } from '../../go/json.ts';
import { H2Response } from '../h2/messages.ts';
import { negotiateOutput, encode, type OutputFormat } from '../negotiation.ts';
import { PROTOBUF_MEDIA_TYPE, definitionForKind, encodeWatchEventFrame } from '../protobuf.ts';
import { int64Param, queryFlag, queryOf, sendInitialEventsOf } from '../request-info.ts';
import type { HttpContext } from '../state.ts';
import { partialMetadata, toTable } from './shape.ts';
import type { ResourceRequest } from './request.ts';
import { countWatchEvent, type WatchEventMeter } from '../../metrics/watch.ts';
import { deferWatchInitialization } from '../../flowcontrol/dispatch/index.ts';

/** A watcher whose socket buffer grows past this is closed; the client re-lists. */
const MAX_BUFFERED_BYTES = 8 * 1024 * 1024;
/** kube-apiserver's default --min-request-timeout, randomized up to twice that. */
const MIN_REQUEST_TIMEOUT_S = 1800;

export async function watch({ ctx, info, ri, deps }: ResourceRequest): Promise<void> {
  const q = queryOf(ctx);
  const fmt = { ...negotiateOutput(ctx.get('accept'), ['Table', 'PartialObjectMetadata'], !info.custom) };
  const w = deps.watch.open(info, {
    namespace: ri.namespace,
    name: ri.name,
    labelSelector: q.get('labelSelector') ?? undefined,
    fieldSelector: q.get('fieldSelector') ?? undefined,
    resourceVersion: q.get('resourceVersion') ?? '',
    resourceVersionMatch: q.get('resourceVersionMatch') ?? undefined,
    continue: q.get('continue') ?? undefined,
    sendInitialEvents: sendInitialEventsOf(q),
    allowWatchBookmarks: queryFlag(q.get('allowWatchBookmarks')),
  });
  // As kube-apiserver: 0 (or none) takes the randomized default; a negative timeout ends the watch at once.
  const timeoutSeconds = Math.max(0, int64Param(q, 'timeoutSeconds') || MIN_REQUEST_TIMEOUT_S * (1 + Math.random()));
  const waiting = w.waitForResourceVersion();
  if (waiting) await waiting;

  // Take over the response: a stream of events, flushed one by one.
  ctx.respond = false;
  const out = ctx.res;
  // Custom resources have no protobuf form: their watches stream JSON.
  if (fmt.encoding === 'protobuf' && !definitionForKind(apiVersionOf(info), info.kind)) fmt.encoding = 'json';
  const contentType = fmt.encoding === 'cbor' ? 'application/cbor-seq' : fmt.encoding === 'protobuf' ? `${PROTOBUF_MEDIA_TYPE};stream=watch` : fmt.encoding === 'json' ? 'application/json' : fmt.contentType;
  // No Transfer-Encoding: HTTP/1.1 chunks a body of unknown length by itself, and HTTP/2 forbids the header.
  out.writeHead(200, { 'Content-Type': contentType, 'Cache-Control': 'no-cache, private' });
  out.flushHeaders();
  const meter = deps.watchMetrics?.meter(info.group, ri.apiVersion, info.resource);
  // Flow control holds this watch's seats until its initial events are written (kube's WatchInitialized).
  const initialized = deferWatchInitialization(ctx.req);
  w.start(new WatchStream(ctx.req, out, w, fmt, q.get('includeObject'), meter, initialized), timeoutSeconds * 1000);
}

/** Encodings of an event's object, shared by all watchers; gone with the object. */
const wireCache = new WeakMap<PresentedObject, Map<string, Buffer | null>>();

/** The sizes of the events a gathered batch holds, for the watchers it is shared with to count them (apiserver_watch_events_*). */
const batchEventSizes = new WeakMap<Buffer, number[]>();

/**
 * The response of one watch: its events framed and encoded, gathered per batch, written. It holds
 * the request and response, not koa's context: an open watch keeps only what it writes to.
 */
class WatchStream implements WatchSink<Buffer | null> {
  /** Events' bytes for every watcher in the same form (a Table's first event differs only in carrying the columns). */
  private readonly representation: string;
  private firstTable = true;
  /** Set once the initial state is written: only then does a growing buffer mean a slow reader. */
  private live = false;
  /** While a batch is gathered, bytes go here and leave in one write. */
  private gathered: Buffer[] | undefined;
  /** The sizes of the gathered events (metered watches only). */
  private gatheredSizes: number[] | undefined;
  /** The batch this watcher gathered itself (its events are counted as they were made). */
  private ownBatch: Buffer | null = null;

  constructor(
    private readonly req: HttpContext['req'],
    private readonly out: HttpContext['res'],
    private readonly watch: ResourceWatch,
    private readonly fmt: OutputFormat,
    private readonly includeObject: string | null,
    private readonly meter?: WatchEventMeter,
    private readonly initialized?: () => void,
  ) {
    this.representation = `${fmt.encoding}|${fmt.shape}|${fmt.metaVersion}|${apiVersionOf(watch.info)}|${includeObject ?? ''}`;
  }

  /** Tables are never shared: their first event differs. */
  get shareKey(): string | undefined {
    return this.fmt.shape === 'Table' ? undefined : this.representation;
  }

  get writesStoredJson(): boolean {
    return this.fmt.encoding === 'json' && this.fmt.shape === 'object' && this.watch.servesStoredJson;
  }

  get writable(): boolean {
    return !this.out.writableEnded && !this.out.destroyed;
  }

  event(type: ObjectEventType, object: PresentedObject): void {
    if (!object.shared) {
      const buf = this.serializeObject(type, object);
      if (buf) this.emitEvent(buf);
      return;
    }
    const first = this.fmt.shape === 'Table' && this.firstTable;
    const key = `${type}|${this.representation}|${first ? 1 : 0}`;
    const cache = (wireCache.get(object) ?? wireCache.set(object, new Map()).get(object))!;
    let buf = cache.get(key);
    if (buf === undefined) {
      buf = this.serializeObject(type, object) ?? null;
      cache.set(key, buf);
    } else if (first) {
      this.firstTable = false;
    }
    if (buf) this.emitEvent(buf);
  }

  notice(type: NoticeType, object: object): void {
    const buf = this.serialize(type, object);
    if (buf) this.emitEvent(buf);
  }

  /** One event's bytes: counted, then written or gathered. */
  private emitEvent(buf: Buffer): void {
    if (this.meter) {
      countWatchEvent(this.meter, buf.length);
      this.gatheredSizes?.push(buf.length);
    }
    this.emit(buf);
  }

  framed(bytes: Buffer): void {
    if (bytes.length > 0) this.emit(bytes);
  }

  beginBatch(): void {
    this.gathered = [];
    if (this.meter) this.gatheredSizes = [];
  }

  endBatch(): Buffer | null {
    const bufs = this.gathered!;
    this.gathered = undefined;
    const batch = bufs.length === 0 ? null : bufs.length === 1 ? bufs[0] : Buffer.concat(bufs);
    if (batch && this.gatheredSizes) batchEventSizes.set(batch, this.gatheredSizes);
    this.gatheredSizes = undefined;
    this.ownBatch = batch;
    return batch;
  }

  writeBatch(bytes: Buffer | null): void {
    // A batch another watcher gathered: its events are this watcher's too.
    if (bytes && this.meter && bytes !== this.ownBatch) for (const size of batchEventSizes.get(bytes) ?? []) countWatchEvent(this.meter, size);
    this.ownBatch = null;
    if (bytes) this.emit(bytes);
  }

  subscribed(): void {
    this.live = true;
    this.initialized?.();
    this.req.on('close', () => this.watch.finish());
    this.out.on('error', () => this.watch.finish());
  }

  end(): void {
    this.initialized?.();
    this.out.end();
  }

  private emit(buf: Buffer): void {
    if (this.gathered) {
      this.gathered.push(buf);
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
    if (!(out instanceof H2Response)) return this.watch.finish();
    // An HTTP/2 stream is reset (RST_STREAM CANCEL): its queued bytes are freed at once and the
    // connection's other streams go on. HTTP/1.1 ends the response after what is buffered.
    this.watch.stop();
    out.reset();
  }

  private serializeObject(type: ObjectEventType, object: PresentedObject): Buffer | undefined {
    if (this.writesStoredJson) {
      // A committed object's stored JSON, when it is already as served: framed, not serialized again.
      const stored = object.storedJson;
      if (stored) return Buffer.concat([EVENT_OPEN[type], stored, EVENT_CLOSE]);
    }
    const { fmt } = this;
    const info = this.watch.info;
    const o = object.object;
    if (fmt.shape === 'Table') {
      const t = toTable(info, [o], { resourceVersion: o.metadata?.resourceVersion }, fmt.metaVersion, this.includeObject);
      // Only the first event carries the columns; later ones are printed without headers, and
      // kube's Table (no omitempty) writes those as null.
      if (!this.firstTable) t.columnDefinitions = null;
      this.firstTable = false;
      return this.serialize(type, t);
    }
    return this.serialize(type, fmt.shape === 'PartialObjectMetadata' ? partialMetadata(o, fmt.metaVersion, !!info.custom) : o);
  }

  /** `{type, object}` in the watch's encoding: a JSON line, a protobuf frame, a CBOR (or YAML) item. */
  private serialize(type: string, payload: unknown): Buffer | undefined {
    const fmt = this.fmt;
    return fmt.encoding === 'json'
      ? Buffer.from(goJsonText(JSON.stringify({ type, object: payload })) + '\n')
      : fmt.encoding === 'protobuf'
        ? encodeWatchEventFrame({ type, object: payload })
        : encode({ type, object: payload }, fmt.encoding);
  }
}
