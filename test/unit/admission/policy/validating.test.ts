// ValidatingAdmissionPolicy's evaluation without a server (kube's validating/validator_test.go and
// dispatcher cases): validations with message, messageExpression and reason; match conditions and
// their errors under each failure policy; lazily evaluated variables; audit annotations; params
// by name and selector with parameterNotFoundAction; each validation action; the source that keeps
// a policy compiled across status writes. The HTTPS path is test/e2e/admission/validating-admission-policy.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PolicyActivation, compilePolicyExpression } from '../../../../server/admission/cel.ts';
import { collectParams, ParamsError, type ParamKindSource } from '../../../../server/admission/policy/params.ts';
import { PolicySource } from '../../../../server/admission/policy/source.ts';
import { compileValidatingPolicy, validate, type CompiledValidatingPolicy } from '../../../../server/admission/policy/validator.ts';
import { validatingAdmissionPolicy, VALIDATION_FAILURE_ANNOTATION, type PolicyMatcher } from '../../../../server/admission/policy/validating.ts';
import { admissionAttributes, type TestAttributes } from '../../../helpers/admission.ts';
import type { ResourceInfo } from '../../../../server/schema/types.ts';
import { ApiError } from '../../../../server/errors.ts';

type Obj = Record<string, unknown>;
const DEPLOYMENTS = { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment', namespaced: true } as ResourceInfo;

function deployment(replicas: number, labels: Record<string, string> = {}): Obj {
  return { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'team', labels }, spec: { replicas } };
}

function activation(policy: CompiledValidatingPolicy, object: Obj, params: Obj | null = null): PolicyActivation {
  const request = { kind: { group: 'apps', version: 'v1', kind: 'Deployment' }, resource: { group: 'apps', version: 'v1', resource: 'deployments' }, name: 'web', namespace: 'team', operation: 'CREATE', userInfo: { username: 'alice' } };
  return new PolicyActivation({ object, oldObject: null, request, namespaceObject: null, params, hasParams: policy.hasParams }, policy.variables);
}

function policy(spec: Obj, name = 'replicas'): Obj {
  return { metadata: { name, generation: 1 }, spec: { matchConstraints: {}, ...spec } };
}

test('a false validation denies with its message, its messageExpression, or the expression; a reason is kept', () => {
  const p = compileValidatingPolicy(
    policy({
      validations: [
        { expression: 'object.spec.replicas <= 5' },
        { expression: 'object.spec.replicas <= 4', message: 'at most four' },
        { expression: 'object.spec.replicas <= 3', messageExpression: "'replicas ' + string(object.spec.replicas) + ' > 3'", reason: 'Forbidden' },
        { expression: 'object.spec.replicas <= 2', message: 'fallback', messageExpression: "'two\\nlines'" },
        { expression: 'object.spec.replicas >= 1' },
      ],
    }),
  );
  const r = validate(p, activation(p, deployment(6)));
  assert.deepEqual(
    r.decisions.map((d) => [d.action, d.message, d.reason]),
    [
      ['deny', 'failed expression: object.spec.replicas <= 5', 'Invalid'],
      ['deny', 'at most four', 'Invalid'],
      ['deny', 'replicas 6 > 3', 'Forbidden'],
      ['deny', 'fallback', 'Invalid'],
      ['admit', '', ''],
    ],
  );
});

test('an evaluation error denies under Fail and admits under Ignore, with kube\'s text', () => {
  const fail = compileValidatingPolicy(policy({ validations: [{ expression: 'object.spec.missing > 1' }] }));
  assert.deepEqual(validate(fail, activation(fail, deployment(1))).decisions, [{ action: 'deny', evaluation: 'error', message: "expression 'object.spec.missing > 1' resulted in error: no such key: missing", reason: '' }]);
  const ignore = compileValidatingPolicy(policy({ failurePolicy: 'Ignore', validations: [{ expression: 'object.spec.missing > 1' }] }));
  assert.equal(validate(ignore, activation(ignore, deployment(1))).decisions[0].action, 'admit');
});

test('match conditions: a false one skips the policy; errors deny under Fail, are skipped under Ignore', () => {
  const skip = compileValidatingPolicy(policy({ matchConditions: [{ name: 'big', expression: 'object.spec.replicas > 10' }], validations: [{ expression: 'false' }] }));
  assert.deepEqual(validate(skip, activation(skip, deployment(6))).decisions, []);
  const applies = validate(skip, activation(skip, deployment(11))).decisions;
  assert.equal(applies[0].action, 'deny');
  const broken = compileValidatingPolicy(policy({ matchConditions: [{ name: 'a', expression: 'object.nope' }, { name: 'b', expression: 'object.nope2' }], validations: [{ expression: 'true' }] }));
  assert.equal(validate(broken, activation(broken, deployment(1))).decisions[0].message, "[expression 'object.nope' resulted in error: no such key: nope, expression 'object.nope2' resulted in error: no such key: nope2]");
  const ignored = compileValidatingPolicy(policy({ failurePolicy: 'Ignore', matchConditions: [{ name: 'a', expression: 'object.nope' }], validations: [{ expression: 'false' }] }));
  assert.deepEqual(validate(ignored, activation(ignored, deployment(1))).decisions, []);
});

test('variables are evaluated when read, once, and a failing one fails only the expressions that read it', () => {
  const p = compileValidatingPolicy(
    policy({
      variables: [
        { name: 'replicas', expression: 'object.spec.replicas' },
        { name: 'doubled', expression: 'variables.replicas * 2' },
        { name: 'broken', expression: 'object.spec.nope' },
      ],
      validations: [{ expression: 'variables.doubled <= 10' }, { expression: 'variables.broken == 1' }, { expression: 'true' }],
    }),
  );
  const r = validate(p, activation(p, deployment(6)));
  assert.equal(r.decisions[0].message, 'failed expression: variables.doubled <= 10');
  assert.equal(r.decisions[1].message, "expression 'variables.broken == 1' resulted in error: composited variable \"broken\" fails to evaluate: no such key: nope");
  assert.equal(r.decisions[2].action, 'admit');
});

test('compile errors carry cel-go\'s text and the expected type', () => {
  const scope = { hasParams: false, variableNames: [] };
  assert.equal(compilePolicyExpression("'x'", scope, 'bool').error, 'must evaluate to bool but got string');
  assert.match(compilePolicyExpression('params.x', scope, 'bool').error ?? '', /^compilation failed: ERROR: <input>:1:1: undeclared reference to 'params'/);
  assert.equal(compilePolicyExpression('params.x == 1', { hasParams: true, variableNames: [] }, 'bool').error, undefined);
});

test('audit annotations: a string is published trimmed, null and empty excluded, another type an error', () => {
  const p = compileValidatingPolicy(
    policy({
      auditAnnotations: [
        { key: 'replicas', valueExpression: "' ' + string(object.spec.replicas) + ' '" },
        { key: 'none', valueExpression: 'null' },
        { key: 'empty', valueExpression: "''" },
        { key: 'number', valueExpression: 'object.spec.replicas' },
      ],
    }),
  );
  assert.deepEqual(validate(p, activation(p, deployment(3))).auditAnnotations, [
    { action: 'publish', key: 'replicas', value: '3' },
    { action: 'exclude' },
    { action: 'exclude' },
    { action: 'error', key: 'number', error: "valueExpression 'object.spec.replicas' resulted in unsupported return type: int. Return type must be either string or null." },
  ]);
});

const configMaps: ParamKindSource = {
  namespaced: true,
  get: (ns, name) => (ns === 'team' && name === 'limits' ? { metadata: { name: 'limits', namespace: 'team', labels: { tier: 'gold' } }, data: { max: '3' } } : undefined),
  list: (ns) => (ns === 'team' ? [{ metadata: { name: 'limits', labels: { tier: 'gold' } }, data: { max: '3' } }, { metadata: { name: 'other', labels: { tier: 'silver' } }, data: { max: '9' } }] : []),
};
const resolve = (apiVersion: string, kind: string) => (apiVersion === 'v1' && kind === 'ConfigMap' ? configMaps : undefined);
const CM = { apiVersion: 'v1', kind: 'ConfigMap' };

test('params: by name in the request namespace or paramRef.namespace, by selector; not found with Allow and Deny; unknown kind', () => {
  assert.deepEqual(collectParams(undefined, { name: 'x' }, 'team', resolve), [null]);
  assert.deepEqual(collectParams(CM, undefined, 'team', resolve), [null]);
  assert.equal((collectParams(CM, { name: 'limits' }, 'team', resolve)[0] as Obj).data !== undefined, true);
  assert.equal(collectParams(CM, { name: 'limits', namespace: 'team' }, '', resolve).length, 1);
  assert.deepEqual(collectParams(CM, { name: 'limits', parameterNotFoundAction: 'Allow' }, 'other', resolve), []);
  assert.throws(() => collectParams(CM, { name: 'limits', parameterNotFoundAction: 'Deny' }, 'other', resolve), new ParamsError('no params found for policy binding with `Deny` parameterNotFoundAction'));
  assert.equal(collectParams(CM, { selector: { matchLabels: { tier: 'silver' } } }, 'team', resolve).length, 1);
  assert.equal(collectParams(CM, { selector: {} }, 'team', resolve).length, 2);
  assert.throws(() => collectParams(CM, { name: 'limits' }, '', resolve), /cannot use namespaced paramRef in policy binding that matches cluster-scoped resources/);
  assert.throws(() => collectParams({ apiVersion: 'example.com/v1', kind: 'Nope' }, { name: 'x' }, 'team', resolve), new ParamsError('paramKind kind `&ParamKind{APIVersion:example.com/v1,Kind:Nope,}` not known'));
});

/** Matches deployments only; bindings with matchResources.namespaceSelector {matchLabels:{skip:...}} never. */
const matcher: PolicyMatcher = {
  definitionMatches: (_c, a) => (a.info.resource === 'deployments' ? { resource: { group: 'apps', version: 'v1', resource: 'deployments' }, kind: { group: 'apps', version: 'v1', kind: 'Deployment' } } : undefined),
  bindingMatches: (m) => !(m as Obj | undefined)?.namespaceSelector,
};

function plugin(policies: Obj[], bindings: Obj[]) {
  const source = new PolicySource('validatingadmissionpolicies', 'validatingadmissionpolicybindings', compileValidatingPolicy);
  source.load(policies, bindings);
  // alice may update deployments/scale in team, nothing else.
  const authorize = (x: { user: { name: string }; verb: string; resource: string; subresource: string; namespace: string }) =>
    x.user.name === 'alice' && x.verb === 'update' && x.resource === 'deployments' && x.subresource === 'scale' && x.namespace === 'team' ? { decision: 'allow', reason: 'scaler' } : { decision: 'noopinion', reason: '' };
  return validatingAdmissionPolicy(source, matcher, { namespace: () => ({ metadata: { name: 'team', labels: { env: 'prod' } } }), params: resolve, authorize });
}

function attrs(object: Obj): TestAttributes {
  return admissionAttributes({ operation: 'CREATE', info: DEPLOYMENTS, namespace: 'team', name: 'web', object, user: { name: 'alice', groups: ['system:authenticated'] } });
}

const binding = (name: string, spec: Obj): Obj => ({ metadata: { name }, spec: { policyName: 'replicas', ...spec } });

function refusal(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  assert.fail('not refused');
}

test('Deny refuses with kube\'s message, reason and code; Warn warns; Audit annotates; a non-matching binding does nothing', () => {
  const p = policy({ validations: [{ expression: 'object.spec.replicas <= 5', reason: 'Forbidden' }], auditAnnotations: [{ key: 'seen', valueExpression: "'replicas-' + string(object.spec.replicas)" }] });
  const warnAudit = plugin([p], [binding('warn', { validationActions: ['Warn', 'Audit'] }), binding('skip', { validationActions: ['Deny'], matchResources: { namespaceSelector: { matchLabels: { skip: 'y' } } } })]);
  const a = attrs(deployment(6));
  assert.equal(warnAudit.validate!(a), undefined);
  assert.deepEqual(a.warnings, ["Validation failed for ValidatingAdmissionPolicy 'replicas' with binding 'warn': failed expression: object.spec.replicas <= 5"]);
  assert.deepEqual(JSON.parse(a.auditAnnotations[VALIDATION_FAILURE_ANNOTATION]), [{ message: 'failed expression: object.spec.replicas <= 5', policy: 'replicas', binding: 'warn', expressionIndex: 0, validationActions: ['Warn', 'Audit'] }]);
  assert.equal(a.auditAnnotations['replicas/seen'], 'replicas-6');

  const deny = plugin([p], [binding('deny', { validationActions: ['Deny'] })]);
  const e = refusal(() => deny.validate!(attrs(deployment(6))));
  const message = "ValidatingAdmissionPolicy 'replicas' with binding 'deny' denied request: failed expression: object.spec.replicas <= 5";
  assert.deepEqual(e.toStatus(), { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `deployments.apps "web" is forbidden: ${message}`, reason: 'Forbidden', details: { name: 'web', group: 'apps', kind: 'deployments', causes: [{ message }] }, code: 403 });
  assert.equal(deny.validate!(attrs(deployment(5))), undefined);
});

test('params drive the expression; Deny on a missing param refuses as a binding configuration error, Ignore admits', () => {
  const p = policy({ paramKind: CM, validations: [{ expression: 'object.spec.replicas <= int(params.data.max)', messageExpression: "'at most ' + params.data.max" }] });
  const byName = plugin([p], [binding('b', { validationActions: ['Deny'], paramRef: { name: 'limits', parameterNotFoundAction: 'Deny' } })]);
  const e = refusal(() => byName.validate!(attrs(deployment(4))));
  assert.equal(e.code, 422);
  assert.equal(e.message, "deployments.apps \"web\" is forbidden: ValidatingAdmissionPolicy 'replicas' with binding 'b' denied request: at most 3");
  const missing = plugin([p], [binding('b', { validationActions: ['Deny'], paramRef: { name: 'absent', parameterNotFoundAction: 'Deny' } })]);
  assert.equal(refusal(() => missing.validate!(attrs(deployment(1)))).message, "deployments.apps \"web\" is forbidden: ValidatingAdmissionPolicy 'replicas' with binding 'b' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction");
  const allowed = plugin([p], [binding('b', { validationActions: ['Deny'], paramRef: { name: 'absent', parameterNotFoundAction: 'Allow' } })]);
  assert.equal(allowed.validate!(attrs(deployment(100))), undefined);
  const ignored = plugin([{ ...p, spec: { ...(p.spec as Obj), failurePolicy: 'Ignore' } }], [binding('b', { validationActions: ['Deny'], paramRef: { name: 'absent', parameterNotFoundAction: 'Deny' } })]);
  assert.equal(ignored.validate!(attrs(deployment(100))), undefined);
});

test('the authorizer: the request\'s own resource and any other, for the requester or a service account', () => {
  const p = policy({
    validations: [
      { expression: "authorizer.requestResource.subresource('scale').check('update').allowed()", messageExpression: "'may not scale'" },
      { expression: "authorizer.group('apps').resource('deployments').subresource('scale').namespace('team').check('update').reason() == 'scaler'" },
      { expression: "!authorizer.serviceAccount('team', 'robot').group('apps').resource('deployments').subresource('scale').namespace('team').check('update').allowed()" },
      { expression: "!authorizer.path('/healthz').check('get').errored()" },
    ],
  });
  const deny = plugin([p], [binding('b', { validationActions: ['Deny'] })]);
  assert.equal(deny.validate!(attrs(deployment(1))), undefined);
  const bob = admissionAttributes({ operation: 'CREATE', info: DEPLOYMENTS, namespace: 'team', name: 'web', object: deployment(1), user: { name: 'bob', groups: [] } });
  assert.equal(refusal(() => deny.validate!(bob)).message, "deployments.apps \"web\" is forbidden: ValidatingAdmissionPolicy 'replicas' with binding 'b' denied request: may not scale");
  assert.match(compilePolicyExpression("authorizer.path('/x').check('get').nope()", { hasParams: false, variableNames: [] }, 'bool').error ?? '', /found no matching overload for 'nope'|undeclared reference to 'nope'/);
  assert.match(compilePolicyExpression("authorizer.path('/x').check('get').allowed()", { hasParams: false, variableNames: [], withoutAuthorizer: true }, 'bool').error ?? '', /undeclared reference to 'authorizer'/);
});

test('the source compiles a policy once per generation and drops hooks without bindings', () => {
  let compiled = 0;
  const source = new PolicySource('vap', 'vapb', (p) => {
    compiled++;
    return compileValidatingPolicy(p);
  });
  assert.deepEqual(source.hooks(), []);
  source.onCommit([{ type: 'ADDED', key: { res: 'vap', name: 'replicas' }, object: policy({ validations: [{ expression: 'true' }] }) }]);
  assert.deepEqual(source.hooks(), []);
  source.onCommit([{ type: 'ADDED', key: { res: 'vapb', name: 'b' }, object: binding('b', { validationActions: ['Deny'] }) }]);
  assert.equal(source.hooks().length, 1);
  source.onCommit([{ type: 'MODIFIED', key: { res: 'vap', name: 'replicas' }, object: { ...policy({ validations: [{ expression: 'true' }] }), status: { observedGeneration: 1 } } }]);
  assert.equal(source.hooks().length, 1);
  assert.equal(compiled, 1);
  source.onCommit([{ type: 'DELETED', key: { res: 'vapb', name: 'b' } }]);
  assert.deepEqual(source.hooks(), []);
});
