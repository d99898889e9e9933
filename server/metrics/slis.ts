// The health checks' SLI metrics kube-apiserver serves at /metrics/slis
// (k8s.io/component-base/metrics/prometheus/slis): kubernetes_healthcheck{name,type}, 1 when the
// check last passed and 0 when it failed, and kubernetes_healthchecks_total{name,type,status}.
// Their own registry, as kube's: /metrics/slis answers with these two alone. Cardinality: the
// server's check names times livez/readyz/healthz.
import { Registry } from 'prom-client';
import { CounterVec, GaugeVec, type CounterChild, type GaugeChild } from './vec.ts';

export class HealthcheckMetrics {
  readonly registry: Registry = new Registry();
  private readonly gauge: GaugeVec;
  private readonly total: CounterVec;
  private readonly children = new Map<string, { gauge: GaugeChild; success: CounterChild | undefined; error: CounterChild | undefined }>();

  constructor() {
    this.gauge = new GaugeVec({ name: 'kubernetes_healthcheck', help: 'This metric records the result of a single healthcheck.', stability: 'STABLE', labelNames: ['name', 'type'] }).register(this.registry);
    this.total = new CounterVec({ name: 'kubernetes_healthchecks_total', help: 'This metric records the results of all healthcheck.', stability: 'STABLE', labelNames: ['name', 'type', 'status'] }).register(this.registry);
  }

  /** ObserveHealthcheck: one check of `type` (livez, readyz, healthz) passed or failed. */
  observe(name: string, type: string, passed: boolean): void {
    const key = `${type}\u0000${name}`;
    let c = this.children.get(key);
    if (!c) this.children.set(key, (c = { gauge: this.gauge.with(name, type), success: undefined, error: undefined }));
    c.gauge.value = passed ? 1 : 0;
    if (passed) (c.success ??= this.total.with(name, type, 'success')).value++;
    else (c.error ??= this.total.with(name, type, 'error')).value++;
  }
}
