// --authorization-config's reload as kube's reloadableAuthorizerResolver.checkFile does it: the
// same bytes, or the same configuration in other bytes, change nothing; a valid file replaces the chain; an invalid one, one dropping a type
// the server started with, or one adding RBAC it did not start with, is logged and the old chain
// stays; requests are decided by whichever chain is current.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ReloadableAuthorizer } from '../../../server/authorization/reload.ts';
import { readAuthorizationConfig } from '../../../server/authorization/config.ts';
import type { AuthorizationAttributes, Authorizer } from '../../../server/authorization/authorizer.ts';

const dir = mkdtempSync(join(tmpdir(), 'hearth-authz-reload-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const HEAD = 'apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizers:\n';
const request: AuthorizationAttributes = { user: { name: 'u', groups: [] }, verb: 'get', isResourceRequest: true, path: '', apiGroup: '', apiVersion: 'v1', resource: 'pods', subresource: '', namespace: 'dev', name: 'p' };
const rbac: Authorizer = { name: 'RBAC', authorize: () => ({ decision: 'noopinion', reason: 'rbac says no' }) };

test('checkFile: a valid file replaces the chain; invalid ones are logged and the chain stays', () => {
  const file = join(dir, 'authz.yaml');
  writeFileSync(file, `${HEAD}- {type: AlwaysDeny, name: alwaysdeny}\n`);
  const logs: string[] = [];
  const r = new ReloadableAuthorizer({ file, initial: readAuthorizationConfig(file), parts: { rbac, webhook: () => assert.fail('no webhook here') }, log: (l) => logs.push(l) });
  const decide = () => r.authorize(request);
  assert.deepEqual(decide(), { decision: 'noopinion', reason: 'Everything is forbidden.' });

  r.checkFile();
  assert.deepEqual(logs, [], 'the same bytes: nothing to do');
  // Other bytes, the same configuration: nothing rebuilt.
  writeFileSync(file, `# a comment\n${HEAD}- type: AlwaysDeny\n  name: alwaysdeny\n`);
  r.checkFile();
  assert.deepEqual(logs, ['found new authorization config data']);
  logs.length = 0;

  writeFileSync(file, `${HEAD}- {type: AlwaysDeny, name: alwaysdeny}\n- {type: RBAC, name: rbac}\n`);
  r.checkFile();
  assert.deepEqual(logs, ['found new authorization config data', 'found new authorization config', 'reloading authorization config: authorizer type RBAC is not allowed if it was not enabled at initial server startup']);

  writeFileSync(file, `${HEAD}- {type: AlwaysAllow, name: alwaysallow}\n`);
  logs.length = 0;
  r.checkFile();
  assert.deepEqual(logs, ['found new authorization config data', 'reloading authorization config: missing required types: [AlwaysDeny]']);

  writeFileSync(file, `${HEAD}- {type: AlwaysDeny, name: deny}\n`);
  logs.length = 0;
  r.checkFile();
  assert.deepEqual(logs, ['found new authorization config data', 'reloading authorization config: expected name alwaysdeny for authorizer AlwaysDeny instead of deny']);
  assert.deepEqual(decide(), { decision: 'noopinion', reason: 'Everything is forbidden.' }, 'the old chain still decides');

  writeFileSync(file, `${HEAD}- {type: AlwaysAllow, name: alwaysallow}\n- {type: AlwaysDeny, name: alwaysdeny}\n`);
  logs.length = 0;
  r.checkFile();
  assert.deepEqual(logs, ['found new authorization config data', 'found new authorization config', 'reloaded authz config']);
  assert.deepEqual(decide(), { decision: 'allow', reason: '' });
  // Rules follow the chain too.
  assert.equal(r.rulesFor({ name: 'u', groups: [] }, 'dev').resourceRules.length, 1);
  r.stop();
});

test('several webhooks, in the file\'s order, each its own authorizer with its own settings', () => {
  const kubeconfig = join(dir, 'w.kubeconfig');
  writeFileSync(kubeconfig, 'apiVersion: v1\nkind: Config\nclusters:\n- name: w\n  cluster: {server: "https://127.0.0.1:9443/authorize", insecure-skip-tls-verify: true}\ncontexts:\n- name: w\n  context: {cluster: w, user: ""}\ncurrent-context: w\n');
  const webhook = (name: string, policy: string) => `- type: Webhook\n  name: ${name}\n  webhook: {timeout: 2s, subjectAccessReviewVersion: v1, failurePolicy: ${policy}, connectionInfo: {type: KubeConfigFile, kubeConfigFile: ${kubeconfig}}}\n`;
  const file = join(dir, 'two.yaml');
  writeFileSync(file, `${HEAD}${webhook('first', 'Deny')}- {type: RBAC, name: rbac}\n${webhook('second', 'NoOpinion')}`);
  const config = readAuthorizationConfig(file);
  assert.deepEqual(config.authorizers.map((a) => [a.type, a.name, a.webhook?.failurePolicy, a.webhook?.timeoutMs]), [
    ['Webhook', 'first', 'Deny', 2000],
    ['RBAC', 'rbac', undefined, undefined],
    ['Webhook', 'second', 'NoOpinion', 2000],
  ]);
  const built: string[] = [];
  const r = new ReloadableAuthorizer({
    file,
    initial: config,
    parts: {
      rbac,
      webhook: (settings) => {
        built.push(settings.name);
        return { name: settings.name, authorize: () => ({ decision: 'noopinion', reason: `${settings.name} has no opinion` }), close: () => {} };
      },
    },
    log: () => {},
  });
  assert.deepEqual(built, ['first', 'second']);
  // The chain asks them in order: every no-opinion reason, in the file's order.
  assert.deepEqual(r.authorize(request), { decision: 'noopinion', reason: 'first has no opinion\nrbac says no\nsecond has no opinion' });
  r.stop();
});
