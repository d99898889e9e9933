// The audit policy's rule matching as kube's checker.go matches (first match wins; users,
// groups, verbs, resources with `*`, `res/*`, `*/sub` and resourceNames, namespaces with "" for
// cluster-scoped requests, nonResourceURLs with a trailing `*`; omitStages joined, rule
// omitManagedFields over the policy's), the event's small formats (source IPs, times,
// managed-fields omission) and kube's audit metrics counted by the Auditor.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { parseAuditPolicy, STAGE_BIT, type AuditAttributes } from '../../../server/audit/policy.ts';
import { microTimeText, rfc3339NanoText, sourceIPs, withoutManagedFields } from '../../../server/audit/event.ts';
import { AuditMetrics, Auditor, readAuditSetup } from '../../../server/audit/auditor.ts';

const POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
omitManagedFields: true
rules:
- level: None
  users: ["system:kube-proxy"]
  verbs: ["watch"]
- level: None
  userGroups: ["system:nodes"]
  resources: [{ group: "", resources: ["nodes/status"] }]
- level: RequestResponse
  resources: [{ group: "", resources: ["pods/*"] }]
  omitStages: ["ResponseStarted"]
  omitManagedFields: false
- level: Request
  resources: [{ group: "apps", resources: ["*/scale"] }]
- level: Metadata
  resources: [{ group: "", resources: ["configmaps"], resourceNames: ["cluster-info"] }]
- level: Request
  namespaces: [""]
  resources: [{ group: "rbac.authorization.k8s.io" }]
- level: Metadata
  nonResourceURLs: ["/healthz*", "/version"]
- level: RequestResponse
  resources: [{ group: "", resources: ["*"] }]
  namespaces: ["kube-system"]
`;

const policy = parseAuditPolicy(POLICY);
const alice = { name: 'alice', groups: ['dev', 'system:authenticated'] };

function res(verb: string, resource: string, extra: Partial<AuditAttributes> = {}): AuditAttributes {
  return { user: alice, verb, isResourceRequest: true, path: '/x', apiGroup: '', namespace: 'default', resource, subresource: '', name: '', ...extra };
}
const nonRes = (path: string): AuditAttributes => ({ user: alice, verb: 'get', isResourceRequest: false, path, apiGroup: '', namespace: '', resource: '', subresource: '', name: '' });
const levelOf = (a: AuditAttributes) => policy.evaluate(a).level;

test('users and verbs must all match; groups match any of the user\'s', () => {
  assert.equal(levelOf(res('watch', 'pods', { user: { name: 'system:kube-proxy', groups: [] }, namespace: 'kube-system' })), 'None');
  // Not a watch: the kube-system rule decides.
  assert.equal(levelOf(res('get', 'pods', { user: { name: 'system:kube-proxy', groups: [] }, namespace: 'kube-system' })), 'RequestResponse');
  assert.equal(levelOf(res('patch', 'nodes', { user: { name: 'system:node:a', groups: ['system:nodes'] }, subresource: 'status', namespace: '' })), 'None');
  // No user (failed authentication): rules naming users or groups never match.
  assert.equal(levelOf(res('patch', 'nodes', { user: undefined, subresource: 'status', namespace: '' })), 'None');
});

test('resources: "res/*" takes the resource and its subresources, "*/sub" one subresource of any resource, "*" every resource of the group', () => {
  assert.equal(levelOf(res('get', 'pods', { subresource: 'log' })), 'RequestResponse');
  // (kube's checker: "res/*" takes the resource itself too)
  assert.equal(levelOf(res('get', 'pods')), 'RequestResponse');
  assert.equal(levelOf(res('get', 'podtemplates')), 'None');
  assert.equal(levelOf(res('update', 'deployments', { apiGroup: 'apps', subresource: 'scale' })), 'Request');
  assert.equal(levelOf(res('update', 'deployments', { apiGroup: 'apps' })), 'None');
  assert.equal(levelOf(res('get', 'secrets', { namespace: 'kube-system' })), 'RequestResponse');
  assert.equal(levelOf(res('get', 'deployments', { apiGroup: 'apps', namespace: 'kube-system' })), 'None', '"*" of the core group only');
});

test('resourceNames narrow a resource; namespaces "" are cluster-scoped requests; a group without resources takes all of it', () => {
  assert.equal(levelOf(res('get', 'configmaps', { name: 'cluster-info' })), 'Metadata');
  assert.equal(levelOf(res('get', 'configmaps', { name: 'other' })), 'None');
  assert.equal(levelOf(res('create', 'clusterroles', { apiGroup: 'rbac.authorization.k8s.io', namespace: '' })), 'Request');
  assert.equal(levelOf(res('create', 'roles', { apiGroup: 'rbac.authorization.k8s.io', namespace: 'default' })), 'None');
});

test('nonResourceURLs: exact, or a prefix before a trailing "*"; never a resource request', () => {
  assert.equal(levelOf(nonRes('/healthz')), 'Metadata');
  assert.equal(levelOf(nonRes('/healthz/etcd')), 'Metadata');
  assert.equal(levelOf(nonRes('/version')), 'Metadata');
  assert.equal(levelOf(nonRes('/version/x')), 'None');
  assert.equal(levelOf({ ...res('get', 'events'), path: '/healthz' }), 'None');
});

test('omitStages: the policy\'s joined to the rule\'s; omitManagedFields: the rule\'s over the policy\'s', () => {
  const podLog = policy.evaluate(res('get', 'pods', { subresource: 'log' }));
  assert.equal(podLog.omitStages, STAGE_BIT.RequestReceived | STAGE_BIT.ResponseStarted);
  assert.equal(podLog.omitManagedFields, false);
  const scale = policy.evaluate(res('update', 'deployments', { apiGroup: 'apps', subresource: 'scale' }));
  assert.equal(scale.omitStages, STAGE_BIT.RequestReceived);
  assert.equal(scale.omitManagedFields, true);
  // No rule matched: None, with the policy's settings.
  assert.deepEqual(policy.evaluate(res('get', 'events')), { level: 'None', omitStages: STAGE_BIT.RequestReceived, omitManagedFields: true });
});

test('source IPs as utilnet.SourceIPs: X-Forwarded-For, X-Real-Ip if new, the peer unless last already', () => {
  assert.deepEqual(sourceIPs(undefined, undefined, '::ffff:127.0.0.1'), ['127.0.0.1']);
  assert.deepEqual(sourceIPs('10.0.0.1, bogus, 10.0.0.2', '10.0.0.1', '10.0.0.2'), ['10.0.0.1', '10.0.0.2']);
  assert.deepEqual(sourceIPs(undefined, '192.168.0.9', '::1'), ['192.168.0.9', '::1']);
});

test('times: MicroTime with six digits; the legacy line\'s RFC3339Nano without trailing zeros', () => {
  const us = Date.UTC(2026, 10, 29, 20, 27, 17, 120) * 1000 + 300;
  assert.equal(microTimeText(us), '2026-11-29T20:27:17.120300Z');
  assert.equal(rfc3339NanoText(us), '2026-11-29T20:27:17.1203Z');
  assert.equal(rfc3339NanoText(Date.UTC(2026, 0, 1) * 1000), '2026-01-01T00:00:00Z');
});

test('managed fields omitted from an object and from a list\'s items, the rest shared', () => {
  const spec = { a: 1 };
  const obj = { kind: 'Pod', metadata: { name: 'p', managedFields: [{ manager: 'x' }] }, spec };
  const out = withoutManagedFields(obj) as typeof obj;
  assert.deepEqual(out, { kind: 'Pod', metadata: { name: 'p' }, spec });
  assert.equal(out.spec, spec);
  assert.ok(obj.metadata.managedFields, 'the original is untouched');
  assert.deepEqual(withoutManagedFields({ kind: 'PodList', metadata: {}, items: [obj] }), { kind: 'PodList', metadata: {}, items: [{ kind: 'Pod', metadata: { name: 'p' }, spec }] });
});

test('the Auditor counts levels per request and events per stage sent (kube\'s metric names)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hearth-audit-unit-'));
  try {
    const registry = new Registry();
    const log = join(dir, 'audit.log');
    const auditor = new Auditor({ policy, options: { log: { path: log, maxAgeDays: 0, maxBackups: 0, maxSizeMegabytes: 0, format: 'json', mode: 'blocking' } } }, new AuditMetrics(registry), () => {}, 'test');
    const none = auditor.evaluate(res('get', 'events'));
    assert.equal(none.level, 'None');
    const config = auditor.evaluate(res('get', 'pods', { subresource: 'log' }));
    const ev = auditor.newEvent(config, { auditId: 'a-1', requestURI: '/api/v1/namespaces/default/pods/p/log', verb: 'get', user: alice, forwardedFor: undefined, realIp: undefined, remoteAddress: '127.0.0.1', userAgent: 'ua', objectRef: { resource: 'pods', namespace: 'default', name: 'p', apiVersion: 'v1', subresource: 'log' } }, Date.now() * 1000);
    // RequestReceived and ResponseStarted are omitted by the policy and the rule: one event is sent.
    assert.equal(auditor.process(ev, 'RequestReceived'), true);
    assert.equal(auditor.process(ev, 'ResponseStarted'), true);
    ev.setResponseCode(200);
    // Blocking: the request waits for the write holding its event.
    assert.equal(await auditor.process(ev, 'ResponseComplete'), true);
    assert.equal(readFileSync(log, 'utf8').split('\n').filter(Boolean).length, 1);
    await auditor.shutdown();
    const lines = readFileSync(log, 'utf8').split('\n').filter(Boolean);
    assert.equal(lines.length, 1);
    assert.equal((JSON.parse(lines[0]) as { stage: string }).stage, 'ResponseComplete');
    const text = await registry.metrics();
    assert.match(text, /^# HELP apiserver_audit_event_total \[ALPHA\] Counter of audit events generated and sent to the audit backend\.$/m);
    assert.match(text, /^apiserver_audit_event_total 1$/m);
    assert.match(text, /^apiserver_audit_level_total\{level="None"\} 1$/m);
    assert.match(text, /^apiserver_audit_level_total\{level="RequestResponse"\} 1$/m);
    assert.match(text, /^# TYPE apiserver_audit_error_total counter$/m);
    assert.match(text, /^apiserver_audit_requests_rejected_total 0$/m);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the log and webhook flags kube refuses: negative rotation numbers, a webhook version other than audit.k8s.io/v1', () => {
  const log = { path: '/tmp/never.log', maxAgeDays: -1, maxBackups: -2, maxSizeMegabytes: 0, format: 'json' as const, mode: 'blocking' as const };
  assert.throws(() => readAuditSetup({ log }), { message: "[--audit-log-maxage -1 can't be a negative number, --audit-log-maxbackup -2 can't be a negative number]" });
  const webhook = { configFile: '/tmp/never.kubeconfig', mode: 'batch' as const, batchMaxSize: 400, batchMaxWaitMs: 30_000, batchBufferSize: 10_000, initialBackoffMs: 10_000, version: 'audit.k8s.io/v1beta1' };
  assert.throws(() => readAuditSetup({ webhook }), { message: 'invalid group version, allowed versions are ["audit.k8s.io/v1"]' });
  // Without a policy file (and nothing to refuse) there is no auditing at all.
  assert.equal(readAuditSetup({ log: { ...log, maxAgeDays: 0, maxBackups: 0 } }), undefined);
});
