// The ServiceAccount controller kube-controller-manager runs as "serviceaccount-controller"
// (kube's pkg/controller/serviceaccount/serviceaccounts_controller.go): every active namespace
// has a `default` ServiceAccount, made when the namespace is created (or at start for those that
// exist) and made again when it is deleted. A namespace that is not Active gets nothing. It is a
// client of the registry, writing as the loopback identity under kube-controller-manager's field
// manager; namespaces are keys of a work queue (workqueue.ts), each retried on its own backoff.
import type { GenericStore } from '../registry/store.ts';
import type { ResourceCatalog } from '../schema/catalog.ts';
import type { EventLog } from '../storage/log/event-log.ts';
import type { LogEvent } from '../storage/log/types.ts';
import type { ResourceInfo } from '../schema/types.ts';
import { realClock, type Clock, type HandlerResult } from './workqueue.ts';
import { QueueController, controllerWriteContext } from './queue-controller.ts';
import { createIgnoringGoneNamespace, isActiveNamespace, KUBE_CONTROLLER_MANAGER } from './namespace-content.ts';

/** The ServiceAccounts every namespace has (kube's DefaultServiceAccountsControllerOptions). */
export const DEFAULT_SERVICE_ACCOUNT = 'default';
/** kube-controller-manager runs it with one worker. */
const WORKERS = 1;

export class ServiceAccountsController extends QueueController {
  private readonly nsInfo: ResourceInfo;
  private readonly saInfo: ResourceInfo;

  constructor(
    private readonly store: GenericStore,
    catalog: ResourceCatalog,
    log: EventLog,
    clock: Clock = realClock,
  ) {
    super(log, { name: 'serviceaccount controller', clock, workers: WORKERS });
    this.nsInfo = catalog.lookup('', 'v1', 'namespaces')!;
    this.saInfo = catalog.lookup('', 'v1', 'serviceaccounts')!;
  }

  protected onCommit(events: readonly LogEvent[]): void {
    for (const e of events) {
      // kube reacts to every namespace add and update (the sync skips those not Active) and to
      // any ServiceAccount's deletion; only `default`'s matters here, so only it is looked at.
      if (e.key.res === 'namespaces') {
        if (e.type !== 'DELETED') this.queue.add(e.key.name);
      } else if (e.key.res === 'serviceaccounts' && e.type === 'DELETED' && e.key.name === DEFAULT_SERVICE_ACCOUNT && e.key.ns) {
        this.queue.add(e.key.ns);
      }
    }
  }

  /** Every namespace already stored. */
  protected enqueueExisting(): void {
    for (const ns of this.store.listReadable(this.nsInfo, undefined)) this.queue.add(ns.metadata.name);
  }

  protected async sync(namespace: string): Promise<HandlerResult> {
    if (!isActiveNamespace(this.store.tryGet(this.nsInfo, '', namespace))) return;
    if (this.store.tryGet(this.saInfo, namespace, DEFAULT_SERVICE_ACCOUNT)) return;
    const ctx = controllerWriteContext(KUBE_CONTROLLER_MANAGER);
    await createIgnoringGoneNamespace(this.store, this.saInfo, namespace, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: DEFAULT_SERVICE_ACCOUNT } }, ctx);
  }
}
