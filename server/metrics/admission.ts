// kube-apiserver's admission metrics (k8s.io/apiserver/pkg/admission/metrics/metrics.go): each
// phase of the chain (step: admit or validate), each plugin (controller), each webhook call, and
// webhook rejections and requests, with kube's names, help, buckets and labels.
//
// Cardinality is bounded as kube bounds it: plugin names are the enabled plugins', webhook names
// the configured webhooks', operations kube's four, types admit/validate (steps, plugins) and
// admit/validating (webhooks), codes truncated at 600.
//
// Hot path: a plugin's children are kept per (operation, rejected) in a small array, so a measured
// plugin costs two performance.now() and a field update.
import { CounterVec, HistogramVec, SummaryVec, type CounterChild, type HistogramChild, type SummaryChild } from './vec.ts';
import type { MetricsRegistry } from './registry.ts';

const STEP_BUCKETS = [0.005, 0.025, 0.1, 0.5, 1.0, 2.5];
const WEBHOOK_BUCKETS = [0.005, 0.025, 0.1, 0.5, 1.0, 2.5, 10, 25];

const OPERATIONS = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'] as const;
export type AdmissionStepType = 'admit' | 'validate';
/** The type label of webhook metrics: kube's dispatchers pass "admit" (mutating) and "validating". */
export type WebhookType = 'admit' | 'validating';
/** kube's WebhookRejectionErrorType. */
export type WebhookRejectionErrorType = 'calling_webhook_error' | 'apiserver_internal_error' | 'no_error';

/** Observes one measured plugin or phase: its operation, whether it refused, and how long it took. */
export type AdmissionObserver = (operation: string, rejected: boolean, seconds: number) => void;

/** Children of one (labels…, type) by operation and rejected: index op*2 + (rejected ? 1 : 0). */
class ByOperation {
  private readonly histograms: (HistogramChild | undefined)[] = [];
  private readonly summaries: (SummaryChild | undefined)[] = [];

  constructor(
    private readonly histogram: HistogramVec,
    private readonly summary: SummaryVec | undefined,
    private readonly prefix: readonly string[],
  ) {}

  observe(operation: string, rejected: boolean, seconds: number): void {
    let op = OPERATIONS.indexOf(operation as (typeof OPERATIONS)[number]);
    if (op < 0) op = OPERATIONS.length;
    const i = op * 2 + (rejected ? 1 : 0);
    const h = (this.histograms[i] ??= this.histogram.with(...this.prefix, operation, String(rejected)));
    h.observe(seconds);
    if (this.summary) {
      const s = (this.summaries[i] ??= this.summary.with(...this.prefix, operation, String(rejected)));
      s.sum += seconds;
      s.count++;
    }
  }
}

export class AdmissionMetrics {
  private readonly step: HistogramVec;
  private readonly stepSummary: SummaryVec;
  private readonly controller: HistogramVec;
  private readonly webhook: HistogramVec;
  private readonly webhookRejection: CounterVec;
  private readonly webhookFailOpen: CounterVec;
  private readonly webhookRequest: CounterVec;
  private readonly webhookChildren = new Map<string, ByOperation>();
  private readonly counters = new Map<string, CounterChild>();

  constructor(registry: MetricsRegistry) {
    this.step = new HistogramVec(
      { name: 'apiserver_admission_step_admission_duration_seconds', help: 'Admission sub-step latency histogram in seconds, broken out for each operation and API resource and step type (validate or admit).', stability: 'STABLE', labelNames: ['type', 'operation', 'rejected'] },
      STEP_BUCKETS,
    ).register(registry);
    this.stepSummary = new SummaryVec({ name: 'apiserver_admission_step_admission_duration_seconds_summary', help: 'Admission sub-step latency summary in seconds, broken out for each operation and API resource and step type (validate or admit).', stability: 'ALPHA', labelNames: ['type', 'operation', 'rejected'] }).register(registry);
    this.controller = new HistogramVec(
      { name: 'apiserver_admission_controller_admission_duration_seconds', help: 'Admission controller latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).', stability: 'STABLE', labelNames: ['name', 'type', 'operation', 'rejected'] },
      STEP_BUCKETS,
    ).register(registry);
    this.webhook = new HistogramVec(
      { name: 'apiserver_admission_webhook_admission_duration_seconds', help: 'Admission webhook latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).', stability: 'STABLE', labelNames: ['name', 'type', 'operation', 'rejected'] },
      WEBHOOK_BUCKETS,
    ).register(registry);
    this.webhookRejection = new CounterVec({
      name: 'apiserver_admission_webhook_rejection_count',
      help: 'Admission webhook rejection count, identified by name and broken out for each admission type (validating or admit) and operation. Additional labels specify an error type (calling_webhook_error or apiserver_internal_error if an error occurred; no_error otherwise) and optionally a non-zero rejection code if the webhook rejects the request with an HTTP status code (honored by the apiserver when the code is greater or equal to 400). Codes greater than 600 are truncated to 600, to keep the metrics cardinality bounded.',
      stability: 'ALPHA',
      labelNames: ['name', 'type', 'operation', 'error_type', 'rejection_code'],
    }).register(registry);
    this.webhookFailOpen = new CounterVec({ name: 'apiserver_admission_webhook_fail_open_count', help: 'Admission webhook fail open count, identified by name and broken out for each admission type (validating or mutating).', stability: 'ALPHA', labelNames: ['name', 'type'] }).register(registry);
    this.webhookRequest = new CounterVec({
      name: 'apiserver_admission_webhook_request_total',
      help: 'Admission webhook request total, identified by name and broken out for each admission type (validating or mutating) and operation. Additional labels specify whether the request was rejected or not and an HTTP status code. Codes greater than 600 are truncated to 600, to keep the metrics cardinality bounded.',
      stability: 'ALPHA',
      labelNames: ['name', 'type', 'operation', 'code', 'rejected'],
    }).register(registry);
  }

  /** WithStepMetrics: the observer of a whole phase. */
  stepObserver(type: AdmissionStepType): AdmissionObserver {
    const histograms = new ByOperation(this.step, this.stepSummary, [type]);
    return (operation, rejected, seconds) => histograms.observe(operation, rejected, seconds);
  }

  /** WithControllerMetrics: the observer of one plugin's phase. */
  controllerObserver(name: string, type: AdmissionStepType): AdmissionObserver {
    const histograms = new ByOperation(this.controller, undefined, [name, type]);
    return (operation, rejected, seconds) => histograms.observe(operation, rejected, seconds);
  }

  /** ObserveWebhook: one call of a webhook, its HTTP code (0 when none came back). */
  observeWebhook(name: string, type: WebhookType, operation: string, rejected: boolean, code: number, seconds: number): void {
    const key = `${name}\u0000${type}`;
    let h = this.webhookChildren.get(key);
    if (!h) this.webhookChildren.set(key, (h = new ByOperation(this.webhook, undefined, [name, type])));
    h.observe(operation, rejected, seconds);
    this.count(this.webhookRequest, name, type, operation, String(Math.min(code, 600)), String(rejected));
  }

  /** ObserveWebhookRejection. */
  observeWebhookRejection(name: string, type: WebhookType, operation: string, errorType: WebhookRejectionErrorType, rejectionCode: number): void {
    this.count(this.webhookRejection, name, type, operation, errorType, String(Math.min(rejectionCode, 600)));
  }

  /** ObserveWebhookFailOpen. */
  observeWebhookFailOpen(name: string, type: WebhookType): void {
    this.count(this.webhookFailOpen, name, type);
  }

  /** Webhook calls are network round trips: a joined key per call costs nothing beside them. */
  private count(vec: CounterVec, ...labels: string[]): void {
    const key = `${vec.name}\u0000${labels.join('\u0000')}`;
    let c = this.counters.get(key);
    if (!c) this.counters.set(key, (c = vec.with(...labels)));
    c.value++;
  }
}
