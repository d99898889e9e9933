// API Priority and Fairness on the request path, through HTTPS as clients see it: a priority level
// with one seat and small queues, a FlowSchema sending the token user `flooder` to it. A flood of
// the flooder's concurrent LISTs gets kube's 429 (text body, Retry-After) while another token user,
// a service account, a node and system:masters are all served; every answer names its FlowSchema's and
// level's UIDs; a queued request past its wait limit is refused (time-out); a watch holds its
// seat only while it initializes; the debug dumps parse, for admin only. With
// --enable-priority-and-fairness=false the two max-inflight limits apply instead.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { requester, type Credentials } from '../../helpers/identities.ts';
import { parseExposition } from '../metrics/prom-text.ts';

const dir = mkdtempSync(join(tmpdir(), 'hearth-apf-'));
const tokenFile = join(dir, 'tokens.csv');
writeFileSync(tokenFile, 'flood-token,flooder,flooder-uid,"flooders"\nlight-token,light,light-uid,"lights"\nnode-token,system:node:w1,w1-uid,"system:nodes"\n');
const flooder: Credentials = { token: 'flood-token' };
const light: Credentials = { token: 'light-token' };
const node: Credentials = { token: 'node-token' };
let serviceAccount: Credentials;

let s: TestServer;
const requestAs = requester(() => s);
const uids: Record<string, string> = {};
const TOO_MANY = 'Too many requests, please try again later.\n';
/** A resourceVersion no commit reaches soon: a LIST asking for it waits (3 s) holding its seat, then answers 504. */
const FUTURE_RV = '?resourceVersion=99999999&resourceVersionMatch=NotOlderThan';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** A request as one identity over its own connection, headers kept. */
function call(who: Credentials, path: string, onResponse?: (res: import('node:http').IncomingMessage) => void): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (who.token) headers.authorization = `Bearer ${who.token}`;
    const req = https.request(`${s.url}${path}`, { headers, agent: false, ca: s.pki.caCertPem, cert: who.cert, key: who.key }, (res) => {
      onResponse?.(res);
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
      // (a watch the test ends itself)
      res.on('close', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
      res.on('error', reject);
    });
    req.on('error', (e) => (onResponse ? undefined : reject(e)));
    req.end();
  });
}

const admin = (): Credentials => ({ cert: s.pki.adminCertPem, key: s.pki.adminKeyPem });

/** Polls until check answers true, at most `tries` × 100 ms. */
async function until(check: () => Promise<boolean>, what: string, tries = 100): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail(`never: ${what}`);
}

/** The rows of a dump (kube's tabwriter columns, each cell ending in ","). */
function parseDump(text: string): string[][] {
  return text
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => l.split(/,\s*/).map((c) => c.trim()));
}

async function post(path: string, body: unknown): Promise<void> {
  const r = await s.request('POST', path, { body });
  assert.ok(r.status === 201 || r.status === 200, `${path}: ${r.status} ${r.text}`);
}

before(async () => {
  s = await startTestServer({ options: { tokenAuthFile: tokenFile, flowControl: { enablePriorityAndFairness: true, maxRequestsInflight: 40, maxMutatingRequestsInflight: 20, requestTimeoutMs: 60_000 } } });
  await post('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    metadata: { name: 'apf-test-view' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
    subjects: [
      { kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'flooders' },
      { kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'lights' },
      { kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'system:serviceaccounts' },
    ],
  });
  await post('/api/v1/namespaces', { metadata: { name: 'flood' } });
  // Enough objects that a LIST's body takes a while to send.
  const blob = 'x'.repeat(4096);
  for (let i = 0; i < 300; i += 30) {
    await Promise.all(Array.from({ length: 30 }, (_, k) => post('/api/v1/namespaces/flood/configmaps', { metadata: { name: `cm-${i + k}` }, data: { blob } })));
  }
  await post('/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations', {
    metadata: { name: 'test-narrow' },
    spec: { type: 'Limited', limited: { nominalConcurrencyShares: 1, lendablePercent: 0, borrowingLimitPercent: 0, limitResponse: { type: 'Queue', queuing: { queues: 2, handSize: 1, queueLengthLimit: 2 } } } },
  });
  await post('/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas', {
    metadata: { name: 'test-flood' },
    spec: {
      priorityLevelConfiguration: { name: 'test-narrow' },
      matchingPrecedence: 100,
      distinguisherMethod: { type: 'ByUser' },
      rules: [{ subjects: [{ kind: 'User', user: { name: 'flooder' } }], resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }] }],
    },
  });
  for (const [kind, name] of [['flowschemas', 'test-flood'], ['prioritylevelconfigurations', 'test-narrow'], ['flowschemas', 'global-default'], ['prioritylevelconfigurations', 'global-default'], ['flowschemas', 'exempt'], ['prioritylevelconfigurations', 'exempt'], ['flowschemas', 'service-accounts'], ['prioritylevelconfigurations', 'workload-low'], ['flowschemas', 'system-node-high'], ['prioritylevelconfigurations', 'node-high']]) {
    const r = await s.request('GET', `/apis/flowcontrol.apiserver.k8s.io/v1/${kind}/${name}`);
    assert.equal(r.status, 200, r.text);
    uids[`${kind}/${name}`] = r.json().metadata.uid;
  }
  const token = await s.kubectl(['create', 'token', 'default', '-n', 'flood']);
  assert.equal(token.code, 0, token.stderr);
  serviceAccount = { token: token.stdout.trim() };
  // The new level is in the dispatcher once the flooder is classified to it.
  await until(async () => (await call(flooder, '/api/v1/namespaces/flood/configmaps?limit=1')).headers['x-kubernetes-pf-prioritylevel-uid'] === uids['prioritylevelconfigurations/test-narrow'], 'the flooder classified to test-narrow');
});

after(async () => {
  await s?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The level's ExecutingRequests in dump_priority_levels. */
async function executing(level: string): Promise<string | undefined> {
  return parseDump((await call(admin(), '/debug/api_priority_and_fairness/dump_priority_levels')).text).find((r) => r[0] === level)?.[5];
}

test('a flood of LISTs from one user gets 429s with Retry-After; another user, a service account, a node and system:masters are served', async () => {
  // The level's one seat is taken by a LIST waiting (3 s) for a resourceVersion not yet reached:
  // the flood meets a busy level, as a flood does when its LISTs outrun the server.
  const holder = call(flooder, `/api/v1/namespaces/flood/configmaps${FUTURE_RV}`);
  await until(async () => (await executing('test-narrow')) === '1', 'the holder executing');
  const flood = Array.from({ length: 40 }, () => call(flooder, '/api/v1/namespaces/flood/configmaps'));
  const others = [
    ...Array.from({ length: 5 }, () => call(light, '/api/v1/namespaces/flood/configmaps')),
    ...Array.from({ length: 5 }, () => call(serviceAccount, '/api/v1/namespaces/flood/configmaps?limit=10')),
    ...Array.from({ length: 5 }, () => call(admin(), '/api/v1/namespaces/flood/configmaps')),
  ];
  // A node reading its Node: classified (system-node-high, node-high) before authorization decides.
  const nodeCalls = Array.from({ length: 3 }, () => call(node, '/api/v1/nodes/w1'));
  const [floodAnswers, otherAnswers, nodeAnswers] = await Promise.all([Promise.all(flood), Promise.all(others), Promise.all(nodeCalls)]);
  for (const a of nodeAnswers) {
    assert.notEqual(a.status, 429);
    assert.equal(a.headers['x-kubernetes-pf-flowschema-uid'], uids['flowschemas/system-node-high']);
    assert.equal(a.headers['x-kubernetes-pf-prioritylevel-uid'], uids['prioritylevelconfigurations/node-high']);
  }
  const refused = floodAnswers.filter((a) => a.status === 429);
  const served = floodAnswers.filter((a) => a.status === 200);
  assert.ok(refused.length > 0, `no 429 among ${floodAnswers.map((a) => a.status).join(',')}`);
  assert.ok(served.length > 0, 'none of the flood served');
  assert.equal(served.length + refused.length, floodAnswers.length, floodAnswers.map((a) => a.status).join(','));
  for (const a of refused) {
    assert.equal(a.text, TOO_MANY);
    assert.equal(a.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(a.headers['x-content-type-options'], 'nosniff');
    assert.match(String(a.headers['retry-after']), /^[1-9][0-9]*$/);
    assert.equal(a.headers['x-kubernetes-pf-flowschema-uid'], uids['flowschemas/test-flood']);
    assert.equal(a.headers['x-kubernetes-pf-prioritylevel-uid'], uids['prioritylevelconfigurations/test-narrow']);
  }
  for (const a of served) assert.equal(a.headers['x-kubernetes-pf-flowschema-uid'], uids['flowschemas/test-flood']);
  assert.deepEqual(
    otherAnswers.map((a) => a.status),
    otherAnswers.map(() => 200),
  );
  // Each answer names where it was classified: the light user by global-default, the service
  // account by service-accounts (workload-low), system:masters by exempt.
  for (const a of otherAnswers.slice(0, 5)) {
    assert.equal(a.headers['x-kubernetes-pf-flowschema-uid'], uids['flowschemas/global-default']);
    assert.equal(a.headers['x-kubernetes-pf-prioritylevel-uid'], uids['prioritylevelconfigurations/global-default']);
  }
  for (const a of otherAnswers.slice(5, 10)) {
    assert.equal(a.headers['x-kubernetes-pf-flowschema-uid'], uids['flowschemas/service-accounts']);
    assert.equal(a.headers['x-kubernetes-pf-prioritylevel-uid'], uids['prioritylevelconfigurations/workload-low']);
  }
  for (const a of otherAnswers.slice(10)) {
    assert.equal(a.headers['x-kubernetes-pf-flowschema-uid'], uids['flowschemas/exempt']);
    assert.equal(a.headers['x-kubernetes-pf-prioritylevel-uid'], uids['prioritylevelconfigurations/exempt']);
  }
  const levels = parseDump((await call(admin(), '/debug/api_priority_and_fairness/dump_priority_levels')).text);
  const narrow = levels.find((r) => r[0] === 'test-narrow')!;
  assert.ok(Number(narrow[7]) >= refused.length, `RejectedRequests ${narrow[7]} < ${refused.length}`);
  assert.equal((await holder).status, 504);
  // /metrics counts the same: every 429 by schema, level and reason; every served LIST dispatched.
  const scraped = parseExposition((await call(admin(), '/metrics')).text);
  const sum = (name: string, want: Record<string, string>) =>
    scraped.samples.filter((x) => x.name === name && Object.entries(want).every(([k, v]) => x.labels[k] === v)).reduce((a, x) => a + x.value, 0);
  assert.equal(sum('apiserver_flowcontrol_rejected_requests_total', { flow_schema: 'test-flood', priority_level: 'test-narrow' }), Number(narrow[7]));
  assert.ok(sum('apiserver_flowcontrol_rejected_requests_total', { flow_schema: 'test-flood', priority_level: 'test-narrow', reason: 'queue-full' }) + sum('apiserver_flowcontrol_rejected_requests_total', { flow_schema: 'test-flood', priority_level: 'test-narrow', reason: 'concurrency-limit' }) >= refused.length);
  assert.ok(sum('apiserver_flowcontrol_dispatched_requests_total', { flow_schema: 'test-flood', priority_level: 'test-narrow' }) >= served.length + 1, 'the served flood and the holder dispatched');
  assert.ok(sum('apiserver_flowcontrol_dispatched_requests_total', { flow_schema: 'global-default', priority_level: 'global-default' }) >= 5);
  assert.equal(sum('apiserver_flowcontrol_nominal_limit_seats', { priority_level: 'test-narrow' }) > 0, true);
});

test('a request queued past a quarter of its timeout is refused; the queued request shows in dump_requests', async () => {
  // The one seat is held by a LIST waiting for a resourceVersion not yet reached.
  const holder = call(flooder, `/api/v1/namespaces/flood/configmaps${FUTURE_RV}`);
  await until(async () => (await executing('test-narrow')) === '1', 'the holder executing');
  // ?timeout=2s: it may wait 500 ms.
  const timedOut = call(flooder, '/api/v1/namespaces/flood/configmaps?timeout=2s');
  // ?timeout=8s: it waits up to 2 s, long enough to be seen in the dump.
  const seen = call(flooder, '/api/v1/namespaces/flood/configmaps?timeout=8s');
  let rows: string[][] = [];
  await until(async () => {
    rows = parseDump((await call(admin(), '/debug/api_priority_and_fairness/dump_requests?includeRequestDetails=1')).text);
    return rows.some((r) => r[0] === 'test-narrow');
  }, 'a waiting request in dump_requests', 20);
  assert.deepEqual(rows[0], ['PriorityLevelName', 'FlowSchemaName', 'QueueIndex', 'RequestIndexInQueue', 'FlowDistingsher', 'ArriveTime', 'InitialSeats', 'FinalSeats', 'AdditionalLatency', 'UserName', 'Verb', 'APIPath', 'Namespace', 'Name', 'APIVersion', 'Resource', 'SubResource']);
  const waiting = rows.find((r) => r[0] === 'test-narrow')!;
  assert.equal(waiting[1], 'test-flood');
  assert.equal(waiting[4], 'flooder');
  assert.match(waiting[5], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
  assert.deepEqual(waiting.slice(9, 16), ['flooder', 'list', '/api/v1/namespaces/flood/configmaps', 'flood', '', 'v1', 'configmaps']);
  const t = await timedOut;
  assert.equal(t.status, 429);
  assert.equal(t.text, TOO_MANY);
  assert.ok(t.headers['retry-after']);
  assert.equal((await seen).status, 429);
  assert.equal((await holder).status, 504);
  const narrow = parseDump((await call(admin(), '/debug/api_priority_and_fairness/dump_priority_levels')).text).find((r) => r[0] === 'test-narrow')!;
  assert.ok(Number(narrow[8]) >= 2, `TimedoutRequests ${narrow[8]}`);
});

test('a watch holds its seat only while it initializes', async () => {
  // The flooder's watch, on the level's one seat, stays open...
  let watchResponse: import('node:http').IncomingMessage | undefined;
  const watching = call(flooder, '/api/v1/namespaces/flood/configmaps?watch=1&resourceVersion=0', (res) => (watchResponse = res));
  await until(async () => watchResponse !== undefined, 'the watch answered');
  assert.equal(watchResponse!.statusCode, 200);
  assert.equal(watchResponse!.headers['x-kubernetes-pf-prioritylevel-uid'], uids['prioritylevelconfigurations/test-narrow']);
  // ...and the flooder's next request still gets the seat.
  await until(async () => (await call(flooder, '/api/v1/namespaces/flood/configmaps?limit=1')).status === 200, 'a LIST beside the open watch');
  const levels = parseDump((await call(admin(), '/debug/api_priority_and_fairness/dump_priority_levels')).text);
  assert.equal(levels.find((r) => r[0] === 'test-narrow')![5], '0');
  watchResponse!.destroy();
  await watching;
});

test('the dumps: one row per priority level, one per queue; only who may get the path reads them', async () => {
  const levels = parseDump((await call(admin(), '/debug/api_priority_and_fairness/dump_priority_levels')).text);
  assert.deepEqual(levels[0], ['PriorityLevelName', 'ActiveQueues', 'IsIdle', 'IsQuiescing', 'WaitingRequests', 'ExecutingRequests', 'DispatchedRequests', 'RejectedRequests', 'TimedoutRequests', 'CancelledRequests']);
  const names = levels.slice(1).map((r) => r[0]);
  for (const n of ['catch-all', 'exempt', 'global-default', 'leader-election', 'node-high', 'system', 'test-narrow', 'workload-high', 'workload-low']) assert.ok(names.includes(n), `${n} in ${names}`);
  assert.deepEqual(names, [...names].sort());
  for (const r of levels.slice(1)) assert.equal(r.length, 10, r.join('|'));
  const queues = parseDump((await call(admin(), '/debug/api_priority_and_fairness/dump_queues')).text);
  assert.deepEqual(queues[0], ['PriorityLevelName', 'Index', 'PendingRequests', 'ExecutingRequests', 'SeatsInUse', 'NextDispatchR', 'InitialSeatsSum', 'MaxSeatsSum', 'TotalWorkSum']);
  const narrowQueues = queues.filter((r) => r[0] === 'test-narrow');
  assert.deepEqual(
    narrowQueues.map((r) => r[1]),
    ['0', '1'],
  );
  for (const r of narrowQueues) {
    assert.match(r[5], /^\d+\.\d{8}ss$/);
    assert.match(r[8], /^\d+\.\d{8}ss$/);
  }
  // workload-low: kube's 128 queues; exempt and catch-all (Reject) have none.
  assert.equal(queues.filter((r) => r[0] === 'workload-low').length, 128);
  assert.equal(queues.filter((r) => r[0] === 'exempt' || r[0] === 'catch-all').length, 0);
  // kubectl (HTTP/2) reads them too.
  const raw = await s.kubectl(['get', '--raw', '/debug/api_priority_and_fairness/dump_priority_levels']);
  assert.equal(raw.code, 0, raw.stderr);
  assert.ok(raw.stdout.startsWith('PriorityLevelName, ActiveQueues, IsIdle,'), raw.stdout.slice(0, 200));
  assert.match(raw.stdout, /\ntest-narrow, +0, +true, +false, +0, +0, +\d+, +\d+, +\d+, +\d+\n/);
  const plain = parseDump((await call(admin(), '/debug/api_priority_and_fairness/dump_requests')).text);
  assert.equal(plain[0].length, 9);
  // A user without a rule for the path: kube's 403 for a non-resource URL.
  const refused = await requestAs(light, 'GET', '/debug/api_priority_and_fairness/dump_priority_levels');
  assert.equal(refused.status, 403);
  assert.equal(refused.json.message, 'forbidden: User "light" cannot get path "/debug/api_priority_and_fairness/dump_priority_levels"');
  const anonymous = await requestAs({}, 'GET', '/debug/api_priority_and_fairness/dump_queues');
  assert.ok(anonymous.status === 401 || anonymous.status === 403, String(anonymous.status));
});
