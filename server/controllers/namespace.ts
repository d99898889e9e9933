// The namespace controller: when a namespace is Terminating, delete everything in it, and once
// it is empty remove the "kubernetes" finalizer so the namespace itself goes away.
// It is a client of the registry like any other: it writes through the generic store. Namespaces
// are keys of a work queue (workqueue.ts): each waits out its own retry, as kube's namespace
// controller does, with kube's rate limiter and its estimates of how long remaining content takes.
import type { GenericStore } from '../registry/store.ts';
import type { ResourceCatalog } from '../schema/catalog.ts';
import type { EventLog } from '../storage/log/event-log.ts';
import type { LogEvent } from '../storage/log/types.ts';
import type { ResourceInfo } from '../schema/types.ts';
import { NAMESPACE_FINALIZER } from '../registry/kinds/core/namespaces.ts';
import { ApiError } from '../errors.ts';
import { defaultControllerRateLimiter, realClock, type Clock, type HandlerResult } from './workqueue.ts';
import { QueueController, controllerWriteContext } from './queue-controller.ts';

/** kube's namespace controller backs a failing namespace off to at most a minute. */
const MAX_BACKOFF_MS = 60_000;
/** kube's guess of how long objects held by finalizers take (finalizerEstimateSeconds). */
const FINALIZER_ESTIMATE_SECONDS = 15;
/** kube's --concurrent-namespace-syncs default. */
const WORKERS = 10;

export class NamespaceController extends QueueController {
  /** Namespaces being deleted: a deletion inside one is a reason to look at it again. */
  private readonly terminating = new Set<string>();
  private readonly nsInfo: ResourceInfo;

  constructor(
    private readonly store: GenericStore,
    private readonly catalog: ResourceCatalog,
    log: EventLog,
    clock: Clock = realClock,
  ) {
    super(log, { name: 'namespace controller', clock, rateLimiter: defaultControllerRateLimiter(clock, MAX_BACKOFF_MS), workers: WORKERS });
    this.nsInfo = catalog.lookup('', 'v1', 'namespaces')!;
  }

  protected onCommit(events: readonly LogEvent[]): void {
    for (const e of events) {
      if (e.key.res === 'namespaces') {
        if (e.type === 'DELETED') this.terminating.delete(e.key.name);
        else if (e.object.metadata?.deletionTimestamp) this.enqueue(e.key.name);
      } else if (e.type === 'DELETED' && e.key.ns && this.terminating.has(e.key.ns)) {
        // Content going (a finalizer released, a pod's kubelet done): kube waits out its
        // estimate; the namespace may be empty now, so look at once.
        this.queue.add(e.key.ns);
      }
    }
  }

  /** Namespaces left Terminating by a previous run. */
  protected enqueueExisting(): void {
    for (const ns of this.store.listReadable(this.nsInfo, undefined)) {
      if (ns.metadata.deletionTimestamp) this.enqueue(ns.metadata.name);
    }
  }

  private enqueue(name: string): void {
    this.terminating.add(name);
    this.queue.add(name);
  }

  /**
   * Deletes the namespace's content; once none is left, releases the namespace. Content that
   * remains for a reason (finalizers, pods terminating gracefully) brings the namespace back after
   * half kube's estimate; content that should have gone is an error, retried with backoff.
   */
  protected async sync(name: string): Promise<HandlerResult> {
    const ctx = controllerWriteContext();
    const ns = this.store.tryGet(this.nsInfo, '', name);
    if (!ns || !ns.metadata.deletionTimestamp) {
      this.terminating.delete(name);
      return;
    }
    const deletedAt = Date.parse(ns.metadata.deletionTimestamp);
    let estimate = 0;
    const unexpected: string[] = [];
    for (const info of this.namespacedResources()) {
      const grace = info.group === '' && info.resource === 'pods' ? this.podsEstimate(name, deletedAt) : 0;
      await this.store.deleteCollection(info, name, {}, {}, ctx);
      const remaining = this.store.listCurrent(info, name);
      if (remaining.length === 0) continue;
      if (grace > 0) estimate = Math.max(estimate, grace);
      else if (remaining.some((o) => Array.isArray(o.metadata.finalizers) && o.metadata.finalizers.length > 0)) estimate = Math.max(estimate, FINALIZER_ESTIMATE_SECONDS);
      else unexpected.push(`unexpected items still remain in namespace: ${name} for gvr: ${info.group}/${info.version}, Resource=${info.resource}`);
    }
    if (unexpected.length > 0) throw new Error(unexpected.join(', '));
    if (estimate > 0) return { requeueAfterMs: (Math.floor(estimate / 2) + 1) * 1000 };
    const finalizers: string[] = ns.spec?.finalizers ?? [];
    if (!finalizers.includes(NAMESPACE_FINALIZER)) return;
    try {
      await this.store.update(this.nsInfo, '', name, { ...ns, spec: { ...ns.spec, finalizers: finalizers.filter((f) => f !== NAMESPACE_FINALIZER) } }, ctx, 'finalize');
    } catch (e) {
      if (e instanceof ApiError && e.code === 404) return;
      // (written meanwhile: read it again, as kube retries a conflict at once)
      if (e instanceof ApiError && e.code === 409) return { requeueAfterMs: 0 };
      throw e;
    }
  }

  /**
   * kube's estimate for the namespace's pods: the longest termination grace period of those still
   * running, in seconds, or 0 once that long has passed since the namespace's deletion.
   */
  private podsEstimate(ns: string, deletedAt: number): number {
    const pods = this.catalog.lookup('', 'v1', 'pods');
    if (!pods) return 0;
    let estimate = 0;
    for (const pod of this.store.listCurrent(pods, ns)) {
      const phase = pod.status?.phase;
      if (phase === 'Succeeded' || phase === 'Failed') continue;
      const grace = pod.spec?.terminationGracePeriodSeconds;
      if (typeof grace === 'number' && grace > estimate) estimate = grace;
    }
    return Number.isNaN(deletedAt) || Date.now() - deletedAt >= estimate * 1000 ? 0 : estimate;
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
