// --controllers as kube-controller-manager reads it: the name itself, then -name, then *.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { controllerEnabled, controllerSelectionErrors } from '../../../server/controllers/selection.ts';

test('* runs every controller; -NAME switches one off; NAME alone runs only it', () => {
  assert.equal(controllerEnabled(undefined, 'serviceaccount-controller'), true);
  assert.equal(controllerEnabled(['*'], 'root-ca-certificate-publisher-controller'), true);
  assert.equal(controllerEnabled(['*', '-root-ca-certificate-publisher-controller'], 'root-ca-certificate-publisher-controller'), false);
  assert.equal(controllerEnabled(['*', '-root-ca-certificate-publisher-controller'], 'serviceaccount-controller'), true);
  assert.equal(controllerEnabled(['serviceaccount-controller'], 'serviceaccount-controller'), true);
  assert.equal(controllerEnabled(['serviceaccount-controller'], 'root-ca-certificate-publisher-controller'), false);
  assert.equal(controllerEnabled([], 'serviceaccount-controller'), false);
});

test('unknown names are reported in kube-controller-manager words', () => {
  assert.deepEqual(controllerSelectionErrors(['*', '-serviceaccount-controller', 'root-ca-certificate-publisher-controller']), []);
  assert.deepEqual(controllerSelectionErrors(['*', '-serviceaccount-token-controller']), []);
  assert.deepEqual(controllerSelectionErrors(['*', '-nope', 'other']), ['"nope" is not in the list of known controllers', '"other" is not in the list of known controllers']);
});

test("the bootstrap controllers answer to kube's names and to their old aliases (tokencleaner, bootstrapsigner), and run under *", () => {
  assert.equal(controllerEnabled(['*'], 'token-cleaner-controller'), true, 'on by default in hearth (kube: off unless named)');
  assert.equal(controllerEnabled(['*'], 'bootstrap-signer-controller'), true);
  assert.equal(controllerEnabled(['*', '-tokencleaner'], 'token-cleaner-controller'), false);
  assert.equal(controllerEnabled(['*', '-tokencleaner'], 'bootstrap-signer-controller'), true);
  assert.equal(controllerEnabled(['bootstrapsigner'], 'bootstrap-signer-controller'), true);
  assert.equal(controllerEnabled(['*', '-bootstrap-signer-controller'], 'bootstrap-signer-controller'), false);
  assert.deepEqual(controllerSelectionErrors(['*', '-tokencleaner', 'bootstrapsigner', 'token-cleaner-controller', '-bootstrap-signer-controller']), []);
  assert.deepEqual(controllerSelectionErrors(['-tokencleaners']), ['"tokencleaners" is not in the list of known controllers']);
});

test('an alias (csrapproving) stands for its canonical name, switched on or off', () => {
  assert.equal(controllerEnabled(['*', '-csrapproving'], 'certificatesigningrequest-approving-controller'), false);
  assert.equal(controllerEnabled(['csrapproving'], 'certificatesigningrequest-approving-controller'), true);
  assert.equal(controllerEnabled(['*', '-certificatesigningrequest-approving-controller'], 'certificatesigningrequest-approving-controller'), false);
  assert.deepEqual(controllerSelectionErrors(['-csrapproving', 'certificatesigningrequest-approving-controller', 'csrsigning-nope']), ['"csrsigning-nope" is not in the list of known controllers']);
});
