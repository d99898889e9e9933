// The current objects of one cluster-scoped resource (PriorityClasses, StorageClasses,
// IngressClasses, RuntimeClasses), kept in memory from the commit stream as kube's admission
// plugins keep an informer's lister: a plugin on the create path of every pod or claim reads
// them without a database read. Each object is kept as `project` reduces it (what the plugin
// needs), never the stored object itself, which the log shares with other readers.
import type { EventLog } from '../storage/log/event-log.ts';
import type { GenericStore } from './store.ts';
import type { ResourceInfo } from '../schema/types.ts';

export class ClusterObjectIndex<T> {
  private readonly byName = new Map<string, T>();

  /**
   * `resource` is the log's qualified resource ("priorityclasses.scheduling.k8s.io");
   * `initial` the objects stored at start (GenericStore.listReadable).
   */
  constructor(log: EventLog, resource: string, initial: readonly unknown[], private readonly project: (obj: Record<string, unknown>) => T) {
    for (const o of initial) this.set(o);
    log.onCommit((events) => {
      for (const e of events) {
        if (e.key.res !== resource) continue;
        if (e.type === 'DELETED') this.byName.delete(e.key.name);
        else this.set(e.object);
      }
    });
  }

  /** The index of `info`'s objects, from what `store` holds now and every commit after. */
  static of<T>(log: EventLog, store: GenericStore, info: ResourceInfo, project: (obj: Record<string, unknown>) => T): ClusterObjectIndex<T> {
    return new ClusterObjectIndex(log, info.group ? `${info.resource}.${info.group}` : info.resource, store.listReadable(info, undefined), project);
  }

  private set(o: unknown): void {
    const obj = (o ?? {}) as Record<string, unknown>;
    const name = (obj.metadata as { name?: unknown } | undefined)?.name;
    if (typeof name === 'string') this.byName.set(name, this.project(obj));
  }

  get(name: string): T | undefined {
    return this.byName.get(name);
  }

  values(): IterableIterator<T> {
    return this.byName.values();
  }
}
