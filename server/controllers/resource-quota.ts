// The resource quota controller kube-controller-manager runs as "resourcequota-controller"
// (kube's pkg/controller/resourcequota/resource_quota_controller.go): each ResourceQuota's
// status.hard is its spec.hard and status.used what its namespace holds, measured by quota's
// evaluators (admission/resource-quota/evaluators.ts, what ResourceQuota admission charges). A
// quota is measured when it is created or its spec.hard changes, when an object it counts is
// deleted (or a pod ends, or a service changes type, or a claim its storage), which gives back
// what admission charged, and every resync period (kube's --resource-quota-sync-period, 5m),
// which also gives back charges of writes that failed after admission. Keys are quotas
// ("namespace/name"), written as the loopback identity, conditional on the read quota.
import type { GenericStore } from '../registry/store.ts';
import type { ResourceCatalog } from '../schema/catalog.ts';
import type { EventLog } from '../storage/log/event-log.ts';
import type { LogEvent } from '../storage/log/types.ts';
import type { ResourceInfo } from '../schema/types.ts';
import type { NamespacedObjectIndex } from '../registry/namespaced-object-index.ts';
import { ApiError } from '../errors.ts';
import { realClock, type Clock, type HandlerResult } from './workqueue.ts';
import { QueueController, controllerWriteContext } from './queue-controller.ts';
import { KUBE_CONTROLLER_MANAGER } from './namespace-content.ts';
import { coreEvaluators, countedResource, evaluatorFor, matchesScopes, podIsCharged, scopesOf, type Evaluator } from '../admission/resource-quota/evaluators.ts';
import type { QuotaView } from '../admission/resource-quota/index.ts';
import { addLists, equalLists, mask, resourceListJson, resourceListOf, zeroQuantity, type ResourceList } from '../admission/resource-quota/resource-lists.ts';

/** kube's --concurrent-resource-quota-syncs default. */
const WORKERS = 5;
/** kube's --resource-quota-sync-period default. */
export const RESOURCE_QUOTA_RESYNC_MS = 5 * 60 * 1000;

export class ResourceQuotaController extends QueueController {
  private readonly quotaInfo: ResourceInfo;
  private resync: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly store: GenericStore,
    private readonly catalog: ResourceCatalog,
    log: EventLog,
    /** Every namespace's ResourceQuotas, from the commit stream (the one admission reads). */
    private readonly quotas: NamespacedObjectIndex<QuotaView>,
    private readonly resyncMs = RESOURCE_QUOTA_RESYNC_MS,
    clock: Clock = realClock,
  ) {
    super(log, { name: 'resource quota', clock, workers: WORKERS });
    this.quotaInfo = catalog.lookup('', 'v1', 'resourcequotas')!;
  }

  override start(): void {
    super.start();
    if (this.resyncMs > 0) {
      this.resync = setInterval(() => this.enqueueExisting(), this.resyncMs);
      this.resync.unref?.();
    }
  }

  override stop(): Promise<void> {
    if (this.resync) clearInterval(this.resync);
    return super.stop();
  }

  protected onCommit(events: readonly LogEvent[]): void {
    for (const e of events) {
      if (!e.key.ns) continue;
      if (e.key.res === 'resourcequotas') {
        // A new quota, or a change of its hard limits (its status is this controller's and admission's).
        if (e.type === 'ADDED' || (e.type === 'MODIFIED' && !equalLists(resourceListOf(e.prevObject?.spec?.hard), resourceListOf(e.object?.spec?.hard)))) {
          this.queue.add(`${e.key.ns}/${e.key.name}`);
        }
        continue;
      }
      if (!this.quotas.has(e.key.ns) || !releases(e)) continue;
      const { group, resource } = splitQualified(e.key.res);
      const evaluator = evaluatorFor(group, resource);
      for (const q of this.quotas.in(e.key.ns)) {
        if (evaluator.matchingResources(Object.keys(q.spec?.hard ?? {})).length) this.queue.add(`${e.key.ns}/${q.metadata.name}`);
      }
    }
  }

  protected enqueueExisting(): void {
    for (const q of this.store.listReadable(this.quotaInfo, undefined)) this.queue.add(`${q.metadata.namespace}/${q.metadata.name}`);
  }

  protected async sync(key: string): Promise<HandlerResult> {
    const slash = key.indexOf('/');
    const ns = key.slice(0, slash);
    const name = key.slice(slash + 1);
    const quota: QuotaView | undefined = this.store.tryGet(this.quotaInfo, ns, name);
    if (!quota) return;
    const hard = resourceListOf(quota.spec?.hard);
    const statusHard = resourceListOf(quota.status?.hard);
    const oldUsed = resourceListOf(quota.status?.used);
    let dirty = !equalLists(hard, statusHard) || quota.status?.hard === undefined || quota.status?.used === undefined;
    // What was observed before stays for resources nothing here measures (kube keeps it too).
    const used = mask(new Map([...oldUsed, ...this.measure(ns, quota, hard)]), hard.keys());
    dirty ||= !equalLists(used, oldUsed);
    if (!dirty) return;
    const body = { ...quota, status: { hard: resourceListJson(hard), used: resourceListJson(used) } };
    try {
      await this.store.update(this.quotaInfo, ns, name, body, controllerWriteContext(KUBE_CONTROLLER_MANAGER), 'status');
    } catch (e) {
      // Deleted meanwhile: nothing to do. Changed meanwhile (admission charged it): measure again.
      if (e instanceof ApiError && e.code === 404) return;
      if (e instanceof ApiError && e.code === 409) return 'retry';
      throw e;
    }
  }

  /** quota.CalculateUsage: the namespace's usage of the quota's hard resources, over the objects in its scopes. */
  private measure(ns: string, quota: QuotaView, hard: ResourceList): ResourceList {
    const hardNames = [...hard.keys()];
    const evaluators: Evaluator[] = [...coreEvaluators()];
    for (const n of hardNames) {
      const counted = countedResource(n);
      if (counted && !(counted.group === '' && evaluators.some((e) => e.resource === counted.resource))) evaluators.push(evaluatorFor(counted.group, counted.resource));
    }
    const scopes = scopesOf(quota as never);
    let usage: ResourceList = new Map();
    for (const evaluator of evaluators) {
      const measured = evaluator.matchingResources(hardNames);
      if (measured.length === 0) continue;
      const info = this.infoOf(evaluator.resource);
      if (!info) continue;
      // Each measured resource starts at zero, so a quota on what nothing uses shows 0.
      let stats: ResourceList = new Map(measured.map((r) => [r, zeroQuantity()]));
      for (const obj of this.store.listCurrent(info, ns)) {
        if (matchesScopes(evaluator, scopes, obj)) stats = addLists(stats, evaluator.usage(obj));
      }
      usage = addLists(usage, mask(stats, measured));
    }
    return usage;
  }

  /** The served resource a qualified name ("deployments.apps") stands for, at its group's preferred version. */
  private infoOf(qualified: string): ResourceInfo | undefined {
    const { group, resource } = splitQualified(qualified);
    for (const v of this.catalog.group(group)?.versions ?? []) {
      const info = this.catalog.lookup(group, v, resource);
      if (info) return info;
    }
    return undefined;
  }
}

function splitQualified(res: string): { group: string; resource: string } {
  const dot = res.indexOf('.');
  return dot < 0 ? { group: '', resource: res } : { group: res.slice(dot + 1), resource: res.slice(0, dot) };
}

/**
 * Whether a change may give back quota (kube's replenishment): a delete; a pod that stopped being
 * charged (it ended); a service whose type changed; a claim whose storage request changed.
 */
function releases(e: LogEvent): boolean {
  if (e.type === 'DELETED') return true;
  if (e.type !== 'MODIFIED' || !e.prevObject) return false;
  switch (e.key.res) {
    case 'pods':
      return podIsCharged(e.prevObject) && !podIsCharged(e.object);
    case 'services':
      return e.prevObject.spec?.type !== e.object?.spec?.type;
    case 'persistentvolumeclaims':
      return e.prevObject.spec?.resources?.requests?.storage !== e.object?.spec?.resources?.requests?.storage;
    default:
      return false;
  }
}
