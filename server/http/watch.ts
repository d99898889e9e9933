// Watch: a read of the event log from a resourceVersion onward, then live events as batches
// commit. Each watcher filters by resource, namespace and selectors; an object that stops
// matching arrives as DELETED, one that starts matching as ADDED.
import type Koa from 'koa';
import type { ResourceInfo } from '../schema/types.ts';
import type { EventLog, LogEvent } from '../storage/event-log.ts';
import type { GenericStore } from '../registry/store.ts';
import { apiVersionOf, qualifiedResourceOf } from '../registry/store.ts';
import type { RequestInfo } from './request-info.ts';
import { negotiateOutput, encode } from './negotiation.ts';
import { PROTOBUF_MEDIA_TYPE, definitionForKind, encodeWatchEventFrame } from './protobuf.ts';
import { parseLabelSelector, parseFieldSelector, selectableFields, checkFieldSelectorSupported } from '../registry/selectors.ts';
import { badRequest } from '../errors.ts';
import { toTable, partialMetadata } from './resource-handlers.ts';

/** A watcher whose socket buffer grows past this is closed; the client re-lists. */
const MAX_BUFFERED_BYTES = 8 * 1024 * 1024;
const REPLAY_BATCH = 1000;
const BOOKMARK_INTERVAL_MS = 60_000;
/** kube-apiserver's default --min-request-timeout, randomized up to twice that. */
const MIN_REQUEST_TIMEOUT_S = 1800;

type WatchType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export class WatchService {
  private readonly watchers = new Set<(events: LogEvent[]) => void>();

  constructor(private readonly log: EventLog, private readonly store: GenericStore) {
    log.onCommit((events) => {
      for (const w of this.watchers) w(events);
    });
  }

  get count(): number {
    return this.watchers.size;
  }

  async serve(ctx: Koa.Context, info: ResourceInfo, ri: RequestInfo): Promise<void> {
    const q = ctx.URL.searchParams;
    const fmt = { ...negotiateOutput(ctx.get('accept'), ['Table', 'PartialObjectMetadata']) };
    const labels = parseLabelSelector(q.get('labelSelector') ?? undefined);
    const fieldSel = q.get('fieldSelector') ?? undefined;
    const fields = parseFieldSelector(ri.name ? joinSelector(fieldSel, `metadata.name=${ri.name}`) : fieldSel);
    checkFieldSelectorSupported(info.group, info.resource, fields);
    const rvParam = q.get('resourceVersion') ?? '';
    if (rvParam !== '' && !/^\d+$/.test(rvParam)) throw badRequest(`invalid resource version: ${JSON.stringify(rvParam)}`);
    const timeoutSeconds = q.has('timeoutSeconds') ? Number(q.get('timeoutSeconds')) : MIN_REQUEST_TIMEOUT_S * (1 + Math.random());
    if (!Number.isFinite(timeoutSeconds) || timeoutSeconds < 0) throw badRequest(`invalid timeoutSeconds: ${q.get('timeoutSeconds')}`);
    const bookmarks = q.get('allowWatchBookmarks') === 'true';
    const res = qualifiedResourceOf(info);
    const ns = info.namespaced ? ri.namespace : '';
    const scopeNs = info.namespaced && ri.namespace ? ri.namespace : undefined;
    const includeObject = q.get('includeObject');

    const matches = (o: any): boolean => {
      if (!o) return false;
      if (scopeNs !== undefined && (o.metadata?.namespace ?? '') !== scopeNs) return false;
      if (!labels.empty && !labels.matches(o.metadata?.labels)) return false;
      if (!fields.empty && !fields.matches(selectableFields(info.group, info.resource, o, info.namespaced))) return false;
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
    const write = (type: WatchType, object: any) => {
      if (closed) return;
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
      const buf =
        fmt.encoding === 'json'
          ? Buffer.from(JSON.stringify({ type, object: payload }) + '\n')
          : fmt.encoding === 'protobuf'
            ? encodeWatchEventFrame({ type, object: payload })
            : encode({ type, object: payload }, fmt.encoding)!;
      if (!buf) return;
      out.write(buf);
      if (out.writableLength > MAX_BUFFERED_BYTES) finish();
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
        if (before || matches(e.object)) write('DELETED', e.object);
      } else if (now && before) write('MODIFIED', e.object);
      else if (now) write('ADDED', e.object);
      else if (before) write('DELETED', e.object);
    };

    // Initial state and subscription happen in one synchronous step, so no commit falls between them.
    const listener = (events: LogEvent[]) => {
      for (const e of events) deliver(e);
    };
    if (rvParam === '' || rvParam === '0') {
      const { items, resourceVersion } = this.store.list(info, scopeNs, {});
      for (const item of items) if (matches(item)) write('ADDED', item);
      lastRv = Number(resourceVersion);
    } else {
      let from = Number(rvParam);
      lastRv = from;
      for (;;) {
        const batch = this.log.eventsAfter(from, REPLAY_BATCH);
        for (const e of batch) deliver(e);
        if (batch.length < REPLAY_BATCH) break;
        from = batch[batch.length - 1].rv;
      }
    }
    if (q.get('sendInitialEvents') === 'true' && bookmarks) {
      write('BOOKMARK', { kind: info.kind, apiVersion: apiVersionOf(info), metadata: { resourceVersion: String(lastRv || this.log.currentRv), annotations: { 'k8s.io/initial-events-end': 'true' } } });
    }
    this.watchers.add(listener);

    const timers: NodeJS.Timeout[] = [];
    const finish = () => {
      if (closed) return;
      if (bookmarks && out.writable) bookmark();
      closed = true;
      this.watchers.delete(listener);
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
