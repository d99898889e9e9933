// --authorization-mode on hearth's command line, as kube-apiserver takes it: modes it refuses
// stop the start with kube's messages (and hearth's for the modes it lacks yet), AlwaysDeny
// refuses everyone but system:masters with its reason in the 403, and AlwaysAllow lets a token
// user do anything and says so in SelfSubjectRulesReview; --authorization-config names the
// same chain in an AuthorizationConfiguration file.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adminClient, runHearth, startHearthProcess, stopHearthProcess } from '../../helpers/hearth-process.ts';

const dir = mkdtempSync(join(tmpdir(), 'hearth-authz-modes-'));
const tokenFile = join(dir, 'tokens.csv');
writeFileSync(tokenFile, 'dev-token,dev,dev-uid,"developers"\n');
const configFile = join(dir, 'authorization-config.yaml');
writeFileSync(configFile, 'apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: RBAC\n  name: rbac\n- type: AlwaysDeny\n  name: alwaysdeny\n');
after(() => rmSync(dir, { recursive: true, force: true }));

/** A request with a bearer token (or none), trusting any server certificate: the answer is what is tested. */
function requestWithToken(url: string, token: string | undefined, method = 'GET', body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string | number> = { accept: 'application/json' };
    if (token) headers.authorization = `Bearer ${token}`;
    if (payload) Object.assign(headers, { 'content-type': 'application/json', 'content-length': payload.length });
    const req = https.request(url, { method, headers, agent: false, rejectUnauthorized: false }, (res) => {
      let t = '';
      res.on('data', (d) => (t += d));
      // (health answers text, not JSON)
      res.on('end', () => resolve({ status: res.statusCode!, json: t.startsWith('{') ? (JSON.parse(t) as Record<string, unknown>) : { text: t } }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

test('modes kube-apiserver refuses, and the ones hearth does not have yet, stop the start', async () => {
  const cases: [string[], string][] = [
    [['--authorization-mode', 'Magic'], 'hearth: authorization-mode "Magic" is not a valid mode'],
    [['--authorization-mode=RBAC,RBAC'], 'hearth: authorization-mode ["RBAC" "RBAC"] has mode specified more than once'],
    [['--authorization-mode=ABAC'], 'hearth: authorization-mode "ABAC" is not supported by hearth yet (supported: AlwaysAllow, AlwaysDeny, RBAC, Node, Webhook)'],
    [['--authorization-mode=Webhook'], "hearth: authorization-mode Webhook's authorization config file not passed"],
    [['--authorization-mode='], 'hearth: at least one authorization-mode must be passed'],
    [['--authorization-config', configFile, '--authorization-mode=RBAC'], 'hearth: --authorization-config can not be specified when --authorization-mode or --authorization-webhook-* flags are defined'],
    [['--authorization-config', join(dir, 'missing.yaml')], `hearth: open ${join(dir, 'missing.yaml')}: no such file or directory`],
  ];
  for (const [args, message] of cases) {
    const dataDir = mkdtempSync(join(dir, 'refused-'));
    const r = await runHearth(['--data-dir', dataDir, '--secure-port', '0', ...args]);
    assert.equal(r.code, 1, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    assert.equal(r.stderr.trim(), message);
  }
});

test('AlwaysDeny: system:masters only, the others told "Everything is forbidden."', async () => {
  const dataDir = join(dir, 'deny');
  const p = await startHearthProcess(dataDir, ['--authorization-mode', 'AlwaysDeny', '--token-auth-file', tokenFile]);
  try {
    const admin = adminClient(dataDir);
    assert.equal((await admin('GET', `${p.url}/api/v1/namespaces/default/pods`)).status, 200);
    const dev = await requestWithToken(`${p.url}/api/v1/namespaces/default/pods`, 'dev-token');
    assert.equal(dev.status, 403);
    assert.equal(dev.json.message, 'pods is forbidden: User "dev" cannot list resource "pods" in API group "" in the namespace "default": Everything is forbidden.');
    // No RBAC, so no public-info roles either: even health is refused to the anonymous.
    const health = await requestWithToken(`${p.url}/healthz`, undefined);
    assert.equal(health.status, 403);
    assert.equal(health.json.message, 'forbidden: User "system:anonymous" cannot get path "/healthz": Everything is forbidden.');
  } finally {
    await stopHearthProcess(p);
  }
});

test('AlwaysAllow: a token user may do anything, and its rules say so', async () => {
  const dataDir = join(dir, 'allow');
  const p = await startHearthProcess(dataDir, ['--authorization-mode=AlwaysAllow', '--token-auth-file', tokenFile]);
  try {
    const created = await requestWithToken(`${p.url}/api/v1/namespaces/default/configmaps`, 'dev-token', 'POST', { metadata: { name: 'by-dev' } });
    assert.equal(created.status, 201);
    const rules = await requestWithToken(`${p.url}/apis/authorization.k8s.io/v1/selfsubjectrulesreviews`, 'dev-token', 'POST', { spec: { namespace: 'default' } });
    assert.equal(rules.status, 201);
    assert.deepEqual(rules.json.status, {
      resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
      nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
      incomplete: false,
    });
  } finally {
    await stopHearthProcess(p);
  }
});

test('--authorization-config: RBAC then AlwaysDeny from the file, the 403 joining both reasons', async () => {
  const dataDir = join(dir, 'config');
  const p = await startHearthProcess(dataDir, ['--authorization-config', configFile, '--token-auth-file', tokenFile]);
  try {
    const admin = adminClient(dataDir);
    const binding = { metadata: { name: 'dev-missing-role' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'gone' }, subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'dev' }] };
    assert.equal((await admin('POST', `${p.url}/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings`, binding)).status, 201);
    const dev = await requestWithToken(`${p.url}/api/v1/namespaces/default/pods`, 'dev-token');
    assert.equal(dev.status, 403);
    assert.equal(dev.json.message, 'pods is forbidden: User "dev" cannot list resource "pods" in API group "" in the namespace "default": RBAC: role.rbac.authorization.k8s.io "gone" not found\nEverything is forbidden.');
    // RBAC is in the chain: health is public (its stand-in for the bootstrap roles).
    assert.equal((await requestWithToken(`${p.url}/healthz`, undefined)).status, 200);
  } finally {
    await stopHearthProcess(p);
  }
});
