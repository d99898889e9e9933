// --authorization-config as kube-apiserver reads it (reload.go's LoadAndValidateFile, the
// apiserver validation's ValidateAuthorizationConfiguration): the types in order from a valid
// file, kube's messages for the files it refuses, and hearth's for the types it lacks yet.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readAuthorizationConfig } from '../../../server/authorization/config.ts';

const dir = mkdtempSync(join(tmpdir(), 'hearth-authz-config-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

/** Reads a file of this text: its types, or the error's message. */
function read(text: string): string[] | string {
  const file = join(dir, `config-${n++}.yaml`);
  writeFileSync(file, text);
  try {
    return readAuthorizationConfig(file).authorizers.map((a) => a.type);
  } catch (e) {
    return (e as Error).message;
  }
}

const HEAD = 'apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\n';

test('a valid file gives its authorizer types in order, in any served version', () => {
  assert.deepEqual(read(`${HEAD}authorizers:\n- type: RBAC\n  name: rbac\n- type: AlwaysDeny\n  name: alwaysdeny\n`), ['RBAC', 'AlwaysDeny']);
  assert.deepEqual(read(`apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthorizationConfiguration\nauthorizers:\n- {type: AlwaysAllow, name: alwaysallow}\n`), ['AlwaysAllow']);
});

test('decoding: kube\'s loader messages', () => {
  assert.equal(read(''), 'authorizers: Required value: at least one authorization mode must be defined');
  assert.equal(read('apiVersion: apiserver.config.k8s.io/v1\nauthorizers: []\n'), `failed to load AuthorizationConfiguration from file: Object 'Kind' is missing in '{"apiVersion":"apiserver.config.k8s.io/v1","authorizers":[]}'`);
  assert.equal(read(`${HEAD}authorizers:\n- type: RBAC\n  name: rbac\n  extra: 1\n`), 'failed to load AuthorizationConfiguration from file: strict decoding error: unknown field "authorizers[0].extra"');
  assert.equal(read(`${HEAD}authorizers: []\n`), 'authorizers: Required value: at least one authorization mode must be defined');
  assert.match(String(read(`${HEAD.replace('/v1', '/v9')}authorizers: []\n`)), /^failed to load AuthorizationConfiguration from file: no kind "AuthorizationConfiguration" is registered for version "apiserver\.config\.k8s\.io\/v9"/);
  const missing = join(dir, 'nope.yaml');
  assert.throws(() => readAuthorizationConfig(missing), { message: `open ${missing}: no such file or directory` });
});

test('validation: kube\'s field errors', () => {
  assert.equal(read(`${HEAD}authorizers:\n- name: x\n`), 'authorizers[0].type: Required value');
  assert.equal(read(`${HEAD}authorizers:\n- type: Magic\n  name: magic\n`), 'authorizers[0].type: Unsupported value: "Magic": supported values: "ABAC", "AlwaysAllow", "AlwaysDeny", "Node", "RBAC", "Webhook"');
  assert.equal(read(`${HEAD}authorizers:\n- {type: RBAC, name: rbac}\n- {type: RBAC, name: rbac2}\n`), 'authorizers[1].type: Duplicate value: "RBAC"');
  assert.equal(read(`${HEAD}authorizers:\n- {type: RBAC}\n`), 'authorizers[0].name: Required value');
  assert.equal(read(`${HEAD}authorizers:\n- {type: RBAC, name: Not_Valid}\n`), 'authorizers[0].name: Invalid value: "Not_Valid": authorizer name is invalid: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \'-\' or \'.\', and must start and end with an alphanumeric character (e.g. \'example.com\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\')');
  assert.equal(read(`${HEAD}authorizers:\n- {type: RBAC, name: rbac, webhook: {}}\n`), 'authorizers[0].webhook: Invalid value: "non-null": may only be specified when type=Webhook');
  assert.equal(read(`${HEAD}authorizers:\n- {type: Webhook, name: w}\n- {type: RBAC, name: w}\n`), '[authorizers[0].webhook: Required value: required when type=Webhook, authorizers[1].name: Duplicate value: "w"]');
  assert.equal(read(`${HEAD}authorizers:\n- {type: RBAC, name: my-rbac}\n`), 'expected name rbac for authorizer RBAC instead of my-rbac');
});

test('types kube has and hearth does not yet are refused by name', () => {
  assert.equal(read(`${HEAD}authorizers:\n- {type: Node, name: node}\n- {type: RBAC, name: rbac}\n`), 'authorizer type "Node" is not supported by hearth yet (supported: AlwaysAllow, AlwaysDeny, RBAC, Webhook)');
});
