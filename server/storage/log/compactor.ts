// Periodic compaction: each tick compacts up to the resourceVersion seen at the previous tick,
// so history is kept for about one interval (kube-apiserver's --etcd-compaction-interval model).
import type { EventLog } from './event-log.ts';
import type { CompactionResult } from './types.ts';
import { parseGoDuration } from '../../go/time.ts';
import { fallbackLogger } from '../../logging/logger.ts';

export class Compactor {
  private timer?: NodeJS.Timeout;
  private previousTickRv = 0;

  constructor(private readonly log: EventLog, private readonly intervalMs: number, private readonly onResult: (r: CompactionResult, durationMs: number) => void = () => {}, private readonly onError: (e: unknown) => void = (e) => fallbackLogger().error(e, 'compaction failed')) {}

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
      const started = performance.now();
      const result = await this.log.compact(upTo);
      this.onResult(result, performance.now() - started);
    } catch (e) {
      this.onError(e);
    }
  }
}

/** Milliseconds of a flag's duration: Go's syntax, as kube's flags take it ("5m", "1h30m", "500ms"), or plain seconds; 0 disables. */
export function parseDuration(v: string): number {
  const text = v.trim();
  // A bare number is seconds.
  if (/^\d+(?:\.\d+)?$/.test(text)) return Number(text) * 1000;
  const ns = parseGoDuration(text);
  if (typeof ns !== 'number' || ns < 0) throw new Error(`invalid duration: ${v} (use e.g. 5m, 30s, 1h30m, 0 to disable)`);
  return ns / 1e6;
}
