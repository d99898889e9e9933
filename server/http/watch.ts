// Watch: a read of the event log from a resourceVersion onward, then live events as batches
// commit. Each watcher filters by resource, namespace and selectors; an object that stops
// matching arrives as DELETED, one that starts matching as ADDED.
import type Koa from 'koa';
import type { ResourceInfo } from '../schema/types.ts';
import type { EventLog, LogEvent } from '../storage/event-log.ts';
import type { GenericStore } from '../registry/store.ts';
import { apiVersionOf, qualifiedResourceOf, parseResourceVersion } from '../registry/store.ts';
import type { RequestInfo } from './request-info.ts';
import { negotiateOutput, encode } from './negotiation.ts';
import { PROTOBUF_MEDIA_TYPE, definitionForKind, encodeWatchEventFrame } from './protobuf.ts';
import { parseLabelSelector, parseFieldSelector, fieldsOf, checkFieldSelectorFor } from '../registry/selectors.ts';
import { badRequest, tooLargeResourceVersion, tooOldResourceVersion } from '../errors.ts';
import { toTable, partialMetadata } from './resource-handlers.ts';

/** A watcher whose socket buffer grows past this is closed; the client re-lists. */
const MAX_BUFFERED_BYTES = 8 * 1024 * 1024;
const REPLAY_BATCH = 1000;
const BOOKMARK_INTERVAL_MS = 60_000;
/** kube-apiserver's default --min-request-timeout, randomized up to twice that. */
const MIN_REQUEST_TIMEOUT_S = 1800;
/** How long a watch from a resourceVersion the server has not reached waits for it. */
const TOO_LARGE_RV_WAIT_MS = 3000;

type WatchType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/** Serialized forms of a log event, shared by all watchers; gone with the event. */
const wireCache = new WeakMap<LogEvent, Map<string, Buffer | null>>();

export class WatchService {
  /** Watchers by qualified resource: a commit reaches only the watchers of what it changed. */
  private readonly watchers = new Map<string, Set<(events: LogEvent[]) => void>>();

  constructor(private readonly log: EventLog, private readonly store: GenericStore) {
    log.onCommit((events) => {
      const byRes = new Map<string, LogEvent[]>();
      for (const e of events) {
        if (!this.watchers.has(e.key.res)) continue;
        const list = byRes.get(e.key.res);
        if (list) list.push(e);
        else byRes.set(e.key.res, [e]);
      }
      for (const [res, list] of byRes) for (const w of this.watchers.get(res) ?? []) w(list);
    });
  }

  get count(): number {
    let n = 0;
    for (const set of this.watchers.values()) n += set.size;
    return n;
  }

  private subscribe(res: string, w: (events: LogEvent[]) => void): () => void {
    let set = this.watchers.get(res);
    if (!set) this.watchers.set(res, (set = new Set()));
    set.add(w);
    return () => {
      set!.delete(w);
      if (set!.size === 0) this.watchers.delete(res);
    };
  }

  async serve(ctx: Koa.Context, info: ResourceInfo, ri: RequestInfo): Promise<void> {
    const q = ctx.URL.searchParams;
    const fmt = { ...negotiateOutput(ctx.get('accept'), ['Table', 'PartialObjectMetadata']) };
    const labels = parseLabelSelector(q.get('labelSelector') ?? undefined);
    const fieldSel = q.get('fieldSelector') ?? undefined;
    const fields = parseFieldSelector(ri.name ? joinSelector(fieldSel, `metadata.name=${ri.name}`) : fieldSel);
    checkFieldSelectorFor(info, fields);
    const rvParam = q.get('resourceVersion') ?? '';
    const fromRv = rvParam && rvParam !== '0' ? parseResourceVersion(rvParam) : undefined;
    const timeoutSeconds = q.has('timeoutSeconds') ? Number(q.get('timeoutSeconds')) : MIN_REQUEST_TIMEOUT_S * (1 + Math.random());
    if (!Number.isFinite(timeoutSeconds) || timeoutSeconds < 0) throw badRequest(`invalid timeoutSeconds: ${q.get('timeoutSeconds')}`);
    const bookmarks = q.get('allowWatchBookmarks') === 'true';
    const match = q.get('resourceVersionMatch') ?? '';
    const sendInitial = q.get('sendInitialEvents');
    if (sendInitial !== null) {
      if (sendInitial !== 'true' && sendInitial !== 'false') throw badRequest(`sendInitialEvents: Invalid value: ${JSON.stringify(sendInitial)}`);
      if (match !== 'NotOlderThan') throw badRequest('resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan');
      if (sendInitial === 'true' && !bookmarks) throw badRequest('allowWatchBookmarks: Forbidden: sendInitialEvents requires setting allowWatchBookmarks to true');
    } else if (match) {
      throw badRequest('resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided');
    }
    // Initial state: always without a resourceVersion (or "0"); with sendInitialEvents=true, a state at least as new as rv.
    const initialState = sendInitial === 'true' || (sendInitial === null && fromRv === undefined);
    if (fromRv !== undefined && fromRv > this.log.currentRv && !(await this.log.waitForRv(fromRv, TOO_LARGE_RV_WAIT_MS))) {
      throw tooLargeResourceVersion(fromRv, this.log.currentRv);
    }
    const res = qualifiedResourceOf(info);
    const ns = info.namespaced ? ri.namespace : '';
    const scopeNs = info.namespaced && ri.namespace ? ri.namespace : undefined;
    const includeObject = q.get('includeObject');

    const matches = (o: any): boolean => {
      if (!o) return false;
      if (scopeNs !== undefined && (o.metadata?.namespace ?? '') !== scopeNs) return false;
      if (!labels.empty && !labels.matches(o.metadata?.labels)) return false;
      if (!fields.empty && !fields.matches(fieldsOf(info, o))) return false;
      return true;
    };

    // Take over the response: a stream of events, flushed one by one.
    ctx.respond = false;
    const out = ctx.res;
    // Custom resources have no protobuf form: their watches stream JSON.
    if (fmt.encoding === 'protobuf' && !definitionForKind(apiVersionOf(info), info.kind)) fmt.encoding = 'json';
    const contentType = fmt.encoding === 'cbor' ? 'application/cbor-seq' : fmt.encoding === 'protobuf' ? `${PROTOBUF_MEDIA_TYPE};stream=watch` : fmt.encoding === 'json' ? 'application/json' : fmt.contentType;
    out.writeHead(200, { 'Content-Type': contentType, 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
    out.flushHeaders();

    let firstTable = true;
    let lastRv = 0;
    let closed = false;
    // Set once the initial state is written: only then does a growing buffer mean a slow reader.
    let live = false;
    let finish: () => void = () => {};
    const overflowed = () => live && out.writableLength > MAX_BUFFERED_BYTES;
    // Events from the log are shared by every watcher: their bytes are made once per
    // representation and reused (a Table's first event differs only in carrying the columns).
    const representation = `${fmt.encoding}|${fmt.shape}|${fmt.metaVersion}|${apiVersionOf(info)}|${includeObject ?? ''}`;
    const writeShared = (type: WatchType, e: LogEvent) => {
      if (closed) return;
      const first = fmt.shape === 'Table' && firstTable;
      const key = `${type}|${representation}|${first ? 1 : 0}`;
      const cache = (wireCache.get(e) ?? wireCache.set(e, new Map()).get(e))!;
      let buf = cache.get(key);
      if (buf === undefined) {
        buf = serialize(type, e.object) ?? null;
        cache.set(key, buf);
      } else if (first) {
        firstTable = false;
      }
      if (!buf) return;
      out.write(buf);
      if (overflowed()) finish();
    };
    const write = (type: WatchType, object: any) => {
      if (closed) return;
      const buf = serialize(type, object);
      if (!buf) return;
      out.write(buf);
      if (overflowed()) finish();
    };
    const serialize = (type: WatchType, object: any): Buffer | undefined => {
      let payload: unknown = object;
      if (type !== 'BOOKMARK' && type !== 'ERROR') {
        const o = { ...object, apiVersion: apiVersionOf(info), kind: info.kind };
        if (fmt.shape === 'Table') {
          const t = toTable(info, [o], { resourceVersion: o.metadata?.resourceVersion }, fmt.metaVersion, includeObject) as any;
          if (!firstTable) t.columnDefinitions = [];
          firstTable = false;
          payload = t;
        } else if (fmt.shape === 'PartialObjectMetadata') {
          payload = partialMetadata(o, fmt.metaVersion);
        } else {
          payload = o;
        }
      }
      return fmt.encoding === 'json'
        ? Buffer.from(JSON.stringify({ type, object: payload }) + '\n')
        : fmt.encoding === 'protobuf'
          ? encodeWatchEventFrame({ type, object: payload })
          : encode({ type, object: payload }, fmt.encoding);
    };
    const bookmark = () => {
      write('BOOKMARK', { kind: info.kind, apiVersion: apiVersionOf(info), metadata: { resourceVersion: String(lastRv || this.log.currentRv) } });
    };
    const deliver = (e: LogEvent) => {
      if (e.key.res !== res) return;
      if (scopeNs !== undefined && e.key.ns !== scopeNs) return;
      lastRv = e.rv;
      const now = e.type === 'DELETED' ? false : matches(e.object);
      const before = e.type === 'ADDED' ? false : matches(e.prevObject ?? (e.type === 'DELETED' ? e.object : undefined));
      if (e.type === 'DELETED') {
        if (before || matches(e.object)) writeShared('DELETED', e);
      } else if (now && before) writeShared('MODIFIED', e);
      else if (now) writeShared('ADDED', e);
      else if (before) writeShared('DELETED', e);
    };

    // Initial state and subscription happen in one synchronous step, so no commit falls between them.
    const listener = (events: LogEvent[]) => {
      // One commit's events leave in one write (one TLS record run, one syscall) per watcher.
      out.cork();
      for (const e of events) deliver(e);
      process.nextTick(() => out.uncork());
    };
    if (initialState) {
      lastRv = this.log.currentRv;
      for (const item of this.store.listCurrent(info, scopeNs)) if (matches(item)) write('ADDED', item);
    } else if (fromRv === undefined) {
      lastRv = this.log.currentRv;
    } else if (fromRv < this.log.compactedRv) {
      // As kube-apiserver does: the stream opens, then says why it cannot go on.
      write('ERROR', tooOldResourceVersion(fromRv, this.log.compactedRv).toStatus());
      closed = true;
      out.end();
      return;
    } else {
      let from = fromRv;
      lastRv = from;
      for (;;) {
        const batch = this.log.eventsAfter(from, REPLAY_BATCH, res);
        for (const e of batch) deliver(e);
        if (batch.length < REPLAY_BATCH) break;
        from = batch[batch.length - 1].rv;
      }
      lastRv = Math.max(lastRv, this.log.currentRv);
    }
    if (sendInitial === 'true') {
      write('BOOKMARK', { kind: info.kind, apiVersion: apiVersionOf(info), metadata: { resourceVersion: String(lastRv || this.log.currentRv), annotations: { 'k8s.io/initial-events-end': 'true' } } });
    }
    const unsubscribe = this.subscribe(res, listener);
    live = true;

    const timers: NodeJS.Timeout[] = [];
    finish = () => {
      if (closed) return;
      if (bookmarks && out.writable) bookmark();
      closed = true;
      unsubscribe();
      for (const t of timers) clearTimeout(t);
      out.end();
    };
    timers.push(setTimeout(finish, timeoutSeconds * 1000));
    if (bookmarks) {
      const tick = setInterval(bookmark, BOOKMARK_INTERVAL_MS);
      timers.push(tick);
    }
    ctx.req.on('close', finish);
    out.on('error', finish);
    void ns;
  }
}

function joinSelector(a: string | undefined, b: string): string {
  return a ? `${a},${b}` : b;
}
