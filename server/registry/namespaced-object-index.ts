// The objects of one namespaced resource, by namespace, kept in memory from the commit stream
// (as kube's admission plugins keep an informer's lister): LimitRanger and ResourceQuota read a
// namespace's LimitRanges and ResourceQuotas on every write without a database read, and a
// namespace with none costs one map lookup. Objects are the committed ones: shared, read only.
import type { EventLog } from '../storage/log/event-log.ts';

export class NamespacedObjectIndex<T = unknown> {
  private readonly byNamespace = new Map<string, Map<string, T>>();
  private readonly unsubscribe: () => void;

  /** resource: the qualified resource as the log keys it ("limitranges", "resourcequotas"). */
  constructor(log: EventLog, resource: string, initial: readonly { metadata: { namespace?: string; name: string } }[]) {
    for (const obj of initial) this.set(obj.metadata.namespace ?? '', obj.metadata.name, obj as T);
    this.unsubscribe = log.onCommit((events) => {
      for (const e of events) {
        if (e.key.res !== resource) continue;
        if (e.type === 'DELETED') this.remove(e.key.ns, e.key.name);
        else this.set(e.key.ns, e.key.name, e.object as T);
      }
    });
  }

  private set(ns: string, name: string, obj: T): void {
    let objects = this.byNamespace.get(ns);
    if (!objects) this.byNamespace.set(ns, (objects = new Map()));
    objects.set(name, obj);
  }

  private remove(ns: string, name: string): void {
    const objects = this.byNamespace.get(ns);
    if (!objects) return;
    objects.delete(name);
    if (objects.size === 0) this.byNamespace.delete(ns);
  }

  /** The namespace's objects (none: an empty array, no allocation). */
  in(ns: string): readonly T[] {
    const objects = this.byNamespace.get(ns);
    return objects ? [...objects.values()] : EMPTY;
  }

  /** One object, if stored. */
  get(ns: string, name: string): T | undefined {
    return this.byNamespace.get(ns)?.get(name);
  }

  /** Whether the namespace has any. */
  has(ns: string): boolean {
    return this.byNamespace.has(ns);
  }

  close(): void {
    this.unsubscribe();
  }
}

const EMPTY: readonly never[] = Object.freeze([]);
