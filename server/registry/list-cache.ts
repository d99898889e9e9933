// The JSON of recent whole lists served as stored, kept to answer the same list again while
// nothing of its resource has changed: what kube-apiserver's watch cache does for a client that
// lists in a loop (a controller stuck relisting), which would otherwise read and join every row
// again each time. An entry is good for a list at the newest state when no event of its resource
// came after the version it was read at, as the event log says (and that version is not older
// than the compacted one, below which the log no longer knows). Bounded in bytes, oldest out.
import type { EventLog } from '../storage/log/event-log.ts';

/** A list's items as JSON text, in pieces (pages joined by commas). */
export interface CachedList {
  /** The resourceVersion the rows were read at. */
  readonly rv: number;
  readonly joined: readonly Buffer[];
  readonly count: number;
}

interface Entry extends CachedList {
  readonly bytes: number;
}

export class ListCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;

  constructor(
    private readonly log: EventLog,
    private readonly budgetBytes: number,
  ) {}

  static key(res: string, ns: string | undefined, prefix: Buffer, noNulls: boolean): string {
    return `${res}\u0000${ns ?? '\u0001'}\u0000${noNulls ? 1 : 0}\u0000${prefix.toString('latin1')}`;
  }

  /** The entry under `key`, if it still holds the resource's current objects. */
  get(key: string, res: string): CachedList | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.rv < this.log.compactedRv || (e.rv !== this.log.currentRv && this.log.changedSince(res, e.rv))) {
      this.drop(key, e);
      return undefined;
    }
    // (most recently used last: the first entries are the ones to evict)
    this.entries.delete(key);
    this.entries.set(key, e);
    return e;
  }

  set(key: string, list: CachedList): void {
    let bytes = 0;
    for (const piece of list.joined) bytes += piece.length;
    // (a list that would take more than a quarter of the budget is not kept)
    if (bytes > this.budgetBytes / 4) return;
    const old = this.entries.get(key);
    if (old) this.drop(key, old);
    this.entries.set(key, { ...list, bytes });
    this.bytes += bytes;
    for (const [k, e] of this.entries) {
      if (this.bytes <= this.budgetBytes) break;
      this.drop(k, e);
    }
  }

  private drop(key: string, e: Entry): void {
    this.entries.delete(key);
    this.bytes -= e.bytes;
  }
}
