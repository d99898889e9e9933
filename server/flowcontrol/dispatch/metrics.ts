// API Priority and Fairness' metrics, with kube's names, help, labels and buckets
// (k8s.io/apiserver/pkg/util/flowcontrol/metrics/metrics.go), registered on the server's own
// registry. A request only adds to plain numbers kept per (priority level, FlowSchema) pair
// (FlowMetrics); the gauges and the dispatched counter read them when scraped (prom-client's
// collect), so the hot path hashes no label set for them. Histograms observe per request, through
// label children made once. request_concurrency_limit and request_concurrency_in_use are left
// out: deprecated in 1.30 and 1.31, kube 1.36 hides them.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { FlowStats, RejectReason } from './queueset.ts';

const requestDurationSecondsBuckets = [0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30];
const queueLengthBuckets = [0, 10, 25, 50, 100, 250, 500, 1000];

type Child<T extends { labels(...v: string[]): unknown }> = ReturnType<T['labels']>;

/** Everything a request of one (level, schema) pair updates, children made once. */
export interface FlowMetrics extends FlowStats {
  readonly priorityLevel: string;
  readonly flowSchema: string;
  /** Read at scrape time. */
  dispatchedCount: number;
  reportedDispatched: number;
  inQueueRequests: number;
  inQueueSeats: number;
  executingRequests: number;
  executingSeats: number;
  waitExecuted: Child<Histogram>;
  waitRejected: Child<Histogram>;
  executionRegular: Child<Histogram>;
  executionWatch: Child<Histogram>;
  estimatedSeats: Child<Histogram>;
  watchCount: Child<Histogram>;
}

export class FlowControlMetrics {
  private readonly rejected: Counter;
  private readonly dispatched: Counter;
  private readonly inqueue: Gauge;
  private readonly inqueueSeats: Gauge;
  private readonly queueLength: Histogram;
  private readonly executing: Gauge;
  private readonly executingSeats: Gauge;
  private readonly wait: Histogram;
  private readonly execution: Histogram;
  private readonly watchCounts: Histogram;
  private readonly workEstimatedSeats: Histogram;
  private readonly nominal: Gauge;
  private readonly lower: Gauge;
  private readonly upper: Gauge;
  private readonly demandHighWatermark: Gauge;
  private readonly demandAverage: Gauge;
  private readonly demandStdev: Gauge;
  private readonly demandSmoothed: Gauge;
  private readonly targetSeats: Gauge;
  private readonly fairFrac: Gauge;
  private readonly currentLimit: Gauge;
  private readonly flows = new Map<string, Map<string, FlowMetrics>>();

  constructor(registry: Registry) {
    const registers = [registry];
    const pf = ['priority_level', 'flow_schema'] as const;
    const pl = ['priority_level'] as const;
    this.rejected = new Counter({ name: 'apiserver_flowcontrol_rejected_requests_total', help: 'Number of requests rejected by API Priority and Fairness subsystem', labelNames: [...pf, 'reason'], registers });
    const flows = () => [...this.flows.values()].flatMap((m) => [...m.values()]);
    const labelsOf = (f: FlowMetrics) => ({ priority_level: f.priorityLevel, flow_schema: f.flowSchema });
    const gaugeOf = (read: (f: FlowMetrics) => number) =>
      function (this: Gauge) {
        for (const f of flows()) this.set(labelsOf(f), read(f));
      };
    this.dispatched = new Counter({
      name: 'apiserver_flowcontrol_dispatched_requests_total',
      help: 'Number of requests executed by API Priority and Fairness subsystem',
      labelNames: pf,
      registers,
      collect() {
        for (const f of flows()) {
          const delta = f.dispatchedCount - f.reportedDispatched;
          f.reportedDispatched = f.dispatchedCount;
          this.inc(labelsOf(f), delta);
        }
      },
    });
    this.inqueue = new Gauge({ name: 'apiserver_flowcontrol_current_inqueue_requests', help: 'Number of requests currently pending in queues of the API Priority and Fairness subsystem', labelNames: pf, registers, collect: gaugeOf((f) => f.inQueueRequests) });
    this.inqueueSeats = new Gauge({ name: 'apiserver_flowcontrol_current_inqueue_seats', help: 'Number of seats currently pending in queues of the API Priority and Fairness subsystem', labelNames: pf, registers, collect: gaugeOf((f) => f.inQueueSeats) });
    this.queueLength = new Histogram({ name: 'apiserver_flowcontrol_request_queue_length_after_enqueue', help: 'Length of queue in the API Priority and Fairness subsystem, as seen by each request after it is enqueued', buckets: queueLengthBuckets, labelNames: pf, registers });
    this.executing = new Gauge({ name: 'apiserver_flowcontrol_current_executing_requests', help: 'Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem', labelNames: pf, registers, collect: gaugeOf((f) => f.executingRequests) });
    this.executingSeats = new Gauge({ name: 'apiserver_flowcontrol_current_executing_seats', help: 'Concurrency (number of seats) occupied by the currently executing (initial stage for a WATCH, any stage otherwise) requests in the API Priority and Fairness subsystem', labelNames: pf, registers, collect: gaugeOf((f) => f.executingSeats) });
    this.wait = new Histogram({ name: 'apiserver_flowcontrol_request_wait_duration_seconds', help: 'Length of time a request spent waiting in its queue', buckets: requestDurationSecondsBuckets, labelNames: [...pf, 'execute'], registers });
    this.execution = new Histogram({ name: 'apiserver_flowcontrol_request_execution_seconds', help: 'Duration of initial stage (for a WATCH) or any (for a non-WATCH) stage of request execution in the API Priority and Fairness subsystem', buckets: requestDurationSecondsBuckets, labelNames: [...pf, 'type'], registers });
    this.watchCounts = new Histogram({ name: 'apiserver_flowcontrol_watch_count_samples', help: 'count of watchers for mutating requests in API Priority and Fairness', buckets: [0, 1, 10, 100, 1000, 10000], labelNames: pf, registers });
    this.workEstimatedSeats = new Histogram({ name: 'apiserver_flowcontrol_work_estimated_seats', help: 'Number of estimated seats (maximum of initial and final seats) associated with requests in API Priority and Fairness', buckets: [1, 2, 4, 10], labelNames: pf, registers });
    this.nominal = new Gauge({ name: 'apiserver_flowcontrol_nominal_limit_seats', help: 'Nominal number of execution seats configured for each priority level', labelNames: pl, registers });
    this.lower = new Gauge({ name: 'apiserver_flowcontrol_lower_limit_seats', help: 'Configured lower bound on number of execution seats available to each priority level', labelNames: pl, registers });
    this.upper = new Gauge({ name: 'apiserver_flowcontrol_upper_limit_seats', help: 'Configured upper bound on number of execution seats available to each priority level', labelNames: pl, registers });
    this.demandHighWatermark = new Gauge({ name: 'apiserver_flowcontrol_demand_seats_high_watermark', help: 'High watermark, over last adjustment period, of demand_seats', labelNames: pl, registers });
    this.demandAverage = new Gauge({ name: 'apiserver_flowcontrol_demand_seats_average', help: 'Time-weighted average, over last adjustment period, of demand_seats', labelNames: pl, registers });
    this.demandStdev = new Gauge({ name: 'apiserver_flowcontrol_demand_seats_stdev', help: 'Time-weighted standard deviation, over last adjustment period, of demand_seats', labelNames: pl, registers });
    this.demandSmoothed = new Gauge({ name: 'apiserver_flowcontrol_demand_seats_smoothed', help: 'Smoothed seat demands', labelNames: pl, registers });
    this.targetSeats = new Gauge({ name: 'apiserver_flowcontrol_target_seats', help: 'Seat allocation targets', labelNames: pl, registers });
    this.fairFrac = new Gauge({ name: 'apiserver_flowcontrol_seat_fair_frac', help: "Fair fraction of server's concurrency to allocate to each priority level that can use it", registers });
    this.currentLimit = new Gauge({ name: 'apiserver_flowcontrol_current_limit_seats', help: 'current derived number of execution seats available to each priority level', labelNames: pl, registers });
  }

  /** The children of one (level, schema) pair, made on first use. */
  flow(priorityLevel: string, flowSchema: string): FlowMetrics {
    let byFs = this.flows.get(priorityLevel);
    if (!byFs) this.flows.set(priorityLevel, (byFs = new Map()));
    let m = byFs.get(flowSchema);
    if (!m) byFs.set(flowSchema, (m = this.makeFlow(priorityLevel, flowSchema)));
    return m;
  }

  private makeFlow(pl: string, fs: string): FlowMetrics {
    const queueLength = this.queueLength.labels(pl, fs);
    const rejected = new Map<RejectReason, ReturnType<Counter['labels']>>();
    return {
      priorityLevel: pl,
      flowSchema: fs,
      dispatchedCount: 0,
      reportedDispatched: 0,
      inQueueRequests: 0,
      inQueueSeats: 0,
      executingRequests: 0,
      executingSeats: 0,
      waitExecuted: this.wait.labels(pl, fs, 'true'),
      waitRejected: this.wait.labels(pl, fs, 'false'),
      executionRegular: this.execution.labels(pl, fs, 'regular'),
      executionWatch: this.execution.labels(pl, fs, 'watch'),
      estimatedSeats: this.workEstimatedSeats.labels(pl, fs),
      watchCount: this.watchCounts.labels(pl, fs),
      inQueue(delta, seats) {
        this.inQueueRequests += delta;
        this.inQueueSeats += seats;
      },
      executing(delta, seats) {
        this.executingRequests += delta;
        this.executingSeats += seats;
      },
      rejected: (reason) => {
        let c = rejected.get(reason);
        if (!c) rejected.set(reason, (c = this.rejected.labels(pl, fs, reason)));
        c.inc();
      },
      queueLengthAfterEnqueue(length) {
        queueLength.observe(length);
      },
    };
  }

  /** SetPriorityLevelConfiguration. */
  setLevelLimits(pl: string, nominalCL: number, minCL: number, maxCL: number): void {
    this.nominal.set({ priority_level: pl }, nominalCL);
    this.lower.set({ priority_level: pl }, minCL);
    this.upper.set({ priority_level: pl }, maxCL);
  }

  /** NotePriorityLevelConcurrencyAdjustment. */
  noteAdjustment(pl: string, hwm: number, avg: number, stdev: number, smoothed: number, target: number, currentCL: number): void {
    const l = { priority_level: pl };
    this.demandHighWatermark.set(l, hwm);
    this.demandAverage.set(l, avg);
    this.demandStdev.set(l, stdev);
    this.demandSmoothed.set(l, smoothed);
    this.targetSeats.set(l, target);
    this.currentLimit.set(l, currentCL);
  }

  setFairFrac(f: number): void {
    this.fairFrac.set(f);
  }
}
