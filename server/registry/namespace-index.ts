// Which namespaces exist, which are terminating, and their labels, kept in memory from the
// commit stream so admission (lifecycle, webhook and policy namespace selectors, PodSecurity)
// does not read and decode a namespace row on every write.
import type { EventLog } from '../storage/log/event-log.ts';

export interface NamespaceState {
  terminating: boolean;
  /** metadata.labels (frozen; an empty object when it has none). */
  labels: Readonly<Record<string, string>>;
}

const NO_LABELS: Readonly<Record<string, string>> = Object.freeze({});

export class NamespaceIndex {
  private readonly states = new Map<string, NamespaceState>();

  constructor(log: EventLog, initial: any[]) {
    for (const ns of initial) this.set(ns);
    log.onCommit((events) => {
      for (const e of events) {
        if (e.key.res !== 'namespaces') continue;
        if (e.type === 'DELETED') this.states.delete(e.key.name);
        else this.set(e.object);
      }
    });
  }

  private set(ns: any): void {
    const labels = ns.metadata.labels;
    this.states.set(ns.metadata.name, {
      terminating: !!ns.metadata.deletionTimestamp || ns.status?.phase === 'Terminating',
      labels: labels && typeof labels === 'object' && Object.keys(labels).length ? Object.freeze({ ...labels }) : NO_LABELS,
    });
  }

  get(name: string): NamespaceState | undefined {
    return this.states.get(name);
  }
}
