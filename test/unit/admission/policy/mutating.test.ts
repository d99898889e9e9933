// MutatingAdmissionPolicy's mutations without a server (kube's mutating/patch tests): an
// ApplyConfiguration merged by the schema (list-maps by key), refused on an atomic struct; a
// JSONPatch applied, left out entirely when a test operation fails, its failures in kube's words;
// evaluation errors under each failure policy. The HTTPS path is test/e2e/admission/mutating-admission-policy.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TypeModel } from '../../../../server/schema/model.ts';
import { PolicySource } from '../../../../server/admission/policy/source.ts';
import { compileMutatingPolicy, mutatingAdmissionPolicy } from '../../../../server/admission/policy/mutating.ts';
import type { PolicyMatcher } from '../../../../server/admission/policy/validating.ts';
import { ApiError } from '../../../../server/errors.ts';
import type { ResourceInfo } from '../../../../server/schema/types.ts';
import { admissionAttributes } from '../../../helpers/admission.ts';

type Obj = Record<string, unknown>;
const DEPLOYMENTS = { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment', namespaced: true, definition: 'io.k8s.api.apps.v1.Deployment' } as ResourceInfo;
const model = TypeModel.loadBuiltins();
const matcher: PolicyMatcher = {
  definitionMatches: () => ({ resource: { group: 'apps', version: 'v1', resource: 'deployments' }, kind: { group: 'apps', version: 'v1', kind: 'Deployment' } }),
  bindingMatches: () => true,
};

function plugin(mutations: Obj[], failurePolicy = 'Fail') {
  const source = new PolicySource('mutatingadmissionpolicies', 'mutatingadmissionpolicybindings', compileMutatingPolicy);
  source.load([{ metadata: { name: 'p', generation: 1 }, spec: { matchConstraints: {}, failurePolicy, reinvocationPolicy: 'Never', mutations } }], [{ metadata: { name: 'b' }, spec: { policyName: 'p' } }]);
  return mutatingAdmissionPolicy(source, matcher, { namespace: () => undefined, params: () => undefined, authorize: () => ({ decision: 'noopinion', reason: '' }), typeOf: () => model.node('io.k8s.api.apps.v1.Deployment') });
}

const deployment = (): Obj => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'team' },
  spec: { replicas: 1, selector: { matchLabels: { app: 'web' } }, template: { spec: { containers: [{ name: 'a', image: 'a:1' }, { name: 'b', image: 'b:1' }] } } },
});

function admit(p: ReturnType<typeof plugin>, object: Obj) {
  const a = admissionAttributes({ operation: 'CREATE', info: DEPLOYMENTS, namespace: 'team', name: 'web', object, user: { name: 'bob', groups: [] } });
  p.admit!(a);
  return a.object as Obj;
}

function refusal(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  assert.fail('not refused');
}

const ac = (expression: string) => ({ patchType: 'ApplyConfiguration', applyConfiguration: { expression } });
const jp = (expression: string) => ({ patchType: 'JSONPatch', jsonPatch: { expression } });

test('an ApplyConfiguration merges a list-map by its key, keeping the other elements', () => {
  const out = admit(plugin([ac("Object{spec: Object.spec{template: Object.spec.template{spec: Object.spec.template.spec{containers: [Object.spec.template.spec.containers{name: 'b', image: 'b:2'}]}}}}")]), deployment());
  assert.deepEqual((((out.spec as Obj).template as Obj).spec as Obj).containers, [{ name: 'a', image: 'a:1' }, { name: 'b', image: 'b:2' }]);
});

test('a JSONPatch applies in order; a failed test leaves the object as it was; a bad path refuses in kube\'s words', () => {
  const out = admit(plugin([jp("[JSONPatch{op: 'replace', path: '/spec/replicas', value: 3}, JSONPatch{op: 'add', path: '/metadata/labels', value: {'x': 'y'}}]")]), deployment());
  assert.equal((out.spec as Obj).replicas, 3);
  assert.deepEqual((out.metadata as Obj).labels, { x: 'y' });
  const escaped = admit(plugin([jp("[JSONPatch{op: 'add', path: '/metadata/labels', value: {}}, JSONPatch{op: 'add', path: '/metadata/labels/' + jsonpatch.escapeKey('example.com/tier~x'), value: 'gold'}]")]), deployment());
  assert.deepEqual((escaped.metadata as Obj).labels, { 'example.com/tier~x': 'gold' });
  const untouched = admit(plugin([jp("[JSONPatch{op: 'replace', path: '/spec/replicas', value: 3}, JSONPatch{op: 'test', path: '/spec/replicas', value: 1}]")]), deployment());
  assert.equal((untouched.spec as Obj).replicas, 1);
  const e = refusal(() => admit(plugin([jp("[JSONPatch{op: 'remove', path: '/spec/nope'}]")]), deployment()));
  assert.equal(e.code, 403);
  assert.equal(e.reason, 'Invalid');
  assert.match(e.message, /^policy 'p' with binding 'b' denied request: JSONPath: /);
});

test('an evaluation error refuses under Fail and leaves the object under Ignore', () => {
  const bad = [ac('Object{spec: Object.spec{replicas: object.spec.nope}}')];
  assert.equal(refusal(() => admit(plugin(bad), deployment())).message, "policy 'p' with binding 'b' denied request: expression 'Object{spec: Object.spec{replicas: object.spec.nope}}' resulted in error: no such key: nope");
  assert.deepEqual(admit(plugin(bad, 'Ignore'), deployment()), deployment());
});
