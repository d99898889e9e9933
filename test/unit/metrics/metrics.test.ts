// Unit tests of server/metrics/: kube's label rules (CleanScope, CanonicalVerb + cleanVerb,
// cleanDryRun, compressUsername) and the text the vecs write (Go's label order, bounds as Go
// prints them, cumulative buckets), checked against what kube-apiserver reports.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cleanDryRun, cleanScope, reportedVerb, RequestMetrics, type MeteredRequest, type RequestFacts } from '../../../server/metrics/requests.ts';
import type Koa from 'koa';
import { AuthenticationMetrics, compressUsername } from '../../../server/metrics/authentication.ts';
import { authenticationMiddleware, type AuthResult } from '../../../server/authentication/authenticator.ts';
import type { AuthenticatedState } from '../../../server/authentication/user.ts';
import { ApiError } from '../../../server/errors.ts';
import { CounterVec, HistogramVec, exponentialBuckets } from '../../../server/metrics/vec.ts';
import { newMetricsRegistry } from '../../../server/metrics/registry.ts';

const request = (o: Partial<MeteredRequest> = {}): MeteredRequest => ({ isResourceRequest: true, verb: 'get', namespace: 'ns', name: '', apiGroup: '', apiVersion: 'v1', resource: 'pods', ...o });
const facts = (o: Partial<RequestFacts> = {}): RequestFacts => ({ method: 'GET', querystring: '', contentType: '', subresource: '', ...o });

test("CleanScope: a name or a create is resource scope, else a namespace's, else the cluster's; non-resource requests none", () => {
  assert.equal(cleanScope(request({ name: 'p' })), 'resource');
  assert.equal(cleanScope(request({ verb: 'create' })), 'resource');
  assert.equal(cleanScope(request({ verb: 'list' })), 'namespace');
  assert.equal(cleanScope(request({ verb: 'list', namespace: '' })), 'cluster');
  assert.equal(cleanScope(request({ isResourceRequest: false, verb: 'get', namespace: '' })), '');
});

test('the reported verb: LIST, WATCH, APPLY, CONNECT, the HTTP method for writes, other for the rest', () => {
  assert.equal(reportedVerb(request({ name: 'p' }), facts()), 'GET');
  assert.equal(reportedVerb(request({ verb: 'list' }), facts()), 'LIST');
  assert.equal(reportedVerb(request({ verb: 'watch' }), facts({ querystring: 'watch=1' })), 'WATCH');
  assert.equal(reportedVerb(request({ verb: 'list' }), facts({ querystring: 'watch=false' })), 'LIST');
  assert.equal(reportedVerb(request({ verb: 'list' }), facts({ querystring: 'watch=0' })), 'LIST');
  // A named GET with ?watch=1 is a get to RequestInfo, a WATCH to the metrics (getVerbIfWatch).
  assert.equal(reportedVerb(request({ name: 'p' }), facts({ querystring: 'watch=true' })), 'WATCH');
  // The /watch/ prefix: RequestInfo's watch.
  assert.equal(reportedVerb(request({ verb: 'watch', name: 'p' }), facts()), 'WATCH');
  assert.equal(reportedVerb(request({ verb: 'create' }), facts({ method: 'POST' })), 'POST');
  assert.equal(reportedVerb(request({ verb: 'update', name: 'p' }), facts({ method: 'PUT' })), 'PUT');
  assert.equal(reportedVerb(request({ verb: 'deletecollection' }), facts({ method: 'DELETE' })), 'DELETE');
  assert.equal(reportedVerb(request({ verb: 'patch', name: 'p' }), facts({ method: 'PATCH', contentType: 'application/merge-patch+json' })), 'PATCH');
  assert.equal(reportedVerb(request({ verb: 'patch', name: 'p' }), facts({ method: 'PATCH', contentType: 'application/apply-patch+yaml' })), 'APPLY');
  assert.equal(reportedVerb(request({ verb: 'create', name: 'p' }), facts({ method: 'POST', subresource: 'exec' })), 'CONNECT');
  assert.equal(reportedVerb(request({ verb: 'get', name: 'p' }), facts({ subresource: 'log' })), 'CONNECT');
  assert.equal(reportedVerb(request({ verb: 'options', name: 'p' }), facts({ method: 'OPTIONS' })), 'other');
  assert.equal(reportedVerb(request({ isResourceRequest: false, verb: 'get', namespace: '' }), facts({ subresource: '/healthz' })), 'GET');
  assert.equal(reportedVerb(request({ isResourceRequest: false, verb: 'post', namespace: '' }), facts({ method: 'POST', subresource: '/admin/compact' })), 'POST');
});

test('cleanDryRun: "" without it, All, invalid for any other value', () => {
  assert.equal(cleanDryRun(''), '');
  assert.equal(cleanDryRun('fieldManager=x'), '');
  assert.equal(cleanDryRun('dryRun=All'), 'All');
  assert.equal(cleanDryRun('dryRun=All&dryRun=All'), 'All');
  assert.equal(cleanDryRun('dryRun=Server'), 'invalid');
  assert.equal(cleanDryRun('dryRun=All&dryRun=x'), 'invalid');
});

test('compressUsername: known identities as they are, e-mail addresses as email_id, the rest other', () => {
  for (const name of ['admin', 'client', 'kube_proxy', 'kubelet', 'system:serviceaccount:kube-system:default']) assert.equal(compressUsername(name), name);
  assert.equal(compressUsername('jane@example.com'), 'email_id');
  assert.equal(compressUsername('kubernetes-admin'), 'other');
  assert.equal(compressUsername('system:anonymous'), 'other');
  assert.equal(compressUsername('system:serviceaccount:default:default'), 'other');
});

test('vecs write labels in name order (le last), bounds as Go prints them, buckets cumulative', async () => {
  const registry = newMetricsRegistry();
  const c = new CounterVec({ name: 'x_total', help: 'Things.', stability: 'ALPHA', labelNames: ['zeta', 'alpha'] }).register(registry);
  c.with('z', 'a').value += 2;
  const h = new HistogramVec({ name: 'x_sizes', help: 'Sizes.', stability: 'STABLE', labelNames: ['verb'] }, exponentialBuckets(1000, 10, 7)).register(registry);
  const child = h.with('GET');
  child.observe(500);
  child.observe(5000);
  child.observe(2e9);
  const text = await registry.getSingleMetricAsString('x_total');
  assert.equal(text, '# HELP x_total [ALPHA] Things.\n# TYPE x_total counter\nx_total{alpha="a",zeta="z"} 2');
  const lines = (await registry.getSingleMetricAsString('x_sizes')).split('\n');
  assert.deepEqual(lines, [
    '# HELP x_sizes [STABLE] Sizes.',
    '# TYPE x_sizes histogram',
    'x_sizes_bucket{verb="GET",le="1000"} 1',
    'x_sizes_bucket{verb="GET",le="10000"} 2',
    'x_sizes_bucket{verb="GET",le="100000"} 2',
    'x_sizes_bucket{verb="GET",le="1e+06"} 2',
    'x_sizes_bucket{verb="GET",le="1e+07"} 2',
    'x_sizes_bucket{verb="GET",le="1e+08"} 2',
    'x_sizes_bucket{verb="GET",le="1e+09"} 2',
    'x_sizes_bucket{verb="GET",le="+Inf"} 3',
    'x_sizes_sum{verb="GET"} 2000005500',
    'x_sizes_count{verb="GET"} 3',
  ]);
});

test('RequestMetrics asks whether a route is served once per new series, and counts nothing for one that is not', async () => {
  const registry = newMetricsRegistry();
  const asked: string[] = [];
  const m = new RequestMetrics(registry, (r) => {
    asked.push(r.resource);
    return r.resource !== 'unknown';
  });
  for (let i = 0; i < 3; i++) m.observe(request({ verb: 'list' }), facts(), 200, 10, 0.001);
  m.observe(request({ verb: 'list' }), facts(), 500, 10, 0.001);
  for (let i = 0; i < 2; i++) m.observe(request({ verb: 'list', resource: 'unknown' }), facts(), 404, 10, 0.001);
  assert.deepEqual(asked, ['pods', 'unknown', 'unknown']);
  const text = await registry.getSingleMetricAsString('apiserver_request_total');
  assert.equal(
    text.split('\n').slice(2).join('\n'),
    [
      'apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="LIST",version="v1"} 3',
      'apiserver_request_total{code="500",component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="LIST",version="v1"} 1',
    ].join('\n'),
  );
});

test('authentication results as kube records them: a refused credential is an error, no user without anonymous a failure', async () => {
  const registry = newMetricsRegistry();
  const metrics = new AuthenticationMetrics(registry);
  const run = async (answer: AuthResult, anonymous: boolean) => {
    const ctx = { req: { headers: {}, socket: {} }, state: {}, path: '/api' } as unknown as Koa.ParameterizedContext<AuthenticatedState>;
    try {
      await authenticationMiddleware([{ name: 'a', authenticate: () => answer }], { anonymous, metrics })(ctx, async () => {});
    } catch (e) {
      // (refusals throw at once: the chain is synchronous)
      if (!(e instanceof ApiError && e.code === 401)) throw e;
    }
  };
  await run({ error: 'invalid bearer token' }, true);
  await run(undefined, false);
  await run(undefined, false);
  await run(undefined, true);
  await run({ user: { name: 'jane@example.com', groups: [] } }, true);
  const text = await registry.getSingleMetricAsString('authentication_attempts');
  assert.deepEqual(text.split('\n').slice(2), ['authentication_attempts{result="success"} 2', 'authentication_attempts{result="failure"} 2', 'authentication_attempts{result="error"} 1']);
  const users = await registry.getSingleMetricAsString('authenticated_user_requests');
  assert.deepEqual(users.split('\n').slice(2), ['authenticated_user_requests{username="other"} 1', 'authenticated_user_requests{username="email_id"} 1']);
});
