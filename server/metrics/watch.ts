// kube-apiserver's watch event metrics (k8s.io/apiserver/pkg/endpoints/metrics/metrics.go:
// WatchEvents, WatchEventsSizes; recorded per event written to each watcher): 1.36's labels are
// group, version and resource, the resource's as the watch was asked for (bounded by the
// catalog: a watch is only served for a resource it has). Sizes in kube's 1 KiB..128 KiB buckets.
import { CounterVec, HistogramVec, exponentialBuckets, type CounterChild, type HistogramChild } from './vec.ts';
import type { MetricsRegistry } from './registry.ts';

/** One watched resource's children: a watcher keeps it for its life. */
export interface WatchEventMeter {
  readonly events: CounterChild;
  readonly sizes: HistogramChild;
}

export class WatchMetrics {
  private readonly events: CounterVec;
  private readonly sizes: HistogramVec;
  private readonly meters = new Map<string, WatchEventMeter>();

  constructor(registry: MetricsRegistry) {
    this.events = new CounterVec({ name: 'apiserver_watch_events_total', help: 'Number of events sent in watch clients', stability: 'ALPHA', labelNames: ['group', 'version', 'resource'] }).register(registry);
    this.sizes = new HistogramVec({ name: 'apiserver_watch_events_sizes', help: 'Watch event size distribution in bytes', stability: 'ALPHA', labelNames: ['group', 'version', 'resource'] }, exponentialBuckets(1024, 2, 8)).register(registry);
  }

  /** The meter of a resource's watch events (looked up once per watch). */
  meter(group: string, version: string, resource: string): WatchEventMeter {
    const key = `${group}/${version}/${resource}`;
    let m = this.meters.get(key);
    if (!m) this.meters.set(key, (m = { events: this.events.with(group, version, resource), sizes: this.sizes.with(group, version, resource) }));
    return m;
  }
}

/** Counts one event of `bytes` on a meter. */
export function countWatchEvent(meter: WatchEventMeter, bytes: number): void {
  meter.events.value++;
  meter.sizes.observe(bytes);
}
