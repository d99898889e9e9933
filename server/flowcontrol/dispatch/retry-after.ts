// The Retry-After of a 429 (kube's dropped_requests_tracker.go): 1 second, doubled (up to 32) when
// a priority level dropped at least 3 × Retry-After requests over the last Retry-After seconds (and
// no doubling happened within Retry-After), lowered by one when it dropped fewer than Retry-After.
const MAX_RETRY_AFTER = 32;

class DroppedRequestsStats {
  private history: { unix: number; requests: number }[] = [];
  private currentUnix = 0;
  private currentCount = 0;
  retryAfter = 1;
  private retryAfterUpdateUnix = 0;

  record(unix: number): void {
    if (this.currentUnix === unix) {
      this.currentCount++;
      return;
    }
    this.updateHistory(this.currentUnix, this.currentCount);
    this.currentUnix = unix;
    this.currentCount = 1;
    this.updateRetryAfter(unix);
  }

  private updateHistory(unix: number, count: number): void {
    this.history.push({ unix, requests: count });
    let start = 0;
    while (start < this.history.length && unix - this.history[start].unix > MAX_RETRY_AFTER) start++;
    if (start > 0) this.history = this.history.slice(start);
  }

  private updateRetryAfter(unix: number): void {
    let retryAfter = this.retryAfter;
    let dropped = 0;
    for (let i = this.history.length - 1; i >= 0; i--) {
      if (unix - this.history[i].unix > retryAfter) break;
      if (this.history[i].unix < unix) dropped += this.history[i].requests;
    }
    if (unix - this.retryAfterUpdateUnix >= retryAfter && dropped >= 3 * retryAfter) {
      retryAfter = Math.min(retryAfter * 2, MAX_RETRY_AFTER);
      this.retryAfter = retryAfter;
      this.retryAfterUpdateUnix = unix;
      return;
    }
    if (dropped < retryAfter && retryAfter > 1) this.retryAfter = retryAfter - 1;
  }
}

export class DroppedRequestsTracker {
  private readonly byLevel = new Map<string, DroppedRequestsStats>();

  constructor(private readonly nowUnix: () => number = () => Math.floor(Date.now() / 1000)) {}

  record(priorityLevel: string): void {
    let s = this.byLevel.get(priorityLevel);
    if (!s) this.byLevel.set(priorityLevel, (s = new DroppedRequestsStats()));
    s.record(this.nowUnix());
  }

  retryAfter(priorityLevel: string): number {
    return this.byLevel.get(priorityLevel)?.retryAfter ?? 1;
  }
}
