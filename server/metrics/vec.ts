// Labelled counters, gauges and histograms for the request path, as component-base's
// CounterVec, GaugeVec and HistogramVec: a child per label set, looked up once and kept by the
// caller, whose inc/set/observe is a field update (prom-client's own children hash their label
// object on every observe). Each vec is a prom-client collector (name, help, type, get()) on the
// server's registry, so /metrics writes it with the process and Node.js defaults.
//
// Help texts carry component-base's stability prefix ("[STABLE] ", "[ALPHA] "), as kube-apiserver
// writes them; histogram bounds are printed as Go's strconv 'g' prints them (`le="1e+06"`).
import type { Metric } from 'prom-client';
import { goFloat } from '../go/fmt.ts';
import type { MetricsRegistry } from './registry.ts';

export type StabilityLevel = 'STABLE' | 'BETA' | 'ALPHA';

export interface VecOptions {
  name: string;
  help: string;
  stability: StabilityLevel;
  labelNames: readonly string[];
}

/** One sample as prom-client's registry writes it. */
interface Sample {
  labels: Record<string, string>;
  value: number;
  metricName?: string;
}

interface Collected {
  name: string;
  help: string;
  type: string;
  values: Sample[];
  aggregator: 'sum';
}

/** What every vec shares: its children by their joined label values, and registration. */
abstract class Vec<Child> {
  readonly name: string;
  readonly help: string;
  abstract readonly type: 'counter' | 'gauge' | 'histogram' | 'summary';
  readonly aggregator = 'sum';
  protected readonly labelNames: readonly string[];
  /** Label positions in name order: Go's client writes labels sorted by name (a histogram's `le` last). */
  private readonly sortedLabels: readonly number[];
  protected readonly children = new Map<string, { values: readonly string[]; child: Child }>();

  constructor(opts: VecOptions) {
    this.name = opts.name;
    this.help = `[${opts.stability}] ${opts.help}`;
    this.labelNames = opts.labelNames;
    this.sortedLabels = opts.labelNames.map((_, i) => i).sort((a, b) => (opts.labelNames[a] < opts.labelNames[b] ? -1 : 1));
  }

  /** Registers this vec on the registry (once per server). */
  register(registry: MetricsRegistry): this {
    registry.registerMetric(this as unknown as Metric);
    return this;
  }

  /** The child of these label values (made on first use): callers keep it, the lookup joins strings. */
  with(...values: string[]): Child {
    if (values.length !== this.labelNames.length) throw new Error(`${this.name}: ${values.length} label values for ${this.labelNames.length} labels`);
    const key = values.join('\u0000');
    let entry = this.children.get(key);
    if (!entry) this.children.set(key, (entry = { values, child: this.newChild() }));
    return entry.child;
  }

  /** Forgets every child (kube's Reset), for a vec refilled at each scrape. */
  reset(): void {
    this.children.clear();
  }

  protected labelsOf(values: readonly string[]): Record<string, string> {
    const labels: Record<string, string> = {};
    for (const i of this.sortedLabels) labels[this.labelNames[i]] = values[i];
    return labels;
  }

  protected abstract newChild(): Child;

  /** Called by the registry at scrape time. */
  abstract get(): Collected | Promise<Collected>;
}

export interface CounterChild {
  value: number;
}

export class CounterVec extends Vec<CounterChild> {
  readonly type = 'counter';

  protected newChild(): CounterChild {
    return { value: 0 };
  }

  get(): Collected {
    const values: Sample[] = [];
    for (const { values: lv, child } of this.children.values()) values.push({ labels: this.labelsOf(lv), value: child.value });
    return { name: this.name, help: this.help, type: this.type, values, aggregator: 'sum' };
  }
}

export interface GaugeChild {
  value: number;
}

export class GaugeVec extends Vec<GaugeChild> {
  readonly type = 'gauge';

  /** `collect` runs before each scrape: gauges read at scrape time set their children there. */
  constructor(
    opts: VecOptions,
    private readonly collect?: (vec: GaugeVec) => void | Promise<void>,
  ) {
    super(opts);
  }

  protected newChild(): GaugeChild {
    return { value: 0 };
  }

  async get(): Promise<Collected> {
    if (this.collect) await this.collect(this);
    const values: Sample[] = [];
    for (const { values: lv, child } of this.children.values()) values.push({ labels: this.labelsOf(lv), value: child.value });
    return { name: this.name, help: this.help, type: this.type, values, aggregator: 'sum' };
  }
}

export class HistogramChild {
  /** Observations per bucket (not cumulative: summed at scrape), the last one +Inf's own. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(v: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && v > bounds[i]) i++;
    this.counts[i]++;
    this.sum += v;
    this.count++;
  }
}

export class HistogramVec extends Vec<HistogramChild> {
  readonly type = 'histogram';
  private readonly les: string[];

  constructor(
    opts: VecOptions,
    readonly buckets: readonly number[],
  ) {
    super(opts);
    this.les = [...buckets.map(goFloat), '+Inf'];
  }

  protected newChild(): HistogramChild {
    return new HistogramChild(this.buckets);
  }

  get(): Collected {
    const values: Sample[] = [];
    const bucketName = `${this.name}_bucket`;
    for (const { values: lv, child } of this.children.values()) {
      const labels = this.labelsOf(lv);
      let cumulative = 0;
      for (let i = 0; i < this.les.length; i++) {
        cumulative += child.counts[i];
        values.push({ labels: { ...labels, le: this.les[i] }, value: cumulative, metricName: bucketName });
      }
      values.push({ labels, value: child.sum, metricName: `${this.name}_sum` });
      values.push({ labels, value: child.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: 'sum' };
  }
}

export interface SummaryChild {
  sum: number;
  count: number;
}

/** A summary without quantiles (component-base's SummaryOpts with no Objectives): its _sum and _count. */
export class SummaryVec extends Vec<SummaryChild> {
  readonly type = 'summary';

  protected newChild(): SummaryChild {
    return { sum: 0, count: 0 };
  }

  get(): Collected {
    const values: Sample[] = [];
    for (const { values: lv, child } of this.children.values()) {
      const labels = this.labelsOf(lv);
      values.push({ labels, value: child.sum, metricName: `${this.name}_sum` });
      values.push({ labels, value: child.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: 'sum' };
  }
}

/** prometheus.ExponentialBuckets(start, factor, count). */
export function exponentialBuckets(start: number, factor: number, count: number): number[] {
  const out: number[] = [];
  for (let i = 0, v = start; i < count; i++, v *= factor) out.push(v);
  return out;
}
