// The token cleaner kube-controller-manager runs as "token-cleaner-controller" (alias
// "tokencleaner"; kube's pkg/controller/bootstrap/tokencleaner.go): a Secret of type
// `bootstrap.kubernetes.io/token` in kube-system is deleted once its `expiration` has passed (an
// expiration Go cannot parse counts as passed), with a precondition on its uid so that a Secret
// made again under the same name meanwhile is left alone; NotFound and Conflict are no failures.
// kube's informer queues each such Secret again after its time left; here each Secret is a key
// of a work queue (workqueue.ts) that comes due at its expiration, fed by the commit stream.
// kube runs it only when asked (it is disabled by default; kubeadm enables it); hearth runs it
// by default, and `--controllers` can turn it off (selection.ts).
import type { GenericStore } from '../registry/store.ts';
import type { ResourceCatalog } from '../schema/catalog.ts';
import type { EventLog } from '../storage/log/event-log.ts';
import type { LogEvent } from '../storage/log/types.ts';
import type { ResourceInfo } from '../schema/types.ts';
import { BOOTSTRAP_TOKEN_NAMESPACE, bootstrapTokenExpiration, isBootstrapTokenSecret, type BootstrapTokenSecret } from '../authentication/bootstrap-token.ts';
import { ApiError } from '../errors.ts';
import { realClock, type Clock, type HandlerResult } from './workqueue.ts';
import { QueueController, controllerWriteContext } from './queue-controller.ts';
import { KUBE_CONTROLLER_MANAGER } from './namespace-content.ts';

/** kube's token cleaner has one worker. */
const WORKERS = 1;
/**
 * The longest wait before a token is looked at again: a timer of more than 2^31-1 ms (24.8 days)
 * fires at once in Node, and tokens commonly live a year. Waking daily costs nothing.
 */
export const MAX_EXPIRY_WAIT_MS = 24 * 60 * 60_000;

export class BootstrapTokenCleaner extends QueueController {
  private readonly info: ResourceInfo;

  constructor(
    private readonly store: GenericStore,
    catalog: ResourceCatalog,
    log: EventLog,
    clock: Clock = realClock,
    private readonly now: () => number = Date.now,
  ) {
    super(log, { name: 'token cleaner', clock, workers: WORKERS });
    this.info = catalog.lookup('', 'v1', 'secrets')!;
  }

  protected onCommit(events: readonly LogEvent[]): void {
    for (const e of events) {
      // kube's informer: added and updated Secrets of the type, in kube-system.
      if (e.key.res !== 'secrets' || e.key.ns !== BOOTSTRAP_TOKEN_NAMESPACE || e.type === 'DELETED') continue;
      if (isBootstrapTokenSecret(e.object)) this.queue.add(e.key.name);
    }
  }

  /** The token Secrets already stored. */
  protected enqueueExisting(): void {
    for (const secret of this.store.listReadable(this.info, BOOTSTRAP_TOKEN_NAMESPACE)) {
      if (isBootstrapTokenSecret(secret)) this.queue.add(secret.metadata.name);
    }
  }

  /** kube's evalSecret: delete it if expired, else come back when it expires. */
  protected async sync(name: string): Promise<HandlerResult> {
    const secret: BootstrapTokenSecret | undefined = this.store.tryGet(this.info, BOOTSTRAP_TOKEN_NAMESPACE, name);
    if (!secret || !isBootstrapTokenSecret(secret)) return;
    const { expired, remainingMs } = bootstrapTokenExpiration(secret, this.now());
    if (!expired) return remainingMs !== undefined ? { requeueAfterMs: Math.min(remainingMs, MAX_EXPIRY_WAIT_MS) } : undefined;
    const uid = typeof secret.metadata.uid === 'string' ? secret.metadata.uid : '';
    const ctx = controllerWriteContext(KUBE_CONTROLLER_MANAGER);
    try {
      await this.store.delete(this.info, BOOTSTRAP_TOKEN_NAMESPACE, name, uid ? { preconditions: { uid } } : {}, ctx);
    } catch (e) {
      // Gone already, or another Secret of that name now (the uid precondition failed).
      if (e instanceof ApiError && (e.code === 404 || e.code === 409)) return;
      throw e;
    }
  }
}
