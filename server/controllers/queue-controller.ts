// The shape every in-process controller shares, as kube-controller-manager's controllers share an
// informer, a work queue and workers: from construction on, the commit stream's events queue the
// keys they concern (nothing is missed between construction and start); start() queues the keys
// of what is stored already (an informer's first list) and runs the workers; stop() stops taking
// keys and resolves once the keys being processed are done. A controller says only which keys an
// event concerns, which exist at start, and how one key is brought to where it should be.
import type { EventLog } from '../storage/log/event-log.ts';
import type { LogEvent } from '../storage/log/types.ts';
import type { RequestContext } from '../registry/store.ts';
import { LOOPBACK_USER } from '../authentication/user.ts';
import { WorkQueue, type HandlerResult, type WorkQueueOptions } from './workqueue.ts';

export interface QueueControllerOptions<K> extends WorkQueueOptions<K> {
  /** kube's worker count for the controller (its --concurrent-* flag's default). */
  workers: number;
}

export abstract class QueueController<K = string> {
  protected readonly queue: WorkQueue<K>;
  private readonly workers: number;
  private readonly unsubscribe: () => void;

  constructor(log: EventLog, opts: QueueControllerOptions<K>) {
    this.queue = new WorkQueue(opts);
    this.workers = opts.workers;
    this.unsubscribe = log.onCommit((events) => this.onCommit(events));
  }

  /** Queues the keys the committed events concern (kube's informer event handlers). */
  protected abstract onCommit(events: readonly LogEvent[]): void;

  /** Queues the keys of the objects stored already (the informer's first list). */
  protected abstract enqueueExisting(): void;

  /** Brings one key to where it should be; an error (or 'retry') comes back with backoff. */
  protected abstract sync(key: K): Promise<HandlerResult>;

  /** Takes in what is stored; starts the workers. */
  start(): void {
    this.enqueueExisting();
    this.queue.run((key) => this.sync(key), this.workers);
  }

  /** Stops taking keys; resolves once those being processed are done. */
  stop(): Promise<void> {
    this.unsubscribe();
    return this.queue.shutDown();
  }
}

/**
 * How an in-process controller writes through the registry: as the loopback user, never a dry
 * run, unknown fields ignored unless it asks for Strict, with the field manager kube's controller
 * would have (kube-controller-manager, kube-apiserver, ...), or none (an Update entry under the
 * user agent, as kube leaves for writes that set none).
 */
export function controllerWriteContext(fieldManager?: string, fieldValidation: RequestContext['fieldValidation'] = 'Ignore'): RequestContext {
  return { user: LOOPBACK_USER, dryRun: false, fieldValidation, warnings: [], ...(fieldManager !== undefined ? { fieldManager } : {}) };
}
