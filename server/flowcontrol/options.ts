// What the command line sets for flow control: kube-apiserver's --enable-priority-and-fairness,
// --max-requests-inflight, --max-mutating-requests-inflight and --request-timeout.

export interface FlowControlOptions {
  /** --enable-priority-and-fairness (default true); false falls back to the two max-inflight limits. */
  enablePriorityAndFairness: boolean;
  /** --max-requests-inflight (default 400): with APF, part of the server's concurrency limit; without, the read-only limit (0: none). */
  maxRequestsInflight: number;
  /** --max-mutating-requests-inflight (default 200): with APF, the rest of the concurrency limit; without, the mutating limit (0: none). */
  maxMutatingRequestsInflight: number;
  /** --request-timeout (default 1m): how long a non-long-running request may run (APF's execution timeout). */
  requestTimeoutMs: number;
}

export const DEFAULT_FLOW_CONTROL_OPTIONS: FlowControlOptions = {
  enablePriorityAndFairness: true,
  maxRequestsInflight: 400,
  maxMutatingRequestsInflight: 200,
  requestTimeoutMs: 60_000,
};

/**
 * kube-apiserver's start-up checks of these flags: ServerRunOptions.Validate's (each its own
 * error, aggregated), then FeatureOptions.ApplyTo's for APF. Empty when they pass.
 */
export function flowControlOptionErrors(o: FlowControlOptions): string[] {
  const errors: string[] = [];
  if (o.maxRequestsInflight < 0) errors.push('--max-requests-inflight can not be negative value');
  if (o.maxMutatingRequestsInflight < 0) errors.push('--max-mutating-requests-inflight can not be negative value');
  if (o.requestTimeoutMs < 0) errors.push('--request-timeout can not be negative value');
  if (errors.length) return errors;
  if (o.enablePriorityAndFairness && o.maxRequestsInflight + o.maxMutatingRequestsInflight <= 0) {
    errors.push(`invalid configuration: MaxRequestsInFlight=${o.maxRequestsInflight} and MaxMutatingRequestsInFlight=${o.maxMutatingRequestsInflight}; they must add up to something positive`);
  }
  return errors;
}
