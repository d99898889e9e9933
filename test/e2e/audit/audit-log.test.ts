// Auditing as kube-apiserver does it, read back from the audit log line by line: a policy of
// several rules (None for one user, Metadata for secrets without RequestReceived, Request for
// configmaps in team-a, RequestResponse for pods with managedFields omitted and for
// serviceaccounts with them kept, Metadata for /version), requests from the admin, a namespaced
// token user (allowed and forbidden: the authorizer's decision and reason), the quiet user, a
// service account, an impersonated request and a bad token (401); every line is checked against
// the policy; the Audit-Id header is the event's auditID (a client's own is kept); a watch gets
// ResponseStarted then ResponseComplete; PodSecurity's audit annotation reaches the event.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import https from 'node:https';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { requester, type Credentials } from '../../helpers/identities.ts';

const dir = mkdtempSync(join(tmpdir(), 'hearth-audit-'));
const tokenFile = join(dir, 'tokens.csv');
writeFileSync(tokenFile, 'alice-token,alice,alice-uid,"developers"\nquiet-token,quiet,quiet-uid\n');
const logPath = join(dir, 'logs', 'audit.log');
const policyFile = join(dir, 'policy.yaml');
writeFileSync(
  policyFile,
  `apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: None
  users: ["quiet"]
- level: Metadata
  resources: [{ group: "", resources: ["secrets"] }]
  omitStages: ["RequestReceived"]
- level: Request
  resources: [{ group: "", resources: ["configmaps"] }]
  namespaces: ["team-a"]
- level: RequestResponse
  resources: [{ group: "", resources: ["pods"] }]
  omitManagedFields: true
- level: RequestResponse
  resources: [{ group: "", resources: ["serviceaccounts"] }]
- level: Metadata
  nonResourceURLs: ["/version", "/apis*"]
`,
);

let s: TestServer;
const requestAs = requester(() => s);
const alice: Credentials = { token: 'alice-token' };
const quiet: Credentials = { token: 'quiet-token' };
let robot: Credentials;

/** What the tests read of an audit.k8s.io/v1 Event. */
interface AuditEventJson {
  kind: string;
  apiVersion: string;
  level: string;
  auditID: string;
  stage: string;
  requestURI: string;
  verb: string;
  user: { username?: string; uid?: string; groups?: string[] };
  impersonatedUser?: { username?: string; groups?: string[] };
  sourceIPs?: string[];
  userAgent?: string;
  objectRef?: Record<string, string>;
  responseStatus?: { code: number };
  requestObject?: unknown;
  responseObject?: { kind?: string; code?: number; metadata?: { managedFields?: unknown } };
  requestReceivedTimestamp: string;
  stageTimestamp: string;
  annotations: Record<string, string>;
}

/** The log's events, parsed, every line JSON. */
function events(): AuditEventJson[] {
  if (!existsSync(logPath)) return [];
  return readFileSync(logPath, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as AuditEventJson);
}
const eventsOf = (auditID: string) => events().filter((e) => e.auditID === auditID);

/** Polls (bounded) until the request's events include `stage`. */
async function waitForStage(auditID: string, stage: string): Promise<AuditEventJson[]> {
  for (let i = 0; i < 200; i++) {
    const evs = eventsOf(auditID);
    if (evs.some((e) => e.stage === stage)) return evs;
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.fail(`no ${stage} event for ${auditID}: ${JSON.stringify(eventsOf(auditID))}`);
}

/** The level the test's policy gives an event (the same rules, written again from the event's fields). */
function expectedLevel(e: AuditEventJson): string {
  if (e.user?.username === 'quiet') return 'None';
  const ref = e.objectRef;
  if (ref) {
    if (ref.apiGroup === undefined && ref.resource === 'secrets') return 'Metadata';
    if (ref.apiGroup === undefined && ref.resource === 'configmaps' && ref.namespace === 'team-a') return 'Request';
    if (ref.apiGroup === undefined && (ref.resource === 'pods' || ref.resource === 'serviceaccounts')) return 'RequestResponse';
    return 'None';
  }
  const path = e.requestURI.split('?')[0];
  return path === '/version' || path.startsWith('/apis') ? 'Metadata' : 'None';
}

const MICRO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const WRITE_VERBS = new Set(['create', 'update', 'patch']);

before(async () => {
  s = await startTestServer({ options: { tokenAuthFile: tokenFile, audit: { policyFile, log: { path: logPath, maxAgeDays: 0, maxBackups: 0, maxSizeMegabytes: 0, format: 'json', mode: 'blocking' } } } });
  for (const ns of ['team-a', 'team-b']) assert.equal((await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: ns } } })).status, 201);
  // alice may edit team-a (kube's `edit` ClusterRole through a RoleBinding).
  assert.equal((await s.kubectl(['create', 'rolebinding', 'alice-edit', '-n', 'team-a', '--clusterrole=edit', '--user=alice'])).code, 0);
  assert.equal((await s.request('POST', '/api/v1/namespaces/team-a/serviceaccounts', { body: { metadata: { name: 'robot' } } })).status, 201);
  const tr = await s.request('POST', '/api/v1/namespaces/team-a/serviceaccounts/robot/token', { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} } });
  assert.equal(tr.status, 201, tr.text);
  robot = { token: tr.json().status.token };
});

after(async () => {
  await s?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('a create at Request level: the object as sent, its name in objectRef, RequestReceived then ResponseComplete, Audit-Id = auditID', async () => {
  const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'team-a' }, data: { color: 'blue' } };
  const r = await s.request('POST', '/api/v1/namespaces/team-a/configmaps', { body, headers: { 'user-agent': 'audit-test/1.0' } });
  assert.equal(r.status, 201, r.text);
  const auditID = String(r.headers['audit-id']);
  const evs = eventsOf(auditID);
  assert.deepEqual(evs.map((e) => e.stage), ['RequestReceived', 'ResponseComplete']);
  const [received, complete] = evs;
  for (const e of evs) {
    assert.equal(e.kind, 'Event');
    assert.equal(e.apiVersion, 'audit.k8s.io/v1');
    assert.equal(e.level, 'Request');
    assert.equal(e.verb, 'create');
    assert.equal(e.requestURI, '/api/v1/namespaces/team-a/configmaps');
    assert.equal(e.userAgent, 'audit-test/1.0');
    assert.deepEqual(e.sourceIPs, ['127.0.0.1']);
    assert.equal(e.user.username, 'hearth-admin');
    assert.ok(e.user.groups?.includes('system:masters'));
    assert.equal(e.responseObject, undefined, 'no response object below RequestResponse');
  }
  // RequestReceived: before the body is read; stamped at receipt.
  assert.deepEqual(received.objectRef, { resource: 'configmaps', namespace: 'team-a', apiVersion: 'v1' });
  assert.equal(received.requestObject, undefined);
  assert.equal(received.responseStatus, undefined);
  assert.equal(received.stageTimestamp, received.requestReceivedTimestamp);
  // ResponseComplete: the name from the body, the object as sent, the code, the decision.
  assert.deepEqual(complete.objectRef, { resource: 'configmaps', namespace: 'team-a', name: 'settings', apiVersion: 'v1' });
  assert.deepEqual(complete.requestObject, body);
  assert.deepEqual(complete.responseStatus, { metadata: {}, code: 201 });
  assert.equal(complete.annotations['authorization.k8s.io/decision'], 'allow');
  assert.equal(complete.annotations['authorization.k8s.io/reason'], '');
  assert.match(complete.requestReceivedTimestamp, MICRO_TIME);
  assert.match(complete.stageTimestamp, MICRO_TIME);
  assert.ok(complete.stageTimestamp >= complete.requestReceivedTimestamp);
});

test('a client-sent Audit-Id is kept as the event\'s auditID', async () => {
  const r = await s.request('GET', '/api/v1/namespaces/team-a/configmaps/settings', { headers: { 'audit-id': 'my-own-audit-id' } });
  assert.equal(r.status, 200);
  assert.equal(r.headers['audit-id'], 'my-own-audit-id');
  const evs = eventsOf('my-own-audit-id');
  assert.deepEqual(evs.map((e) => [e.stage, e.verb, e.objectRef?.name]), [['RequestReceived', 'get', 'settings'], ['ResponseComplete', 'get', 'settings']]);
});

test('a namespaced token user: allowed (RBAC\'s reason) and forbidden (the 403 Status copied, decision forbid)', async () => {
  const ok = await requestAs(alice, 'GET', '/api/v1/namespaces/team-a/configmaps/settings');
  assert.equal(ok.status, 200);
  const allowed = eventsOf(await auditIdOf(alice, 'GET', '/api/v1/namespaces/team-a/configmaps/settings')).find((e) => e.stage === 'ResponseComplete')!;
  assert.equal(allowed.user.username, 'alice');
  assert.equal(allowed.user.uid, 'alice-uid');
  assert.deepEqual(allowed.user.groups, ['developers', 'system:authenticated']);
  assert.equal(allowed.annotations['authorization.k8s.io/decision'], 'allow');
  assert.equal(allowed.annotations['authorization.k8s.io/reason'], 'RBAC: allowed by RoleBinding "alice-edit/team-a" of ClusterRole "edit" to User "alice"');

  const refused = await requestRaw(alice, 'GET', '/api/v1/namespaces/kube-system/secrets/x');
  assert.equal(refused.status, 403);
  const status = JSON.parse(refused.text);
  const evs = eventsOf(refused.auditId);
  // Secrets: Metadata, RequestReceived omitted by the rule.
  assert.deepEqual(evs.map((e) => [e.level, e.stage]), [['Metadata', 'ResponseComplete']]);
  assert.deepEqual(evs[0].responseStatus, { metadata: {}, status: 'Failure', message: status.message, reason: 'Forbidden', details: status.details, code: 403 });
  assert.equal(status.message, 'secrets "x" is forbidden: User "alice" cannot get resource "secrets" in API group "" in the namespace "kube-system"');
  assert.deepEqual(evs[0].annotations, { 'authorization.k8s.io/decision': 'forbid', 'authorization.k8s.io/reason': '' });
});

test('the quiet user is not audited at all (level None)', async () => {
  const r = await requestRaw(quiet, 'GET', '/api/v1/namespaces/team-a/configmaps/settings');
  assert.equal(r.status, 403);
  assert.deepEqual(eventsOf(r.auditId), []);
});

test('a service account: its username and groups', async () => {
  const r = await requestRaw(robot, 'GET', '/api/v1/namespaces/team-a/pods');
  assert.equal(r.status, 403);
  const [e] = eventsOf(r.auditId).filter((x) => x.stage === 'ResponseComplete');
  assert.equal(e.user.username, 'system:serviceaccount:team-a:robot');
  assert.deepEqual(e.user.groups, ['system:serviceaccounts', 'system:serviceaccounts:team-a', 'system:authenticated']);
  assert.equal(e.level, 'RequestResponse');
  assert.equal(e.verb, 'list');
  // The refusal's Status is the response object at RequestResponse.
  assert.equal(e.responseObject?.kind, 'Status');
  assert.equal(e.responseObject?.code, 403);
});

test('an impersonated request: the real caller as user, the impersonated one as impersonatedUser (not yet at RequestReceived)', async () => {
  const r = await s.request('GET', '/api/v1/namespaces/team-a/configmaps/settings', { headers: { 'impersonate-user': 'alice', 'impersonate-group': 'developers' } });
  assert.equal(r.status, 200, r.text);
  const evs = eventsOf(String(r.headers['audit-id']));
  assert.deepEqual(evs.map((e) => e.stage), ['RequestReceived', 'ResponseComplete']);
  assert.equal(evs[0].user.username, 'hearth-admin');
  assert.equal(evs[0].impersonatedUser, undefined);
  assert.equal(evs[1].user.username, 'hearth-admin');
  assert.deepEqual(evs[1].impersonatedUser, { username: 'alice', groups: ['developers', 'system:authenticated'] });
  // Authorized as alice.
  assert.match(evs[1].annotations['authorization.k8s.io/reason'], /to User "alice"/);
});

test('a bad token: one ResponseStarted event with no user and the 401 Status', async () => {
  const r = await requestRaw({ token: 'not-a-token' }, 'GET', '/version');
  assert.equal(r.status, 401);
  const evs = eventsOf(r.auditId);
  assert.equal(evs.length, 1);
  const [e] = evs;
  assert.equal(e.stage, 'ResponseStarted');
  assert.equal(e.level, 'Metadata');
  assert.deepEqual(e.user, {});
  assert.equal(e.verb, 'get');
  assert.equal(e.objectRef, undefined);
  assert.deepEqual(e.responseStatus, { metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
});

test('RequestResponse with omitManagedFields: the response object without managedFields; without it, kept', async () => {
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'team-b' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } };
  const r = await s.request('POST', '/api/v1/namespaces/team-b/pods', { body: pod });
  assert.equal(r.status, 201, r.text);
  const created = r.json();
  assert.ok(created.metadata.managedFields, 'the response itself has managedFields');
  const e = eventsOf(String(r.headers['audit-id'])).find((x) => x.stage === 'ResponseComplete')!;
  assert.equal(e.level, 'RequestResponse');
  assert.deepEqual(e.requestObject, pod);
  const { managedFields: _m, ...metadata } = created.metadata;
  assert.deepEqual(e.responseObject, { ...created, metadata });
  // PodSecurity's audit annotation (the namespace enforces nothing: privileged).
  assert.equal(e.annotations['pod-security.kubernetes.io/enforce-policy'], 'privileged:latest');

  const sa = await s.request('POST', '/api/v1/namespaces/team-b/serviceaccounts', { body: { metadata: { name: 'builder', labels: { app: 'build' } } } });
  assert.equal(sa.status, 201);
  assert.ok(sa.json().metadata.managedFields);
  const c = eventsOf(String(sa.headers['audit-id'])).find((x) => x.stage === 'ResponseComplete')!;
  assert.deepEqual(c.responseObject, sa.json(), 'managedFields kept');
  // A GET served from the stored bytes: the same object in the event.
  const get = await s.request('GET', '/api/v1/namespaces/team-b/serviceaccounts/builder');
  assert.equal(get.status, 200);
  const g = eventsOf(String(get.headers['audit-id'])).find((x) => x.stage === 'ResponseComplete')!;
  assert.deepEqual(g.responseObject, get.json());
});

test('a watch: RequestReceived, ResponseStarted when its headers are out, ResponseComplete when it ends', async () => {
  const auditID = 'watch-audit-id';
  await new Promise<void>((resolve, reject) => {
    const req = https.request(`${s.url}/api/v1/namespaces/team-a/configmaps?watch=1`, { agent: false, ca: s.pki.caCertPem, cert: s.pki.adminCertPem, key: s.pki.adminKeyPem, headers: { 'audit-id': auditID } }, (res) => {
      assert.equal(res.statusCode, 200);
      res.once('data', () => {
        // The initial ADDED event arrived: the watch runs; ResponseStarted is written, ResponseComplete not yet.
        waitForStage(auditID, 'ResponseStarted').then((evs) => {
          assert.deepEqual(evs.map((e) => e.stage), ['RequestReceived', 'ResponseStarted']);
          assert.deepEqual(evs[1].responseStatus, { metadata: {}, code: 200 });
          req.destroy();
          resolve();
        }, reject);
      });
    });
    req.on('error', () => undefined);
    req.end();
  });
  const evs = await waitForStage(auditID, 'ResponseComplete');
  assert.deepEqual(evs.map((e) => [e.stage, e.verb]), [['RequestReceived', 'watch'], ['ResponseStarted', 'watch'], ['ResponseComplete', 'watch']]);
});

test('non-resource URLs: /version audited at Metadata, /healthz not', async () => {
  const v = await s.request('GET', '/version');
  const h = await s.request('GET', '/healthz');
  assert.deepEqual(eventsOf(String(v.headers['audit-id'])).map((e) => [e.level, e.stage, e.verb, e.requestURI]), [['Metadata', 'RequestReceived', 'get', '/version'], ['Metadata', 'ResponseComplete', 'get', '/version']]);
  assert.deepEqual(eventsOf(String(h.headers['audit-id'])), []);
});

test('every line of the log agrees with the policy', () => {
  const all = events();
  assert.ok(all.length > 20, `only ${all.length} events`);
  for (const e of all) {
    const what = JSON.stringify(e).slice(0, 300);
    assert.equal(e.level, expectedLevel(e), what);
    assert.notEqual(e.level, 'None', what);
    if (e.objectRef?.resource === 'secrets') assert.notEqual(e.stage, 'RequestReceived', what);
    assert.match(e.auditID, /\S/, what);
    assert.match(e.requestReceivedTimestamp, MICRO_TIME, what);
    assert.match(e.stageTimestamp, MICRO_TIME, what);
    if (e.stage === 'ResponseStarted') assert.ok(e.verb === 'watch' || e.responseStatus?.code === 401, what);
    if (e.stage !== 'RequestReceived') assert.equal(typeof e.responseStatus?.code, 'number', what);
    const sendsObjects = e.level === 'Request' || e.level === 'RequestResponse';
    if (e.requestObject !== undefined) assert.ok(sendsObjects && WRITE_VERBS.has(e.verb), what);
    else if (sendsObjects && WRITE_VERBS.has(e.verb) && e.stage === 'ResponseComplete' && e.responseStatus!.code < 400) assert.fail(`no requestObject: ${what}`);
    if (e.responseObject !== undefined) assert.equal(e.level, 'RequestResponse', what);
    if (e.responseObject?.metadata && e.objectRef?.resource === 'pods') assert.equal(e.responseObject.metadata.managedFields, undefined, what);
  }
});

/** A request as one identity, with its Audit-Id. */
async function requestRaw(who: Credentials, method: string, path: string): Promise<{ status: number; text: string; auditId: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (who.token) headers.authorization = `Bearer ${who.token}`;
    const req = https.request(`${s.url}${path}`, { method, headers, agent: false, ca: s.pki.caCertPem, cert: who.cert, key: who.key }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, text, auditId: String(res.headers['audit-id']) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function auditIdOf(who: Credentials, method: string, path: string): Promise<string> {
  return (await requestRaw(who, method, path)).auditId;
}
