// API Priority and Fairness' metrics, with kube's names, help, labels and buckets
// (k8s.io/apiserver/pkg/util/flowcontrol/metrics/metrics.go), registered on the server's own
// registry. The label children of a (priority level, FlowSchema) pair are made once and kept
// (FlowStats), so a request touches counters without building label objects.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { FlowStats, RejectReason } from './queueset.ts';

const requestDurationSecondsBuckets = [0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30];
const queueLengthBuckets = [0, 10, 25, 50, 100, 250, 500, 1000];

type Child<T extends { labels(...v: string[]): unknown }> = ReturnType<T['labels']>;

/** Everything a request of one (level, schema) pair updates, children made once. */
export interface FlowMetrics extends FlowStats {
  dispatched: Child<Counter>;
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
  private readonly concurrencyLimit: Gauge;
  private readonly executing: Gauge;
  private readonly executingSeats: Gauge;
  private readonly concurrencyInUse: Gauge;
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
    this.dispatched = new Counter({ name: 'apiserver_flowcontrol_dispatched_requests_total', help: 'Number of requests executed by API Priority and Fairness subsystem', labelNames: pf, registers });
    this.inqueue = new Gauge({ name: 'apiserver_flowcontrol_current_inqueue_requests', help: 'Number of requests currently pending in queues of the API Priority and Fairness subsystem', labelNames: pf, registers });
    this.inqueueSeats = new Gauge({ name: 'apiserver_flowcontrol_current_inqueue_seats', help: 'Number of seats currently pending in queues of the API Priority and Fairness subsystem', labelNames: pf, registers });
    this.queueLength = new Histogram({ name: 'apiserver_flowcontrol_request_queue_length_after_enqueue', help: 'Length of queue in the API Priority and Fairness subsystem, as seen by each request after it is enqueued', buckets: queueLengthBuckets, labelNames: pf, registers });
    this.concurrencyLimit = new Gauge({ name: 'apiserver_flowcontrol_request_concurrency_limit', help: '(Deprecated since 1.30.0) Nominal number of execution seats configured for each priority level', labelNames: pl, registers });
    this.executing = new Gauge({ name: 'apiserver_flowcontrol_current_executing_requests', help: 'Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem', labelNames: pf, registers });
    this.executingSeats = new Gauge({ name: 'apiserver_flowcontrol_current_executing_seats', help: 'Concurrency (number of seats) occupied by the currently executing (initial stage for a WATCH, any stage otherwise) requests in the API Priority and Fairness subsystem', labelNames: pf, registers });
    this.concurrencyInUse = new Gauge({ name: 'apiserver_flowcontrol_request_concurrency_in_use', help: '(Deprecated since 1.31.0) Concurrency (number of seats) occupied by the currently executing (initial stage for a WATCH, any stage otherwise) requests in the API Priority and Fairness subsystem', labelNames: pf, registers });
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
    const inqueue = this.inqueue.labels(pl, fs);
    const inqueueSeats = this.inqueueSeats.labels(pl, fs);
    const executing = this.executing.labels(pl, fs);
    const executingSeats = this.executingSeats.labels(pl, fs);
    const inUse = this.concurrencyInUse.labels(pl, fs);
    const queueLength = this.queueLength.labels(pl, fs);
    const rejected = new Map<RejectReason, ReturnType<Counter['labels']>>();
    return {
      dispatched: this.dispatched.labels(pl, fs),
      waitExecuted: this.wait.labels(pl, fs, 'true'),
      waitRejected: this.wait.labels(pl, fs, 'false'),
      executionRegular: this.execution.labels(pl, fs, 'regular'),
      executionWatch: this.execution.labels(pl, fs, 'watch'),
      estimatedSeats: this.workEstimatedSeats.labels(pl, fs),
      watchCount: this.watchCounts.labels(pl, fs),
      inQueue(delta, seats) {
        if (delta) inqueue.inc(delta);
        if (seats) inqueueSeats.inc(seats);
      },
      executing(delta, seats) {
        if (delta) executing.inc(delta);
        if (seats) {
          executingSeats.inc(seats);
          inUse.inc(seats);
        }
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
    this.concurrencyLimit.set({ priority_level: pl }, nominalCL);
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
