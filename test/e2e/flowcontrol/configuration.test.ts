// API Priority and Fairness' configuration objects through HTTPS, as kubectl and client-node see
// them: kube's mandatory and suggested FlowSchemas and priority levels exist from the start
// (printed as kube-apiserver prints them), are kept by the maintenance pass as kube's ensurer
// keeps them (server/controllers/apf-configuration.ts, with a short interval here), and each
// FlowSchema's Dangling condition follows its priority level. Only who may write cluster-scoped
// flowcontrol objects may change them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { dig, requester, type Credentials, type Json } from '../../helpers/identities.ts';
import { issueClientCertificate } from '../../../server/pki/certificates.ts';
import { DEFAULT_FLOW_CONTROL_OPTIONS } from '../../../server/flowcontrol/options.ts';

const dir = mkdtempSync(join(tmpdir(), 'hearth-apf-config-'));
const tokenFile = join(dir, 'tokens.csv');
writeFileSync(tokenFile, 'carol-token,carol,carol-uid,"team"\n');
const carol: Credentials = { token: 'carol-token' };
let s: TestServer;
let api: k8s.FlowcontrolApiserverV1Api;
let builder: Credentials;
let node: Credentials;
const requestAs = requester(() => s);
const FS = '/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas';
const PL = '/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations';
const AUTO_UPDATE = 'apf.kubernetes.io/autoupdate-spec';

before(async () => {
  s = await startTestServer({ options: { tokenAuthFile: tokenFile, apfConfigMaintenanceIntervalMs: 150 } });
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(s.kubeconfigPath);
  api = kc.makeApiClient(k8s.FlowcontrolApiserverV1Api);
  // carol may edit anything in team-a (a namespaced grant); team-a/builder is a service account with the same.
  assert.equal((await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'team-a' } } })).status, 201);
  assert.equal((await s.request('POST', '/api/v1/namespaces/team-a/serviceaccounts', { body: { metadata: { name: 'builder' } } })).status, 201);
  const binding = { metadata: { name: 'editors' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' }, subjects: [{ kind: 'User', name: 'carol' }, { kind: 'ServiceAccount', name: 'builder', namespace: 'team-a' }] };
  assert.equal((await s.request('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings', { body: binding })).status, 201);
  const token = await s.kubectl(['create', 'token', 'builder', '-n', 'team-a']);
  assert.equal(token.code, 0, token.stderr);
  builder = { token: token.stdout.trim() };
  const issued = await issueClientCertificate(s.pki, { commonName: 'system:node:worker-1', organizations: ['system:nodes'] });
  node = { cert: issued.certPem, key: issued.keyPem! };
});

after(async () => {
  await s?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Polls until cond holds; fails after a generous deadline (nothing here is timed). */
async function eventually<T>(what: string, probe: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) assert.fail(`${what}: not so after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const getJson = async (path: string) => {
  const r = await s.request('GET', path);
  return r.status === 200 ? (r.json() as Json) : undefined;
};
const mergePatch = (path: string, body: unknown) => s.request('PATCH', path, { raw: JSON.stringify(body), headers: { 'content-type': 'application/merge-patch+json' } });

/** The rows of a kubectl table, cells split on runs of spaces, with the AGE column dropped. */
function rows(stdout: string): string[][] {
  const lines = stdout.trim().split('\n');
  const header = lines[0].split(/\s{2,}/);
  const age = header.indexOf('AGE');
  return lines.map((l) => l.split(/\s{2,}/).filter((_, i) => i !== age));
}

/** Waits for one maintenance pass that began after now: a suggested FlowSchema deleted twice comes back twice. */
async function maintenancePass(): Promise<void> {
  for (let i = 0; i < 2; i++) {
    const before = await getJson(`${FS}/global-default`);
    assert.equal((await s.request('DELETE', `${FS}/global-default`)).status, 200);
    await eventually('global-default recreated', async () => {
      const now = await getJson(`${FS}/global-default`);
      return now && dig(now, 'metadata', 'uid') !== dig(before, 'metadata', 'uid') ? now : undefined;
    });
  }
}

test('kubectl lists kube’s FlowSchemas (by precedence, then name) and priority levels as kube-apiserver prints them', async () => {
  // The Dangling condition is written just after start; wait for the last schema's.
  await eventually('every schema has its condition', async () => ((await api.listFlowSchema()).items.every((fs) => fs.status?.conditions?.length) ? true : undefined));
  const out = await s.kubectl(['get', 'flowschemas,prioritylevelconfigurations']);
  assert.equal(out.code, 0, out.stderr);
  const [fsTable, plTable] = out.stdout.trim().split('\n\n');
  assert.deepEqual(rows(fsTable), [
    ['NAME', 'PRIORITYLEVEL', 'MATCHINGPRECEDENCE', 'DISTINGUISHERMETHOD', 'MISSINGPL'],
    ['flowschema.flowcontrol.apiserver.k8s.io/exempt', 'exempt', '1', '<none>', 'False'],
    ['flowschema.flowcontrol.apiserver.k8s.io/probes', 'exempt', '2', '<none>', 'False'],
    ['flowschema.flowcontrol.apiserver.k8s.io/system-leader-election', 'leader-election', '100', 'ByUser', 'False'],
    ['flowschema.flowcontrol.apiserver.k8s.io/endpoint-controller', 'workload-high', '150', 'ByUser', 'False'],
    ['flowschema.flowcontrol.apiserver.k8s.io/workload-leader-election', 'leader-election', '200', 'ByUser', 'False'],
    ['flowschema.flowcontrol.apiserver.k8s.io/system-node-high', 'node-high', '400', 'ByUser', 'False'],
    ['flowschema.flowcontrol.apiserver.k8s.io/system-nodes', 'system', '500', 'ByUser', 'False'],
    ['flowschema.flowcontrol.apiserver.k8s.io/kube-controller-manager', 'workload-high', '800', 'ByNamespace', 'False'],
    ['flowschema.flowcontrol.apiserver.k8s.io/kube-scheduler', 'workload-high', '800', 'ByNamespace', 'False'],
    ['flowschema.flowcontrol.apiserver.k8s.io/kube-system-service-accounts', 'workload-high', '900', 'ByNamespace', 'False'],
    ['flowschema.flowcontrol.apiserver.k8s.io/service-accounts', 'workload-low', '9000', 'ByUser', 'False'],
    ['flowschema.flowcontrol.apiserver.k8s.io/global-default', 'global-default', '9900', 'ByUser', 'False'],
    ['flowschema.flowcontrol.apiserver.k8s.io/catch-all', 'catch-all', '10000', 'ByUser', 'False'],
  ]);
  assert.deepEqual(rows(plTable), [
    ['NAME', 'TYPE', 'NOMINALCONCURRENCYSHARES', 'QUEUES', 'HANDSIZE', 'QUEUELENGTHLIMIT'],
    ['prioritylevelconfiguration.flowcontrol.apiserver.k8s.io/catch-all', 'Limited', '5', '<none>', '<none>', '<none>'],
    ['prioritylevelconfiguration.flowcontrol.apiserver.k8s.io/exempt', 'Exempt', '<none>', '<none>', '<none>', '<none>'],
    ['prioritylevelconfiguration.flowcontrol.apiserver.k8s.io/global-default', 'Limited', '20', '128', '6', '50'],
    ['prioritylevelconfiguration.flowcontrol.apiserver.k8s.io/leader-election', 'Limited', '10', '16', '4', '50'],
    ['prioritylevelconfiguration.flowcontrol.apiserver.k8s.io/node-high', 'Limited', '40', '64', '6', '50'],
    ['prioritylevelconfiguration.flowcontrol.apiserver.k8s.io/system', 'Limited', '30', '64', '6', '50'],
    ['prioritylevelconfiguration.flowcontrol.apiserver.k8s.io/workload-high', 'Limited', '40', '128', '6', '50'],
    ['prioritylevelconfiguration.flowcontrol.apiserver.k8s.io/workload-low', 'Limited', '100', '128', '6', '50'],
  ]);
  // Each carries kube's annotation, and its spec as kube's bootstrap defines it.
  const workloadLow = await api.readPriorityLevelConfiguration({ name: 'workload-low' });
  assert.equal(workloadLow.metadata?.annotations?.[AUTO_UPDATE], 'true');
  assert.deepEqual(dig(await getJson(`${PL}/workload-low`), 'spec'), { type: 'Limited', limited: { nominalConcurrencyShares: 100, lendablePercent: 90, limitResponse: { type: 'Queue', queuing: { queues: 128, handSize: 6, queueLengthLimit: 50 } } } });
  const probes = await api.readFlowSchema({ name: 'probes' });
  assert.equal(probes.metadata?.annotations?.[AUTO_UPDATE], 'true');
  assert.deepEqual(dig(await getJson(`${FS}/probes`), 'spec', 'rules'), [{ subjects: [{ kind: 'Group', group: { name: 'system:unauthenticated' } }, { kind: 'Group', group: { name: 'system:authenticated' } }], nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz', '/readyz', '/livez'] }] }]);
  assert.ok(probes.metadata?.managedFields?.some((m) => m.manager === 'api-priority-and-fairness-config-producer-v1' && m.operation === 'Update'));
  // kube's post-start hook in the health checks.
  assert.match((await s.request('GET', '/readyz?verbose')).text, /^\[\+\]poststarthook\/priority-and-fairness-config-producer ok$/m);
  assert.match((await s.request('GET', '/livez?verbose')).text, /^\[\+\]poststarthook\/priority-and-fairness-config-producer ok$/m);
});

test('a FlowSchema naming a missing priority level is Dangling until the level exists (client-node)', async () => {
  const created = await api.createFlowSchema({
    body: {
      metadata: { name: 'team-reports' },
      spec: { priorityLevelConfiguration: { name: 'reports' }, matchingPrecedence: 3000, distinguisherMethod: { type: 'ByNamespace' }, rules: [{ subjects: [{ kind: 'Group', group: { name: 'team' } }], resourceRules: [{ verbs: ['list'], apiGroups: [''], resources: ['configmaps'], namespaces: ['*'] }] }] },
    },
  });
  assert.equal(created.metadata?.annotations?.[AUTO_UPDATE], undefined, 'a user’s schema gets no annotation');
  const dangling = await eventually('Dangling=True', async () => (await api.readFlowSchema({ name: 'team-reports' })).status?.conditions?.find((c) => c.type === 'Dangling'));
  assert.equal(dangling.status, 'True');
  assert.equal(dangling.reason, 'NotFound');
  assert.equal(dangling.message, 'This FlowSchema references the PriorityLevelConfiguration object named "reports" but there is no such object');
  assert.ok(dangling.lastTransitionTime);
  const fs = await api.readFlowSchema({ name: 'team-reports' });
  assert.ok(fs.metadata?.managedFields?.some((m) => m.manager === 'api-priority-and-fairness-config-consumer-v1' && m.operation === 'Apply' && m.subresource === 'status'));

  await api.createPriorityLevelConfiguration({ body: { metadata: { name: 'reports' }, spec: { type: 'Limited', limited: { nominalConcurrencyShares: 5, limitResponse: { type: 'Reject' } } } } });
  const found = await eventually('Dangling=False', async () => {
    const c = (await api.readFlowSchema({ name: 'team-reports' })).status?.conditions?.find((x) => x.type === 'Dangling');
    return c?.status === 'False' ? c : undefined;
  });
  assert.equal(found.reason, 'Found');
  assert.equal(found.message, 'This FlowSchema references the PriorityLevelConfiguration object named "reports" and it exists');
  const table = await s.kubectl(['get', 'flowschema', 'team-reports', '--no-headers']);
  assert.match(table.stdout, /^team-reports\s+reports\s+3000\s+ByNamespace\s+\S+\s+False\n$/);

  // The level goes: Dangling again. Nothing of the user's objects is touched by maintenance.
  await api.deletePriorityLevelConfiguration({ name: 'reports' });
  await eventually('Dangling=True again', async () => ((await api.readFlowSchema({ name: 'team-reports' })).status?.conditions?.find((c) => c.type === 'Dangling')?.status === 'True' ? true : undefined));
  await maintenancePass();
  const kept = await api.readFlowSchema({ name: 'team-reports' });
  assert.equal(kept.spec?.matchingPrecedence, 3000);
  await api.deleteFlowSchema({ name: 'team-reports' });
});

test('deleted suggested and mandatory objects come back; a mandatory object’s annotation is forced to "true"', async () => {
  const old = await getJson(`${FS}/service-accounts`);
  assert.equal((await s.request('DELETE', `${FS}/service-accounts`)).status, 200);
  const back = await eventually('service-accounts recreated', async () => {
    const now = await getJson(`${FS}/service-accounts`);
    return now && dig(now, 'metadata', 'uid') !== dig(old, 'metadata', 'uid') ? now : undefined;
  });
  assert.equal(dig(back, 'spec', 'matchingPrecedence'), 9000);
  assert.equal(dig(back, 'metadata', 'annotations', AUTO_UPDATE), 'true');

  const oldLevel = await getJson(`${PL}/catch-all`);
  assert.equal((await s.request('DELETE', `${PL}/catch-all`)).status, 200);
  await eventually('catch-all level recreated', async () => {
    const now = await getJson(`${PL}/catch-all`);
    return now && dig(now, 'metadata', 'uid') !== dig(oldLevel, 'metadata', 'uid') ? now : undefined;
  });

  assert.equal((await mergePatch(`${FS}/catch-all`, { metadata: { annotations: { [AUTO_UPDATE]: 'false' } } })).status, 200);
  await eventually('catch-all annotated "true" again', async () => (dig(await getJson(`${FS}/catch-all`), 'metadata', 'annotations', AUTO_UPDATE) === 'true' ? true : undefined));
});

test('a suggested object’s edit is undone while it says autoupdate-spec "true", kept once it says "false" or drops the annotation', async () => {
  // "true": the spec is restored.
  assert.equal((await mergePatch(`${PL}/workload-high`, { spec: { limited: { nominalConcurrencyShares: 7 } } })).status, 200);
  await eventually('workload-high restored', async () => (dig(await getJson(`${PL}/workload-high`), 'spec', 'limited', 'nominalConcurrencyShares') === 40 ? true : undefined));

  // "false": the operator's spec stays.
  assert.equal((await mergePatch(`${PL}/workload-low`, { metadata: { annotations: { [AUTO_UPDATE]: 'false' } }, spec: { limited: { nominalConcurrencyShares: 7 } } })).status, 200);
  // No annotation, a changed spec (generation 2): kube marks it "false" and keeps the spec.
  assert.equal((await mergePatch(`${FS}/kube-scheduler`, { metadata: { annotations: { [AUTO_UPDATE]: null } }, spec: { matchingPrecedence: 850 } })).status, 200);
  await eventually('kube-scheduler marked "false"', async () => (dig(await getJson(`${FS}/kube-scheduler`), 'metadata', 'annotations', AUTO_UPDATE) === 'false' ? true : undefined));
  await maintenancePass();
  assert.equal(dig(await getJson(`${PL}/workload-low`), 'spec', 'limited', 'nominalConcurrencyShares'), 7);
  assert.equal(dig(await getJson(`${PL}/workload-low`), 'metadata', 'annotations', AUTO_UPDATE), 'false');
  assert.equal(dig(await getJson(`${FS}/kube-scheduler`), 'spec', 'matchingPrecedence'), 850);

  // A user's object claiming "true" under a name kube does not have is kube's to remove.
  const stray = { metadata: { name: 'stray', annotations: { [AUTO_UPDATE]: 'true' } }, spec: { type: 'Limited', limited: { nominalConcurrencyShares: 1, limitResponse: { type: 'Reject' } } } };
  assert.equal((await s.request('POST', PL, { body: stray })).status, 201);
  await eventually('stray removed', async () => ((await s.request('GET', `${PL}/stray`)).status === 404 ? true : undefined));
});

test('a namespaced user, a service account, a node and anonymous may not change them; the admin may', async () => {
  const patch = { metadata: { labels: { touched: 'yes' } } };
  const who: [Credentials, string][] = [
    [carol, 'carol'],
    [builder, 'system:serviceaccount:team-a:builder'],
    [node, 'system:node:worker-1'],
  ];
  for (const [creds, name] of who) {
    const r = await requestAs(creds, 'PATCH', `${FS}/global-default`, patch, 'application/merge-patch+json');
    assert.equal(r.status, 403, name);
    assert.equal(dig(r.json, 'reason'), 'Forbidden');
    assert.equal(dig(r.json, 'message'), `flowschemas.flowcontrol.apiserver.k8s.io "global-default" is forbidden: User "${name}" cannot patch resource "flowschemas" in API group "flowcontrol.apiserver.k8s.io" at the cluster scope`);
    const d = await requestAs(creds, 'DELETE', `${PL}/workload-high`);
    assert.equal(d.status, 403, name);
    assert.equal(dig(d.json, 'message'), `prioritylevelconfigurations.flowcontrol.apiserver.k8s.io "workload-high" is forbidden: User "${name}" cannot delete resource "prioritylevelconfigurations" in API group "flowcontrol.apiserver.k8s.io" at the cluster scope`);
  }
  const anon = await requestAs({}, 'GET', FS);
  assert.equal(anon.status, 403);
  assert.equal(dig(anon.json, 'message'), 'flowschemas.flowcontrol.apiserver.k8s.io is forbidden: User "system:anonymous" cannot list resource "flowschemas" in API group "flowcontrol.apiserver.k8s.io" at the cluster scope');
  // Refused: nothing changed.
  assert.equal(dig(await getJson(`${FS}/global-default`), 'metadata', 'labels'), undefined);
  assert.ok(await getJson(`${PL}/workload-high`));

  const admin = await s.kubectl(['label', 'flowschema', 'global-default', 'touched=yes']);
  assert.equal(admin.code, 0, admin.stderr);
  assert.equal(dig(await getJson(`${FS}/global-default`), 'metadata', 'labels', 'touched'), 'yes');
});

test("kube's validation: a mandatory object's spec is fixed, a bad schema is refused and leaves nothing behind", async () => {
  const r = await mergePatch(`${PL}/catch-all`, { spec: { limited: { nominalConcurrencyShares: 50 } } });
  assert.equal(r.status, 422);
  const status = r.json() as Json;
  assert.equal(dig(status, 'reason'), 'Invalid');
  assert.equal(
    dig(status, 'message'),
    'PriorityLevelConfiguration.flowcontrol.apiserver.k8s.io "catch-all" is invalid: spec: Invalid value: flowcontrol.PriorityLevelConfigurationSpec{Type:"Limited", Limited:(*flowcontrol.LimitedPriorityLevelConfiguration)(0xc000000000), Exempt:(*flowcontrol.ExemptPriorityLevelConfiguration)(nil)}: spec of \'catch-all\' must equal the fixed value',
  );
  assert.equal(dig(await getJson(`${PL}/catch-all`), 'spec', 'limited', 'nominalConcurrencyShares'), 5);
  // The operator may tune the exempt level's own fields; maintenance leaves them.
  assert.equal((await mergePatch(`${PL}/exempt`, { spec: { exempt: { nominalConcurrencyShares: 10 } } })).status, 200);

  const bad = { metadata: { name: 'first' }, spec: { priorityLevelConfiguration: { name: 'workload-low' }, matchingPrecedence: 1, rules: [{ subjects: [{ kind: 'User', user: { name: 'alice' } }], nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/version'] }] }] } };
  const created = await s.request('POST', FS, { body: bad });
  assert.equal(created.status, 422);
  assert.equal(dig(created.json(), 'message'), 'FlowSchema.flowcontrol.apiserver.k8s.io "first" is invalid: spec.matchingPrecedence: Invalid value: 1: only the schema named \'exempt\' may have matchingPrecedence 1');
  assert.equal((await s.request('GET', `${FS}/first`)).status, 404);
  await maintenancePass();
  assert.equal(dig(await getJson(`${PL}/exempt`), 'spec', 'exempt', 'nominalConcurrencyShares'), 10);
});

test('with --enable-priority-and-fairness=false no objects are made, and the hook is not listed', async () => {
  const off = await startTestServer({ options: { flowControl: { ...DEFAULT_FLOW_CONTROL_OPTIONS, enablePriorityAndFairness: false } } });
  try {
    const list = await off.request('GET', FS);
    assert.equal(list.status, 200);
    assert.deepEqual(list.json().items, []);
    assert.deepEqual((await off.request('GET', PL)).json().items, []);
    assert.doesNotMatch((await off.request('GET', '/readyz?verbose')).text, /priority-and-fairness/);
  } finally {
    await off.stop();
  }
});
