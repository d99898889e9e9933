// /metrics through HTTPS as kube-apiserver serves it: reached through RBAC's system:monitoring
// (a member and the admin get it, a plain token user and anonymous are 403 with kube's Status,
// `kubectl get --raw /metrics` reads it), and the request metrics found with exact counts and
// labels after known requests from known identities: creates, a dry run, an apply, a forbidden
// GET, an anonymous LIST, a bad token, a LIST and a watch opened and closed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import https from 'node:https';
import type { IncomingMessage } from 'node:http';
import { startTestServer, WITHOUT_NAMESPACE_CONTENT, type TestServer } from '../../helpers/server.ts';
import { requester, type Credentials } from '../../helpers/identities.ts';
import { parseExposition, valueOf, exact, type Exposition } from './prom-text.ts';

const dir = mkdtempSync(join(tmpdir(), 'hearth-metrics-'));
const tokenFile = join(dir, 'tokens.csv');
writeFileSync(tokenFile, 'monitor-token,prometheus,prom-uid,system:monitoring\nplain-token,dave,dave-uid\n');
const MONITOR: Credentials = { token: 'monitor-token' };
const PLAIN: Credentials = { token: 'plain-token' };
const ANONYMOUS: Credentials = {};
const NS = 'metrics-e2e';

let s: TestServer;
const requestAs = requester(() => s);
let admin: Credentials;

before(async () => {
  s = await startTestServer({ options: { tokenAuthFile: tokenFile, controllers: WITHOUT_NAMESPACE_CONTENT } });
  admin = { cert: s.pki.adminCertPem, key: s.pki.adminKeyPem };
  const ns = await requestAs(admin, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  assert.equal(ns.status, 201, ns.text);
});
after(async () => {
  await s?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function scrape(who: Credentials = admin): Promise<Exposition> {
  const r = await requestAs(who, 'GET', '/metrics');
  assert.equal(r.status, 200, r.text);
  return parseExposition(r.text);
}

/** apiserver_request_total's labels for a core/v1 configmaps request. */
function configMaps(verb: string, scope: string, code: string, dryRun = ''): Record<string, string> {
  return { verb, dry_run: dryRun, group: '', version: 'v1', resource: 'configmaps', subresource: '', scope, component: 'apiserver', code };
}

/** Polls /metrics until `ok` holds (bounded), for what is counted when a stream ends. */
async function scrapeUntil(ok: (e: Exposition) => boolean): Promise<Exposition> {
  let e = await scrape();
  for (let i = 0; i < 100 && !ok(e); i++) {
    await new Promise((r) => setTimeout(r, 50));
    e = await scrape();
  }
  return e;
}

test('/metrics: system:monitoring and the admin read it as Prometheus text; a plain user and anonymous are 403', async () => {
  const asMonitor = await requestAs(MONITOR, 'GET', '/metrics');
  assert.equal(asMonitor.status, 200, asMonitor.text);
  const asAdmin = await s.request('GET', '/metrics');
  assert.equal(asAdmin.status, 200);
  assert.equal(asAdmin.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
  const e = parseExposition(asAdmin.text);
  assert.equal(e.type.get('apiserver_request_total'), 'counter');
  assert.equal(e.help.get('apiserver_request_total'), '[STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.');
  assert.equal(e.type.get('apiserver_request_duration_seconds'), 'histogram');
  assert.ok(e.type.has('process_cpu_user_seconds_total') && e.type.has('nodejs_heap_size_used_bytes'), 'the process and Node.js defaults');

  for (const [who, name] of [
    [PLAIN, 'dave'],
    [ANONYMOUS, 'system:anonymous'],
  ] as const) {
    const r = await requestAs(who, 'GET', '/metrics');
    assert.equal(r.status, 403, r.text);
    assert.deepEqual(r.json, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `forbidden: User "${name}" cannot get path "/metrics"`, reason: 'Forbidden', details: {}, code: 403 });
  }
});

test('kubectl get --raw /metrics', async () => {
  const r = await s.kubectl(['get', '--raw', '/metrics']);
  assert.equal(r.code, 0, r.stderr);
  const e = parseExposition(r.stdout);
  assert.ok(e.type.get('apiserver_request_total') === 'counter');
});

test('apiserver_request_total and its histograms count creates, dry runs, applies, refusals and lists with kube labels', async () => {
  for (let i = 1; i <= 3; i++) {
    const r = await requestAs(admin, 'POST', `/api/v1/namespaces/${NS}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}` }, data: { i: String(i) } });
    assert.equal(r.status, 201, r.text);
  }
  const dry = await requestAs(admin, 'POST', `/api/v1/namespaces/${NS}/configmaps?dryRun=All`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm-dry' } });
  assert.equal(dry.status, 201, dry.text);
  const apply = await requestAs(admin, 'PATCH', `/api/v1/namespaces/${NS}/configmaps/cm-applied?fieldManager=metrics-test`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm-applied' } }, 'application/apply-patch+yaml');
  assert.equal(apply.status, 201, apply.text);
  const forbidden = await requestAs(PLAIN, 'GET', `/api/v1/namespaces/${NS}/configmaps/cm-1`);
  assert.equal(forbidden.status, 403, forbidden.text);
  const anonymous = await requestAs(ANONYMOUS, 'GET', `/api/v1/namespaces/${NS}/configmaps`);
  assert.equal(anonymous.status, 403, anonymous.text);
  const badToken = await requestAs({ token: 'no-such-token' }, 'GET', `/api/v1/namespaces/${NS}/configmaps`);
  assert.equal(badToken.status, 401, badToken.text);
  const list = await requestAs(admin, 'GET', `/api/v1/namespaces/${NS}/configmaps`);
  assert.equal(list.status, 200, list.text);
  const missing = await requestAs(admin, 'GET', `/api/v1/namespaces/${NS}/configmaps/nope`);
  assert.equal(missing.status, 404, missing.text);

  const e = await scrape();
  const total = 'apiserver_request_total';
  assert.equal(valueOf(e, total, configMaps('POST', 'resource', '201')), 3, 'three creates');
  assert.equal(valueOf(e, total, configMaps('POST', 'resource', '201', 'All')), 1, 'one dry run');
  assert.equal(valueOf(e, total, configMaps('APPLY', 'resource', '201')), 1, 'one apply');
  assert.equal(valueOf(e, total, configMaps('GET', 'resource', '403')), 1, 'the forbidden GET');
  assert.equal(valueOf(e, total, configMaps('GET', 'resource', '404')), 1, 'the missing GET');
  assert.equal(valueOf(e, total, configMaps('LIST', 'namespace', '403')), 1, 'the anonymous LIST');
  assert.equal(valueOf(e, total, configMaps('LIST', 'namespace', '401')), 1, 'the bad token');
  assert.equal(valueOf(e, total, configMaps('LIST', 'namespace', '200')), 1, 'the LIST');
  // Non-resource requests carry their path as subresource, with the empty scope.
  assert.ok(valueOf(e, total, { verb: 'GET', dry_run: '', group: '', version: '', resource: '', subresource: '/metrics', scope: '', component: 'apiserver', code: '403' }) >= 2);

  const durationLabels = { verb: 'POST', dry_run: '', group: '', version: 'v1', resource: 'configmaps', subresource: '', scope: 'resource', component: 'apiserver' };
  assert.equal(valueOf(e, 'apiserver_request_duration_seconds_count', durationLabels), 3);
  assert.equal(valueOf(e, 'apiserver_request_duration_seconds_bucket', { ...durationLabels, le: '+Inf' }), 3);
  assert.ok(exact(e, 'apiserver_request_duration_seconds_bucket', { ...durationLabels, le: '0.005' }), "kube's first bucket");
  assert.ok(exact(e, 'apiserver_request_duration_seconds_bucket', { ...durationLabels, le: '60' }), "kube's last bucket");
  // Response sizes: reads only, in kube's 1 KB..1 GB buckets.
  const sizeLabels = { verb: 'LIST', group: '', version: 'v1', resource: 'configmaps', subresource: '', scope: 'namespace', component: 'apiserver' };
  assert.equal(valueOf(e, 'apiserver_response_sizes_count', sizeLabels), 3, 'the LIST and the two refused ones');
  assert.ok(exact(e, 'apiserver_response_sizes_bucket', { ...sizeLabels, le: '1e+06' }), 'bounds as Go prints them');
  assert.equal(valueOf(e, 'apiserver_response_sizes_count', { ...sizeLabels, verb: 'POST', scope: 'resource' }), 0, 'no sizes of writes');
});

test('a watch is long-running while open and counted once it ends', async () => {
  const path = `/api/v1/namespaces/${NS}/configmaps?watch=1`;
  const watchLabels = { verb: 'WATCH', group: '', version: 'v1', resource: 'configmaps', subresource: '', scope: 'namespace', component: 'apiserver' };
  const req = https.request(`${s.url}${path}`, { agent: false, ca: s.pki.caCertPem, cert: s.pki.adminCertPem, key: s.pki.adminKeyPem });
  const opened = new Promise<void>((resolve, reject) => {
    req.on('response', (res) => {
      assert.equal(res.statusCode, 200);
      res.once('data', () => resolve());
      res.on('error', () => {});
    });
    req.on('error', reject);
  });
  req.end();
  await opened;
  const during = await scrape();
  assert.equal(valueOf(during, 'apiserver_longrunning_requests', watchLabels), 1);
  assert.equal(valueOf(during, 'apiserver_request_total', configMaps('WATCH', 'namespace', '200')), 0, 'not counted while open');
  req.destroy();
  const ended = await scrapeUntil((e) => valueOf(e, 'apiserver_request_total', configMaps('WATCH', 'namespace', '200')) === 1);
  assert.equal(valueOf(ended, 'apiserver_request_total', configMaps('WATCH', 'namespace', '200')), 1);
  assert.equal(valueOf(ended, 'apiserver_longrunning_requests', watchLabels), 0);
});

test('apiserver_current_inflight_requests reports both request kinds', async () => {
  const e = await scrape();
  // The scrape itself is a read-only request executing while the gauge is read.
  assert.ok(valueOf(e, 'apiserver_current_inflight_requests', { request_kind: 'readOnly' }) >= 1);
  assert.ok(exact(e, 'apiserver_current_inflight_requests', { request_kind: 'mutating' }));
});

test('authentication_attempts: a bad token is an error, anonymous and token users successes, user names compressed as kube does', async () => {
  const before = await scrape();
  const bad = await requestAs({ token: 'wrong-token' }, 'GET', '/api');
  assert.equal(bad.status, 401);
  assert.equal((await requestAs(ANONYMOUS, 'GET', '/version')).status, 200);
  assert.equal((await requestAs(PLAIN, 'GET', '/version')).status, 200);
  const after = await scrape();
  const delta = (name: string, labels: Record<string, string>) => valueOf(after, name, labels) - valueOf(before, name, labels);
  assert.equal(delta('authentication_attempts', { result: 'error' }), 1, 'the bad token');
  // anonymous, dave, and the admin's second scrape
  assert.equal(delta('authentication_attempts', { result: 'success' }), 3);
  assert.equal(delta('authentication_attempts', { result: 'failure' }), 0);
  assert.equal(delta('authentication_duration_seconds_count', { result: 'error' }), 1);
  assert.equal(delta('authenticated_user_requests', { username: 'other' }), 3);
  assert.equal(after.help.get('authentication_attempts'), '[ALPHA] Counter of authenticated attempts.');
});

test('storage: objects per resource follow the ConfigMaps created; size, event log and commits; a compaction and its vacuum', async () => {
  const ns = 'metrics-storage';
  assert.equal((await requestAs(admin, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } })).status, 201);
  const before = await scrape();
  for (let i = 1; i <= 3; i++) assert.equal((await requestAs(admin, 'POST', `/api/v1/namespaces/${ns}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `stored-${i}` } })).status, 201);
  const after = await scrape();
  const delta = (name: string, labels: Record<string, string>) => valueOf(after, name, labels) - valueOf(before, name, labels);
  assert.equal(delta('apiserver_storage_objects', { resource: 'configmaps' }), 3);
  assert.equal(delta('apiserver_resource_objects', { group: '', resource: 'configmaps' }), 3);
  assert.ok(valueOf(after, 'apiserver_storage_objects', { resource: 'clusterroles.rbac.authorization.k8s.io' }) > 0, "kube's <resource>.<group>");
  assert.ok(valueOf(after, 'apiserver_storage_size_bytes', { storage_cluster_id: 'etcd-0' }) > 0);
  assert.ok(valueOf(after, 'hearth_storage_event_log_rows', {}) >= 3);
  assert.ok(exact(after, 'hearth_storage_wal_size_bytes', {}));
  assert.ok(delta('hearth_storage_commit_batch_size_sum', {}) >= 3, 'the three writes were committed');
  assert.ok(delta('hearth_storage_commit_duration_seconds_count', {}) >= 1);

  const compact = await s.request('POST', '/admin/compact');
  assert.equal(compact.status, 200, compact.text);
  const compacted = await scrape();
  assert.equal(valueOf(compacted, 'hearth_storage_compaction_duration_seconds_count', {}) - valueOf(after, 'hearth_storage_compaction_duration_seconds_count', {}), 1);
  assert.equal(valueOf(compacted, 'hearth_storage_vacuum_duration_seconds_count', {}) - valueOf(after, 'hearth_storage_vacuum_duration_seconds_count', {}), 1);
});

test('apiserver_watch_events_total and _sizes count each event sent to each watcher', async () => {
  const ns = 'metrics-watch';
  assert.equal((await requestAs(admin, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } })).status, 201);
  const rv = (await requestAs(admin, 'GET', `/api/v1/namespaces/${ns}/configmaps`)).json as { metadata: { resourceVersion: string } };
  const labels = { group: '', version: 'v1', resource: 'configmaps' };
  const before = await scrape();
  // Two watchers of the same selection: the second writes the batch the first gathered.
  const watchers = [0, 1].map(() => {
    const req = https.request(`${s.url}/api/v1/namespaces/${ns}/configmaps?watch=1&resourceVersion=${rv.metadata.resourceVersion}`, { agent: false, ca: s.pki.caCertPem, cert: s.pki.adminCertPem, key: s.pki.adminKeyPem });
    const response = new Promise<IncomingMessage>((resolve, reject) => {
      req.on('response', resolve);
      req.on('error', reject);
    });
    req.end();
    return { req, response };
  });
  const responses = await Promise.all(watchers.map((w) => w.response));
  const firstLines = responses.map(
    (res) =>
      new Promise<string>((resolve) => {
        let buf = '';
        res.on('data', (d: Buffer) => {
          buf += d.toString();
          if (buf.includes('\n')) resolve(buf.slice(0, buf.indexOf('\n')));
        });
        res.on('error', () => {});
      }),
  );
  assert.equal((await requestAs(admin, 'POST', `/api/v1/namespaces/${ns}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'watched' } })).status, 201);
  for (const line of await Promise.all(firstLines)) assert.equal(JSON.parse(line).type, 'ADDED');
  const after = await scrape();
  for (const w of watchers) w.req.destroy();
  assert.equal(valueOf(after, 'apiserver_watch_events_total', labels) - valueOf(before, 'apiserver_watch_events_total', labels), 2);
  assert.equal(valueOf(after, 'apiserver_watch_events_sizes_count', labels) - valueOf(before, 'apiserver_watch_events_sizes_count', labels), 2);
  assert.equal(valueOf(after, 'apiserver_watch_events_sizes_bucket', { ...labels, le: '1024' }) - valueOf(before, 'apiserver_watch_events_sizes_bucket', { ...labels, le: '1024' }), 2, 'a small ConfigMap event is under 1 KiB');
  assert.ok(exact(after, 'apiserver_watch_events_sizes_bucket', { ...labels, le: '131072' }), "kube's last bucket, 128 KiB");
});

test('label values stay bounded: unknown resources and unrouted paths get no series', async () => {
  assert.equal((await requestAs(admin, 'GET', `/api/v1/namespaces/${NS}/nosuchthings`)).status, 404);
  assert.equal((await requestAs(admin, 'GET', `/api/v1/namespaces/${NS}/configmaps/cm-1/nosuchsub`)).status, 404);
  assert.equal((await requestAs(admin, 'GET', '/no/such/path')).status, 404);
  assert.equal((await requestAs(ANONYMOUS, 'GET', '/random/anonymous/path')).status, 403);
  const e = await scrape();
  const total = e.samples.filter((x) => x.name === 'apiserver_request_total');
  assert.equal(total.filter((x) => x.labels.resource === 'nosuchthings' || x.labels.subresource === 'nosuchsub').length, 0);
  assert.equal(total.filter((x) => x.labels.subresource === '/no/such/path' || x.labels.subresource === '/random/anonymous/path').length, 0);
  for (const x of total) {
    assert.ok(['APPLY', 'CONNECT', 'DELETE', 'GET', 'LIST', 'PATCH', 'POST', 'PUT', 'WATCH', 'other'].includes(x.labels.verb), x.labels.verb);
    assert.ok(['resource', 'namespace', 'cluster', ''].includes(x.labels.scope), x.labels.scope);
    assert.equal(x.labels.component, 'apiserver');
  }
});

test('/metrics/slis: the health checks as kubernetes_healthcheck and kubernetes_healthchecks_total', async () => {
  const ready = await requestAs(admin, 'GET', '/readyz');
  assert.equal(ready.status, 200, ready.text);
  const r = await requestAs(MONITOR, 'GET', '/metrics/slis');
  assert.equal(r.status, 200, r.text);
  const e = parseExposition(r.text);
  assert.equal(e.type.get('kubernetes_healthcheck'), 'gauge');
  assert.equal(e.help.get('kubernetes_healthcheck'), '[STABLE] This metric records the result of a single healthcheck.');
  assert.equal(valueOf(e, 'kubernetes_healthcheck', { name: 'ping', type: 'readyz' }), 1);
  assert.ok(valueOf(e, 'kubernetes_healthchecks_total', { name: 'ping', type: 'readyz', status: 'success' }) >= 1);
  assert.ok(!e.type.has('apiserver_request_total'), 'its own registry');
  const plain = await requestAs(PLAIN, 'GET', '/metrics/slis');
  assert.equal(plain.status, 403);
  assert.equal(plain.json.message, 'forbidden: User "dave" cannot get path "/metrics/slis"');
});
