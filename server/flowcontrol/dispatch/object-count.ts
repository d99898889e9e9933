// Each resource's number of objects, for the LIST work estimate (kube's storage object count
// tracker): counted once from the store on a resource's first LIST, then kept from the commit
// stream (+1 on ADDED, -1 on DELETED), so estimating a LIST never reads the database again.
import type { EventLog } from '../../storage/log/event-log.ts';

const EVERYTHING = { ns: '', name: '' };
/** Lists of made-up resources (answered 404) must not grow the map without bound. */
const MAX_RESOURCES = 4096;

export class ObjectCounter {
  private readonly counts = new Map<string, number>();

  constructor(private readonly log: EventLog) {
    log.onCommit((events) => {
      for (const e of events) {
        if (e.type === 'MODIFIED') continue;
        const n = this.counts.get(e.key.res);
        if (n !== undefined) this.counts.set(e.key.res, e.type === 'ADDED' ? n + 1 : Math.max(0, n - 1));
      }
    });
  }

  /** Current objects of a resource ("pods", "deployments.apps"). */
  count(resource: string): number {
    let n = this.counts.get(resource);
    if (n === undefined) {
      if (this.counts.size >= MAX_RESOURCES) this.counts.clear();
      this.counts.set(resource, (n = this.log.countAfter(resource, undefined, EVERYTHING)));
    }
    return n;
  }
}
