// Turns of the event loop. Node runs a callback to its end once started and cannot preempt it,
// so long work (a large list, compaction) is cut into slices that let the I/O that arrived
// meanwhile (other clients' requests) in between them.
import { performance } from 'node:perf_hooks';

/** Resolves in the event loop's check phase, after the I/O callbacks of this turn. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** How long a request's long job (a large list) may hold one turn: a light request behind it waits about that. */
export const REQUEST_TURN_BUDGET_MS = 0.5;

/**
 * Yields to the event loop once this turn's share of a long job has run `budgetMs`: call
 * `pause()` between slices; it returns at once while the turn's budget lasts.
 */
export class TurnBudget {
  private turnStarted = performance.now();

  constructor(private readonly budgetMs = REQUEST_TURN_BUDGET_MS) {}

  async pause(): Promise<void> {
    if (performance.now() - this.turnStarted < this.budgetMs) return;
    await nextTurn();
    this.turnStarted = performance.now();
  }
}
