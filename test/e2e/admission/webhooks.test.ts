// Admission webhooks through HTTPS, with a real webhook server on loopback (its own CA): what
// the webhook receives (every field of the AdmissionReview, the admin's, a token user's and a
// service account's userInfo, `?timeout=`), JSONPatch mutations, denials in kube's words with
// the webhook's code, timeouts and dead webhooks under failurePolicy Fail and Ignore, namespace
// and object selectors, match conditions, reinvocation, dry run, warnings, updates' oldObject,
// deletes, a subresource, a `service` reference routed to the Service's endpoints, kube's
// exemption of its own configuration objects, and the validation of the configurations.
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as net from 'node:net';
import { dig, requester, type Credentials } from '../../helpers/identities.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { startAdmissionWebhook, type AdmissionWebhook } from '../../helpers/admission-webhook.ts';

const dir = mkdtempSync(join(tmpdir(), 'hearth-admission-webhooks-'));
const tokenFile = join(dir, 'tokens.csv');
writeFileSync(tokenFile, 'bob-token,bob,bob-uid,"team-a-editors"\n');

let s: TestServer;
let wh: AdmissionWebhook;
const requestAs = requester(() => s);
const bob: Credentials = { token: 'bob-token' };
let robot: Credentials;
/** A loopback port nothing listens on (a dead webhook). */
let deadPort: number;

const ADMISSION = '/apis/admissionregistration.k8s.io/v1';
const MUTATING = `${ADMISSION}/mutatingwebhookconfigurations`;
const VALIDATING = `${ADMISSION}/validatingwebhookconfigurations`;
const CM = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;

before(async () => {
  wh = await startAdmissionWebhook({ sans: ['hook.team-a.svc'] });
  s = await startTestServer({ options: { tokenAuthFile: tokenFile } });
  for (const ns of ['team-a', 'team-b']) assert.equal((await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: ns, labels: { env: ns === 'team-a' ? 'prod' : 'dev' } } } })).status, 201);
  // bob edits team-a; the service account team-a/robot too.
  assert.equal((await s.request('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings', { body: { metadata: { name: 'editors' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' }, subjects: [{ kind: 'Group', name: 'team-a-editors' }, { kind: 'ServiceAccount', name: 'robot', namespace: 'team-a' }] } })).status, 201);
  assert.equal((await s.request('POST', '/api/v1/namespaces/team-a/serviceaccounts', { body: { metadata: { name: 'robot' } } })).status, 201);
  const token = await s.request('POST', '/api/v1/namespaces/team-a/serviceaccounts/robot/token', { body: { spec: { audiences: [] } } });
  assert.equal(token.status, 201, token.text);
  robot = { token: token.json().status.token };
  const probe = net.createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  deadPort = (probe.address() as net.AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));
});

after(async () => {
  await s?.stop();
  await wh?.close();
  rmSync(dir, { recursive: true, force: true });
});

beforeEach(async () => {
  wh.reset();
  // Each test installs its own configurations.
  for (const list of [MUTATING, VALIDATING]) assert.equal((await s.request('DELETE', list)).status, 200);
});

interface HookOptions {
  path: string;
  name?: string;
  rules?: unknown[];
  url?: string;
  [k: string]: unknown;
}

/** One webhook (its name from the path) on the test server, for configmaps CREATE unless told. */
function hook(o: HookOptions): Record<string, unknown> {
  const { path, name, rules, url, ...rest } = o;
  return {
    name: name ?? `${path.slice(1)}.hearth.test`,
    clientConfig: { url: url ?? `${wh.base}${path}`, caBundle: wh.caBundle },
    rules: rules ?? [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
    admissionReviewVersions: ['v1'],
    sideEffects: 'None',
    ...rest,
  };
}

async function install(list: string, name: string, webhooks: unknown[]): Promise<void> {
  const r = await s.request('POST', list, { body: { metadata: { name }, webhooks } });
  assert.equal(r.status, 201, r.text);
}

const configMap = (name: string, extra: Record<string, unknown> = {}) => ({ metadata: { name, ...extra }, data: { k: 'v' } });

test('a mutating webhook receives every field kube sends and its JSONPatch is applied', async () => {
  await install(MUTATING, 'labeler', [hook({ path: '/mutate', timeoutSeconds: 7 })]);
  wh.handle(() => ({ allowed: true, patch: [{ op: 'add', path: '/metadata/labels', value: { mutated: 'yes' } }] }));
  const created = await s.request('POST', CM('team-a'), { body: configMap('cm-mutated') });
  assert.equal(created.status, 201, created.text);
  assert.deepEqual(created.json().metadata.labels, { mutated: 'yes' });
  // The stored object has it too.
  assert.deepEqual((await s.request('GET', `${CM('team-a')}/cm-mutated`)).json().metadata.labels, { mutated: 'yes' });

  const [got] = wh.received;
  assert.equal(got!.query, 'timeout=7s');
  assert.equal(got!.headers['content-type'], 'application/json');
  const review = got!.review;
  assert.equal(review.apiVersion, 'admission.k8s.io/v1');
  assert.equal(review.kind, 'AdmissionReview');
  const req = review.request;
  assert.match(req.uid, /^[0-9a-f-]{36}$/);
  assert.deepEqual(req.kind, { group: '', version: 'v1', kind: 'ConfigMap' });
  assert.deepEqual(req.resource, { group: '', version: 'v1', resource: 'configmaps' });
  assert.deepEqual(req.requestKind, { group: '', version: 'v1', kind: 'ConfigMap' });
  assert.deepEqual(req.requestResource, { group: '', version: 'v1', resource: 'configmaps' });
  assert.equal(req.subResource, undefined);
  assert.equal(req.name, 'cm-mutated');
  assert.equal(req.namespace, 'team-a');
  assert.equal(req.operation, 'CREATE');
  assert.equal(req.object?.metadata.name, 'cm-mutated');
  assert.deepEqual(req.object?.data, { k: 'v' });
  assert.equal(req.oldObject, null);
  assert.equal(req.dryRun, false);
  assert.equal(req.options?.kind, 'CreateOptions');
  assert.equal(req.options?.apiVersion, 'meta.k8s.io/v1');
  const self = await s.request('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } });
  assert.equal(req.userInfo.username, self.json().status.userInfo.username);
  assert.deepEqual(req.userInfo.groups, self.json().status.userInfo.groups);
});

test('a namespaced token user and a service account are who the webhook sees, and kubectl writes go through it', async () => {
  await install(MUTATING, 'labeler', [hook({ path: '/mutate' })]);
  wh.handle(() => ({ allowed: true, patch: [{ op: 'add', path: '/data/seen', value: 'by-webhook' }] }));
  const byBob = await requestAs(bob, 'POST', CM('team-a'), configMap('cm-bob'));
  assert.equal(byBob.status, 201, byBob.text);
  assert.equal(dig(byBob.json, 'data', 'seen'), 'by-webhook');
  const byRobot = await requestAs(robot, 'POST', CM('team-a'), configMap('cm-robot'));
  assert.equal(byRobot.status, 201, byRobot.text);
  const users = wh.received.map((r) => r.review.request.userInfo);
  assert.equal(users[0].username, 'bob');
  assert.equal(users[0].uid, 'bob-uid');
  assert.deepEqual(users[0].groups, ['team-a-editors', 'system:authenticated']);
  assert.equal(users[1].username, 'system:serviceaccount:team-a:robot');
  assert.ok(users[1].groups.includes('system:serviceaccounts:team-a'));
  assert.ok(users[1].extra['authentication.kubernetes.io/credential-id']);
  const k = await s.kubectl(['create', 'configmap', 'cm-kubectl', '-n', 'team-a', '--from-literal=a=b', '-o', 'json']);
  assert.equal(k.code, 0, k.stderr);
  assert.equal(JSON.parse(k.stdout).data.seen, 'by-webhook');
  // One kept-alive connection serves the calls.
  assert.ok(wh.connections < wh.received.length, `${wh.connections} connections for ${wh.received.length} calls`);
});

test('a denial is kube\'s Status with the webhook\'s code and message, and nothing is stored', async () => {
  await install(VALIDATING, 'gate', [hook({ path: '/deny' })]);
  wh.handle(() => ({ allowed: false, status: { code: 403, message: 'no way' } }));
  const r = await requestAs(bob, 'POST', CM('team-a'), configMap('cm-denied'));
  assert.equal(r.status, 403);
  assert.deepEqual(r.json, {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'configmaps "cm-denied" is forbidden: admission webhook "deny.hearth.test" denied the request: no way',
    reason: 'Forbidden',
    details: { name: 'cm-denied', kind: 'configmaps' },
    code: 403,
  });
  assert.equal((await s.request('GET', `${CM('team-a')}/cm-denied`)).status, 404);
  // The webhook's own code and reason are kept; no message falls back to its reason.
  wh.handle(() => ({ allowed: false, status: { code: 409, reason: 'AlreadyExists' } }));
  const conflict = await s.request('POST', CM('team-a'), { body: configMap('cm-denied') });
  assert.equal(conflict.status, 409);
  assert.equal(conflict.json().reason, 'AlreadyExists');
  assert.equal(conflict.json().message, 'configmaps "cm-denied" is forbidden: admission webhook "deny.hearth.test" denied the request: AlreadyExists');
  wh.handle(() => ({ allowed: false }));
  const bare = await s.request('POST', CM('team-a'), { body: configMap('cm-denied') });
  assert.equal(bare.json().message, 'configmaps "cm-denied" is forbidden: admission webhook "deny.hearth.test" denied the request without explanation');
  const k = await s.kubectl(['create', 'configmap', 'cm-denied', '-n', 'team-a']);
  assert.notEqual(k.code, 0);
  assert.match(k.stderr, /admission webhook "deny.hearth.test" denied the request without explanation/);
});

test('a webhook slower than timeoutSeconds fails closed with kube\'s message, or open with Ignore', async () => {
  wh.handle(() => ({ delayMs: 4000 }));
  await install(VALIDATING, 'slow', [hook({ path: '/slow', timeoutSeconds: 1 })]);
  const closed = await s.request('POST', CM('team-a'), { body: configMap('cm-slow') });
  assert.equal(closed.status, 500);
  const message = `failed calling webhook "slow.hearth.test": failed to call webhook: Post "${wh.base}/slow?timeout=1s": context deadline exceeded`;
  assert.deepEqual(closed.json(), { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `Internal error occurred: ${message}`, reason: 'InternalError', details: { causes: [{ message }] }, code: 500 });
  assert.equal((await s.request('GET', `${CM('team-a')}/cm-slow`)).status, 404);
  assert.equal((await s.request('DELETE', VALIDATING)).status, 200);
  await install(VALIDATING, 'slow', [hook({ path: '/slow', timeoutSeconds: 1, failurePolicy: 'Ignore' })]);
  assert.equal((await s.request('POST', CM('team-a'), { body: configMap('cm-slow') })).status, 201);
});

test('a dead webhook fails closed (connection refused in Go\'s words) or open', async () => {
  const url = `https://127.0.0.1:${deadPort}/down`;
  await install(MUTATING, 'dead', [hook({ path: '/down', url })]);
  const closed = await s.request('POST', CM('team-a'), { body: configMap('cm-dead') });
  assert.equal(closed.status, 500);
  assert.equal(closed.json().message, `Internal error occurred: failed calling webhook "down.hearth.test": failed to call webhook: Post "${url}?timeout=10s": dial tcp 127.0.0.1:${deadPort}: connect: connection refused`);
  assert.equal((await s.request('DELETE', MUTATING)).status, 200);
  await install(MUTATING, 'dead', [hook({ path: '/down', url, failurePolicy: 'Ignore' })]);
  assert.equal((await s.request('POST', CM('team-a'), { body: configMap('cm-dead') })).status, 201);
  // A webhook that closes the connection without answering, failing closed.
  assert.equal((await s.request('DELETE', MUTATING)).status, 200);
  await install(MUTATING, 'hangup', [hook({ path: '/hangup' })]);
  wh.handle(() => ({ down: true }));
  const eof = await s.request('POST', CM('team-a'), { body: configMap('cm-hangup') });
  assert.equal(eof.status, 500);
  assert.equal(eof.json().message, `Internal error occurred: failed calling webhook "hangup.hearth.test": failed to call webhook: Post "${wh.base}/hangup?timeout=10s": EOF`);
});

test('a response that breaks kube\'s rules is a failed call', async () => {
  await install(VALIDATING, 'liar', [hook({ path: '/liar' })]);
  wh.handle(() => ({ raw: { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'not-the-uid', allowed: true } } }));
  const r = await s.request('POST', CM('team-a'), { body: configMap('cm-liar') });
  assert.equal(r.status, 500);
  assert.match(r.json().message, /^Internal error occurred: failed calling webhook "liar.hearth.test": received invalid webhook response: expected response.uid="[0-9a-f-]{36}", got "not-the-uid"$/);
  wh.handle((review) => ({ raw: { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: review.request.uid, allowed: true, patchType: 'JSONPatch', patch: 'W10=' } } }));
  const patching = await s.request('POST', CM('team-a'), { body: configMap('cm-liar') });
  assert.equal(patching.json().message, 'Internal error occurred: failed calling webhook "liar.hearth.test": received invalid webhook response: validating webhook may not return response.patch');
});

test('namespaceSelector and objectSelector choose what is sent', async () => {
  await install(VALIDATING, 'selective', [hook({ path: '/prod', namespaceSelector: { matchLabels: { env: 'prod' } } }), hook({ path: '/labelled', objectSelector: { matchExpressions: [{ key: 'watched', operator: 'Exists' }] } })]);
  assert.equal((await s.request('POST', CM('team-a'), { body: configMap('cm-sel-1') })).status, 201);
  assert.equal((await s.request('POST', CM('team-b'), { body: configMap('cm-sel-2') })).status, 201);
  assert.equal((await s.request('POST', CM('team-b'), { body: configMap('cm-sel-3', { labels: { watched: 'true' } }) })).status, 201);
  assert.deepEqual(
    wh.reviewsAt('/prod').map((r) => r.request.name),
    ['cm-sel-1'],
  );
  assert.deepEqual(
    wh.reviewsAt('/labelled').map((r) => r.request.name),
    ['cm-sel-3'],
  );
});

test('matchConditions in CEL decide the call; an error fails closed with Fail and skips with Ignore', async () => {
  await install(VALIDATING, 'conditional', [
    hook({ path: '/cond', matchConditions: [{ name: 'prefixed', expression: "object.metadata.name.startsWith('wh-')" }, { name: 'not-admin', expression: "request.userInfo.username != 'nobody'" }] }),
  ]);
  assert.equal((await s.request('POST', CM('team-a'), { body: configMap('wh-one') })).status, 201);
  assert.equal((await s.request('POST', CM('team-a'), { body: configMap('other') })).status, 201);
  assert.deepEqual(
    wh.reviewsAt('/cond').map((r) => r.request.name),
    ['wh-one'],
  );
  assert.equal((await s.request('DELETE', VALIDATING)).status, 200);
  await install(VALIDATING, 'erroring', [hook({ path: '/err', matchConditions: [{ name: 'missing', expression: 'object.data.nope == "x"' }] })]);
  const r = await s.request('POST', CM('team-a'), { body: configMap('wh-two') });
  assert.equal(r.status, 403);
  assert.equal(r.json().message, `configmaps "wh-two" is forbidden: expression 'object.data.nope == "x"' resulted in error: no such key: nope`);
  assert.equal((await s.request('DELETE', VALIDATING)).status, 200);
  await install(VALIDATING, 'erroring', [hook({ path: '/err', failurePolicy: 'Ignore', matchConditions: [{ name: 'missing', expression: 'object.data.nope == "x"' }] })]);
  assert.equal((await s.request('POST', CM('team-a'), { body: configMap('wh-two') })).status, 201);
  assert.equal(wh.reviewsAt('/err').length, 0);
});

test('a match condition asks the authorizer: the webhook is skipped for who may manage RoleBindings', async () => {
  const mayBind = "authorizer.group('rbac.authorization.k8s.io').resource('rolebindings').namespace('team-a').check('create').allowed()";
  await install(VALIDATING, 'non-admins', [hook({ path: '/non-admins', matchConditions: [{ name: 'not-a-binder', expression: `!${mayBind}` }] })]);
  assert.equal((await s.request('POST', CM('team-a'), { body: configMap('wh-by-admin') })).status, 201);
  assert.equal((await requestAs(bob, 'POST', CM('team-a'), configMap('wh-by-bob'))).status, 201);
  assert.deepEqual(
    wh.reviewsAt('/non-admins').map((r) => r.request.name),
    ['wh-by-bob'],
  );
});

test('reinvocationPolicy IfNeeded calls a webhook again after a later one changed the object', async () => {
  // Configurations run in name order: a-first, then b-second.
  await install(MUTATING, 'a-first', [hook({ path: '/first', reinvocationPolicy: 'IfNeeded' })]);
  await install(MUTATING, 'b-second', [hook({ path: '/second' })]);
  wh.handle((review, path) => {
    const labels = review.request.object?.metadata.labels ?? {};
    if (path === '/first') return labels.first ? { allowed: true } : { allowed: true, patch: [{ op: 'add', path: '/metadata/labels', value: { ...labels, first: String(Object.keys(labels).length) } }] };
    return labels?.second ? { allowed: true } : { allowed: true, patch: [{ op: 'add', path: '/metadata/labels', value: { ...labels, second: 'yes' } }] };
  });
  const r = await s.request('POST', CM('team-a'), { body: configMap('cm-reinvoked') });
  assert.equal(r.status, 201, r.text);
  assert.deepEqual(r.json().metadata.labels, { first: '0', second: 'yes' });
  // first, second, then first again (round 1), which saw second's label.
  assert.deepEqual(
    wh.received.map((x) => x.path),
    ['/first', '/second', '/first'],
  );
  assert.equal(wh.received[2]!.review.request.object?.metadata.labels?.second, 'yes');
  // With Never, no second round.
  wh.reset();
  assert.equal((await s.request('DELETE', `${MUTATING}/a-first`)).status, 200);
  await install(MUTATING, 'a-first', [hook({ path: '/first' })]);
  wh.handle((review, path) => (path === '/second' ? { allowed: true, patch: [{ op: 'add', path: '/metadata/annotations', value: { second: 'yes' } }] } : { allowed: true }));
  assert.equal((await s.request('POST', CM('team-a'), { body: configMap('cm-once') })).status, 201);
  assert.deepEqual(
    wh.received.map((x) => x.path),
    ['/first', '/second'],
  );
});

test('a dry run tells the webhook dryRun: true and stores nothing; sideEffects must be None or NoneOnDryRun', async () => {
  await install(VALIDATING, 'dry', [hook({ path: '/dry', sideEffects: 'NoneOnDryRun' })]);
  const r = await requestAs(bob, 'POST', `${CM('team-a')}?dryRun=All`, configMap('cm-dry'));
  assert.equal(r.status, 201, r.text);
  assert.equal(wh.reviewsAt('/dry')[0].request.dryRun, true);
  assert.equal((await s.request('GET', `${CM('team-a')}/cm-dry`)).status, 404);
  const k = await s.kubectl(['create', 'configmap', 'cm-dry', '-n', 'team-a', '--dry-run=server']);
  assert.equal(k.code, 0, k.stderr);
  assert.equal(wh.reviewsAt('/dry').length, 2);
  // Webhooks with side effects cannot be created at v1 (so kube's dry-run refusal never comes up).
  const bad = await s.request('POST', VALIDATING, { body: { metadata: { name: 'effects' }, webhooks: [hook({ path: '/fx', sideEffects: 'Unknown' })] } });
  assert.equal(bad.status, 422);
  assert.deepEqual(bad.json().details.causes, [{ reason: 'FieldValueNotSupported', message: 'Unsupported value: "Unknown": supported values: "None", "NoneOnDryRun"', field: 'webhooks[0].sideEffects' }]);
});

test('warnings from the webhook reach the client as Warning headers', async () => {
  await install(VALIDATING, 'warner', [hook({ path: '/warn' })]);
  wh.handle(() => ({ allowed: true, warnings: ['first warning', 'second warning'] }));
  const r = await s.request('POST', CM('team-a'), { body: configMap('cm-warned') });
  assert.equal(r.status, 201);
  assert.equal(r.headers.warning, '299 - "first warning", 299 - "second warning"');
  const k = await s.kubectl(['create', 'configmap', 'cm-warned-2', '-n', 'team-a']);
  assert.equal(k.code, 0, k.stderr);
  assert.match(k.stderr, /Warning: first warning/);
});

test('an update sends oldObject and UpdateOptions; a patch too', async () => {
  assert.equal((await s.request('POST', CM('team-a'), { body: configMap('cm-upd') })).status, 201);
  await install(VALIDATING, 'updates', [hook({ path: '/upd', rules: [{ operations: ['UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }] })]);
  const current = (await s.request('GET', `${CM('team-a')}/cm-upd`)).json();
  const put = await requestAs(bob, 'PUT', `${CM('team-a')}/cm-upd`, { ...current, data: { k: 'v2' } });
  assert.equal(put.status, 200, put.text);
  const [review] = wh.reviewsAt('/upd');
  assert.equal(review.request.operation, 'UPDATE');
  assert.deepEqual(review.request.oldObject?.data, { k: 'v' });
  assert.deepEqual(review.request.object?.data, { k: 'v2' });
  assert.equal(review.request.options?.kind, 'UpdateOptions');
  const patch = await s.request('PATCH', `${CM('team-a')}/cm-upd`, { body: { data: { k: 'v3' } }, headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(patch.status, 200);
  assert.deepEqual(wh.reviewsAt('/upd')[1].request.oldObject?.data, { k: 'v2' });
});

test('a delete sends oldObject and DeleteOptions; a denied delete leaves the object', async () => {
  assert.equal((await s.request('POST', CM('team-a'), { body: configMap('cm-del') })).status, 201);
  await install(VALIDATING, 'deletes', [hook({ path: '/del', rules: [{ operations: ['DELETE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }] })]);
  wh.handle(() => ({ allowed: false, status: { message: 'keep it' } }));
  const r = await requestAs(bob, 'DELETE', `${CM('team-a')}/cm-del`);
  assert.equal(r.status, 403);
  assert.equal(dig(r.json, 'message'), 'configmaps "cm-del" is forbidden: admission webhook "del.hearth.test" denied the request: keep it');
  assert.equal((await s.request('GET', `${CM('team-a')}/cm-del`)).status, 200);
  const [review] = wh.reviewsAt('/del');
  assert.equal(review.request.operation, 'DELETE');
  assert.equal(review.request.object, null);
  assert.equal(review.request.oldObject?.metadata.name, 'cm-del');
  assert.equal(review.request.options?.kind, 'DeleteOptions');
  wh.handle(() => ({ allowed: true }));
  assert.equal((await s.request('DELETE', `${CM('team-a')}/cm-del`)).status, 200);
});

test('a subresource: deployments/scale is sent with its subResource and the Scale', async () => {
  const deployment = { metadata: { name: 'web' }, spec: { replicas: 1, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } } };
  assert.equal((await s.request('POST', '/apis/apps/v1/namespaces/team-a/deployments', { body: deployment })).status, 201);
  await install(VALIDATING, 'scale', [hook({ path: '/scale', rules: [{ operations: ['UPDATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments/scale'] }] })]);
  wh.handle(() => ({ allowed: false, status: { message: 'no scaling' } }));
  const k = await s.kubectl(['scale', 'deployment/web', '-n', 'team-a', '--replicas=3']);
  assert.notEqual(k.code, 0);
  assert.match(k.stderr, /admission webhook "scale.hearth.test" denied the request: no scaling/);
  const [review] = wh.reviewsAt('/scale');
  assert.equal(review.request.subResource, 'scale');
  assert.equal(review.request.requestSubResource, 'scale');
  assert.deepEqual(review.request.resource, { group: 'apps', version: 'v1', resource: 'deployments' });
  assert.equal(review.request.object?.spec?.replicas, 3);
  assert.equal(review.request.oldObject?.spec?.replicas, 1);
  // A plain update of the deployment is not a scale.
  const current = (await s.request('GET', '/apis/apps/v1/namespaces/team-a/deployments/web')).json();
  assert.equal((await s.request('PUT', '/apis/apps/v1/namespaces/team-a/deployments/web', { body: { ...current, metadata: { ...current.metadata, labels: { x: 'y' } } } })).status, 200);
  assert.equal(wh.reviewsAt('/scale').length, 1);
});

test('a service reference reaches the webhook through the Service\'s endpoints', async () => {
  assert.equal((await s.request('POST', '/api/v1/namespaces/team-a/services', { body: { metadata: { name: 'hook' }, spec: { ports: [{ name: 'https', port: 443, targetPort: wh.port }] } } })).status, 201);
  assert.equal((await s.request('POST', '/api/v1/namespaces/team-a/endpoints', { body: { metadata: { name: 'hook' }, subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port: wh.port }] }] } })).status, 201);
  await install(MUTATING, 'by-service', [{ ...hook({ path: '/svc' }), clientConfig: { service: { namespace: 'team-a', name: 'hook', path: '/svc' }, caBundle: wh.caBundle } }]);
  wh.handle(() => ({ allowed: true, patch: [{ op: 'add', path: '/data/via', value: 'service' }] }));
  const r = await s.request('POST', CM('team-b'), { body: configMap('cm-svc') });
  assert.equal(r.status, 201, r.text);
  assert.equal(r.json().data.via, 'service');
  assert.equal(wh.received[0]!.headers.host, 'hook.team-a.svc:443');
  assert.equal(wh.received[0]!.query, 'timeout=10s');
});

test('kube\'s own configuration objects never reach webhooks', async () => {
  await install(VALIDATING, 'everything', [hook({ path: '/all', rules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'] }] })]);
  wh.handle(() => ({ allowed: false, status: { message: 'nothing passes' } }));
  await install(VALIDATING, 'another', [hook({ path: '/another' })]);
  assert.equal((await s.request('DELETE', `${VALIDATING}/another`)).status, 200);
  assert.equal(wh.reviewsAt('/all').length, 0);
  assert.equal((await s.request('POST', CM('team-a'), { body: configMap('cm-all') })).status, 403);
});

test('configurations are validated as kube validates them', async () => {
  const r = await s.request('POST', MUTATING, {
    body: {
      metadata: { name: 'bad' },
      webhooks: [
        { name: 'short', clientConfig: { url: 'http://x/y?q=1' }, sideEffects: 'None', admissionReviewVersions: ['v2'], timeoutSeconds: 31, rules: [{ operations: ['CREATE', '*'], apiGroups: [''], apiVersions: ['v1'], resources: ['*/*', 'pods'] }], matchConditions: [{ name: 'c', expression: 'object.' }] },
        { name: 'dup.hearth.test', clientConfig: { url: 'https://x' }, sideEffects: 'None', admissionReviewVersions: ['v1'] },
        { name: 'dup.hearth.test', clientConfig: {}, admissionReviewVersions: ['v1'] },
      ],
    },
  });
  assert.equal(r.status, 422, r.text);
  const causes = r.json().details.causes.map((c: { field: string; message: string }) => `${c.field}: ${c.message}`);
  for (const expected of [
    'webhooks[0].name: Invalid value: "short": should be a domain with at least three segments separated by dots',
    "webhooks[0].rules[0].operations: Invalid value: []string{\"CREATE\", \"*\"}: if '*' is present, must not specify other operations",
    "webhooks[0].rules[0].resources: Invalid value: []string{\"*/*\", \"pods\"}: if '*/*' is present, must not specify other resources",
    'webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds',
    `webhooks[0].clientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]`,
    'webhooks[0].clientConfig.url: Invalid value: "q=1": query parameters are not permitted in the URL',
    'webhooks[0].admissionReviewVersions: Invalid value: []string{"v2"}: must include at least one of v1, v1beta1',
    'webhooks[2].sideEffects: Required value: must specify one of None, NoneOnDryRun',
    'webhooks[2].clientConfig: Required value: exactly one of url or service is required',
    'webhooks[2].name: Duplicate value: "dup.hearth.test"',
  ]) {
    assert.ok(causes.includes(expected), `missing ${expected} in\n${causes.join('\n')}`);
  }
  assert.ok(causes.some((c: string) => c.startsWith('webhooks[0].matchConditions[0].expression: Invalid value: "object.": compilation failed: ')), causes.join('\n'));
  assert.equal((await s.request('GET', `${MUTATING}/bad`)).status, 404);
});

test('matchPolicy Equivalent sends the object at the webhook\'s version and takes its patch back; Exact does not match', async () => {
  const hpa = (name: string) => ({ metadata: { name }, spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, minReplicas: 1, maxReplicas: 3, targetCPUUtilizationPercentage: 50 } });
  const v2Rule = [{ operations: ['CREATE'], apiGroups: ['autoscaling'], apiVersions: ['v2'], resources: ['horizontalpodautoscalers'] }];
  await install(MUTATING, 'hpa', [hook({ path: '/hpa', rules: v2Rule })]);
  await install(VALIDATING, 'hpa-exact', [hook({ path: '/exact', rules: v2Rule, matchPolicy: 'Exact' })]);
  wh.handle((review) => (review.request.object?.metadata.labels ? { allowed: true } : { allowed: true, patch: [{ op: 'add', path: '/metadata/labels', value: { seen: 'v2' } }] }));
  const r = await requestAs(bob, 'POST', '/apis/autoscaling/v1/namespaces/team-a/horizontalpodautoscalers', hpa('web-v1'));
  assert.equal(r.status, 201, r.text);
  assert.deepEqual(dig(r.json, 'metadata', 'labels'), { seen: 'v2' });
  assert.equal(dig(r.json, 'apiVersion'), 'autoscaling/v1');
  assert.equal(dig(r.json, 'spec', 'targetCPUUtilizationPercentage'), 50);
  const [review] = wh.reviewsAt('/hpa');
  assert.deepEqual(review!.request.kind, { group: 'autoscaling', version: 'v2', kind: 'HorizontalPodAutoscaler' });
  assert.deepEqual(review!.request.resource, { group: 'autoscaling', version: 'v2', resource: 'horizontalpodautoscalers' });
  assert.deepEqual(review!.request.requestKind, { group: 'autoscaling', version: 'v1', kind: 'HorizontalPodAutoscaler' });
  assert.deepEqual(review!.request.requestResource, { group: 'autoscaling', version: 'v1', resource: 'horizontalpodautoscalers' });
  const sent = review!.request.object as unknown as { apiVersion: string; spec: { metrics: unknown[] } };
  assert.equal(sent.apiVersion, 'autoscaling/v2');
  assert.equal(sent.spec.metrics.length, 1);
  assert.equal(wh.reviewsAt('/exact').length, 0);
});

test('a webhook that speaks only admission.k8s.io/v1beta1 gets a v1beta1 review', async () => {
  await install(MUTATING, 'old', [hook({ path: '/old', admissionReviewVersions: ['v1beta1'] })]);
  wh.handle(() => ({ raw: { apiVersion: 'admission.k8s.io/v1beta1', kind: 'AdmissionReview', response: { allowed: true, patch: Buffer.from(JSON.stringify([{ op: 'add', path: '/data/old', value: 'yes' }])).toString('base64') } } }));
  const r = await s.request('POST', CM('team-a'), { body: configMap('cm-v1beta1') });
  assert.equal(r.status, 201, r.text);
  assert.equal(r.json().data.old, 'yes');
  assert.equal(wh.reviewsAt('/old')[0]!.apiVersion, 'admission.k8s.io/v1beta1');
});

test('a patched object is decoded into its kind again: unknown fields dropped, quantities canonical', async () => {
  await install(MUTATING, 'decoder', [hook({ path: '/decode', rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps', 'resourcequotas'] }] })]);
  wh.handle((review) =>
    review.request.kind.kind === 'ConfigMap'
      ? { allowed: true, patch: [{ op: 'add', path: '/bogus', value: 'x' }, { op: 'add', path: '/data/added', value: 'y' }] }
      : { allowed: true, patch: [{ op: 'add', path: '/spec/hard/cpu', value: '1000m' }] },
  );
  const cm = await s.request('POST', CM('team-a'), { body: configMap('cm-decoded') });
  assert.equal(cm.status, 201, cm.text);
  assert.equal(cm.json().bogus, undefined);
  assert.equal(cm.json().data.added, 'y');
  const quota = await s.request('POST', '/api/v1/namespaces/team-a/resourcequotas', { body: { metadata: { name: 'q' }, spec: { hard: { pods: '10' } } } });
  assert.equal(quota.status, 201, quota.text);
  assert.deepEqual(quota.json().spec.hard, { cpu: '1', pods: '10' });
});

test('--disable-admission-plugins turns a webhook plugin off: its webhooks are not called', async () => {
  const other = await startTestServer({ options: { disableAdmissionPlugins: ['ValidatingAdmissionWebhook'] } });
  try {
    const cfg = { metadata: { name: 'gate' }, webhooks: [hook({ path: '/off' })] };
    assert.equal((await other.request('POST', VALIDATING, { body: cfg })).status, 201);
    assert.equal((await other.request('POST', MUTATING, { body: { metadata: { name: 'labeler' }, webhooks: [hook({ path: '/on' })] } })).status, 201);
    wh.handle((_review, path) => (path === '/off' ? { allowed: false } : { allowed: true, patch: [{ op: 'add', path: '/data/mutated', value: 'yes' }] }));
    const r = await other.request('POST', '/api/v1/namespaces/default/configmaps', { body: configMap('cm-off') });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json().data.mutated, 'yes');
    assert.equal(wh.reviewsAt('/off').length, 0);
    assert.equal(wh.reviewsAt('/on').length, 1);
  } finally {
    await other.stop();
  }
});

test('validating webhooks are all called, after the mutating ones, and see the mutated object', async () => {
  await install(MUTATING, 'labeler', [hook({ path: '/m' })]);
  await install(VALIDATING, 'checks', [hook({ path: '/v1' }), hook({ path: '/v2' })]);
  wh.handle((review, path) => {
    if (path === '/m') return { allowed: true, patch: [{ op: 'add', path: '/metadata/labels', value: { checked: 'no' } }] };
    return review.request.object?.metadata.labels?.checked === 'no' ? { allowed: true } : { allowed: false, status: { message: 'unlabelled' } };
  });
  assert.equal((await s.request('POST', CM('team-a'), { body: configMap('cm-both') })).status, 201);
  assert.deepEqual(wh.received.map((r) => r.path).slice(0, 1), ['/m']);
  assert.deepEqual(wh.received.map((r) => r.path).slice(1).sort(), ['/v1', '/v2']);
  // Both deny: the answer is one of the two denials, and both were asked.
  wh.reset();
  wh.handle((_review, path) => (path === '/m' ? { allowed: true } : { allowed: false, status: { message: `denied by ${path}` } }));
  const r = await s.request('POST', CM('team-a'), { body: configMap('cm-both-denied') });
  assert.equal(r.status, 403);
  assert.match(r.json().message, /^configmaps "cm-both-denied" is forbidden: admission webhook "v[12].hearth.test" denied the request: denied by \/v[12]$/);
  assert.equal(wh.reviewsAt('/v1').length + wh.reviewsAt('/v2').length, 2);
});
