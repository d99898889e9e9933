// Validation of ValidatingAdmissionPolicy and its binding (kube's admissionregistration
// validation_test.go cases): required fields, expressions compiled with kube's texts, variables
// seen by later expressions only, params only with a paramKind, validation actions, paramRef.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkPolicyExpression } from '../../../../server/admission/policy/strategies.ts';
import { validateValidatingAdmissionPolicy, validateValidatingAdmissionPolicyBinding } from '../../../../server/registry/kinds/admissionregistration/policies.ts';
import { fieldErrorText } from '../../../../server/validation/field.ts';

const RULES = { resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments'] }], matchPolicy: 'Equivalent', namespaceSelector: {}, objectSelector: {} };
const texts = (errs: { field: string; message: string }[]) => errs.map((e) => fieldErrorText(e as never));

test('a policy needs a failure policy, match constraints with rules, and validations or audit annotations', () => {
  assert.deepEqual(texts(validateValidatingAdmissionPolicy({ metadata: { name: 'p' }, spec: {} }, checkPolicyExpression)), [
    'spec.failurePolicy: Required value',
    'spec.matchConstraints: Required value',
    'spec.validations: Required value: validations or auditAnnotations must contain at least one item',
    'spec.auditAnnotations: Required value: validations or auditAnnotations must contain at least one item',
  ]);
  assert.deepEqual(texts(validateValidatingAdmissionPolicy({ metadata: { name: 'p' }, spec: { failurePolicy: 'Fail', matchConstraints: { ...RULES, resourceRules: [] }, validations: [{ expression: 'true' }] } }, checkPolicyExpression)), ['spec.matchConstraints.resourceRules: Required value']);
});

test('expressions compile with kube\'s messages; params need a paramKind; variables are seen by what follows them', () => {
  const errs = texts(
    validateValidatingAdmissionPolicy(
      {
        metadata: { name: 'p' },
        spec: {
          failurePolicy: 'Fail',
          matchConstraints: RULES,
          variables: [{ name: 'a', expression: 'variables.b' }, { name: 'b', expression: 'object.x' }, { name: 'not ok', expression: '1' }],
          validations: [{ expression: "'s'" }, { expression: 'params.x == 1' }, { expression: 'variables.b == 1', messageExpression: '1', reason: 'Teapot' }],
        },
      },
      checkPolicyExpression,
    ),
  );
  assert.deepEqual(errs, [
    "spec.variables[0].expression: Invalid value: \"variables.b\": compilation failed: ERROR: <input>:1:10: undefined field 'b'\n | variables.b\n | .........^",
    'spec.variables[2].name: Invalid value: "not ok": name is not a valid CEL identifier',
    'spec.validations[0].expression: Invalid value: "\'s\'": must evaluate to bool but got string',
    "spec.validations[1].expression: Invalid value: \"params.x == 1\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params.x == 1\n | ^",
    'spec.validations[2].messageExpression: Invalid value: "1": must evaluate to string but got int',
    'spec.validations[2].reason: Unsupported value: "Teapot": supported values: "Forbidden", "Invalid", "RequestEntityTooLarge"',
  ]);
});

test('a binding: policyName, validation actions unique and not Deny with Warn, paramRef name or selector and its action', () => {
  assert.deepEqual(texts(validateValidatingAdmissionPolicyBinding({ spec: { validationActions: ['Deny', 'Warn', 'Deny'], paramRef: { name: 'x', selector: {} } } })), [
    'spec.policyName: Required value',
    'spec.paramRef.name: Forbidden: name and selector are mutually exclusive',
    'spec.paramRef.selector: Forbidden: name and selector are mutually exclusive',
    'spec.paramRef.parameterNotFoundAction: Required value',
    'spec.validationActions[2]: Duplicate value: "Deny"',
    'spec.validationActions: Invalid value: []admissionregistration.ValidationAction{"Deny", "Warn", "Deny"}: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)',
  ]);
  assert.deepEqual(texts(validateValidatingAdmissionPolicyBinding({ spec: { policyName: 'p', validationActions: [] } })), ['spec.validationActions: Required value: at least one validation action is required']);
});
