// kube-apiserver's request metrics (k8s.io/apiserver/pkg/endpoints/metrics/metrics.go):
// apiserver_request_total, apiserver_request_duration_seconds, apiserver_response_sizes,
// apiserver_longrunning_requests and apiserver_current_inflight_requests, with kube's names, help,
// buckets and label values (MonitorRequest, RecordLongRunning, CleanScope, CanonicalVerb,
// CleanVerb, cleanDryRun, UpdateInflightRequestMetrics).
//
// Cardinality is bounded as kube bounds it: verbs are kube's valid request methods (any other is
// "other"); scope is one of resource/namespace/cluster/""; dry_run is "", "All" or "invalid";
// group/version/resource come from the caller's resource catalog (a resource the server does not
// serve is never counted: kube instruments only installed routes) and subresource only when the
// resource has it; codes are HTTP codes. Non-resource requests are labelled by their path, as
// kube labels them (subresource=path), which the caller bounds to the routes it serves.
//
// Hot path: the series of a request is found through nested maps keyed by strings the request
// already holds (group, version, resource, subresource) and small integers (verb, scope, code),
// so a request builds no label string; counting is a field update (vec.ts).
import { CounterVec, GaugeVec, HistogramVec, exponentialBuckets, type CounterChild, type GaugeChild, type HistogramChild } from './vec.ts';
import type { MetricsRegistry } from './registry.ts';

export const APISERVER_COMPONENT = 'apiserver';

/** requestLatencies' buckets (the SLO buckets). */
const DURATION_BUCKETS = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];
/** responseSizes' buckets: 1 KB to 1 GB. */
const SIZE_BUCKETS = exponentialBuckets(1000, 10, 7);

/** kube's validRequestMethods; anything else is reported as "other". */
const VERBS = ['APPLY', 'CONNECT', 'CREATE', 'DELETE', 'DELETECOLLECTION', 'GET', 'LIST', 'PATCH', 'POST', 'PROXY', 'PUT', 'UPDATE', 'WATCH', 'WATCHLIST', 'other'] as const;
export type ReportedVerb = (typeof VERBS)[number];
const VERB_INDEX = new Map<string, number>(VERBS.map((v, i) => [v, i]));
const OTHER_VERB = VERB_INDEX.get('other')!;

const SCOPES = ['resource', 'namespace', 'cluster', ''] as const;

/** The subresources kube reports as CONNECT (validConnectRequests). */
const CONNECT_SUBRESOURCES: ReadonlySet<string> = new Set(['log', 'exec', 'portforward', 'attach', 'proxy']);

const APPLY_PATCH_TYPE = 'application/apply-patch+yaml';

/** What the metrics read of a request's RequestInfo (http/request-info.ts has these fields). */
export interface MeteredRequest {
  isResourceRequest: boolean;
  /** RequestInfo's verb (create, get, list, watch...). */
  verb: string;
  namespace: string;
  name: string;
  apiGroup: string;
  apiVersion: string;
  resource: string;
}

/**
 * The rest of what MonitorRequest reads: the HTTP method (upper case), the raw query string
 * (watch, dryRun), the Content-Type (APPLY), and the subresource label: the request's served
 * subresource, or a non-resource request's path.
 */
export interface RequestFacts {
  method: string;
  querystring: string;
  contentType: string;
  subresource: string;
}

/** CleanScope. */
export function cleanScope(r: MeteredRequest): (typeof SCOPES)[number] {
  if (r.name !== '' || r.verb === 'create') return 'resource';
  if (r.namespace !== '') return 'namespace';
  if (r.isResourceRequest) return 'cluster';
  return '';
}

/** The verb kube reports: CanonicalVerb (GET of a collection is LIST), then cleanVerb (WATCH, APPLY, CONNECT, other). */
export function reportedVerb(r: MeteredRequest, f: RequestFacts): ReportedVerb {
  return VERBS[reportedVerbIndex(r, f, cleanScope(r))];
}

function reportedVerbIndex(r: MeteredRequest, f: RequestFacts, scope: string): number {
  const method = f.method;
  // The deprecated /watch/ paths: the installer's verb (WATCH/WATCHLIST) wins.
  if (r.verb === 'watch') return VERB_INDEX.get('WATCH')!;
  let verb = method;
  if ((method === 'GET' || method === 'HEAD') && scope !== 'resource' && scope !== '') verb = 'LIST';
  if (method === 'GET' && watchParam(f.querystring)) verb = 'WATCH';
  else if (method === 'PATCH' && f.contentType === APPLY_PATCH_TYPE) verb = 'APPLY';
  if (r.isResourceRequest && f.subresource !== '' && CONNECT_SUBRESOURCES.has(f.subresource)) verb = 'CONNECT';
  return VERB_INDEX.get(verb) ?? OTHER_VERB;
}

/** getVerbIfWatch: the first `watch` parameter, unless "0" or "false" (any case). */
function watchParam(q: string): boolean {
  if (!q.includes('watch')) return false;
  const v = new URLSearchParams(q).get('watch');
  if (v === null) return false;
  const lower = v.toLowerCase();
  return lower !== '0' && lower !== 'false';
}

/** cleanDryRun: "" without dryRun, "invalid" for a value other than All, else the sorted distinct values. */
export function cleanDryRun(q: string): string {
  if (!q.includes('dryRun')) return '';
  const values = new URLSearchParams(q).getAll('dryRun');
  if (values.length === 0) return '';
  if (values.some((v) => v !== 'All')) return 'invalid';
  return 'All';
}

/** Where a response's size is read (koa's response: its Content-Length), only when it is kept. */
export interface ResponseLength {
  readonly length: number | undefined;
}

/** The series of one (route, verb, scope, dry run): children for each metric, counters by code. */
class Series {
  readonly byCode = new Map<number, CounterChild>();
  constructor(
    readonly labels: string[],
    readonly duration: HistogramChild,
    readonly size: HistogramChild | undefined,
  ) {}
}

/** kube's requestKind of the inflight gauges. */
export type InflightKind = 'readOnly' | 'mutating';

export class RequestMetrics {
  private readonly requestTotal: CounterVec;
  private readonly requestDuration: HistogramVec;
  private readonly responseSizes: HistogramVec;
  private readonly longRunning: GaugeVec;
  private readonly inflight: GaugeVec;
  /** group → version → resource → subresource → verb*SCOPES+scope → Series (dry runs aside). */
  private readonly series = new Map<string, Map<string, Map<string, Map<string, Series[]>>>>();
  /** Series of dry runs (rare), by their joined labels. */
  private readonly dryRunSeries = new Map<string, Series>();
  /** Executing requests now, and the most since the last scrape (kube reports the last second's maximum). */
  private readonly executing = { readOnly: 0, mutating: 0 };
  private readonly watermark = { readOnly: 0, mutating: 0 };

  /**
   * `admits(request, facts, code)`: whether a route not seen yet gets series. Labels are bounded
   * by it: kube counts only requests its installed routes served.
   */
  constructor(
    registry: MetricsRegistry,
    private readonly admits: (r: MeteredRequest, f: RequestFacts, code: number) => boolean = () => true,
  ) {
    this.requestTotal = new CounterVec({
      name: 'apiserver_request_total',
      help: 'Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.',
      stability: 'STABLE',
      labelNames: ['verb', 'dry_run', 'group', 'version', 'resource', 'subresource', 'scope', 'component', 'code'],
    }).register(registry);
    this.requestDuration = new HistogramVec(
      {
        name: 'apiserver_request_duration_seconds',
        help: 'Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.',
        stability: 'STABLE',
        labelNames: ['verb', 'dry_run', 'group', 'version', 'resource', 'subresource', 'scope', 'component'],
      },
      DURATION_BUCKETS,
    ).register(registry);
    this.responseSizes = new HistogramVec(
      {
        name: 'apiserver_response_sizes',
        help: 'Response size distribution in bytes for each group, version, verb, resource, subresource, scope and component.',
        stability: 'STABLE',
        labelNames: ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'component'],
      },
      SIZE_BUCKETS,
    ).register(registry);
    this.longRunning = new GaugeVec({
      name: 'apiserver_longrunning_requests',
      help: 'Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.',
      stability: 'STABLE',
      labelNames: ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'component'],
    }).register(registry);
    const readOnly = { child: undefined as GaugeChild | undefined };
    const mutating = { child: undefined as GaugeChild | undefined };
    this.inflight = new GaugeVec(
      {
        name: 'apiserver_current_inflight_requests',
        help: 'Maximal number of currently used inflight request limit of this apiserver per request kind in last second.',
        stability: 'STABLE',
        labelNames: ['request_kind'],
      },
      (vec) => {
        readOnly.child ??= vec.with('readOnly');
        mutating.child ??= vec.with('mutating');
        readOnly.child.value = Math.max(this.watermark.readOnly, this.executing.readOnly);
        mutating.child.value = Math.max(this.watermark.mutating, this.executing.mutating);
        this.watermark.readOnly = this.executing.readOnly;
        this.watermark.mutating = this.executing.mutating;
      },
    ).register(registry);
  }

  /** A request starts executing (kube's max-inflight accounting: long-running requests once they are initialised leave it). */
  started(kind: InflightKind): void {
    const n = ++this.executing[kind];
    if (n > this.watermark[kind]) this.watermark[kind] = n;
  }

  finished(kind: InflightKind): void {
    this.executing[kind]--;
  }

  /**
   * MonitorRequest: one finished request (a watch when it ends). `admits` says whether a route
   * the metrics have not seen yet gets series (the caller's bound: its catalog, its routes); it
   * is asked once per new (route, verb, scope), not per request.
   */
  observe(r: MeteredRequest, f: RequestFacts, code: number, response: number | ResponseLength, seconds: number): void {
    const s = this.seriesOf(r, f, code);
    if (!s) return;
    let counter = s.byCode.get(code);
    if (!counter) s.byCode.set(code, (counter = this.requestTotal.with(...s.labels, String(code))));
    counter.value++;
    s.duration.observe(seconds);
    // (the size is read only for the reads whose sizes are kept)
    if (s.size) s.size.observe(typeof response === 'number' ? response : (response.length ?? 0));
  }

  /** RecordLongRunning: the gauge of this long-running request (a watch), to increment now and decrement when it ends; undefined when its route is not admitted. */
  longRunningGauge(r: MeteredRequest, f: RequestFacts, code: number): GaugeChild | undefined {
    if (!this.seriesOf(r, f, code)) return undefined;
    const scope = cleanScope(r);
    const verb = VERBS[reportedVerbIndex(r, f, scope)];
    return this.longRunning.with(verb, r.apiGroup, r.apiVersion, r.resource, f.subresource, scope, APISERVER_COMPONENT);
  }

  private seriesOf(r: MeteredRequest, f: RequestFacts, code: number): Series | undefined {
    const scope = cleanScope(r);
    const verbIndex = reportedVerbIndex(r, f, scope);
    const dryRun = cleanDryRun(f.querystring);
    if (dryRun !== '') {
      const key = [VERBS[verbIndex], dryRun, r.apiGroup, r.apiVersion, r.resource, f.subresource, scope].join('\u0000');
      let s = this.dryRunSeries.get(key);
      if (!s) {
        if (!this.admits(r, f, code)) return undefined;
        this.dryRunSeries.set(key, (s = this.newSeries(VERBS[verbIndex], dryRun, r, f.subresource, scope)));
      }
      return s;
    }
    const slot = verbIndex * SCOPES.length + SCOPES.indexOf(scope);
    const known = this.series.get(r.apiGroup)?.get(r.apiVersion)?.get(r.resource)?.get(f.subresource)?.[slot];
    if (known) return known;
    // A new series: only for a route the caller admits (no map is made for one it does not).
    if (!this.admits(r, f, code)) return undefined;
    let byVersion = this.series.get(r.apiGroup);
    if (!byVersion) this.series.set(r.apiGroup, (byVersion = new Map()));
    let byResource = byVersion.get(r.apiVersion);
    if (!byResource) byVersion.set(r.apiVersion, (byResource = new Map()));
    let bySubresource = byResource.get(r.resource);
    if (!bySubresource) byResource.set(r.resource, (bySubresource = new Map()));
    let slots = bySubresource.get(f.subresource);
    if (!slots) bySubresource.set(f.subresource, (slots = []));
    return (slots[slot] = this.newSeries(VERBS[verbIndex], '', r, f.subresource, scope));
  }

  private newSeries(verb: string, dryRun: string, r: MeteredRequest, subresource: string, scope: string): Series {
    const labels = [verb, dryRun, r.apiGroup, r.apiVersion, r.resource, subresource, scope, APISERVER_COMPONENT];
    const duration = this.requestDuration.with(...labels);
    // "We are only interested in response sizes of read requests."
    const size = verb === 'GET' || verb === 'LIST' ? this.responseSizes.with(verb, r.apiGroup, r.apiVersion, r.resource, subresource, scope, APISERVER_COMPONENT) : undefined;
    return new Series(labels, duration, size);
  }
}
