// CEL expressions over named variables (registry/crd/cel/expression.ts), as authentication uses
// them: JSON values in (integers as int, objects as maps), the checker's types and issues in
// cel-go's rendering, runtime errors in cel-go's words, results back as JSON, and kube's
// hasSelectExp over plain and optional selections.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CelEvaluationError, CelTypes, compileExpression, jsonToCel } from '../../../../server/registry/crd/cel/index.ts';

const claims = { claims: CelTypes.mapOf(CelTypes.string, CelTypes.dyn) };
const user = { user: CelTypes.objectOf({ username: CelTypes.string, groups: CelTypes.listOf(CelTypes.string) }) };

function compiled(src: string, vars: Parameters<typeof compileExpression>[1] = claims) {
  const r = compileExpression(src, vars);
  if ('error' in r) assert.fail(r.error);
  return r.compiled;
}

test('values in and out: integers are int, doubles double, lists and maps come back as arrays and objects', () => {
  const input = { claims: jsonToCel({ n: 3, f: 1.5, list: ['a', 'b'], nested: { k: ['v'] } }) };
  assert.equal(compiled('claims.n + 1').evaluate(input), 4);
  assert.equal(compiled('claims.f * 2.0').evaluate(input), 3);
  assert.deepEqual(compiled('claims.list.map(x, x + "!")').evaluate(input), ['a!', 'b!']);
  assert.deepEqual(compiled('claims.nested').evaluate(input), { k: ['v'] });
  assert.equal(compiled('type(claims.n) == int').evaluate(input), true, 'a JSON integer is an int, as kube converts claims');
});

test('compile errors are cel-go\'s issues; undeclared variables and fields are refused; result types are named', () => {
  const bad = compileExpression('claims.sub == ', claims);
  assert.ok('error' in bad && bad.error.startsWith('ERROR: <input>:1:'), JSON.stringify(bad));
  const undeclared = compileExpression('user.username', claims);
  assert.ok('error' in undeclared && undeclared.error.includes("undeclared reference to 'user'"));
  const field = compileExpression('user.uid', user);
  assert.ok('error' in field && field.error.includes("undefined field 'uid'"));
  assert.equal(compiled('user.username.startsWith("a")', user).resultType, 'bool');
  assert.equal(compiled('user.groups', user).resultType, 'list(string)');
});

test('runtime errors in cel-go words, thrown as CelEvaluationError', () => {
  assert.throws(() => compiled('claims.missing == "x"').evaluate({ claims: jsonToCel({}) }), (e: unknown) => e instanceof CelEvaluationError && e.message === 'no such key: missing');
});

test('selects: kube\'s hasSelectExp finds claims.email in selections, optional selections and comprehensions', () => {
  assert.equal(compiled('claims.email').selects('claims', 'email'), true);
  assert.equal(compiled('claims.?email.orValue("")').selects('claims', 'email'), true);
  assert.equal(compiled('[claims.email_verified].all(v, v == true)').selects('claims', 'email_verified'), true);
  assert.equal(compiled('claims.email_verified').selects('claims', 'email'), false);
  assert.equal(compiled('claims["email"]').selects('claims', 'email'), false, 'an index is no selection (as in kube)');
});
