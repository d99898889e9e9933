// Which namespaces exist and which are terminating, kept in memory from the commit stream so
// admission does not read and decode a namespace row on every create.
import type { EventLog } from '../storage/log/event-log.ts';

export interface NamespaceState {
  terminating: boolean;
}

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
    this.states.set(ns.metadata.name, { terminating: !!ns.metadata.deletionTimestamp || ns.status?.phase === 'Terminating' });
  }

  get(name: string): NamespaceState | undefined {
    return this.states.get(name);
  }
}
