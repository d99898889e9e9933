// A time integrator of one number (kube's fairqueuing.Integrator): the seat demand of a priority
// level (seats in use + seats waiting), read and reset every borrowing adjustment period for its
// time-weighted average, standard deviation and high watermark.
import { performance } from 'node:perf_hooks';

export interface IntegratorResults {
  /** Seconds integrated over. */
  duration: number;
  average: number;
  deviation: number;
  max: number;
}

export class Integrator {
  private lastMs: number;
  private x = 0;
  private area = 0;
  private squares = 0;
  private max = 0;
  private startMs: number;

  constructor(private readonly now: () => number = () => performance.now()) {
    this.lastMs = this.startMs = now();
  }

  set(x: number): void {
    this.advance();
    this.x = x;
    if (x > this.max) this.max = x;
  }

  /** The period's results; a new period starts with the current value. */
  reset(): IntegratorResults {
    this.advance();
    const duration = (this.lastMs - this.startMs) / 1000;
    const average = duration > 0 ? this.area / duration : NaN;
    const variance = duration > 0 ? this.squares / duration - average * average : NaN;
    const results = { duration, average, deviation: Math.sqrt(Math.max(0, variance)), max: this.max };
    this.startMs = this.lastMs;
    this.area = this.squares = 0;
    this.max = this.x;
    return results;
  }

  private advance(): void {
    const now = this.now();
    const dt = (now - this.lastMs) / 1000;
    if (dt > 0) {
      this.area += this.x * dt;
      this.squares += this.x * this.x * dt;
    }
    this.lastMs = now;
  }
}
