// The webhook authorizer's pieces as kube's webhook.go and authorization/cel have them: the
// SubjectAccessReview built from attributes (selectors, extra, omitempty, v1beta1's `group`), the
// answer decoded as client-go decodes it, matchConditions (false skips, errors go to the failure
// policy without a call), rulesFor; and the chain's union with asynchronous authorizers
// (synchronous while every answer is, errors aggregated, the deciding authorizer's error kept).
import { test } from 'node:test';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import assert from 'node:assert/strict';
import { subjectAccessReviewSpec, subjectAccessReviewBody, decodeReviewStatus, compileMatchCondition, webhookAuthorizer, type MatchCondition, type WebhookAuthorizerSettings } from '../../../server/authorization/webhook.ts';
import { authorize, type AuthorizationAttributes, type AuthorizationResult, type Authorizer } from '../../../server/authorization/authorizer.ts';

const pods = (extra: Partial<AuthorizationAttributes> = {}): AuthorizationAttributes => ({
  user: { name: 'alice', uid: 'u-1', groups: ['dev', 'system:authenticated'], extra: { 'z.example.com/b': ['2'], 'a.example.com/a': ['1'] } },
  verb: 'list',
  isResourceRequest: true,
  path: '/api/v1/namespaces/dev/pods',
  apiGroup: '',
  apiVersion: 'v1',
  resource: 'pods',
  subresource: '',
  namespace: 'dev',
  name: '',
  ...extra,
});

test('the spec kube builds: Go\'s field order, omitempty, extra keys sorted, selectors converted', () => {
  const spec = subjectAccessReviewSpec(pods());
  assert.equal(JSON.stringify(spec), '{"resourceAttributes":{"namespace":"dev","verb":"list","version":"v1","resource":"pods"},"user":"alice","groups":["dev","system:authenticated"],"extra":{"a.example.com/a":["1"],"z.example.com/b":["2"]},"uid":"u-1"}');
  // Selectors (AuthorizeWithSelectors): =, ==, in → In; != → NotIn; gt/lt have no SAR form and are dropped; a label exists → Exists without values.
  const withSelectors = {
    ...pods(),
    fieldSelectorRequirements: [
      { field: 'spec.nodeName', op: '=' as const, value: 'n1' },
      { field: 'metadata.name', op: '!=' as const, value: 'x' },
    ],
    labelSelectorRequirements: [
      { key: 'app', op: 'in' as const, values: ['a', 'b'] },
      { key: 'tier', op: 'exists' as const, values: [] },
      { key: 'old', op: '!' as const, values: [] },
      { key: 'n', op: 'gt' as const, values: ['1'] },
    ],
  };
  assert.deepEqual(subjectAccessReviewSpec(withSelectors).resourceAttributes, {
    namespace: 'dev',
    verb: 'list',
    version: 'v1',
    resource: 'pods',
    fieldSelector: { requirements: [{ key: 'spec.nodeName', operator: 'In', values: ['n1'] }, { key: 'metadata.name', operator: 'NotIn', values: ['x'] }] },
    labelSelector: { requirements: [{ key: 'app', operator: 'In', values: ['a', 'b'] }, { key: 'tier', operator: 'Exists' }, { key: 'old', operator: 'DoesNotExist' }] },
  });
  // A non-resource request; an anonymous user without groups, uid or extra.
  const anon = subjectAccessReviewSpec({ ...pods(), isResourceRequest: false, verb: 'get', path: '/healthz', user: { name: 'system:anonymous', groups: [], extra: {} } });
  assert.equal(JSON.stringify(anon), '{"nonResourceAttributes":{"path":"/healthz","verb":"get"},"user":"system:anonymous"}');
});

test('the body: the version\'s SubjectAccessReview, v1beta1 naming the groups `group`', () => {
  const spec = subjectAccessReviewSpec(pods({ user: { name: 'a', groups: ['g'] } }));
  assert.deepEqual(subjectAccessReviewBody(spec, 'v1beta1'), { kind: 'SubjectAccessReview', apiVersion: 'authorization.k8s.io/v1beta1', metadata: { creationTimestamp: null }, spec: { resourceAttributes: spec.resourceAttributes, user: 'a', group: ['g'] }, status: { allowed: false } });
  assert.deepEqual((subjectAccessReviewBody(spec, 'v1').spec as Record<string, unknown>).groups, ['g']);
});

test('the answer as client-go decodes it', () => {
  assert.deepEqual(decodeReviewStatus({ apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', status: { allowed: true, reason: 'ok' } }, 'v1'), { allowed: true, denied: false, reason: 'ok', evaluationError: '' });
  // apiVersion and kind may be left out; a missing status is all false.
  assert.deepEqual(decodeReviewStatus({}, 'v1beta1'), { allowed: false, denied: false, reason: '', evaluationError: '' });
  assert.throws(() => decodeReviewStatus({ status: { allowed: 'yes' } }, 'v1'), { message: 'json: cannot unmarshal string into Go struct field SubjectAccessReviewStatus.status.allowed of type bool' });
  assert.throws(() => decodeReviewStatus({ apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview' }, 'v1beta1'), { message: 'converting (v1.SubjectAccessReview) to (v1beta1.SubjectAccessReview): unknown conversion' });
  assert.throws(() => decodeReviewStatus({ apiVersion: 'v1', kind: 'Status' }, 'v1'), { message: 'no kind "Status" is registered for version "v1"' });
});

test('matchConditions compile in hearth\'s CEL with kube\'s variable and messages', () => {
  assert.ok('condition' in compileMatchCondition("has(request.resourceAttributes) && request.resourceAttributes.namespace == 'dev'"));
  assert.ok('condition' in compileMatchCondition("'dev' in request.groups && request.extra['a.example.com/a'][0] == '1'"));
  assert.ok('condition' in compileMatchCondition("has(request.resourceAttributes.fieldSelector) && request.resourceAttributes.fieldSelector.requirements.exists(r, r.key == 'spec.nodeName')"));
  assert.deepEqual(compileMatchCondition('request.user'), { error: 'must evaluate to bool but got string' });
  const bad = compileMatchCondition('request.nope');
  assert.ok('error' in bad && bad.error.startsWith('compilation failed: ERROR: <input>:1:8: undefined field \'nope\''), JSON.stringify(bad));
});

/** A webhook authorizer whose webhook is never reachable (port 1): what it decides without a call. */
function unreachable(failurePolicy: 'NoOpinion' | 'Deny', expressions: string[], logs: string[] = []) {
  const matchConditions: MatchCondition[] = expressions.map((e) => {
    const c = compileMatchCondition(e);
    if (!('condition' in c)) throw new Error(c.error);
    return c.condition;
  });
  const settings: WebhookAuthorizerSettings = {
    name: 'w',
    client: { file: '/dev/null', server: new URL('https://127.0.0.1:1/authorize'), insecureSkipTlsVerify: true },
    version: 'v1',
    timeoutMs: 1000,
    authorizedTtlMs: 60_000,
    unauthorizedTtlMs: 60_000,
    failurePolicy,
    matchConditions,
  };
  return webhookAuthorizer(settings, { log: (l) => logs.push(l), retryBackoff: { durationMs: 1, factor: 1, jitter: 0, steps: 1 } });
}

test('matchConditions: one false skips the webhook at once; an error (none false) is the failure policy\'s, with kube\'s error', () => {
  const skip = unreachable('Deny', ["request.user != 'alice'", "request.resourceAttributes.namespace == 'x'"]);
  assert.equal(skip.authorize(pods()), 'noopinion');
  // A non-resource request: selecting resourceAttributes is an evaluation error.
  const nonResource = pods({ isResourceRequest: false, verb: 'get', path: '/metrics' });
  const errorText = "cel evaluation error: expression 'request.resourceAttributes.namespace == 'x'' resulted in error: no such key: resourceAttributes";
  assert.deepEqual(unreachable('Deny', ["request.resourceAttributes.namespace == 'x'"]).authorize(nonResource), { decision: 'deny', reason: '', error: errorText });
  assert.deepEqual(unreachable('NoOpinion', ["request.resourceAttributes.namespace == 'x'"]).authorize(nonResource), { decision: 'noopinion', reason: '', error: errorText });
  // A false one wins over an error, wherever it is.
  assert.equal(unreachable('Deny', ["request.resourceAttributes.namespace == 'x'", "request.user == 'bob'"]).authorize(nonResource), 'noopinion');
  assert.deepEqual(unreachable('NoOpinion', []).rulesFor!({ name: 'a', groups: [] }, 'dev'), { resourceRules: [], nonResourceRules: [], incomplete: true, evaluationError: 'webhook authorizer does not support user rule resolution' });
});

test('a failed call: the failure policy\'s decision with client-go\'s error, logged as kube logs it', async () => {
  const logs: string[] = [];
  const w = unreachable('Deny', [], logs);
  const pending = w.authorize(pods());
  assert.ok(pending instanceof Promise, 'a call is asynchronous');
  const error = 'Post "https://127.0.0.1:1/authorize": dial tcp 127.0.0.1:1: connect: connection refused';
  assert.deepEqual(await pending, { decision: 'deny', reason: '', error });
  assert.deepEqual(logs, [`Failed to make webhook authorizer request: ${error}`]);
  w.close();
});

test('the union: synchronous while every answer is; a promise from the first that is not; errors aggregated', async () => {
  const sync = (name: string, r: ReturnType<Authorizer['authorize']>): Authorizer => ({ name, authorize: () => r });
  const later = (name: string, r: Awaited<ReturnType<Authorizer['authorize']>>): Authorizer => ({ name, authorize: () => Promise.resolve(r) });
  const allowNow = authorize([sync('a', 'noopinion'), sync('b', { decision: 'allow', reason: 'b' })], pods());
  assert.ok(!(allowNow instanceof Promise));
  assert.deepEqual(allowNow, { decision: 'allow', reason: 'b' });
  const chain = [sync('a', { decision: 'noopinion', reason: 'first', error: 'e1' }), later('w', { decision: 'noopinion', reason: 'second', error: 'e2' }), sync('c', 'noopinion')];
  const result = authorize(chain, pods());
  assert.ok(result instanceof Promise);
  assert.deepEqual(await result, { decision: 'noopinion', reason: 'first\nsecond', error: '[e1, e2]' });
  // The deciding authorizer's own error only (kube's union returns decision, reason, err of that one).
  assert.deepEqual(await authorize([sync('a', { decision: 'noopinion', reason: '', error: 'e1' }), later('w', { decision: 'deny', reason: 'no', error: 'both' })], pods()), { decision: 'deny', reason: 'no', error: 'both' });
  assert.deepEqual(await authorize([later('w', 'noopinion'), sync('b', 'allow')], pods()), { decision: 'allow', reason: '' });
});

// ---- calls to a webhook on loopback (plain HTTP: the client's TLS is the e2e test's) ----

/** A webhook that answers each call with the next of `answers` (the last one repeats), counting calls. */
async function scriptedWebhook(answers: ((res: http.ServerResponse) => void)[]): Promise<{ url: URL; calls: () => number; close: () => Promise<void> }> {
  let calls = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => answers[Math.min(calls++, answers.length - 1)](res));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/authorize`);
  return {
    url,
    calls: () => calls,
    close: () => new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    }),
  };
}

const json = (status: Record<string, unknown>) => (res: http.ServerResponse) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', status }));
};

function calling(url: URL, over: Partial<WebhookAuthorizerSettings> = {}, logs: string[] = []) {
  const settings: WebhookAuthorizerSettings = { name: 'w', client: { file: '/dev/null', server: url, insecureSkipTlsVerify: false }, version: 'v1', timeoutMs: 5000, authorizedTtlMs: 60_000, unauthorizedTtlMs: 60_000, failurePolicy: 'NoOpinion', matchConditions: [], ...over };
  return webhookAuthorizer(settings, { log: (l) => logs.push(l), retryBackoff: { durationMs: 1, factor: 1.5, jitter: 0, steps: 5 } });
}

test('denied decisions are kept for unauthorizedTTL and answered at once; a TTL of 0 keeps none', async () => {
  const hook = await scriptedWebhook([json({ allowed: false, denied: true, reason: 'no' })]);
  try {
    const w = calling(hook.url);
    assert.deepEqual(await w.authorize(pods()), { decision: 'deny', reason: 'no' });
    const again = w.authorize(pods());
    assert.ok(!(again instanceof Promise), 'a kept decision answers synchronously');
    assert.deepEqual(again, { decision: 'deny', reason: 'no' });
    assert.equal(hook.calls(), 1);
    w.close();
    const uncached = calling(hook.url, { unauthorizedTtlMs: 0 });
    await uncached.authorize(pods());
    await uncached.authorize(pods());
    assert.equal(hook.calls(), 3);
    uncached.close();
  } finally {
    await hook.close();
  }
});

test('kube\'s retry: a 500 is asked again; the timeout ends a call that never answers (failure policy, with the error)', async () => {
  const crash = (res: http.ServerResponse) => {
    res.writeHead(500, { 'content-type': 'text/plain' });
    res.end('crashed');
  };
  const flaky = await scriptedWebhook([crash, json({ allowed: true, reason: 'second time lucky' })]);
  try {
    const w = calling(flaky.url);
    assert.deepEqual(await w.authorize(pods()), { decision: 'allow', reason: 'second time lucky' });
    assert.equal(flaky.calls(), 2);
    w.close();
  } finally {
    await flaky.close();
  }
  const silent = await scriptedWebhook([() => {}]);
  try {
    const logs: string[] = [];
    const w = calling(silent.url, { timeoutMs: 200, failurePolicy: 'Deny' }, logs);
    const r = (await w.authorize(pods())) as AuthorizationResult;
    assert.equal(r.decision, 'deny');
    assert.match(String(r.error), /^Post "http:\/\/127\.0\.0\.1:\d+\/authorize": context deadline exceeded/);
    assert.equal(logs.length, 1);
    assert.equal(silent.calls(), 1, 'a timeout is not retried');
    w.close();
  } finally {
    await silent.close();
  }
});
