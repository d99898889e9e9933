// The namespace controller: when a namespace is Terminating, delete everything in it, and once
// it is empty remove the "kubernetes" finalizer so the namespace itself goes away.
// It is a client of the registry like any other: it writes through the generic store.
import type { GenericStore, RequestContext } from '../registry/store.ts';
import type { ResourceCatalog } from '../schema/catalog.ts';
import type { EventLog } from '../storage/event-log.ts';
import type { ResourceInfo } from '../schema/types.ts';
import { LOOPBACK_USER } from '../authentication/user.ts';
import { NAMESPACE_FINALIZER } from '../registry/strategies/namespaces.ts';
import { ApiError } from '../errors.ts';

const RETRY_MS = 1000;

export class NamespaceController {
  private readonly queue = new Set<string>();
  private running = false;
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private readonly nsInfo: ResourceInfo;

  constructor(private readonly store: GenericStore, private readonly catalog: ResourceCatalog, log: EventLog) {
    this.nsInfo = catalog.lookup('', 'v1', 'namespaces')!;
    log.onCommit((events) => {
      for (const e of events) {
        if (e.key.res === 'namespaces' && e.type !== 'DELETED' && e.object.metadata?.deletionTimestamp) this.enqueue(e.key.name);
      }
    });
  }

  /** Picks up namespaces left Terminating by a previous run. */
  start(): void {
    for (const ns of this.store.listReadable(this.nsInfo, undefined)) {
      if (ns.metadata.deletionTimestamp) this.enqueue(ns.metadata.name);
    }
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  private enqueue(name: string): void {
    this.queue.add(name);
    if (!this.running) setImmediate(() => void this.drain());
  }

  private async drain(): Promise<void> {
    if (this.running || this.stopped) return;
    this.running = true;
    try {
      while (this.queue.size && !this.stopped) {
        const [name] = this.queue;
        this.queue.delete(name);
        const done = await this.sync(name).catch((e) => {
          console.error(`namespace controller: ${name}:`, e);
          return false;
        });
        if (!done && !this.stopped) {
          if (this.timer) clearTimeout(this.timer);
          this.timer = setTimeout(() => this.enqueue(name), RETRY_MS);
        }
      }
    } finally {
      this.running = false;
    }
  }

  /** Returns true when the namespace needs no more work. */
  private async sync(name: string): Promise<boolean> {
    const ctx: RequestContext = { user: LOOPBACK_USER, dryRun: false, fieldValidation: 'Ignore', warnings: [] };
    const ns = this.store.tryGet(this.nsInfo, '', name);
    if (!ns || !ns.metadata.deletionTimestamp) return true;
    let remaining = 0;
    for (const info of this.namespacedResources()) {
      const deleted = await this.store.deleteCollection(info, name, {}, {}, ctx);
      // Objects held by finalizers stay until their owners remove them.
      remaining += this.store.listCurrent(info, name).length;
      void deleted;
    }
    if (remaining > 0) return false;
    const finalizers: string[] = ns.spec?.finalizers ?? [];
    if (!finalizers.includes(NAMESPACE_FINALIZER)) return true;
    try {
      await this.store.update(this.nsInfo, '', name, { ...ns, spec: { ...ns.spec, finalizers: finalizers.filter((f) => f !== NAMESPACE_FINALIZER) } }, ctx, 'finalize');
    } catch (e) {
      if (e instanceof ApiError && (e.code === 404 || e.code === 409)) return e.code === 404;
      throw e;
    }
    return true;
  }

  /** One version per group/resource: storage is shared between versions. */
  private namespacedResources(): ResourceInfo[] {
    const seen = new Set<string>();
    const out: ResourceInfo[] = [];
    for (const r of this.catalog.resources()) {
      if (!r.namespaced || !r.verbs.includes('deletecollection')) continue;
      const k = `${r.group}/${r.resource}`;
      if (seen.has(k)) continue;
      seen.add(k);
      out.push(r);
    }
    return out;
  }
}
