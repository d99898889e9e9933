// Events expire, as kube-apiserver's --event-ttl makes them: each write of an event gives it the
// TTL from that moment (kube puts every event write under an etcd lease of that length), and an
// event not written again within it is deleted, which its watchers see as DELETED. Without this,
// the events controllers write would pile up in the database forever. Each event is a key of a
// work queue (workqueue.ts) that comes due when its TTL ends; a deletion that fails is retried
// on the event's own backoff.
import type { GenericStore } from '../registry/store.ts';
import type { ResourceCatalog } from '../schema/catalog.ts';
import type { EventLog } from '../storage/log/event-log.ts';
import type { LogEvent } from '../storage/log/types.ts';
import type { ResourceInfo } from '../schema/types.ts';
import { ApiError } from '../errors.ts';
import { realClock, type Clock, type HandlerResult } from './workqueue.ts';
import { QueueController, controllerWriteContext } from './queue-controller.ts';

/** Deletions under way at once (concurrent ones share a commit). */
const WORKERS = 4;

/** What lastWrittenMs reads of a stored Event. */
interface EventWriteTimes {
  metadata?: { creationTimestamp?: string; managedFields?: readonly ({ time?: string } | null)[] };
}

/** The time an event was last written, as far as the object tells (after a restart): its newest managedFields time, else its creation. */
function lastWrittenMs(event: EventWriteTimes | undefined): number {
  let t = Date.parse(event?.metadata?.creationTimestamp ?? '');
  const managedFields = event?.metadata?.managedFields;
  for (const m of Array.isArray(managedFields) ? managedFields : []) {
    const mt = Date.parse(m?.time ?? '');
    if (!Number.isNaN(mt) && (Number.isNaN(t) || mt > t)) t = mt;
  }
  return Number.isNaN(t) ? Date.now() : t;
}

export class EventTtlController extends QueueController {
  /** Per event (namespace/name): when it expires (wall clock, ms) and the resourceVersion that write gave it. */
  private readonly expiry = new Map<string, { at: number; rv: number }>();
  private readonly info: ResourceInfo;

  constructor(
    private readonly store: GenericStore,
    catalog: ResourceCatalog,
    log: EventLog,
    private readonly ttlMs: number,
    clock: Clock = realClock,
  ) {
    super(log, { name: 'event TTL', clock, workers: WORKERS });
    this.info = catalog.lookup('', 'v1', 'events')!;
  }

  protected onCommit(events: readonly LogEvent[]): void {
    const now = Date.now();
    for (const e of events) {
      if (e.key.res !== 'events') continue;
      const id = `${e.key.ns}/${e.key.name}`;
      if (e.type === 'DELETED') this.expiry.delete(id);
      else this.expire(id, now + this.ttlMs, e.rv);
    }
  }

  /** The events already stored, each expiring the TTL after its last write. */
  protected enqueueExisting(): void {
    for (const e of this.store.listReadable(this.info, undefined)) {
      const id = `${e.metadata.namespace}/${e.metadata.name}`;
      if (!this.expiry.has(id)) this.expire(id, lastWrittenMs(e) + this.ttlMs, Number(e.metadata.resourceVersion));
    }
  }

  private expire(id: string, at: number, rv: number): void {
    this.expiry.set(id, { at, rv });
    // (due already for a sooner time, the key stays so; it finds the later time then)
    this.queue.addAfter(id, at - Date.now());
  }

  /** Deletes the event if its TTL is over; else comes back when it is. */
  protected async sync(id: string): Promise<HandlerResult> {
    const entry = this.expiry.get(id);
    if (!entry) return;
    const left = entry.at - Date.now();
    if (left > 0) return { requeueAfterMs: left };
    const slash = id.indexOf('/');
    const ctx = controllerWriteContext();
    try {
      // Only the version that expired: a write since then gave the event a new TTL.
      await this.store.delete(this.info, id.slice(0, slash), id.slice(slash + 1), { preconditions: { resourceVersion: String(entry.rv) } }, ctx);
    } catch (e) {
      if (!(e instanceof ApiError && (e.code === 404 || e.code === 409))) throw e;
    }
    // (a delete that took effect removed the entry through the commit listener)
    if (this.expiry.get(id)?.rv === entry.rv) this.expiry.delete(id);
  }
}
