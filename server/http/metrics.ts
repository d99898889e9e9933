// The HTTP side of kube-apiserver's metrics: GET /metrics (the server's Prometheus registry in
// text format 0.0.4, a non-resource URL that RBAC's system:monitoring role grants), and the one
// middleware that measures every request (k8s.io/apiserver/pkg/endpoints/metrics: MonitorRequest
// when a request ends, RecordLongRunning while a watch is open, the max-inflight gauges).
//
// The middleware sits above the Status errors (app.ts), so it sees the final code of every
// request, refusals by authentication (401) and authorization (403) included. Labels are bounded
// as kube's installed routes bound them: a resource request is counted only when the catalog
// serves its group/version/resource (and subresource); a non-resource request by its path only
// when a route answered it (not 404) or the path is one of the fixed ones the server serves.
import type Router from '@koa/router';
import type { ResourceCatalog } from '../schema/catalog.ts';
import type { MetricsRegistry } from '../metrics/registry.ts';
import type { InflightKind, MeteredRequest, RequestFacts, RequestMetrics } from '../metrics/requests.ts';
import type { HttpContext, HttpMiddleware, RequestState } from './state.ts';

/** Non-resource paths the server always serves, counted whatever their answer (a 401 or 403 included). */
const FIXED_PATHS: ReadonlySet<string> = new Set(['/metrics', '/metrics/slis', '/healthz', '/livez', '/readyz', '/version', '/api', '/apis', '/openapi/v2', '/openapi/v3', '/.well-known/openid-configuration', '/openid/v1/jwks']);
/** At most this many distinct non-resource paths get series (routes with parameters answer many). */
const MAX_NON_RESOURCE_PATHS = 256;

/** GET /metrics: the registry as Prometheus text; GET /metrics/slis: the health checks' (their own registry). */
export function registerMetricsRoute(router: Router<RequestState>, registry: MetricsRegistry, slis: MetricsRegistry): void {
  for (const [path, r] of [
    ['/metrics', registry],
    ['/metrics/slis', slis],
  ] as const) {
    router.get(path, async (ctx) => {
      const text = await r.metrics();
      ctx.set('Content-Type', r.contentType);
      ctx.body = text;
    });
  }
}

/**
 * The routes whose requests get series (RequestMetrics asks once per new route, verb and
 * scope): resources the catalog serves (and their served subresources), and non-resource paths
 * that are fixed or that a route answered (not 404, nor refused before routing), up to a cap.
 */
export function servedRoutes(catalog: ResourceCatalog): (r: MeteredRequest, f: RequestFacts, code: number) => boolean {
  let nonResourcePaths = 0;
  return (r, f, code) => {
    if (r.isResourceRequest) {
      const info = catalog.lookup(r.apiGroup, r.apiVersion, r.resource);
      return !!info && (f.subresource === '' || !!info.subresources?.[f.subresource]);
    }
    if (FIXED_PATHS.has(f.subresource)) return true;
    if (code === 404 || code === 401 || code === 403 || code >= 500 || nonResourcePaths >= MAX_NON_RESOURCE_PATHS) return false;
    nonResourcePaths++;
    return true;
  };
}

/** The request metrics middleware: first under app.ts's `[slot: metrics and the request log]`. */
export function requestMetrics(metrics: RequestMetrics): HttpMiddleware {
  const finish = (ctx: HttpContext, start: number, kind: InflightKind, failed: boolean): void => {
    metrics.finished(kind);
    const ri = ctx.state.requestInfo ?? unparsed(ctx);
    // (an error past the Status errors is koa's 500)
    const status = failed ? 500 : ctx.respond === false ? ctx.res.statusCode : ctx.status;
    const facts: RequestFacts = { method: ctx.method, querystring: ctx.querystring, contentType: ctx.method === 'PATCH' ? ctx.get('content-type') : '', subresource: ri.isResourceRequest ? ri.subresource : ri.path };
    if (ctx.respond === false && ri.verb === 'watch') {
      // A watch streams on after the chain returned: open now, counted when it ends (kube's
      // RecordLongRunning around the handler, MonitorRequest after it).
      const open = metrics.longRunningGauge(ri, facts, status);
      if (!open) return;
      open.value++;
      ctx.res.once('close', () => {
        open.value--;
        metrics.observe(ri, facts, ctx.res.statusCode, 0, (performance.now() - start) / 1000);
      });
      return;
    }
    metrics.observe(ri, facts, status, failed ? 0 : ctx.response, (performance.now() - start) / 1000);
  };

  return (ctx, next) => {
    const start = performance.now();
    // kube's max-inflight kinds: get, list and watch are read-only, every other verb mutating.
    const kind: InflightKind = ctx.method === 'GET' || ctx.method === 'HEAD' ? 'readOnly' : 'mutating';
    metrics.started(kind);
    return next().then(
      () => finish(ctx, start, kind, false),
      (e: unknown) => {
        finish(ctx, start, kind, true);
        throw e;
      },
    );
  };
}

/** A request whose path could not be parsed into a RequestInfo (a malformed escape: 400): a non-resource request. */
function unparsed(ctx: HttpContext): MeteredRequest & { subresource: string; path: string } {
  return { isResourceRequest: false, verb: ctx.method.toLowerCase(), namespace: '', name: '', apiGroup: '', apiVersion: '', resource: '', subresource: '', path: ctx.path };
}
