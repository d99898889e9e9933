// kube-apiserver's authentication metrics (k8s.io/apiserver/pkg/endpoints/filters/metrics.go,
// recordAuthMetrics): authentication_attempts and authentication_duration_seconds by result
// (success, failure: nobody named a user; error: a credential was refused), and
// authenticated_user_requests by user name, which kube's compressUsername bounds to a few known
// names, "email_id" for names with an "@", and "other" for everyone else.
import { CounterVec, HistogramVec, exponentialBuckets, type CounterChild, type HistogramChild } from './vec.ts';
import type { MetricsRegistry } from './registry.ts';

type Result = 'success' | 'failure' | 'error';

/** compressUsername's known identities, reported as they are. */
const KNOWN_USERNAMES: ReadonlySet<string> = new Set(['admin', 'client', 'kube_proxy', 'kubelet', 'system:serviceaccount:kube-system:default']);

/** compressUsername. */
export function compressUsername(username: string): string {
  if (KNOWN_USERNAMES.has(username)) return username;
  if (username.includes('@')) return 'email_id';
  return 'other';
}

export class AuthenticationMetrics {
  private readonly attempts = new Map<Result, CounterChild>();
  private readonly durations = new Map<Result, HistogramChild>();
  private readonly users = new Map<string, CounterChild>();
  private readonly userCounter: CounterVec;

  constructor(registry: MetricsRegistry) {
    this.userCounter = new CounterVec({ name: 'authenticated_user_requests', help: 'Counter of authenticated requests broken out by username.', stability: 'ALPHA', labelNames: ['username'] }).register(registry);
    const attempts = new CounterVec({ name: 'authentication_attempts', help: 'Counter of authenticated attempts.', stability: 'ALPHA', labelNames: ['result'] }).register(registry);
    const latency = new HistogramVec({ name: 'authentication_duration_seconds', help: 'Authentication duration in seconds broken out by result.', stability: 'ALPHA', labelNames: ['result'] }, exponentialBuckets(0.001, 2, 15)).register(registry);
    for (const r of ['success', 'failure', 'error'] as const) {
      this.attempts.set(r, attempts.with(r));
      this.durations.set(r, latency.with(r));
    }
  }

  /** recordAuthMetrics: one request's authentication, `username` when it succeeded. */
  record(result: Result, seconds: number, username?: string): void {
    this.attempts.get(result)!.value++;
    this.durations.get(result)!.observe(seconds);
    if (username === undefined) return;
    const label = compressUsername(username);
    let c = this.users.get(label);
    if (!c) this.users.set(label, (c = this.userCounter.with(label)));
    c.value++;
  }
}
