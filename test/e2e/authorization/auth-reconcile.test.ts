// `kubectl auth reconcile` against hearth, as kube-apiserver answers it: kubectl reads each
// role and binding, adds what is missing (or, asked to, removes what is extra) and writes the
// result back. Run by the admin (system:masters), it creates and then leaves alone; run by
// `alice` (a client certificate bound to `admin` in team-a) it reconciles within what she
// holds, and RBAC's escalation check refuses a role granting more; `bob` (a static token with no
// binding) and a service account bound to `edit` (which holds no roles) are refused by RBAC.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, KUBECTL, type TestServer } from '../../helpers/server.ts';
import { issueClientCertificate } from '../../../server/pki/certificates.ts';
import { renderKubeconfig } from '../../../server/pki/kubeconfig.ts';
import { execFile } from 'node:child_process';
import YAML from 'yaml';

const dir = mkdtempSync(join(tmpdir(), 'hearth-reconcile-'));
const tokenFile = join(dir, 'tokens.csv');
writeFileSync(tokenFile, 'bob-token,bob,bob-uid,"readers"\n');

let s: TestServer;
const kubeconfigs: Record<string, string> = {};

const RBAC = 'rbac.authorization.k8s.io';

/** kubectl as one identity (a kubeconfig written in `before`). */
function kubectlAs(who: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(KUBECTL, ['--kubeconfig', kubeconfigs[who], ...args], { timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as NodeJS.ErrnoException).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** Writes a manifest of several documents and returns its path. */
function manifest(name: string, docs: object[]): string {
  const path = join(dir, name);
  writeFileSync(path, docs.map((d) => YAML.stringify(d)).join('---\n'));
  return path;
}

const podReader = { apiVersion: `${RBAC}/v1`, kind: 'ClusterRole', metadata: { name: 'pod-reader' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }] };
const podReaders = { apiVersion: `${RBAC}/v1`, kind: 'ClusterRoleBinding', metadata: { name: 'pod-readers' }, roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: 'pod-reader' }, subjects: [{ kind: 'Group', apiGroup: RBAC, name: 'readers' }] };
const cmEditor = { apiVersion: `${RBAC}/v1`, kind: 'Role', metadata: { name: 'cm-editor', namespace: 'team-a' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['*'] }] };
const cmEditors = { apiVersion: `${RBAC}/v1`, kind: 'RoleBinding', metadata: { name: 'cm-editors', namespace: 'team-a' }, roleRef: { apiGroup: RBAC, kind: 'Role', name: 'cm-editor' }, subjects: [{ kind: 'User', apiGroup: RBAC, name: 'carol' }] };

before(async () => {
  s = await startTestServer({ options: { tokenAuthFile: tokenFile } });
  assert.equal((await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'team-a' } } })).status, 201);
  const issued = await issueClientCertificate(s.pki, { commonName: 'alice', organizations: ['developers'] });
  kubeconfigs.alice = join(dir, 'alice.kubeconfig');
  writeFileSync(kubeconfigs.alice, renderKubeconfig({ server: s.url, caCertPem: s.pki.caCertPem, clientCertPem: issued.certPem, clientKeyPem: issued.keyPem!, userName: 'alice', namespace: 'team-a' }));
  kubeconfigs.bob = join(dir, 'bob.kubeconfig');
  writeFileSync(kubeconfigs.bob, renderKubeconfig({ server: s.url, caCertPem: s.pki.caCertPem, token: 'bob-token', userName: 'bob', namespace: 'team-a' }));
  // alice administers team-a (kube's `admin` ClusterRole through a RoleBinding).
  const bind = await s.kubectl(['create', 'rolebinding', 'alice-admin', '-n', 'team-a', '--clusterrole=admin', '--user=alice']);
  assert.equal(bind.code, 0, bind.stderr);
  // A service account that may edit team-a (kube's `edit` holds no roles or bindings).
  assert.equal((await s.kubectl(['create', 'serviceaccount', 'deployer', '-n', 'team-a'])).code, 0);
  assert.equal((await s.kubectl(['create', 'rolebinding', 'deployer-edit', '-n', 'team-a', '--clusterrole=edit', '--serviceaccount=team-a:deployer'])).code, 0);
  const token = await s.kubectl(['create', 'token', 'deployer', '-n', 'team-a']);
  assert.equal(token.code, 0, token.stderr);
  kubeconfigs.deployer = join(dir, 'deployer.kubeconfig');
  writeFileSync(kubeconfigs.deployer, renderKubeconfig({ server: s.url, caCertPem: s.pki.caCertPem, token: token.stdout.trim(), userName: 'deployer', namespace: 'team-a' }));
});

after(async () => {
  await s?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('the admin reconciles roles and bindings: created first, then nothing to do', async () => {
  const file = manifest('admin.yaml', [podReader, podReaders, cmEditor, cmEditors]);
  const first = await s.kubectl(['auth', 'reconcile', '-f', file]);
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /^clusterrole\.rbac\.authorization\.k8s\.io\/pod-reader reconciled$/m);
  assert.match(first.stdout, /^rolebinding\.rbac\.authorization\.k8s\.io\/cm-editors reconciled$/m);
  // kubectl says what it changed on stderr: everything was created.
  assert.equal(first.stderr.match(/reconciliation required create/g)?.length, 4, first.stderr);
  assert.match(first.stderr, /missing subjects added:\n\t\t\{Kind:Group APIGroup:rbac\.authorization\.k8s\.io Name:readers Namespace:\}/);

  // Idempotent: a second run finds nothing to do and writes nothing.
  const rvBefore = (await s.request('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/pod-reader')).json().metadata.resourceVersion;
  const second = await s.kubectl(['auth', 'reconcile', '-f', file]);
  assert.equal(second.code, 0, second.stderr);
  assert.doesNotMatch(second.stderr, /reconciliation required/);
  assert.equal((await s.request('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/pod-reader')).json().metadata.resourceVersion, rvBefore);

  // What reconcile granted is in force: bob is in `readers`.
  const bobPods = await kubectlAs('bob', ['get', 'pods', '-n', 'team-a']);
  assert.equal(bobPods.code, 0, bobPods.stderr);
});

test('an extra rule is kept unless --remove-extra-permissions; a removed subject is added back', async () => {
  const file = manifest('admin-again.yaml', [podReader, podReaders]);
  assert.equal((await s.kubectl(['auth', 'reconcile', '-f', file])).code, 0);
  const patch = await s.kubectl(['patch', 'clusterrole', 'pod-reader', '--type=json', '-p', '[{"op":"add","path":"/rules/-","value":{"apiGroups":[""],"resources":["secrets"],"verbs":["get"]}}]']);
  assert.equal(patch.code, 0, patch.stderr);
  const unpatch = await s.kubectl(['patch', 'clusterrolebinding', 'pod-readers', '--type=json', '-p', '[{"op":"remove","path":"/subjects/0"}]']);
  assert.equal(unpatch.code, 0, unpatch.stderr);

  const keep = await s.kubectl(['auth', 'reconcile', '-f', file]);
  assert.equal(keep.code, 0, keep.stderr);
  assert.match(keep.stderr, /reconciliation required update\n\tmissing subjects added:/);
  const kept = (await s.request('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/pod-reader')).json();
  assert.deepEqual(kept.rules.map((r: { resources: string[] }) => r.resources[0]), ['pods', 'secrets']);
  assert.deepEqual((await s.request('GET', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/pod-readers')).json().subjects, podReaders.subjects);

  const strict = await s.kubectl(['auth', 'reconcile', '-f', file, '--remove-extra-permissions']);
  assert.equal(strict.code, 0, strict.stderr);
  assert.match(strict.stderr, /extra rules removed:\n\t\t\{Verbs:\[get\] APIGroups:\[\] Resources:\[secrets\] ResourceNames:\[\] NonResourceURLs:\[\]\}/);
  const trimmed = (await s.request('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/pod-reader')).json();
  assert.deepEqual(trimmed.rules, podReader.rules);
});

test('a namespace admin reconciles within what she holds; beyond it RBAC\'s escalation check refuses', async () => {
  // `admin` names its verbs; a `*` would be more than alice holds.
  const editsConfigMaps = [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] }];
  const mine = manifest('alice.yaml', [{ ...cmEditor, metadata: { name: 'alice-cm', namespace: 'team-a' }, rules: editsConfigMaps }, { ...cmEditors, metadata: { name: 'alice-cm', namespace: 'team-a' }, roleRef: { ...cmEditors.roleRef, name: 'alice-cm' } }]);
  const ok = await kubectlAs('alice', ['auth', 'reconcile', '-f', mine]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /^role\.rbac\.authorization\.k8s\.io\/alice-cm reconciled$/m);
  assert.equal((await s.request('GET', '/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings/alice-cm')).status, 200);

  // A Role granting nodes (cluster-scoped, beyond `admin`) is refused, and not stored.
  const tooMuch = manifest('alice-escalates.yaml', [{ apiVersion: `${RBAC}/v1`, kind: 'Role', metadata: { name: 'node-reader', namespace: 'team-a' }, rules: [{ apiGroups: [''], resources: ['nodes'], verbs: ['get'] }] }]);
  const refused = await kubectlAs('alice', ['auth', 'reconcile', '-f', tooMuch]);
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /roles\.rbac\.authorization\.k8s\.io "node-reader" is forbidden: user "alice" \(groups=\["developers" "system:authenticated"\]\) is attempting to grant RBAC permissions not currently held:\n\{APIGroups:\[""\], Resources:\["nodes"\], Verbs:\["get"\]\}/);
  assert.equal((await s.request('GET', '/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/roles/node-reader')).status, 404);
});

test('identities that may not write roles are refused with kube\'s 403', async () => {
  const file = manifest('others.yaml', [{ ...cmEditor, metadata: { name: 'not-yours', namespace: 'team-a' } }]);
  const bob = await kubectlAs('bob', ['auth', 'reconcile', '-f', file]);
  assert.notEqual(bob.code, 0);
  assert.match(bob.stderr, /roles\.rbac\.authorization\.k8s\.io "not-yours" is forbidden: User "bob" cannot get resource "roles" in API group "rbac\.authorization\.k8s\.io" in the namespace "team-a"/);
  const deployer = await kubectlAs('deployer', ['auth', 'reconcile', '-f', file]);
  assert.notEqual(deployer.code, 0);
  assert.match(deployer.stderr, /User "system:serviceaccount:team-a:deployer" cannot get resource "roles" in API group "rbac\.authorization\.k8s\.io" in the namespace "team-a"/);
  assert.equal((await s.request('GET', '/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/roles/not-yours')).status, 404);
});
