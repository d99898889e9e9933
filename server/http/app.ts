// The request's path, in one visible order (kube's DefaultBuildHandlerChain):
//   common response headers → metrics and the request log → Status errors → request info (and
//   its timeout parameter) → authentication → audit → impersonation → flow control →
//   authorization → routes
//   (health, version, discovery, OpenAPI) → resource handlers (→ admission → registry → storage).
import { randomUUID } from 'node:crypto';
import Koa from 'koa';
import Router from '@koa/router';
import type { ResourceCatalog } from '../schema/catalog.ts';
import type { TypeModel } from '../schema/model.ts';
import type { GenericStore } from '../registry/store.ts';
import { parseRequestInfo, queryOf, timeoutParamError } from './request-info.ts';
import type { HttpContext, RequestState } from './state.ts';
import { prettyPrint, setBody, statusErrors } from './respond.ts';
import { authenticationMiddleware, type Authenticator } from '../authentication/authenticator.ts';
import { impersonationMiddleware } from '../authentication/impersonation.ts';
import { authorizationMiddleware, type Authorizer } from '../authorization/authorizer.ts';
import { registerHealthRoutes, wildcard, type HealthCheck } from './health.ts';
import { Discovery, negotiateDiscovery } from './discovery.ts';
import { OpenApi } from './openapi.ts';
import { encodeOpenApiV2Document, openApiV2ProtobufContentType } from './openapi-v2-proto.ts';
import { resourceHandler, type TokenRequestConfig, type TokenReviewer } from './handlers/index.ts';
import { registerServiceAccountIssuerRoutes, type ServiceAccountIssuerDiscovery } from './service-account-issuer.ts';
import type { WatchHub } from '../registry/watch/index.ts';
import type { EventLog } from '../storage/log/event-log.ts';
import { registerAdminRoutes } from './admin.ts';
import { addWarnings } from './warnings.ts';
import { ApiError, badRequest, notAcceptable } from '../errors.ts';
import { goJsonText } from '../go/json.ts';
import { parseAccept, API_ACCEPT } from './negotiation.ts';
import type { MetricsRegistry } from '../metrics/registry.ts';
import type { FlowControlConfiguration } from '../flowcontrol/types.ts';
import { RequestMetrics } from '../metrics/requests.ts';
import { AuthenticationMetrics } from '../metrics/authentication.ts';
import { WatchMetrics } from '../metrics/watch.ts';
import { HealthcheckMetrics } from '../metrics/slis.ts';
import { registerMetricsRoute, requestMetrics, servedRoutes } from './metrics.ts';
import type { Logger } from '../logging/logger.ts';
import { requestLog, REQUEST_LOG_LEVEL } from './request-log.ts';
import type { Auditor } from '../audit/auditor.ts';
import { auditMiddleware, withFailedAuthenticationAudit } from './audit.ts';
import type { Dispatcher, FlowControl } from '../flowcontrol/dispatch/index.ts';

export interface AppDeps {
  log: EventLog;
  /** The server's Prometheus registry (served at /metrics). */
  metrics: MetricsRegistry;
  /** API Priority and Fairness' configuration and classification (absent when --enable-priority-and-fairness=false). */
  flowControlConfig?: FlowControlConfiguration;
  /** hearth's log (-v, --log-format): 500s' stacks, failed health checks, and at -v=2 one line per request. */
  logger?: Logger;
  /** The flow-control filter (APF's dispatcher, or the max-inflight limits) and APF's debug dumps. */
  flowControl?: FlowControl;
  catalog: ResourceCatalog;
  model: TypeModel;
  store: GenericStore;
  watch: WatchHub;
  authenticators: Authenticator[];
  authorizers: Authorizer[];
  anonymous: boolean;
  /** AuthenticationConfiguration's anonymous.conditions: the only paths anonymous requests may reach. */
  anonymousPaths?: readonly string[];
  /** What TokenReview authenticates tokens with. */
  tokenReviewer?: TokenReviewer;
  health: { livez: HealthCheck[]; readyz: HealthCheck[] };
  /** host:port clients reach this server at, for /api's serverAddressByClientCIDRs. */
  serverAddress: string;
  /** The TokenRequest API (serviceaccounts/token). */
  tokenRequest?: TokenRequestConfig;
  /** Service-account issuer discovery (/.well-known/openid-configuration, /openid/v1/jwks). */
  serviceAccountIssuer?: ServiceAccountIssuerDiscovery;
  /** --audit-policy-file's auditing (none: no audit filter at all). */
  auditor?: Auditor;
}

export function buildApp(deps: AppDeps): Koa<RequestState> {
  const app = new Koa<RequestState>();
  app.proxy = false;
  app.silent = true;

  // Headers kube-apiserver's filters put on every response: the request's audit ID (the one the
  // client sent, else a new one) and no caching unless a handler says otherwise.
  app.use((ctx, next) => {
    const auditId = ctx.get('audit-id') || randomUUID();
    ctx.state.auditId = auditId;
    ctx.res.setHeader('Audit-Id', auditId);
    ctx.res.setHeader('Cache-Control', 'no-cache, private');
    return next();
  });
  // [slot: metrics and the request log] one middleware around everything below, so it sees the
  // final status (Status errors included), the bytes sent and the whole latency.
  app.use(requestMetrics(new RequestMetrics(deps.metrics, servedRoutes(deps.catalog))));
  if (deps.logger?.enabled(REQUEST_LOG_LEVEL)) app.use(requestLog(deps.logger.named('httplog').v(REQUEST_LOG_LEVEL)));
  app.use(statusErrors(deps.logger));
  app.use((ctx, next) => {
    const info = parseRequestInfo(ctx.method, ctx.path, queryOf(ctx));
    ctx.state.requestInfo = info;
    const timeoutError = timeoutParamError(info, queryOf(ctx));
    if (timeoutError) throw badRequest(timeoutError);
    return next();
  });
  // (an authenticator's warnings: a legacy token from an auto-generated Secret)
  // (a request authentication refuses is audited there, as kube's WithFailedAuthenticationAudit)
  app.use(withFailedAuthenticationAudit(deps.auditor, authenticationMiddleware(deps.authenticators, { anonymous: deps.anonymous, anonymousPaths: deps.anonymousPaths, onWarnings: (ctx, warnings) => addWarnings(ctx as HttpContext, warnings), metrics: new AuthenticationMetrics(deps.metrics) })));
  // [slot: audit] after authentication, before impersonation, as kube's WithAudit: the event names
  // the real caller and, once impersonation has run, the impersonated user.
  if (deps.auditor) app.use(auditMiddleware(deps.auditor));
  // Impersonate-* headers: asked of the authorizers for the real caller, then the caller is replaced.
  app.use(impersonationMiddleware(deps.authorizers));
  // [slot: flow control] after impersonation, before authorization, as kube's WithPriorityAndFairness
  // (or WithMaxInFlightLimit when APF is off): flows are the impersonated users.
  if (deps.flowControl) app.use(deps.flowControl.middleware<HttpContext>(queryOf));
  app.use(authorizationMiddleware(deps.authorizers));

  // Resource requests go straight to their handler: no router route matches a resource path
  // (/api/V/... with three or more segments, /apis/G/V/... with four or more), and the handler
  // answers or throws, so the router and allowedMethods would only have passed them on.
  const resources = resourceHandler({ catalog: deps.catalog, store: deps.store, model: deps.model, watch: deps.watch, tokenReviewer: deps.tokenReviewer, tokenRequest: deps.tokenRequest, authorizers: deps.authorizers, watchMetrics: new WatchMetrics(deps.metrics) });
  app.use((ctx, next) => (ctx.state.requestInfo.isResourceRequest ? resources(ctx, next) : next()));

  const router = new Router<RequestState>();
  const healthchecks = new HealthcheckMetrics();
  registerHealthRoutes(router, deps.health, (name, endpoint, passed) => healthchecks.observe(name, endpoint, passed), deps.logger);
  registerVersionRoute(router, deps.catalog.kubernetesVersion);
  registerDiscoveryRoutes(router, deps);
  registerAdminRoutes(router, deps.log);
  registerMetricsRoute(router, deps.metrics, healthchecks.registry);
  if (deps.flowControl?.dispatcher) registerApfDebugRoutes(router, deps.flowControl.dispatcher);
  if (deps.serviceAccountIssuer) registerServiceAccountIssuerRoutes(router, deps.serviceAccountIssuer);
  app.use(router.routes());
  app.use(router.allowedMethods());

  app.use((ctx, next) => {
    if (ctx.status === 404 && ctx.body === undefined) throw new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
    return next();
  });
  return app;
}

/** APF's debug dumps (kube's apf_controller_debug.go): text columns, one row per level, queue, waiting request. */
function registerApfDebugRoutes(router: Router, dispatcher: Dispatcher): void {
  const text = (ctx: HttpContext, body: string) => {
    ctx.type = 'text/plain; charset=utf-8';
    ctx.body = body;
  };
  router.get('/debug/api_priority_and_fairness/dump_priority_levels', (ctx) => text(ctx, dispatcher.dumpPriorityLevels()));
  router.get('/debug/api_priority_and_fairness/dump_queues', (ctx) => text(ctx, dispatcher.dumpQueues()));
  router.get('/debug/api_priority_and_fairness/dump_requests', (ctx) => text(ctx, dispatcher.dumpRequests((queryOf(ctx).get('includeRequestDetails') ?? '').length > 0)));
}

function registerVersionRoute(router: Router, kubernetesVersion: string): void {
  const m = /^v(\d+)\.(\d+)\.(\d+)/.exec(kubernetesVersion);
  const body = {
    major: m?.[1] ?? '1',
    minor: m?.[2] ?? '0',
    emulationMajor: m?.[1] ?? '1',
    emulationMinor: m?.[2] ?? '0',
    minCompatibilityMajor: m?.[1] ?? '1',
    minCompatibilityMinor: String(Math.max(0, Number(m?.[2] ?? 1) - 1)),
    gitVersion: kubernetesVersion,
    gitCommit: 'hearth',
    gitTreeState: 'clean',
    buildDate: '2026-01-01T00:00:00Z',
    goVersion: `node${process.versions.node}`,
    compiler: 'hearth',
    platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
  };
  router.get(['/version', '/version/'], (ctx) => {
    ctx.type = 'application/json';
    ctx.body = JSON.stringify(body, null, 2) + '\n';
  });
}

function json(ctx: HttpContext, body: object | Buffer, contentType = 'application/json'): void {
  setBody(ctx, Buffer.isBuffer(body) ? body : Buffer.from(goJsonText(JSON.stringify(body))));
  ctx.set('Content-Type', contentType);
}

/** A discovery document: indented for the clients kube-apiserver indents for (prettyPrint). */
function discoveryJson(ctx: HttpContext, body: object | Buffer, contentType?: string): void {
  if (prettyPrint(ctx)) body = Buffer.from(goJsonText(JSON.stringify(Buffer.isBuffer(body) ? JSON.parse(body.toString()) : body, null, 2)) + '\n');
  json(ctx, body, contentType);
}

const JSON_RANGES: ReadonlySet<string> = new Set(['application/json', '*/*', 'application/*']);

/**
 * Whether an Accept header names JSON or a wildcard at all, whatever its q: the OpenAPI documents
 * have no other form (but v2's protobuf), and a client that accepts only others gets 406.
 */
function wantsJson(accept: string | undefined): boolean {
  if (!accept) return true;
  return parseAccept(accept, API_ACCEPT).some((r) => JSON_RANGES.has(r.mediaType));
}

function registerDiscoveryRoutes(router: Router, deps: AppDeps): void {
  const discovery = new Discovery(deps.catalog);
  const openapi = new OpenApi(deps.catalog, deps.model, deps.catalog.kubernetesVersion);

  const aggregatedOrLegacy = (which: 'api' | 'apis', legacy: () => object) => (ctx: HttpContext) => {
    const neg = negotiateDiscovery(ctx.get('accept'));
    if (!neg) throw notAcceptable('only the following media types are accepted: application/json, application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
    if (neg.form === 'legacy') return discoveryJson(ctx, legacy());
    const version = neg.form === 'aggregated-v2' ? 'v2' : 'v2beta1';
    const etag = discovery.etag(which);
    ctx.set('ETag', `"${etag}"`);
    ctx.set('Vary', 'Accept');
    if (ctx.get('if-none-match').replace(/"/g, '') === etag) {
      ctx.status = 304;
      return;
    }
    discoveryJson(ctx, discovery.aggregatedBody(which, version), neg.contentType);
  };
  router.get(['/api', '/api/'], aggregatedOrLegacy('api', () => discovery.apiVersions(deps.serverAddress)));
  router.get(['/apis', '/apis/'], aggregatedOrLegacy('apis', () => discovery.apiGroupList()));
  router.get('/api/:version', (ctx) => {
    const list = discovery.apiResourceList('', ctx.params.version);
    if (!list) throw new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
    discoveryJson(ctx, list);
  });
  router.get('/apis/:group', (ctx) => {
    const g = discovery.apiGroup(ctx.params.group);
    if (!g) throw new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
    discoveryJson(ctx, g);
  });
  router.get('/apis/:group/:version', (ctx) => {
    const list = discovery.apiResourceList(ctx.params.group, ctx.params.version);
    if (!list) throw new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
    discoveryJson(ctx, list);
  });

  // Protobuf (gnostic openapi.v2.Document) for client-go's OpenAPISchema(), JSON otherwise; encoded once per document.
  let v2Proto: { etag: string; body: Buffer } | undefined;
  router.get('/openapi/v2', (ctx) => {
    const accept = ctx.get('accept');
    const protoType = openApiV2ProtobufContentType(accept);
    if (!protoType && !wantsJson(accept)) throw notAcceptable('only the following media types are accepted: application/json, application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
    const { body, etag } = openapi.v2();
    ctx.set('ETag', `"${etag}"`);
    ctx.set('Vary', 'Accept');
    if (ctx.get('if-none-match').replace(/"/g, '') === etag) {
      ctx.status = 304;
      return;
    }
    if (protoType) {
      if (v2Proto?.etag !== etag) v2Proto = { etag, body: encodeOpenApiV2Document(JSON.parse(body.toString('utf8'))) };
      setBody(ctx, v2Proto.body);
      ctx.set('Content-Type', protoType);
      return;
    }
    json(ctx, body);
  });
  router.get('/openapi/v3', (ctx) => json(ctx, openapi.v3Index()));
  router.get('/openapi/v3/*path', (ctx) => {
    if (!wantsJson(ctx.get('accept'))) throw notAcceptable('only the following media types are accepted: application/json');
    const doc = openapi.v3(wildcard(ctx.params.path));
    if (!doc) throw new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
    ctx.set('ETag', `"${doc.etag}"`);
    const hash = queryOf(ctx).get('hash');
    // A hashed URL names immutable content: clients may cache it for good.
    ctx.set('Cache-Control', hash === doc.etag ? 'public, immutable' : 'no-cache, private');
    if (ctx.get('if-none-match').replace(/"/g, '') === doc.etag) {
      ctx.status = 304;
      return;
    }
    json(ctx, doc.body);
  });
}
