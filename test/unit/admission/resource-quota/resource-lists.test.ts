// The quantity arithmetic quota and LimitRanger do (apimachinery's resource.Quantity and
// pkg/quota/v1/resources.go): a sum keeps its first non-zero operand's format, String() is
// kube's canonical text in that format, and the list operations (Add, Subtract with a floor of
// zero, Mask, LessThanOrEqual, prettyPrint) behave as kube's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  add,
  addLists,
  count,
  lessThanOrEqual,
  mask,
  prettyPrint,
  quantityOf,
  quantityString,
  removeZeros,
  resourceListJson,
  resourceListOf,
  subtractNonNegative,
  zeroQuantity,
} from '../../../../server/admission/resource-quota/resource-lists.ts';

const q = (text: string) => quantityOf(text)!;
const sum = (...texts: string[]) => quantityString(texts.map(q).reduce((a, b) => add(a, b), zeroQuantity()));

test('sums print as kube prints them, in the format of the first non-zero operand', () => {
  assert.equal(sum('100m', '200m'), '300m');
  assert.equal(sum('500m', '500m'), '1');
  assert.equal(sum('1', '500m'), '1500m');
  assert.equal(sum('1Gi', '512Mi'), '1536Mi');
  assert.equal(sum('128Mi', '128Mi'), '256Mi');
  // Binary below 1024, or not whole, prints as decimal; a whole number not a multiple of 1024 prints as itself.
  assert.equal(sum('1Ki', '-1000'), '24');
  assert.equal(quantityString(add(q('1Ki'), q('1'))), '1025');
  assert.equal(sum('1M', '500k'), '1500k');
  assert.equal(sum('1500000'), '1500k');
  assert.equal(sum('0.5'), '500m');
  // A zero first operand takes the other's format (quota's zero start).
  assert.equal(quantityString(add(zeroQuantity(), q('2Gi'))), '2Gi');
  assert.equal(quantityString(zeroQuantity()), '0');
  assert.equal(quantityString(count(3)), '3');
  assert.equal(sum('1e3', '1e3'), '2e3');
});

test('list operations: add, subtract floored at zero, mask, remove zeros', () => {
  const used = resourceListOf({ pods: '2', 'requests.cpu': '900m' });
  const delta = resourceListOf({ pods: '1', 'requests.cpu': '100m', 'requests.memory': '64Mi' });
  assert.deepEqual(resourceListJson(addLists(used, delta)), { pods: '3', 'requests.cpu': '1', 'requests.memory': '64Mi' });
  assert.deepEqual(resourceListJson(subtractNonNegative(delta, used)), { pods: '0', 'requests.cpu': '0', 'requests.memory': '64Mi' });
  assert.deepEqual(resourceListJson(mask(delta, ['pods', 'limits.cpu'])), { pods: '1' });
  assert.deepEqual([...removeZeros(resourceListOf({ a: '0', b: '1', c: '0Gi' })).keys()], ['b']);
});

test('lessThanOrEqual names what exceeds; a resource without a limit is not limited', () => {
  const hard = resourceListOf({ pods: '2', 'requests.cpu': '1' });
  assert.deepEqual(lessThanOrEqual(resourceListOf({ pods: '2', 'requests.cpu': '1000m', other: '9' }), hard), { allowed: true, exceeded: [] });
  assert.deepEqual(lessThanOrEqual(resourceListOf({ pods: '3', 'requests.cpu': '1001m' }), hard), { allowed: false, exceeded: ['pods', 'requests.cpu'] });
});

test('prettyPrint: sorted name=value pairs joined by commas; JSON in name order', () => {
  const list = resourceListOf({ 'requests.cpu': '700m', pods: '1', 'count/deployments.apps': '1' });
  assert.equal(prettyPrint(list), 'count/deployments.apps=1,pods=1,requests.cpu=700m');
  assert.deepEqual(Object.keys(resourceListJson(list)), ['count/deployments.apps', 'pods', 'requests.cpu']);
});

test('what is not a quantity is left out of a list', () => {
  assert.deepEqual([...resourceListOf({ cpu: 'lots', memory: '1Gi', gpu: 2 }).keys()], ['memory', 'gpu']);
  assert.equal(quantityOf('1.5.5'), undefined);
});
