// PodSecurity admission through HTTPS with kubectl, client-node and raw requests, as the admin, a
// namespaced token user (edit in its namespaces), and a ServiceAccount: namespace labels
// (`kubectl label ns x pod-security.kubernetes.io/enforce=restricted` and kubectl's warnings about
// the pods already there), a privileged pod refused with kube's message and nothing stored, a
// compliant pod admitted, `warn=baseline` warnings printed by kubectl, `enforce-version`, bad
// label values refused as kube refuses them, a deployment warned and not refused, dry run; and a
// second server whose --admission-control-config-file sets PodSecurity's defaults and exemptions.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import * as k8s from '@kubernetes/client-node';
import { KUBECTL, manifestWriter, startTestServer, type TestServer } from '../../helpers/server.ts';
import { requester, type Credentials } from '../../helpers/identities.ts';
import { runHearth } from '../../helpers/hearth-process.ts';

const dir = mkdtempSync(join(tmpdir(), 'hearth-psa-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const tokenFile = join(dir, 'tokens.csv');
writeFileSync(tokenFile, 'dev-token,dev,dev-uid,"developers"\nci-token,ci,ci-uid,"developers"\n');
const manifest = manifestWriter('hearth-psa-manifests-');

let s: TestServer;
before(async () => {
  s = await startTestServer({ options: { tokenAuthFile: tokenFile } });
});
after(async () => {
  await s?.stop();
});
const requestAs = requester(() => s);
const DEV: Credentials = { token: 'dev-token' };

const PRIVILEGED_DETAIL =
  'privileged (container "c" must not set securityContext.privileged=true), allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")';

function pod(name: string, spec: Record<string, unknown> = {}, container: Record<string, unknown> = {}) {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'nginx', ...container }], ...spec } };
}
const privilegedPod = (name: string) => pod(name, {}, { securityContext: { privileged: true } });
/** A pod that meets restricted. */
const restrictedPod = (name: string) =>
  pod(name, { securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } } }, { securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } });

/** A kubeconfig with the cluster only; kubectl's --token says who calls. */
function clusterOnlyKubeconfig(server: TestServer, name: string): string {
  const file = join(dir, `kubeconfig-${name}`);
  const cluster = { server: server.url, 'certificate-authority-data': Buffer.from(server.pki.caCertPem).toString('base64') };
  writeFileSync(file, YAML.stringify({ apiVersion: 'v1', kind: 'Config', clusters: [{ name: 'c', cluster }], contexts: [{ name: 'c', context: { cluster: 'c', user: '' } }], 'current-context': 'c', users: [] }));
  return file;
}
function kubectlAs(server: TestServer, token: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(KUBECTL, ['--kubeconfig', clusterOnlyKubeconfig(server, token), '--token', token, ...args], { timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

async function kubectlOk(server: TestServer, args: string[]): Promise<{ stdout: string; stderr: string }> {
  const r = await server.kubectl(args);
  assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
  return r;
}

/** A namespace whose `default` ServiceAccount exists (pods need it), with the labels given and edit for dev. */
async function namespace(server: TestServer, name: string, labels: Record<string, string> = {}): Promise<void> {
  await kubectlOk(server, ['create', 'ns', name]);
  if (Object.keys(labels).length) await kubectlOk(server, ['label', 'ns', name, ...Object.entries(labels).map(([k, v]) => `${k}=${v}`)]);
  await kubectlOk(server, ['create', 'rolebinding', 'dev-edit', '--clusterrole=edit', '--user=dev', '--user=ci', '-n', name]);
  for (let i = 0; i < 200; i++) {
    if ((await server.request('GET', `/api/v1/namespaces/${name}/serviceaccounts/default`)).status === 200) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no default ServiceAccount in ${name}`);
}

test('kubectl label ns enforce=restricted: applied, with kubectl warnings naming the pods already there', async () => {
  await namespace(s, 'psa-label');
  await kubectlOk(s, ['apply', '-n', 'psa-label', '-f', manifest('priv-a', privilegedPod('priv-a'))]);
  await kubectlOk(s, ['apply', '-n', 'psa-label', '-f', manifest('priv-b', privilegedPod('priv-b'))]);
  await kubectlOk(s, ['apply', '-n', 'psa-label', '-f', manifest('host', pod('host', { hostNetwork: true }))]);
  await kubectlOk(s, ['apply', '-n', 'psa-label', '-f', manifest('fine', restrictedPod('fine'))]);

  const r = await kubectlOk(s, ['label', 'ns', 'psa-label', 'pod-security.kubernetes.io/enforce=restricted']);
  assert.match(r.stdout, /namespace\/psa-label labeled/);
  const warnings = r.stderr.split('\n').filter((l) => l.startsWith('Warning: '));
  assert.deepEqual(warnings, [
    'Warning: existing pods in namespace "psa-label" violate the new PodSecurity enforce level "restricted:latest"',
    'Warning: host: host namespaces, allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile',
    'Warning: priv-a (and 1 other pod): privileged, allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile',
  ]);
  const ns = JSON.parse((await kubectlOk(s, ['get', 'ns', 'psa-label', '-o', 'json'])).stdout);
  assert.equal(ns.metadata.labels['pod-security.kubernetes.io/enforce'], 'restricted');
  // Pods already there that break the new level may still be updated when only metadata changes
  // (kube's isSignificantPodUpdate); a new image is evaluated again and refused.
  const relabelled = await kubectlOk(s, ['label', 'pod', 'priv-a', '-n', 'psa-label', 'team=web']);
  assert.match(relabelled.stdout, /pod\/priv-a labeled/);
  const reimaged = await s.kubectl(['set', 'image', 'pod/priv-a', 'c=nginx:1.27', '-n', 'psa-label']);
  assert.notEqual(reimaged.code, 0);
  assert.match(reimaged.stderr, /pods "priv-a" is forbidden: violates PodSecurity "restricted:latest": privileged \(container "c" must not set securityContext.privileged=true\)/);
  // Relaxing the level checks nothing and warns nothing.
  const relaxed = await kubectlOk(s, ['label', '--overwrite', 'ns', 'psa-label', 'pod-security.kubernetes.io/enforce=baseline']);
  assert.doesNotMatch(relaxed.stderr, /Warning/);
});

test('enforce=restricted: a privileged pod refused with kube message and nothing stored; a compliant one admitted', async () => {
  await namespace(s, 'psa-enforce', { 'pod-security.kubernetes.io/enforce': 'restricted' });
  const refused = await s.kubectl(['apply', '-n', 'psa-enforce', '-f', manifest('priv', privilegedPod('priv'))]);
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /Error from server \(Forbidden\): error when creating ".*priv\.yaml": pods "priv" is forbidden: violates PodSecurity "restricted:latest": /);
  assert.ok(refused.stderr.includes(`violates PodSecurity "restricted:latest": ${PRIVILEGED_DETAIL}`), refused.stderr);

  const raw = await s.request('POST', '/api/v1/namespaces/psa-enforce/pods', { body: privilegedPod('priv') });
  assert.equal(raw.status, 403);
  assert.deepEqual(raw.json(), {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `pods "priv" is forbidden: violates PodSecurity "restricted:latest": ${PRIVILEGED_DETAIL}`,
    reason: 'Forbidden',
    details: { name: 'priv', kind: 'pods' },
    code: 403,
  });
  assert.equal((await s.request('GET', '/api/v1/namespaces/psa-enforce/pods/priv')).status, 404);
  // A pod made from generateName is named by its prefix, as kube names it.
  const generated = await s.request('POST', '/api/v1/namespaces/psa-enforce/pods', { body: { ...privilegedPod(''), metadata: { generateName: 'web-' } } });
  assert.equal(generated.status, 403);
  assert.equal(generated.json().message, `pods "web-" is forbidden: violates PodSecurity "restricted:latest": ${PRIVILEGED_DETAIL}`);
  assert.equal((await s.request('GET', '/api/v1/namespaces/psa-enforce/pods')).json().items.length, 0);
  // Server-side dry run is refused the same way.
  const dry = await s.kubectl(['apply', '--dry-run=server', '-n', 'psa-enforce', '-f', manifest('priv', privilegedPod('priv'))]);
  assert.match(dry.stderr, /pods "priv" is forbidden: violates PodSecurity "restricted:latest": privileged/);

  const ok = await kubectlOk(s, ['apply', '-n', 'psa-enforce', '-f', manifest('fine', restrictedPod('fine'))]);
  assert.match(ok.stdout, /pod\/fine created/);
  assert.doesNotMatch(ok.stderr, /Warning/);

  // An ephemeral container is held to the namespace's level too.
  const fine = (await s.request('GET', '/api/v1/namespaces/psa-enforce/pods/fine')).json();
  fine.spec.ephemeralContainers = [{ name: 'dbg', image: 'busybox' }];
  const debug = await s.request('PUT', '/api/v1/namespaces/psa-enforce/pods/fine/ephemeralcontainers', { body: fine });
  assert.equal(debug.status, 403, debug.text);
  assert.match(debug.json().message, /^pods "fine" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false \(container "dbg" must set securityContext.allowPrivilegeEscalation=false\)/);

  // client-node sees the same Status.
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(s.kubeconfigPath);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  await assert.rejects(core.createNamespacedPod({ namespace: 'psa-enforce', body: privilegedPod('priv2') as k8s.V1Pod }), (e: unknown) => {
    const body = JSON.parse(String((e as { body?: unknown }).body));
    return (e as { code?: number }).code === 403 && body.message === `pods "priv2" is forbidden: violates PodSecurity "restricted:latest": ${PRIVILEGED_DETAIL}`;
  });
});

test('a namespaced token user and a ServiceAccount are held to the same level', async () => {
  await namespace(s, 'psa-users', { 'pod-security.kubernetes.io/enforce': 'baseline' });
  const asDev = await kubectlAs(s, 'dev-token', ['apply', '-n', 'psa-users', '-f', manifest('dev-priv', privilegedPod('dev-priv'))]);
  assert.notEqual(asDev.code, 0);
  assert.match(asDev.stderr, /pods "dev-priv" is forbidden: violates PodSecurity "baseline:latest": privileged \(container "c" must not set securityContext.privileged=true\)/);
  const devOk = await kubectlAs(s, 'dev-token', ['apply', '-n', 'psa-users', '-f', manifest('dev-ok', pod('dev-ok'))]);
  assert.equal(devOk.code, 0, devOk.stderr);

  // A ServiceAccount with edit, calling with its token.
  await kubectlOk(s, ['create', 'serviceaccount', 'deployer', '-n', 'psa-users']);
  await kubectlOk(s, ['create', 'rolebinding', 'deployer-edit', '--clusterrole=edit', '--serviceaccount=psa-users:deployer', '-n', 'psa-users']);
  const token = (await kubectlOk(s, ['create', 'token', 'deployer', '-n', 'psa-users'])).stdout.trim();
  const sa: Credentials = { token };
  const r = await requestAs(sa, 'POST', '/api/v1/namespaces/psa-users/pods', pod('sa-host', { hostPID: true }));
  assert.equal(r.status, 403);
  assert.equal(r.json.message, 'pods "sa-host" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostPID=true)');
  assert.equal(r.json.reason, 'Forbidden');
  assert.equal((await requestAs(sa, 'GET', '/api/v1/namespaces/psa-users/pods/sa-host')).status, 404);
  assert.equal((await requestAs(sa, 'POST', '/api/v1/namespaces/psa-users/pods', pod('sa-ok'))).status, 201);
  // The user may not change the policy it is held to (edit does not update namespaces).
  assert.equal((await requestAs(DEV, 'PATCH', '/api/v1/namespaces/psa-users', { metadata: { labels: { 'pod-security.kubernetes.io/enforce': 'privileged' } } }, 'application/merge-patch+json')).status, 403);
});

test('warn=baseline: kubectl prints the warning and the pod is created', async () => {
  await namespace(s, 'psa-warn', { 'pod-security.kubernetes.io/warn': 'baseline' });
  const r = await kubectlOk(s, ['apply', '-n', 'psa-warn', '-f', manifest('hostnet', pod('hostnet', { hostNetwork: true }, { ports: [{ containerPort: 80, hostPort: 80 }] }))]);
  assert.match(r.stdout, /pod\/hostnet created/);
  assert.ok(r.stderr.includes('Warning: would violate PodSecurity "baseline:latest": host namespaces (hostNetwork=true), hostPort (container "c" uses hostPort 80)'), r.stderr);
  const asDev = await kubectlAs(s, 'dev-token', ['run', 'dev-priv', '--image=nginx', '--privileged', '-n', 'psa-warn']);
  assert.equal(asDev.code, 0, asDev.stderr);
  assert.ok(asDev.stderr.includes('Warning: would violate PodSecurity "baseline:latest": privileged (container "dev-priv" must not set securityContext.privileged=true)'), asDev.stderr);
  assert.equal((await s.request('GET', '/api/v1/namespaces/psa-warn/pods/dev-priv')).status, 200);
});

test('enforce-version pins the checks of that version; bad label values are refused as kube refuses them', async () => {
  await namespace(s, 'psa-version', { 'pod-security.kubernetes.io/enforce': 'baseline', 'pod-security.kubernetes.io/enforce-version': 'v1.33' });
  // A probe host is a baseline violation from policy v1.34 on.
  const probed = (name: string) => pod(name, {}, { livenessProbe: { httpGet: { host: 'example.com', port: 80, path: '/' } } });
  await kubectlOk(s, ['apply', '-n', 'psa-version', '-f', manifest('probe-133', probed('probe-133'))]);
  const r = await kubectlOk(s, ['label', '--overwrite', 'ns', 'psa-version', 'pod-security.kubernetes.io/enforce-version=latest']);
  assert.ok(r.stderr.includes('Warning: probe-133: probe or lifecycle host'), r.stderr);
  const refused = await s.kubectl(['apply', '-n', 'psa-version', '-f', manifest('probe-latest', probed('probe-latest'))]);
  assert.match(refused.stderr, /pods "probe-latest" is forbidden: violates PodSecurity "baseline:latest": probe or lifecycle host \(container "c" uses probe or lifecycle host "example.com"\)/);

  const bad = await s.kubectl(['label', '--overwrite', 'ns', 'psa-version', 'pod-security.kubernetes.io/enforce=strict']);
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /The Namespace "psa-version" is invalid: metadata.labels\[pod-security.kubernetes.io\/enforce\]: Invalid value: "strict": must be one of privileged, baseline, restricted/);
  const badVersion = await s.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'psa-badversion', labels: { 'pod-security.kubernetes.io/warn-version': '1.30' } } } });
  assert.equal(badVersion.status, 422);
  assert.deepEqual(badVersion.json().details, {
    name: 'psa-badversion',
    kind: 'Namespace',
    causes: [{ reason: 'FieldValueInvalid', message: 'Invalid value: "1.30": must be "latest" or "v1.x"', field: 'metadata.labels[pod-security.kubernetes.io/warn-version]' }],
  });
  assert.equal((await s.request('GET', '/api/v1/namespaces/psa-badversion')).status, 404);
});

test('a deployment in an enforce=restricted namespace is warned, not refused', async () => {
  await namespace(s, 'psa-deploy', { 'pod-security.kubernetes.io/enforce': 'restricted', 'pod-security.kubernetes.io/warn': 'restricted' });
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web' },
    spec: { replicas: 0, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: privilegedPod('x').spec } },
  };
  const r = await kubectlOk(s, ['apply', '-n', 'psa-deploy', '-f', manifest('web', deployment)]);
  assert.match(r.stdout, /deployment.apps\/web created/);
  assert.ok(r.stderr.includes(`Warning: would violate PodSecurity "restricted:latest": ${PRIVILEGED_DETAIL}`), r.stderr);
  // as the namespaced user too
  const asDev = await kubectlAs(s, 'dev-token', ['create', 'deployment', 'dev-web', '--image=nginx', '--replicas=0', '-n', 'psa-deploy']);
  assert.equal(asDev.code, 0, asDev.stderr);
  assert.match(asDev.stderr, /Warning: would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false \(container "nginx" must set securityContext.allowPrivilegeEscalation=false\)/);
});

test('--admission-control-config-file: PodSecurity defaults and exemptions by user, namespace and runtime class', async () => {
  const configFile = join(dir, 'admission.yaml');
  writeFileSync(
    configFile,
    YAML.stringify({
      apiVersion: 'apiserver.config.k8s.io/v1',
      kind: 'AdmissionConfiguration',
      plugins: [
        {
          name: 'PodSecurity',
          configuration: {
            apiVersion: 'pod-security.admission.config.k8s.io/v1',
            kind: 'PodSecurityConfiguration',
            defaults: { enforce: 'baseline', warn: 'restricted' },
            exemptions: { usernames: ['ci'], namespaces: ['psa-exempt', 'psa-exempt-new'], runtimeClasses: ['kata'] },
          },
        },
      ],
    }),
  );
  const e = await startTestServer({ options: { tokenAuthFile: tokenFile, admissionControlConfigFile: configFile } });
  try {
    await namespace(e, 'psa-defaults');
    await namespace(e, 'psa-exempt');
    // No labels: the configured default enforce=baseline holds, for the admin and for dev.
    const admin = await e.request('POST', '/api/v1/namespaces/psa-defaults/pods', { body: privilegedPod('p1') });
    assert.equal(admin.status, 403);
    assert.equal(admin.json().message, 'pods "p1" is forbidden: violates PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)');
    const dev = await kubectlAs(e, 'dev-token', ['apply', '-n', 'psa-defaults', '-f', manifest('p2', privilegedPod('p2'))]);
    assert.match(dev.stderr, /pods "p2" is forbidden: violates PodSecurity "baseline:latest": privileged/);
    // The default warn=restricted is printed for what baseline admits.
    const warned = await kubectlAs(e, 'dev-token', ['apply', '-n', 'psa-defaults', '-f', manifest('plain', pod('plain'))]);
    assert.equal(warned.code, 0, warned.stderr);
    assert.match(warned.stderr, /Warning: would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false/);
    // The exempt user, the exempt namespace, the exempt runtime class.
    const ci = await kubectlAs(e, 'ci-token', ['apply', '-n', 'psa-defaults', '-f', manifest('ci-priv', privilegedPod('ci-priv'))]);
    assert.equal(ci.code, 0, ci.stderr);
    assert.doesNotMatch(ci.stderr, /Warning/);
    await kubectlOk(e, ['apply', '-n', 'psa-exempt', '-f', manifest('ns-priv', privilegedPod('ns-priv'))]);
    await kubectlOk(e, ['apply', '-f', manifest('kata', { apiVersion: 'node.k8s.io/v1', kind: 'RuntimeClass', metadata: { name: 'kata' }, handler: 'kata' })]);
    const kata = { ...privilegedPod('kata-priv'), spec: { ...privilegedPod('kata-priv').spec, runtimeClassName: 'kata' } };
    const rc = await e.request('POST', '/api/v1/namespaces/psa-defaults/pods', { body: kata });
    assert.equal(rc.status, 201, rc.text);
    assert.equal(rc.headers.warning, undefined);
    // Labelling the exempt namespace says the policy will be ignored.
    const label = await kubectlOk(e, ['label', 'ns', 'psa-exempt', 'pod-security.kubernetes.io/enforce=restricted']);
    assert.ok(label.stderr.includes('Warning: namespace "psa-exempt" is exempt from Pod Security, and the policy (enforce=restricted:latest) will be ignored'), label.stderr);
    await kubectlOk(e, ['apply', '-n', 'psa-exempt', '-f', manifest('ns-priv2', privilegedPod('ns-priv2'))]);
    // Created with a policy already: the same warning (kube's create gives the request the new namespace's name).
    const created = await kubectlOk(e, ['create', '-f', manifest('exempt-new', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'psa-exempt-new', labels: { 'pod-security.kubernetes.io/warn': 'baseline' } } })]);
    assert.ok(created.stderr.includes('Warning: namespace "psa-exempt-new" is exempt from Pod Security, and the policy (warn=baseline:latest) will be ignored'), created.stderr);
    const plain = await kubectlOk(e, ['create', 'ns', 'psa-not-exempt']);
    assert.doesNotMatch(plain.stderr, /Warning/);
  } finally {
    await e.stop();
  }
});

test('a PodSecurity configuration kube refuses stops the start with kube messages', async () => {
  const bad = join(dir, 'bad-admission.yaml');
  writeFileSync(
    bad,
    YAML.stringify({
      apiVersion: 'apiserver.config.k8s.io/v1',
      kind: 'AdmissionConfiguration',
      plugins: [{ name: 'PodSecurity', configuration: { apiVersion: 'pod-security.admission.config.k8s.io/v1', kind: 'PodSecurityConfiguration', defaults: { enforce: 'strict' }, exemptions: { usernames: [''] } } }],
    }),
  );
  const r = await runHearth(['--data-dir', join(dir, 'bad-data'), '--secure-port', '0', '--admission-control-config-file', bad], { timeoutMs: 60_000 });
  assert.notEqual(r.code, 0, r.stdout);
  assert.ok(
    r.stderr.includes('failed to initialize admission plugin "PodSecurity": [defaults.enforce: Invalid value: "strict": must be one of privileged, baseline, restricted, exemptions.usernames[0]: Required value]'),
    r.stderr,
  );
  const wrongVersion = join(dir, 'wrong-version.yaml');
  writeFileSync(wrongVersion, YAML.stringify({ apiVersion: 'apiserver.config.k8s.io/v1', kind: 'AdmissionConfiguration', plugins: [{ name: 'PodSecurity', configuration: { apiVersion: 'pod-security.admission.config.k8s.io/v9', kind: 'PodSecurityConfiguration' } }] }));
  const w = await runHearth(['--data-dir', join(dir, 'bad-data-2'), '--secure-port', '0', '--admission-control-config-file', wrongVersion], { timeoutMs: 60_000 });
  assert.notEqual(w.code, 0, w.stdout);
  assert.ok(w.stderr.includes(`couldn't init admission plugin "PodSecurity": no kind "PodSecurityConfiguration" is registered for version "pod-security.admission.config.k8s.io/v9"`), w.stderr);
});
