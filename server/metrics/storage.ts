// Storage metrics: kube-apiserver's (k8s.io/apiserver/pkg/storage/etcd3/metrics/metrics.go:
// apiserver_storage_objects{resource} with GroupResource.String()'s `<resource>.<group>`,
// apiserver_resource_objects{group,resource}, apiserver_storage_size_bytes{storage_cluster_id})
// and hearth's own under `hearth_`: writes per committed transaction, the commit's duration with
// its fsync, compaction and vacuum durations, event-log rows and the WAL's size.
//
// Object counts, rows and sizes are read at scrape time (a GROUP BY over the objects' primary key,
// a count of the event log, two stat calls), never on a request's path. Cardinality: one series
// per stored resource. storage_cluster_id is kube's id of the first storage backend ("etcd-0"),
// so that dashboards and alerts written for kube-apiserver read hearth's one SQLite file too.
import { GaugeVec, HistogramVec, exponentialBuckets, type HistogramChild } from './vec.ts';
import type { MetricsRegistry } from './registry.ts';

/** What the store holds, read at scrape time (storage/sqlite/stats.ts has one). */
export interface StoreStats {
  objectCounts(): Map<string, number>;
  eventRows(): number;
  fileBytes(): number;
  walBytes(): number;
}

/** kube's storage_cluster_id of its first (here: only) storage backend. */
const STORAGE_CLUSTER_ID = 'etcd-0';

/** kube's request-latency buckets, for the commit (an fsync is milliseconds; a slow disk, seconds). */
const LATENCY_BUCKETS = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];
/** Compaction and vacuum run in slices between batches: seconds to minutes on a big log. */
const LONG_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

/** Implements storage/log's EventLogMetrics (by shape: storage imports nothing of metrics/). */
export class StorageMetrics {
  private readonly batchSize: HistogramChild;
  private readonly commitDuration: HistogramChild;
  private readonly compactionDuration: HistogramChild;
  private readonly vacuumDuration: HistogramChild;
  private stats: StoreStats | undefined;

  constructor(registry: MetricsRegistry) {
    this.batchSize = new HistogramVec({ name: 'hearth_storage_commit_batch_size', help: 'Writes committed in one SQLite transaction (a batch of the event log).', stability: 'ALPHA', labelNames: [] }, exponentialBuckets(1, 2, 12))
      .register(registry)
      .with();
    this.commitDuration = new HistogramVec({ name: 'hearth_storage_commit_duration_seconds', help: "Time the writer thread took to commit a batch of writes, the WAL's fsync included.", stability: 'ALPHA', labelNames: [] }, LATENCY_BUCKETS)
      .register(registry)
      .with();
    this.compactionDuration = new HistogramVec({ name: 'hearth_storage_compaction_duration_seconds', help: "Time a compaction of the event log took to remove the history it covers (its slices and the waits between them).", stability: 'ALPHA', labelNames: [] }, LONG_BUCKETS)
      .register(registry)
      .with();
    this.vacuumDuration = new HistogramVec({ name: 'hearth_storage_vacuum_duration_seconds', help: 'Time the vacuum after a compaction took to give freed pages back to the filesystem.', stability: 'ALPHA', labelNames: [] }, LONG_BUCKETS)
      .register(registry)
      .with();
    new GaugeVec({ name: 'apiserver_storage_objects', help: 'Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.', stability: 'STABLE', labelNames: ['resource'] }, (vec) => {
      vec.reset();
      for (const [res, n] of this.objectCounts(true)) vec.with(res).value = n;
    }).register(registry);
    new GaugeVec({ name: 'apiserver_resource_objects', help: 'Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.', stability: 'ALPHA', labelNames: ['group', 'resource'] }, (vec) => {
      vec.reset();
      for (const [res, n] of this.objectCounts()) {
        const dot = res.indexOf('.');
        vec.with(dot < 0 ? '' : res.slice(dot + 1), dot < 0 ? res : res.slice(0, dot)).value = n;
      }
    }).register(registry);
    new GaugeVec({ name: 'apiserver_storage_size_bytes', help: 'Size of the storage database file physically allocated in bytes.', stability: 'STABLE', labelNames: ['storage_cluster_id'] }, (vec) => {
      if (this.stats) vec.with(STORAGE_CLUSTER_ID).value = this.stats.fileBytes() + this.stats.walBytes();
    }).register(registry);
    new GaugeVec({ name: 'hearth_storage_event_log_rows', help: 'Rows in the event log: the history not yet compacted.', stability: 'ALPHA', labelNames: [] }, (vec) => {
      if (this.stats) vec.with().value = this.stats.eventRows();
    }).register(registry);
    new GaugeVec({ name: 'hearth_storage_wal_size_bytes', help: "Size of the SQLite write-ahead log (hearth.db-wal) in bytes.", stability: 'ALPHA', labelNames: [] }, (vec) => {
      if (this.stats) vec.with().value = this.stats.walBytes();
    }).register(registry);
  }

  /** Where scrape-time gauges read the store (set once the database is open). */
  readFrom(stats: StoreStats): void {
    this.stats = stats;
  }

  /** Counts per resource of the scrape under way: read by apiserver_storage_objects, reused by apiserver_resource_objects (collected after it). */
  private lastCounts: Map<string, number> | undefined;
  private objectCounts(fresh = false): Map<string, number> {
    if (!this.stats) return new Map();
    if (fresh || !this.lastCounts) this.lastCounts = this.stats.objectCounts();
    return this.lastCounts;
  }

  committed(writes: number, commitSeconds: number | undefined): void {
    this.batchSize.observe(writes);
    if (commitSeconds !== undefined) this.commitDuration.observe(commitSeconds);
  }

  compacted(compactionSeconds: number, vacuumSeconds: number): void {
    this.compactionDuration.observe(compactionSeconds);
    this.vacuumDuration.observe(vacuumSeconds);
  }
}
