// Turns of the event loop. Node runs a callback to its end once started and cannot preempt it,
// so long work (a large list, compaction) is cut into slices that let the I/O that arrived
// meanwhile (other clients' requests) in between them.
import { performance } from 'node:perf_hooks';

/** Resolves in the event loop's check phase, after the I/O callbacks of this turn. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Yields to the event loop once this turn's share of a long job has run `budgetMs`: call
 * `pause()` between slices; it returns at once while the turn's budget lasts.
 */
export class TurnBudget {
  private turnStarted = performance.now();

  constructor(private readonly budgetMs: number) {}

  async pause(): Promise<void> {
    if (performance.now() - this.turnStarted < this.budgetMs) return;
    await nextTurn();
    this.turnStarted = performance.now();
  }
}
