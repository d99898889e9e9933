// The ClusterRole aggregation controller kube-controller-manager runs as
// "clusterrole-aggregation-controller" (kube's pkg/controller/clusterroleaggregation): a ClusterRole
// with an aggregationRule gets as rules the union of the rules of the ClusterRoles its selectors
// match (selector by selector, each one's roles by name, itself left out; a rule equal to one
// already taken is not taken twice), which is how admin, edit and view get theirs from the
// aggregate-to-* roles and from any role a user labels so. Every ClusterRole change queues every
// aggregated ClusterRole (kube does so too: the set is small and the graph unknown). The rules are
// written only when they differ, by server-side apply with the controller's field manager and
// force, as kube's controller applies them. A client of the registry, on the shared work queue.
import { isDeepStrictEqual } from 'node:util';
import type { GenericStore } from '../registry/store.ts';
import type { ResourceCatalog } from '../schema/catalog.ts';
import type { EventLog } from '../storage/log/event-log.ts';
import type { LogEvent } from '../storage/log/types.ts';
import type { ResourceInfo } from '../schema/types.ts';
import { labelSelectorFromObject } from '../registry/selectors.ts';
import { realClock, type Clock, type HandlerResult } from './workqueue.ts';
import { QueueController, controllerWriteContext } from './queue-controller.ts';

/** kube's field manager for the controller's applies. */
export const CLUSTERROLE_AGGREGATION_MANAGER = 'clusterrole-aggregation-controller';
/** kube-controller-manager starts it with 5 workers. */
const WORKERS = 5;
const CLUSTER_ROLES_KEY = 'clusterroles.rbac.authorization.k8s.io';

interface ClusterRole {
  metadata: { name: string; labels?: Record<string, string> };
  aggregationRule?: { clusterRoleSelectors?: unknown[] } | null;
  rules?: Record<string, unknown>[] | null;
}

/** Semantic equality of rules: an empty list is the same as none (Go's omitempty). */
function normalizedRule(rule: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(rule).filter(([, v]) => v !== undefined && v !== null && !(Array.isArray(v) && v.length === 0)));
}
const sameRules = (a: readonly Record<string, unknown>[], b: readonly Record<string, unknown>[]) => isDeepStrictEqual(a.map(normalizedRule), b.map(normalizedRule));

export class ClusterRoleAggregationController extends QueueController {
  private readonly info: ResourceInfo;

  constructor(
    private readonly store: GenericStore,
    catalog: ResourceCatalog,
    log: EventLog,
    clock: Clock = realClock,
  ) {
    super(log, { name: 'ClusterRoleAggregator', clock, workers: WORKERS });
    this.info = catalog.lookup('rbac.authorization.k8s.io', 'v1', 'clusterroles')!;
  }

  protected onCommit(events: readonly LogEvent[]): void {
    if (events.some((e) => e.key.res === CLUSTER_ROLES_KEY)) this.enqueueAggregated();
  }

  protected enqueueExisting(): void {
    this.enqueueAggregated();
  }

  private list(): ClusterRole[] {
    return this.store.listCurrent(this.info, undefined);
  }

  private enqueueAggregated(): void {
    for (const role of this.list()) if (role.aggregationRule) this.queue.add(role.metadata.name);
  }

  /** The rules the role's selectors aggregate, in kube's order. */
  aggregatedRules(role: ClusterRole, all: ClusterRole[] = this.list()): Record<string, unknown>[] {
    const rules: Record<string, unknown>[] = [];
    const byName = [...all].sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0));
    for (const selector of role.aggregationRule?.clusterRoleSelectors ?? []) {
      const matcher = labelSelectorFromObject(selector);
      for (const other of byName) {
        if (other.metadata.name === role.metadata.name || !matcher.matches(other.metadata.labels)) continue;
        for (const rule of other.rules ?? []) {
          if (!rules.some((r) => sameRules([r], [rule]))) rules.push(rule);
        }
      }
    }
    return rules;
  }

  protected async sync(name: string): Promise<HandlerResult> {
    const role: ClusterRole | undefined = this.store.tryGet(this.info, '', name);
    if (!role?.aggregationRule) return;
    const rules = this.aggregatedRules(role);
    if (sameRules(rules, role.rules ?? [])) return;
    const ctx = controllerWriteContext(CLUSTERROLE_AGGREGATION_MANAGER, 'Strict');
    // (kube's apply configuration leaves rules out when there are none: the field is then removed)
    const config = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name }, ...(rules.length ? { rules } : {}) };
    await this.store.apply(this.info, '', name, config, ctx, { force: true });
  }
}
