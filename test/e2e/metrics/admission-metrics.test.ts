// The admission metrics kube-apiserver exports, read from /metrics after known writes: a create a
// built-in plugin refuses (NamespaceLifecycle: rejected="true" for the plugin and its phase), and
// real HTTPS webhooks — a validating one that allows one ConfigMap and denies another, a mutating
// one that is down with failurePolicy Ignore (fail open) — counted per call with kube's codes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, WITHOUT_NAMESPACE_CONTENT, type TestServer } from '../../helpers/server.ts';
import { startAdmissionWebhook, type AdmissionWebhook } from '../../helpers/admission-webhook.ts';
import { parseExposition, valueOf, type Exposition } from './prom-text.ts';

const ADMISSION = '/apis/admissionregistration.k8s.io/v1';
const NS = 'hooked';
const CM = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;

let s: TestServer;
let wh: AdmissionWebhook;

before(async () => {
  [s, wh] = await Promise.all([startTestServer({ options: { controllers: WITHOUT_NAMESPACE_CONTENT } }), startAdmissionWebhook()]);
  const ns = await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } });
  assert.equal(ns.status, 201, ns.text);
  wh.handle((review, path) => {
    if (path === '/flaky') return { down: true };
    return (review.request.name ?? '').startsWith('deny-') ? { allowed: false, status: { code: 403, message: 'no deny- names' } } : { allowed: true };
  });
});
after(async () => {
  await s?.stop();
  await wh?.close();
});

async function scrape(): Promise<Exposition> {
  const r = await s.request('GET', '/metrics');
  assert.equal(r.status, 200, r.text);
  return parseExposition(r.text);
}

function hook(name: string, path: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name,
    clientConfig: { url: `${wh.base}${path}`, caBundle: wh.caBundle },
    rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
    admissionReviewVersions: ['v1'],
    sideEffects: 'None',
    ...extra,
  };
}

test('a plugin that refuses a create is counted rejected, for itself and for its phase', async () => {
  const before = await scrape();
  const r = await s.request('POST', CM('no-such-namespace'), { body: { metadata: { name: 'x' } } });
  assert.equal(r.status, 404, r.text);
  assert.equal(r.json().message, 'namespaces "no-such-namespace" not found');
  const after = await scrape();
  const delta = (name: string, labels: Record<string, string>) => valueOf(after, name, labels) - valueOf(before, name, labels);
  assert.equal(delta('apiserver_admission_controller_admission_duration_seconds_count', { name: 'NamespaceLifecycle', type: 'admit', operation: 'CREATE', rejected: 'true' }), 1);
  assert.equal(delta('apiserver_admission_step_admission_duration_seconds_count', { type: 'admit', operation: 'CREATE', rejected: 'true' }), 1);
  assert.equal(delta('apiserver_admission_step_admission_duration_seconds_summary_count', { type: 'admit', operation: 'CREATE', rejected: 'true' }), 1);
  // Refused in the mutating phase: no validating phase ran for it.
  assert.equal(delta('apiserver_admission_step_admission_duration_seconds_count', { type: 'validate', operation: 'CREATE', rejected: 'true' }), 0);
  assert.equal(after.type.get('apiserver_admission_step_admission_duration_seconds_summary'), 'summary');
  assert.equal(after.help.get('apiserver_admission_controller_admission_duration_seconds'), '[STABLE] Admission controller latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).');
});

test('a create that passes counts every phase and plugin that ran as not rejected', async () => {
  const before = await scrape();
  const r = await s.request('POST', CM(NS), { body: { metadata: { name: 'plain' } } });
  assert.equal(r.status, 201, r.text);
  const after = await scrape();
  const delta = (name: string, labels: Record<string, string>) => valueOf(after, name, labels) - valueOf(before, name, labels);
  for (const type of ['admit', 'validate']) assert.equal(delta('apiserver_admission_step_admission_duration_seconds_count', { type, operation: 'CREATE', rejected: 'false' }), 1, type);
  assert.equal(delta('apiserver_admission_controller_admission_duration_seconds_count', { name: 'NamespaceLifecycle', type: 'admit', operation: 'CREATE', rejected: 'false' }), 1);
});

test('webhook calls: allowed, denied and failing open, counted with kube labels and codes', async () => {
  const v = await s.request('POST', `${ADMISSION}/validatingwebhookconfigurations`, { body: { metadata: { name: 'gate' }, webhooks: [hook('gate.hearth.test', '/gate')] } });
  assert.equal(v.status, 201, v.text);
  const m = await s.request('POST', `${ADMISSION}/mutatingwebhookconfigurations`, { body: { metadata: { name: 'flaky' }, webhooks: [hook('flaky.hearth.test', '/flaky', { failurePolicy: 'Ignore' })] } });
  assert.equal(m.status, 201, m.text);

  const ok = await s.request('POST', CM(NS), { body: { metadata: { name: 'ok-1' } } });
  assert.equal(ok.status, 201, ok.text);
  const denied = await s.request('POST', CM(NS), { body: { metadata: { name: 'deny-1' } } });
  assert.equal(denied.status, 403, denied.text);
  assert.equal(denied.json().message, 'configmaps "deny-1" is forbidden: admission webhook "gate.hearth.test" denied the request: no deny- names');

  const e = await scrape();
  const gate = { name: 'gate.hearth.test', type: 'validating', operation: 'CREATE' };
  assert.equal(valueOf(e, 'apiserver_admission_webhook_request_total', { ...gate, code: '200', rejected: 'false' }), 1);
  assert.equal(valueOf(e, 'apiserver_admission_webhook_request_total', { ...gate, code: '403', rejected: 'true' }), 1);
  assert.equal(valueOf(e, 'apiserver_admission_webhook_rejection_count', { ...gate, error_type: 'no_error', rejection_code: '403' }), 1);
  assert.equal(valueOf(e, 'apiserver_admission_webhook_admission_duration_seconds_count', { ...gate, rejected: 'false' }), 1);
  assert.equal(valueOf(e, 'apiserver_admission_webhook_admission_duration_seconds_count', { ...gate, rejected: 'true' }), 1);

  // The mutating webhook is down: both creates called it, failed open, and went on.
  const flaky = { name: 'flaky.hearth.test', type: 'admit', operation: 'CREATE' };
  assert.equal(valueOf(e, 'apiserver_admission_webhook_request_total', { ...flaky, code: '503', rejected: 'false' }), 2);
  assert.equal(valueOf(e, 'apiserver_admission_webhook_fail_open_count', { name: 'flaky.hearth.test', type: 'admit' }), 2);
  assert.equal(valueOf(e, 'apiserver_admission_webhook_rejection_count', { ...flaky, error_type: 'calling_webhook_error', rejection_code: '503' }), 0);
  // Each webhook plugin is an admission controller of its own.
  assert.equal(valueOf(e, 'apiserver_admission_controller_admission_duration_seconds_count', { name: 'ValidatingAdmissionWebhook', type: 'validate', operation: 'CREATE', rejected: 'true' }), 1);
});
