// Events expire, as kube-apiserver's --event-ttl makes them: each write of an event gives it the
// TTL from that moment (kube puts every event write under an etcd lease of that length), and an
// event not written again within it is deleted, which its watchers see as DELETED. Without this,
// the events controllers write would pile up in the database forever.
import type { GenericStore, RequestContext } from '../registry/store.ts';
import type { ResourceCatalog } from '../schema/catalog.ts';
import type { EventLog } from '../storage/event-log.ts';
import type { ResourceInfo } from '../schema/types.ts';
import { LOOPBACK_USER } from '../authentication/user.ts';
import { ApiError } from '../errors.ts';

/** How often expired events are looked for, at most (a shorter TTL looks more often). */
const MAX_SWEEP_MS = 10_000;

/** The time an event was last written, as far as the object tells (after a restart): its newest managedFields time, else its creation. */
function lastWrittenMs(event: any): number {
  let t = Date.parse(event?.metadata?.creationTimestamp ?? '');
  for (const m of Array.isArray(event?.metadata?.managedFields) ? event.metadata.managedFields : []) {
    const mt = Date.parse(m?.time ?? '');
    if (!Number.isNaN(mt) && (Number.isNaN(t) || mt > t)) t = mt;
  }
  return Number.isNaN(t) ? Date.now() : t;
}

export class EventTtlController {
  /** Per event (namespace/name): when it expires and the resourceVersion that write gave it. */
  private readonly expiry = new Map<string, { at: number; rv: number }>();
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private sweeping = false;
  private readonly info: ResourceInfo;
  private readonly unsubscribe: () => void;

  constructor(private readonly store: GenericStore, catalog: ResourceCatalog, log: EventLog, private readonly ttlMs: number) {
    this.info = catalog.lookup('', 'v1', 'events')!;
    this.unsubscribe = log.onCommit((events) => {
      const now = Date.now();
      for (const e of events) {
        if (e.key.res !== 'events') continue;
        const id = `${e.key.ns}/${e.key.name}`;
        if (e.type === 'DELETED') this.expiry.delete(id);
        else this.expiry.set(id, { at: now + this.ttlMs, rv: e.rv });
      }
    });
  }

  /** Takes in the events already stored, each expiring the TTL after its last write. */
  start(): void {
    for (const e of this.store.listReadable(this.info, undefined)) {
      const id = `${e.metadata.namespace}/${e.metadata.name}`;
      if (!this.expiry.has(id)) this.expiry.set(id, { at: lastWrittenMs(e) + this.ttlMs, rv: Number(e.metadata.resourceVersion) });
    }
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe();
    if (this.timer) clearTimeout(this.timer);
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.sweep(), Math.min(MAX_SWEEP_MS, Math.max(100, this.ttlMs / 4)));
    this.timer.unref();
  }

  private async sweep(): Promise<void> {
    if (this.sweeping || this.stopped) return;
    this.sweeping = true;
    const ctx: RequestContext = { user: LOOPBACK_USER, dryRun: false, fieldValidation: 'Ignore', warnings: [] };
    try {
      const now = Date.now();
      for (const [id, { at, rv }] of [...this.expiry]) {
        if (at > now || this.stopped) continue;
        const slash = id.indexOf('/');
        try {
          // Only the version that expired: a write since then gave the event a new TTL.
          await this.store.delete(this.info, id.slice(0, slash), id.slice(slash + 1), { preconditions: { resourceVersion: String(rv) } }, ctx);
        } catch (e) {
          if (!(e instanceof ApiError && (e.code === 404 || e.code === 409))) console.error(`event TTL: ${id}:`, e);
        }
        // (a delete that took effect removed the entry through the commit listener)
        if (this.expiry.get(id)?.rv === rv) this.expiry.delete(id);
      }
    } finally {
      this.sweeping = false;
      this.schedule();
    }
  }
}
