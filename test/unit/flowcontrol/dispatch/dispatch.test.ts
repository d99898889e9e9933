// The dispatcher's parts against kube's numbers: shuffle-sharding hands, fair queuing between a
// heavy flow and a light one, the seat allocation, kube 1.36's nominal limits of the bootstrap
// levels at the default 600 seats, and the flowcontrol metrics read from the registry after known
// requests (dispatched, rejected by reason, nominal seats).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { Dealer, hashFlowId } from '../../../../server/flowcontrol/dispatch/shuffle-sharding.ts';
import { QueueSet, type FlowStats } from '../../../../server/flowcontrol/dispatch/queueset.ts';
import { computeConcurrencyAllocation } from '../../../../server/flowcontrol/dispatch/allocation.ts';
import { Dispatcher } from '../../../../server/flowcontrol/dispatch/dispatcher.ts';
import { FlowControlMetrics } from '../../../../server/flowcontrol/dispatch/metrics.ts';
import { tabwrite } from '../../../../server/flowcontrol/dispatch/tabwriter.ts';
import { FlowControlConfig } from '../../../../server/flowcontrol/config/index.ts';
import { MANDATORY_FLOW_SCHEMAS, MANDATORY_PRIORITY_LEVELS, SUGGESTED_FLOW_SCHEMAS, SUGGESTED_PRIORITY_LEVELS } from '../../../../server/flowcontrol/config/bootstrap.ts';
import type { RequestDigest } from '../../../../server/flowcontrol/types.ts';
import type { UserInfo } from '../../../../server/authentication/user.ts';

const noStats: FlowStats = { inQueue() {}, executing() {}, rejected() {}, queueLengthAfterEnqueue() {} };
const one = { initialSeats: 1, finalSeats: 0, additionalLatencyMs: 0 };

function digest(user: UserInfo, verb = 'list'): RequestDigest {
  return { user, isResourceRequest: true, verb, path: '/api/v1/namespaces/team/configmaps', apiGroup: '', apiVersion: 'v1', resource: 'configmaps', subresource: '', namespace: 'team', name: '' };
}

test('a hand is handSize distinct queues of the deck, the same for the same flow', () => {
  const dealer = Dealer.of(64, 8) as Dealer;
  const h = hashFlowId('global-default', 'alice');
  const hand = dealer.deal(h);
  assert.equal(hand.length, 8);
  assert.equal(new Set(hand).size, 8);
  for (const q of hand) assert.ok(q >= 0 && q < 64);
  assert.deepEqual(dealer.deal(hashFlowId('global-default', 'alice')), hand);
  assert.notDeepEqual(dealer.deal(hashFlowId('global-default', 'bob')), hand);
  assert.equal(Dealer.of(4, 5), 'handSize 5 is greater than deckSize 4');
  assert.equal(Dealer.of(1 << 10, 7), 'required entropy bits of deckSize 1024 and handSize 7 is greater than 60');
});

test("fair queuing: a light flow's request goes before a heavy flow's backlog", () => {
  let now = 0;
  const qs = new QueueSet({ name: 'l', desiredNumQueues: 2, queueLengthLimit: 10, handSize: 1 }, Dealer.of(2, 1) as Dealer, () => now);
  qs.setConcurrencyLimit(1);
  // Two flows that land in different queues.
  const heavy = 0n;
  let light = 1n;
  const dealer = Dealer.of(2, 1) as Dealer;
  for (let i = 0n; dealer.deal(heavy)[0] === dealer.deal(light)[0]; i++) light = i + 2n;
  const d = digest({ name: 'x', groups: [] });
  const first = qs.start('fs', 'heavy', heavy, one, noStats, d);
  assert.equal(first.kind, 'execute');
  if (first.kind !== 'execute') return;
  const backlog = [1, 2, 3, 4].map(() => qs.start('fs', 'heavy', heavy, one, noStats, d));
  const lightReq = qs.start('fs', 'light', light, one, noStats, d);
  assert.deepEqual(
    [...backlog, lightReq].map((o) => o.kind),
    ['queued', 'queued', 'queued', 'queued', 'queued'],
  );
  const order: string[] = [];
  const running: import('../../../../server/flowcontrol/dispatch/queueset.ts').FlowRequest[] = [first.request];
  for (const o of [...backlog, lightReq]) {
    if (o.kind !== 'queued') continue;
    o.request.decide = () => {
      order.push(o.request.flowDistinguisher);
      running.push(o.request);
    };
  }
  // Each request runs 10 ms; as each finishes the next is chosen by virtual finish time.
  while (running.length > 0) {
    now += 10;
    qs.finish(running.shift()!);
  }
  // The light flow's one request overtakes the heavy flow's backlog.
  assert.deepEqual(order, ['light', 'heavy', 'heavy', 'heavy', 'heavy']);
  // A full queue with every seat taken: queue-full.
  const full = new QueueSet({ name: 'f', desiredNumQueues: 1, queueLengthLimit: 1, handSize: 1 }, Dealer.of(1, 1) as Dealer, () => now);
  full.setConcurrencyLimit(1);
  assert.equal(full.start('fs', '', 0n, one, noStats, d).kind, 'execute');
  assert.equal(full.start('fs', '', 0n, one, noStats, d).kind, 'queued');
  assert.deepEqual(full.start('fs', '', 0n, one, noStats, d), { kind: 'reject', reason: 'queue-full' });
});

test('the allocation: one fair proportion of each target, clamped to the bounds, summing to the required total', () => {
  const r = computeConcurrencyAllocation(10, [
    { target: 8, lowerBound: 2, upperBound: 10 },
    { target: 1, lowerBound: 1, upperBound: 10 },
    { target: 1, lowerBound: 0, upperBound: 1 },
  ]);
  assert.ok(typeof r !== 'string');
  assert.ok(Math.abs(r.allocs.reduce((a, b) => a + b, 0) - 10) < 1e-6);
  assert.ok(Math.abs(r.allocs[2] - 1) < 1e-6);
  assert.ok(Math.abs(r.allocs[0] / r.allocs[1] - 8) < 1e-6);
  assert.equal(computeConcurrencyAllocation(1, [{ target: 2, lowerBound: 2, upperBound: 3 }]), 'lower bounds sum to 2, which is higher than the required sum of 1');
});

test("kube 1.36's nominal seats at 600, and the metrics after known requests", () => {
  const stored = <T extends { metadata: { name: string } }>(o: T) => ({ ...structuredClone(o), metadata: { ...o.metadata, uid: `uid-${o.metadata.name}` } });
  const config = new FlowControlConfig([...MANDATORY_FLOW_SCHEMAS, ...SUGGESTED_FLOW_SCHEMAS].map(stored), [...MANDATORY_PRIORITY_LEVELS, ...SUGGESTED_PRIORITY_LEVELS].map(stored));
  const registry = new Registry();
  const dispatcher = new Dispatcher(config, { serverConcurrencyLimit: 600, metrics: new FlowControlMetrics(registry), objectCount: () => 250 });
  const nominal = Object.fromEntries(dispatcher.levelStates().map(([name, s]) => [name, s.nominalCL]));
  assert.deepEqual(nominal, { 'catch-all': 13, exempt: 0, 'global-default': 49, 'leader-election': 25, 'node-high': 98, system: 74, 'workload-high': 98, 'workload-low': 245 });
  const admin: UserInfo = { name: 'admin', groups: ['system:masters', 'system:authenticated'] };
  const alice: UserInfo = { name: 'alice', groups: ['system:authenticated'] };
  const q = () => new URLSearchParams();
  for (const who of [admin, admin, alice]) {
    const c = config.classify(digest(who));
    const a = dispatcher.admit(c, digest(who), q, 15_000);
    assert.equal(a.kind, 'execute');
    if (a.kind === 'execute') a.ticket.finish();
  }
  // A LIST of 250 objects from the watch cache: 3 seats.
  const c = config.classify(digest(alice));
  const wide = dispatcher.admit(c, digest(alice), q, 15_000);
  assert.equal(wide.kind, 'execute');
  if (wide.kind === 'execute') {
    assert.equal(wide.ticket.request.workEstimate.initialSeats, 3);
    wide.ticket.finish();
  }
  return registry.metrics().then((text) => {
    assert.match(text, /apiserver_flowcontrol_dispatched_requests_total\{priority_level="exempt",flow_schema="exempt"\} 2/);
    assert.match(text, /apiserver_flowcontrol_dispatched_requests_total\{priority_level="global-default",flow_schema="global-default"\} 2/);
    assert.match(text, /apiserver_flowcontrol_nominal_limit_seats\{priority_level="workload-low"\} 245/);
    assert.match(text, /apiserver_flowcontrol_current_executing_requests\{priority_level="global-default",flow_schema="global-default"\} 0/);
    assert.match(text, /apiserver_flowcontrol_request_wait_duration_seconds_count\{priority_level="global-default",flow_schema="global-default",execute="true"\} 2/);
    assert.match(text, /apiserver_flowcontrol_work_estimated_seats_bucket\{le="4",priority_level="global-default",flow_schema="global-default"\} 2/);
  });
});

test("a level refusing: catch-all (Reject) at its limit counts concurrency-limit", async () => {
  const stored = <T extends { metadata: { name: string } }>(o: T) => ({ ...structuredClone(o), metadata: { ...o.metadata, uid: `uid-${o.metadata.name}` } });
  const config = new FlowControlConfig([...MANDATORY_FLOW_SCHEMAS].map(stored), [...MANDATORY_PRIORITY_LEVELS].map(stored));
  const registry = new Registry();
  const dispatcher = new Dispatcher(config, { serverConcurrencyLimit: 1, metrics: new FlowControlMetrics(registry), objectCount: () => 0 });
  const alice: UserInfo = { name: 'alice', groups: ['system:authenticated'] };
  const c = config.classify(digest(alice));
  assert.equal(c.priorityLevel.name, 'catch-all');
  const first = dispatcher.admit(c, digest(alice), () => new URLSearchParams(), 15_000);
  assert.equal(first.kind, 'execute');
  const second = dispatcher.admit(c, digest(alice), () => new URLSearchParams(), 15_000);
  assert.deepEqual(second, { kind: 'reject', retryAfter: 1 });
  const text = await registry.metrics();
  assert.match(text, /apiserver_flowcontrol_rejected_requests_total\{priority_level="catch-all",flow_schema="catch-all",reason="concurrency-limit"\} 1/);
  assert.match(text, /apiserver_flowcontrol_current_executing_requests\{priority_level="catch-all",flow_schema="catch-all"\} 1/);
  assert.match(text, /apiserver_flowcontrol_current_executing_seats\{priority_level="catch-all",flow_schema="catch-all"\} 1/);
  assert.doesNotMatch(text, /apiserver_flowcontrol_request_concurrency_limit/);
  const dump = dispatcher.dumpPriorityLevels().split('\n');
  assert.equal(dump[0], 'PriorityLevelName, ActiveQueues, IsIdle, IsQuiescing, WaitingRequests, ExecutingRequests, DispatchedRequests, RejectedRequests, TimedoutRequests, CancelledRequests');
  assert.equal(dump[1], 'catch-all,         0,            false,  false,       0,               1,                 1,                  1,                0,                0');
  if (first.kind === 'execute') first.ticket.finish();
});

test("Go's tabwriter: columns as wide as their widest cell plus one, at least 8", () => {
  assert.equal(tabwrite(['a,\tbb,\tc', 'longer-name,\tx,\ty']), 'a,           bb,     c\nlonger-name, x,      y\n');
});

test("work estimates: kube's seats for a LIST by object count, a write by its watchers' fan-out", async () => {
  const { estimateWork, WatchTracker } = await import('../../../../server/flowcontrol/dispatch/work-estimator.ts');
  const watches = new WatchTracker();
  const sources = { objectCount: (r: string) => (r === 'configmaps' ? 1234 : undefined), watchCount: (d: RequestDigest) => watches.interested(d) };
  const alice: UserInfo = { name: 'alice', groups: ['system:authenticated'] };
  const q = (s = '') => () => new URLSearchParams(s);
  // From the cache: every object counts, one seat per 100, at most the level's max seats.
  assert.equal(estimateWork(digest(alice, 'list'), q(), 10, sources).initialSeats, 10);
  assert.equal(estimateWork(digest(alice, 'list'), q(), 4, sources).initialSeats, 4);
  // A page from storage: twice the limit; with a selector, everything plus the page.
  assert.equal(estimateWork(digest(alice, 'list'), q('limit=100&resourceVersion=5'), 10, sources).initialSeats, 2);
  assert.equal(estimateWork(digest(alice, 'list'), q('limit=100&continue=abc&labelSelector=a%3Db'), 10, sources).initialSeats, 10);
  // A list of one name, or of an unknown resource: one seat.
  assert.equal(estimateWork({ ...digest(alice, 'list'), name: 'x' }, q(), 10, sources).initialSeats, 1);
  assert.equal(estimateWork({ ...digest(alice, 'list'), resource: 'widgets' }, q(), 10, sources).initialSeats, 1);
  // A watch without initial events: one seat; with them, as a list.
  assert.equal(estimateWork(digest(alice, 'watch'), q(), 10, sources).initialSeats, 1);
  assert.equal(estimateWork(digest(alice, 'watch'), q('sendInitialEvents=true&resourceVersionMatch=NotOlderThan'), 10, sources).initialSeats, 10);
  // 25 watches of configmaps (cluster-wide and in the namespace): a create holds ceil(25/10) = 3
  // seats for 5 ms each after it answers; fewer than 10 watches cost nothing more.
  const forget = [...Array.from({ length: 20 }, () => watches.register({ ...digest(alice, 'watch'), namespace: '' })), ...Array.from({ length: 5 }, () => watches.register(digest(alice, 'watch')))];
  assert.deepEqual(estimateWork(digest(alice, 'create'), q(), 10, sources), { initialSeats: 1, finalSeats: 3, additionalLatencyMs: 5 });
  // Reshaped to the level's max seats, the work kept: 2 seats for 7.5 ms.
  assert.deepEqual(estimateWork(digest(alice, 'create'), q(), 2, sources), { initialSeats: 1, finalSeats: 2, additionalLatencyMs: 7.5 });
  for (const f of forget.slice(0, 20)) f();
  assert.deepEqual(estimateWork(digest(alice, 'create'), q(), 10, sources), { initialSeats: 1, finalSeats: 0, additionalLatencyMs: 0 });
});
