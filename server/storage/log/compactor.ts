// Periodic compaction: each tick compacts up to the resourceVersion seen at the previous tick,
// so history is kept for about one interval (kube-apiserver's --etcd-compaction-interval model).
import type { EventLog } from './event-log.ts';
import type { CompactionResult } from './types.ts';

export class Compactor {
  private timer?: NodeJS.Timeout;
  private previousTickRv = 0;

  constructor(private readonly log: EventLog, private readonly intervalMs: number, private readonly onResult: (r: CompactionResult) => void = () => {}) {}

  start(): void {
    if (this.intervalMs <= 0) return;
    this.previousTickRv = this.log.currentRv;
    this.timer = setInterval(() => void this.tick(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  private async tick(): Promise<void> {
    const upTo = this.previousTickRv;
    this.previousTickRv = this.log.currentRv;
    if (upTo <= this.log.compactedRv && !this.log.compactionUnfinished) return;
    try {
      this.onResult(await this.log.compact(upTo));
    } catch (e) {
      console.error('compaction failed:', e);
    }
  }
}

/** "5m", "30s", "1h", "500ms", "1h30m", or plain seconds; 0 disables. */
export function parseDuration(v: string): number {
  const text = v.trim();
  // A bare number is seconds; otherwise Go's form, parts summed ("1h30m", "1h0m0s").
  if (/^\d+(?:\.\d+)?$/.test(text)) return Number(text) * 1000;
  if (!/^(?:\d+(?:\.\d+)?(?:ms|s|m|h))+$/.test(text)) throw new Error(`invalid duration: ${v} (use e.g. 5m, 30s, 1h30m, 0 to disable)`);
  let ms = 0;
  for (const [, n, unit] of text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) ms += Number(n) * (unit === 'ms' ? 1 : unit === 's' ? 1000 : unit === 'm' ? 60_000 : 3_600_000);
  return ms;
}
