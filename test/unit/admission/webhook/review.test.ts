// The AdmissionReview checks and texts kube's webhook/request and webhook/errors have: what
// VerifyAdmissionResponse refuses (v1 strictly, v1beta1 leniently), ToStatusErr's denials, the
// match conditions' verdicts, and where a `service` reference is dialled.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createReview, denialError, reviewVersionOf, verifyResponse } from '../../../../server/admission/webhook/review.ts';
import { compileConditions, evaluateConditions, matchConditionCompileError } from '../../../../server/admission/webhook/match-conditions.ts';
import { resolveService } from '../../../../server/webhook/client-config.ts';

const user = { name: 'alice', groups: ['devs', 'system:authenticated'] };
const fields = {
  kind: { group: '', version: 'v1', kind: 'ConfigMap' },
  resource: { group: '', version: 'v1', resource: 'configmaps' },
  subResource: '',
  requestKind: { group: '', version: 'v1', kind: 'ConfigMap' },
  requestResource: { group: '', version: 'v1', resource: 'configmaps' },
  requestSubResource: '',
  name: 'cm',
  namespace: 'ns',
  operation: 'CREATE',
  user,
  object: { metadata: { name: 'cm' } },
  oldObject: undefined,
  dryRun: false,
  options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' },
};

test('the review carries kube\'s fields, an absent object as null, empty ones left out', () => {
  const { uid, review } = createReview('v1beta1', fields);
  assert.equal(review.apiVersion, 'admission.k8s.io/v1beta1');
  const request = review.request as Record<string, unknown>;
  assert.equal(request.uid, uid);
  assert.equal(request.oldObject, null);
  assert.equal('subResource' in request, false);
  assert.deepEqual(request.userInfo, { username: 'alice', groups: ['devs', 'system:authenticated'] });
  assert.deepEqual(Object.keys(request), ['uid', 'kind', 'resource', 'requestKind', 'requestResource', 'name', 'namespace', 'operation', 'userInfo', 'object', 'oldObject', 'dryRun', 'options']);
  assert.equal(reviewVersionOf(['v2', 'v1beta1', 'v1']), 'v1beta1');
  assert.equal(reviewVersionOf(['v2']), undefined);
});

test('v1 answers are checked as VerifyAdmissionResponse checks them', () => {
  const ok = (response: Record<string, unknown>) => ({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'u', allowed: true, ...response } });
  assert.equal(verifyResponse('v1', 'u', true, {}), 'webhook response was absent');
  assert.equal(verifyResponse('v1', 'u', true, ok({ uid: 'x' })), 'expected response.uid="u", got "x"');
  assert.equal(verifyResponse('v1', 'u', true, { ...ok({}), apiVersion: 'admission.k8s.io/v1beta1' }), 'expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got admission.k8s.io/v1beta1, Kind=AdmissionReview');
  assert.equal(verifyResponse('v1', 'u', true, ok({ patch: 'W10=' })), 'webhook returned response.patch but not response.patchType');
  assert.equal(verifyResponse('v1', 'u', true, ok({ patchType: 'JSONPatch' })), 'webhook returned response.patchType but not response.patch');
  assert.equal(verifyResponse('v1', 'u', false, ok({ patchType: 'JSONPatch' })), 'validating webhook may not return response.patchType');
  const good = verifyResponse('v1', 'u', true, ok({ patch: 'W10=', patchType: 'JSONPatch', warnings: ['w'], auditAnnotations: { a: 'b' } }));
  assert.ok(typeof good !== 'string');
  assert.equal(good.patch?.toString(), '[]');
  assert.deepEqual(good.warnings, ['w']);
  assert.deepEqual(good.auditAnnotations, { a: 'b' });
});

test('v1beta1 answers are not checked for uid or kind, and a patch is taken as a JSONPatch', () => {
  const got = verifyResponse('v1beta1', 'u', true, { response: { uid: 'other', allowed: true, patch: 'W10=' } });
  assert.ok(typeof got !== 'string');
  assert.equal(got.patchType, 'JSONPatch');
});

test('denials read as ToStatusErr words them, the webhook\'s code kept', () => {
  const cm = { group: '', resource: 'configmaps' };
  const forbidden = denialError('w.example.com', cm, 'cm', { message: 'no' });
  assert.deepEqual(forbidden.toStatus(), { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'configmaps "cm" is forbidden: admission webhook "w.example.com" denied the request: no', reason: 'Forbidden', details: { name: 'cm', kind: 'configmaps' }, code: 403 });
  const internal = denialError('w.example.com', { group: 'apps', resource: 'deployments' }, '', { code: 500 });
  assert.equal(internal.message, 'Internal error occurred: admission webhook "w.example.com" denied the request without explanation');
  assert.equal(internal.reason, 'InternalError');
  assert.deepEqual(internal.details, { causes: [{ message: 'admission webhook "w.example.com" denied the request without explanation' }] });
  const unnamed = denialError('w.example.com', { group: 'apps', resource: 'deployments' }, '', { code: 422, reason: 'Invalid' });
  assert.equal(unnamed.message, 'deployments.apps "Unknown" is forbidden: admission webhook "w.example.com" denied the request: Invalid');
  assert.equal(unnamed.code, 422);
});

test('match conditions: a false one skips whatever else errs; errors follow the failure policy', () => {
  assert.equal(matchConditionCompileError('1 + 1'), 'must evaluate to bool');
  assert.match(matchConditionCompileError('object.') ?? '', /^compilation failed: ERROR: <input>:1:\d+: Syntax error/);
  assert.equal(matchConditionCompileError('request.userInfo.username == "a"'), undefined);
  const conditions = compileConditions([
    { name: 'errs', expression: 'object.data.missing == "x"' },
    { name: 'false', expression: 'request.operation == "DELETE"' },
  ]);
  const input = { object: { data: {} }, oldObject: null, request: { operation: 'CREATE' } };
  assert.deepEqual(evaluateConditions(conditions, input, true), { matches: false });
  const erring = compileConditions([{ name: 'errs', expression: 'object.data.missing == "x"' }, { name: 'true', expression: 'true' }]);
  assert.deepEqual(evaluateConditions(erring, input, true), { matches: false, error: `expression 'object.data.missing == "x"' resulted in error: no such key: missing` });
  assert.deepEqual(evaluateConditions(erring, input, false), { matches: false });
});

test('a service reference is dialled at a ready endpoint for its port, else at the cluster IP', () => {
  const svc = { spec: { type: 'ClusterIP', clusterIP: '10.0.0.9', ports: [{ name: 'https', port: 443 }] } };
  const endpoints = { subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port: 8443 }] }] };
  assert.deepEqual(resolveService(svc, 'hook', 443, endpoints), { host: '127.0.0.1', port: 8443 });
  assert.deepEqual(resolveService(svc, 'hook', 443, { subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'other', port: 1 }] }] }), { host: '10.0.0.9', port: 443 });
  assert.deepEqual(resolveService(svc, 'hook', 443), { host: '10.0.0.9', port: 443 });
  assert.equal(resolveService(svc, 'hook', 444), 'no service port 444 found for service "hook"');
  assert.equal(resolveService(undefined, 'hook', 443), 'service "hook" not found');
  assert.equal(resolveService({ spec: { type: 'ClusterIP', clusterIP: 'None', ports: [{ port: 443 }] } }, 'hook', 443), 'cannot route to service with ClusterIP "None"');
});
