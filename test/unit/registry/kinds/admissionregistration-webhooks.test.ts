// Webhook configuration validation as kube's pkg/apis/admissionregistration/validation has it:
// the create rules, and what an update relaxes for objects stored before a rule existed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mutatingWebhookConfigurationStrategy, validatingWebhookConfigurationStrategy, useMatchConditionCompiler } from '../../../../server/registry/kinds/admissionregistration/index.ts';
import { matchConditionCompileError } from '../../../../server/admission/webhook/match-conditions.ts';
import { fieldErrorText, type FieldError } from '../../../../server/validation/field.ts';

useMatchConditionCompiler(matchConditionCompileError);

const webhook = (extra: Record<string, unknown> = {}) => ({
  name: 'a.example.com',
  clientConfig: { service: { namespace: 'ns', name: 'svc' } },
  sideEffects: 'None',
  admissionReviewVersions: ['v1'],
  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods', 'pods/status'] }],
  ...extra,
});
const config = (...webhooks: unknown[]) => ({ metadata: { name: 'c' }, webhooks });
const texts = (errs: FieldError[]) => errs.map(fieldErrorText);

test('a valid configuration has no errors, mutating or validating', () => {
  assert.deepEqual(mutatingWebhookConfigurationStrategy.validate!(config(webhook({ reinvocationPolicy: 'IfNeeded', matchConditions: [{ name: 'm', expression: 'true' }] }))), []);
  assert.deepEqual(validatingWebhookConfigurationStrategy.validate!(config(webhook())), []);
});

test('rules, policies and match conditions are checked with kube\'s messages', () => {
  const errs = texts(
    mutatingWebhookConfigurationStrategy.validate!(
      config(
        webhook({
          rules: [{ operations: ['PATCH'], apiGroups: [], apiVersions: ['v1', ''], resources: ['pods/*', 'pods/status'], scope: 'Everywhere' }],
          failurePolicy: 'Maybe',
          matchPolicy: 'Loose',
          reinvocationPolicy: 'Always',
          timeoutSeconds: 0,
          namespaceSelector: { matchExpressions: [{ key: 'k', operator: 'In' }] },
          matchConditions: [{ name: 'm', expression: '"x"' }, { name: 'm', expression: ' ' }],
        }),
      ),
    ),
  );
  for (const expected of [
    'webhooks[0].rules[0].operations[0]: Unsupported value: "PATCH": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"',
    'webhooks[0].rules[0].apiGroups: Required value',
    'webhooks[0].rules[0].apiVersions[1]: Required value',
    "webhooks[0].rules[0].resources[1]: Invalid value: \"pods/status\": if 'pods/*' is present, must not specify pods/status",
    'webhooks[0].rules[0].scope: Unsupported value: "Everywhere": supported values: "*", "Cluster", "Namespaced"',
    'webhooks[0].failurePolicy: Unsupported value: "Maybe": supported values: "Fail", "Ignore"',
    'webhooks[0].matchPolicy: Unsupported value: "Loose": supported values: "Equivalent", "Exact"',
    'webhooks[0].reinvocationPolicy: Unsupported value: "Always": supported values: "IfNeeded", "Never"',
    'webhooks[0].timeoutSeconds: Invalid value: 0: the timeout value must be between 1 and 30 seconds',
    'webhooks[0].matchConditions[0].expression: Invalid value: "\\"x\\"": must evaluate to bool',
    'webhooks[0].matchConditions[1].expression: Required value',
    'webhooks[0].matchConditions[1].name: Duplicate value: "m"',
  ]) {
    assert.ok(errs.includes(expected), `missing ${expected} in\n${errs.join('\n')}`);
  }
  assert.ok(errs.some((e) => e.startsWith('webhooks[0].namespaceSelector.matchExpressions[0].values: Required value')), errs.join('\n'));
});

test('an update keeps what the stored object already had: side effects, review versions, duplicate names, unchanged match conditions', () => {
  const old = config(webhook({ sideEffects: 'Unknown', admissionReviewVersions: ['v2'], matchConditions: [{ name: 'm', expression: 'object.' }] }), webhook());
  const next = config(webhook({ sideEffects: 'Some', admissionReviewVersions: ['v3'], matchConditions: [{ name: 'm', expression: 'object.' }] }), webhook());
  assert.deepEqual(texts(validatingWebhookConfigurationStrategy.validateUpdate!(next, old, '')), []);
  // A create of the same is refused on every count.
  const created = texts(validatingWebhookConfigurationStrategy.validate!(next));
  assert.ok(created.includes('webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"'), created.join('\n'));
  assert.ok(created.includes('webhooks[0].admissionReviewVersions: Invalid value: []string{"v3"}: must include at least one of v1, v1beta1'), created.join('\n'));
  assert.ok(created.includes('webhooks[1].name: Duplicate value: "a.example.com"'), created.join('\n'));
  assert.ok(created.some((e) => e.startsWith('webhooks[0].matchConditions[0].expression: Invalid value: "object.": compilation failed: ')), created.join('\n'));
  // Changed match conditions are checked again.
  const changed = config(webhook({ sideEffects: 'Some', admissionReviewVersions: ['v3'], matchConditions: [{ name: 'm', expression: 'object..' }] }), webhook());
  assert.ok(texts(validatingWebhookConfigurationStrategy.validateUpdate!(changed, old, '')).some((e) => e.startsWith('webhooks[0].matchConditions[0].expression')));
});
