// The type checking the status controller writes back (kube's validating/typechecking_test.go):
// an expression checked against the schema of each kind the rules name exactly, with kube's
// warning text per kind; wildcards and unknown kinds are not checked; params typed from the
// paramKind's schema, undeclared when it has none.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { typeCheckPolicy, type TypeCheckingLookups } from '../../../../server/admission/policy/typechecking.ts';

const defs = JSON.parse(readFileSync(new URL('../../../../schemas/definitions.json', import.meta.url), 'utf8')) as Record<string, unknown>;
const KINDS: Record<string, [string, string]> = { 'apps/v1/deployments': ['Deployment', 'io.k8s.api.apps.v1.Deployment'], '/v1/configmaps': ['ConfigMap', 'io.k8s.api.core.v1.ConfigMap'] };
const lookups: TypeCheckingLookups = {
  kindFor: (group, version, resource) => {
    const k = KINDS[`${group}/${version}/${resource}`];
    return k && { gvk: { group, version, kind: k[0] }, definition: k[1] };
  },
  definitionOf: (apiVersion, kind) => (apiVersion === 'v1' && kind === 'ConfigMap' ? 'io.k8s.api.core.v1.ConfigMap' : undefined),
  definitions: () => defs,
};
const policy = (rules: unknown[], validations: unknown[], paramKind?: unknown) => ({ spec: { matchConstraints: { resourceRules: rules }, validations, ...(paramKind ? { paramKind } : {}) } });
const DEPLOYMENTS = { apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments'] };

test('a field the kind does not have is a warning naming the kind; a good expression none', () => {
  assert.deepEqual(typeCheckPolicy(policy([DEPLOYMENTS], [{ expression: 'object.spec.replicas > 1' }, { expression: 'object.spec.replicass > 1', messageExpression: "'x' + object.metadata.name" }]), lookups), [
    { fieldRef: 'spec.validations[1].expression', warning: "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replicass'\n | object.spec.replicass > 1\n | ...........^\n" },
  ]);
});

test('wildcards and kinds the server does not serve are not checked', () => {
  assert.deepEqual(typeCheckPolicy(policy([{ ...DEPLOYMENTS, apiGroups: ['*'] }], [{ expression: 'object.nope' }]), lookups), []);
  assert.deepEqual(typeCheckPolicy(policy([{ ...DEPLOYMENTS, resources: ['widgets'] }], [{ expression: 'object.nope' }]), lookups), []);
});

test('params are typed from the paramKind, and undeclared when its schema is unknown', () => {
  assert.deepEqual(typeCheckPolicy(policy([DEPLOYMENTS], [{ expression: "params.data['max'] == '1'" }], { apiVersion: 'v1', kind: 'ConfigMap' }), lookups), []);
  assert.match(typeCheckPolicy(policy([DEPLOYMENTS], [{ expression: 'params.datum == 1' }], { apiVersion: 'v1', kind: 'ConfigMap' }), lookups)[0].warning, /undefined field 'datum'/);
  assert.match(typeCheckPolicy(policy([DEPLOYMENTS], [{ expression: 'params.x == 1' }], { apiVersion: 'example.com/v1', kind: 'Nope' }), lookups)[0].warning, /undeclared reference to 'params'/);
});
