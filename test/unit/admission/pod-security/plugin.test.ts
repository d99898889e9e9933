// The PodSecurity plugin without a server (kube's pod-security-admission admission_test.go and
// validation_test.go cases): namespace labels and their errors, the configuration's defaults,
// exemptions and validation messages, enforce/audit/warn on pods and pod templates, the updates
// kube does not evaluate again, and the warnings about existing pods when enforce is raised.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { podSecurity } from '../../../../server/admission/pod-security/plugin.ts';
import { parsePodSecurityConfiguration } from '../../../../server/admission/pod-security/config.ts';
import { policyToEvaluate, LATEST } from '../../../../server/admission/pod-security/api.ts';
import type { AdmissionAttributes } from '../../../../server/admission/types.ts';
import type { ResourceInfo } from '../../../../server/schema/types.ts';
import { ApiError } from '../../../../server/errors.ts';

const CONFIG_V1 = 'pod-security.admission.config.k8s.io/v1';
const info = (group: string, resource: string, namespaced = true): ResourceInfo => ({ group, resource, namespaced }) as ResourceInfo;
const PODS = info('', 'pods');
const NAMESPACES = info('', 'namespaces', false);
const DEPLOYMENTS = info('apps', 'deployments');
const CRONJOBS = info('batch', 'cronjobs');
const CONFIGMAPS = info('', 'configmaps');

const privilegedPod = (name = 'p', extra: Record<string, unknown> = {}) => ({ metadata: { name, namespace: 'ns' }, spec: { containers: [{ name: 'c', image: 'i', securityContext: { privileged: true } }], ...extra } });
const plainPod = (name = 'plain') => ({ metadata: { name, namespace: 'ns' }, spec: { containers: [{ name: 'c', image: 'i' }] } });

interface Seen {
  warnings: string[];
  audit: Record<string, string>;
}

function harness(labels: Record<string, Record<string, string>>, pods: unknown[] = [], config?: unknown) {
  const plugin = podSecurity({ namespaceLabels: (n) => labels[n], listPods: () => pods }, config === undefined ? undefined : parsePodSecurityConfiguration(config));
  return async (attrs: Partial<AdmissionAttributes>): Promise<Seen & { error?: ApiError }> => {
    const seen: Seen = { warnings: [], audit: {} };
    const a = {
      operation: 'CREATE',
      info: PODS,
      subresource: '',
      namespace: 'ns',
      name: 'p',
      user: { name: 'alice', groups: ['system:authenticated'] },
      dryRun: false,
      ...attrs,
      warn: (m: string) => seen.warnings.push(m),
      addAuditAnnotation: (k: string, v: string) => (seen.audit[k] = v),
    } as AdmissionAttributes;
    try {
      await plugin.validate!(a);
      return seen;
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      return { ...seen, error: e };
    }
  };
}

test('namespace labels: defaults, versions, and kube field errors (enforce fails closed, audit and warn open)', () => {
  const defaults = { enforce: { level: 'privileged', version: LATEST }, audit: { level: 'privileged', version: LATEST }, warn: { level: 'privileged', version: LATEST } } as const;
  const ok = policyToEvaluate({ 'pod-security.kubernetes.io/enforce': 'baseline', 'pod-security.kubernetes.io/enforce-version': 'v1.24' }, defaults);
  assert.deepEqual(ok.errors, []);
  assert.deepEqual(ok.policy.enforce, { level: 'baseline', version: 24 });
  const bad = policyToEvaluate({ 'pod-security.kubernetes.io/enforce': 'strict', 'pod-security.kubernetes.io/warn': 'x', 'pod-security.kubernetes.io/audit-version': '1.24' }, defaults);
  assert.equal(bad.policy.enforce.level, 'restricted');
  assert.equal(bad.policy.warn.level, 'privileged');
  assert.deepEqual(
    bad.errors.map((e) => `${e.field}: ${e.message}`),
    [
      'metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted',
      'metadata.labels[pod-security.kubernetes.io/audit-version]: Invalid value: "1.24": must be "latest" or "v1.x"',
      'metadata.labels[pod-security.kubernetes.io/warn]: Invalid value: "x": must be one of privileged, baseline, restricted',
    ],
  );
});

test('PodSecurityConfiguration: defaulting and kube validation messages', () => {
  const c = parsePodSecurityConfiguration({ apiVersion: CONFIG_V1, kind: 'PodSecurityConfiguration', defaults: { enforce: 'baseline' }, exemptions: { usernames: ['bob'] } });
  assert.deepEqual(c.defaults.enforce, { level: 'baseline', version: LATEST });
  assert.deepEqual(c.defaults.warn, { level: 'privileged', version: LATEST });
  assert.ok(c.exemptions.usernames.has('bob'));
  assert.throws(
    () =>
      parsePodSecurityConfiguration({
        apiVersion: CONFIG_V1,
        kind: 'PodSecurityConfiguration',
        defaults: { enforce: 'strict', 'warn-version': 'v2.0' },
        exemptions: { namespaces: ['Bad_NS', 'ok', 'ok'], runtimeClasses: ['gvisor'], usernames: ['', 'u', 'u'] },
      }),
    {
      message:
        '[defaults.enforce: Invalid value: "strict": must be one of privileged, baseline, restricted, defaults.warn-version: Invalid value: "v2.0": must be "latest" or "v1.x", exemptions.namespaces[0]: Invalid value: "Bad_NS": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or \'-\', and must start and end with an alphanumeric character (e.g. \'my-name\',  or \'123-abc\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?\'), exemptions.namespaces[2]: Duplicate value: "ok", exemptions.usernames[0]: Required value, exemptions.usernames[2]: Duplicate value: "u"]',
    },
  );
  assert.throws(() => parsePodSecurityConfiguration({ apiVersion: 'pod-security.admission.config.k8s.io/v2', kind: 'PodSecurityConfiguration' }), /no kind "PodSecurityConfiguration" is registered for version "pod-security.admission.config.k8s.io\/v2"/);
});

test('enforce refuses with kube text; audit annotates; warn warns only when not refused', async () => {
  const run = harness({ ns: { 'pod-security.kubernetes.io/enforce': 'baseline', 'pod-security.kubernetes.io/audit': 'restricted', 'pod-security.kubernetes.io/warn': 'restricted' } });
  const refused = await run({ object: privilegedPod() });
  assert.equal(refused.error?.code, 403);
  assert.equal(refused.error?.reason, 'Forbidden');
  assert.equal(refused.error?.message, 'pods "p" is forbidden: violates PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)');
  assert.deepEqual(refused.warnings, []);
  assert.equal(refused.audit['pod-security.kubernetes.io/enforce-policy'], 'baseline:latest');
  assert.match(refused.audit['pod-security.kubernetes.io/audit-violations'], /^would violate PodSecurity "restricted:latest": privileged \(container "c" must not set securityContext.privileged=true\), allowPrivilegeEscalation != false/);

  const warned = await run({ object: plainPod() });
  assert.equal(warned.error, undefined);
  assert.equal(warned.warnings.length, 1);
  assert.match(warned.warnings[0], /^would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false \(container "c" must set/);
});

test('pod templates are warned and audited, never refused; other resources are not looked at', async () => {
  const run = harness({ ns: { 'pod-security.kubernetes.io/enforce': 'restricted', 'pod-security.kubernetes.io/warn': 'baseline' } });
  const dep = { metadata: { name: 'd' }, spec: { template: { metadata: {}, spec: privilegedPod().spec } } };
  const r = await run({ info: DEPLOYMENTS, object: dep });
  assert.equal(r.error, undefined);
  assert.deepEqual(r.warnings, ['would violate PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)']);
  assert.equal(r.audit['pod-security.kubernetes.io/enforce-policy'], undefined);
  const cj = { metadata: { name: 'cj' }, spec: { jobTemplate: { spec: { template: { spec: privilegedPod().spec } } } } };
  assert.equal((await run({ info: CRONJOBS, object: cj })).warnings.length, 1);
  assert.deepEqual(await run({ info: CONFIGMAPS, object: { metadata: { name: 'x' } } }), { warnings: [], audit: {} });
  assert.deepEqual(await run({ info: DEPLOYMENTS, subresource: 'scale', object: dep }), { warnings: [], audit: {} });
});

test('exemptions by namespace, user and runtime class, with the exempt audit annotation', async () => {
  const config = { apiVersion: CONFIG_V1, kind: 'PodSecurityConfiguration', defaults: { enforce: 'restricted' }, exemptions: { namespaces: ['sys'], usernames: ['ci'], runtimeClasses: ['kata'] } };
  const run = harness({ ns: {}, sys: {} }, [], config);
  assert.match((await run({ object: privilegedPod() })).error!.message, /violates PodSecurity "restricted:latest"/);
  assert.deepEqual(await run({ namespace: 'sys', object: privilegedPod() }), { warnings: [], audit: { 'pod-security.kubernetes.io/exempt': 'namespace' } });
  assert.deepEqual(await run({ user: { name: 'ci', groups: [] }, object: privilegedPod() }), { warnings: [], audit: { 'pod-security.kubernetes.io/exempt': 'user' } });
  assert.deepEqual(await run({ object: privilegedPod('p', { runtimeClassName: 'kata' }) }), { warnings: [], audit: { 'pod-security.kubernetes.io/exempt': 'runtimeClass' } });
});

test('a privileged namespace is one lookup; a missing one is an internal error', async () => {
  const run = harness({ ns: {} });
  assert.deepEqual(await run({ object: privilegedPod() }), { warnings: [], audit: { 'pod-security.kubernetes.io/enforce-policy': 'privileged:latest' } });
  const missing = await run({ namespace: 'gone', object: privilegedPod() });
  assert.equal(missing.error?.code, 500);
  assert.equal(missing.error?.message, 'Internal error occurred: failed to lookup namespace "gone"');
});

test('pod updates: only containers, images and seccomp annotations are evaluated again; ignored subresources skipped', async () => {
  const run = harness({ ns: { 'pod-security.kubernetes.io/enforce': 'restricted' } });
  const old = privilegedPod();
  const labelled = { ...old, metadata: { ...old.metadata, labels: { a: 'b' } } };
  assert.equal((await run({ operation: 'UPDATE', object: labelled, oldObject: old })).error, undefined);
  const newImage = { ...old, spec: { containers: [{ ...old.spec.containers[0], image: 'j' }] } };
  assert.equal((await run({ operation: 'UPDATE', object: newImage, oldObject: old })).error?.code, 403);
  const ephemeral = { ...old, spec: { ...old.spec, ephemeralContainers: [{ name: 'dbg', image: 'busybox' }] } };
  assert.equal((await run({ operation: 'UPDATE', subresource: 'ephemeralcontainers', object: ephemeral, oldObject: old })).error?.code, 403);
  assert.equal((await run({ operation: 'UPDATE', subresource: 'status', object: newImage, oldObject: old })).error, undefined);
  assert.equal((await run({ operation: 'DELETE', object: undefined, oldObject: old })).error, undefined);
});

test('namespaces: bad labels refused as Invalid; raising enforce warns about existing pods', async () => {
  const owner = (uid: string) => [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid, controller: true }];
  const pods = [
    privilegedPod('b-priv'),
    privilegedPod('a-priv'),
    { ...privilegedPod('c-priv', { hostNetwork: true }) },
    { metadata: { name: 'r1', ownerReferences: owner('u1') }, spec: { hostPID: true, containers: [{ name: 'c' }] } },
    { metadata: { name: 'r0', ownerReferences: owner('u1') }, spec: { hostPID: true, containers: [{ name: 'c' }] } },
    plainPod(),
  ];
  const run = harness({}, pods);
  const ns = (labels: Record<string, string>) => ({ metadata: { name: 'ns', labels } });
  const bad = await run({ info: NAMESPACES, namespace: '', name: 'ns', object: ns({ 'pod-security.kubernetes.io/enforce': 'strict' }) });
  assert.equal(bad.error?.code, 422);
  assert.equal(bad.error?.message, 'Namespace "ns" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted');
  // a bad label already there may stay while other labels change
  const still = await run({ operation: 'UPDATE', info: NAMESPACES, namespace: 'ns', name: 'ns', object: ns({ 'pod-security.kubernetes.io/enforce': 'strict', x: 'y' }), oldObject: ns({ 'pod-security.kubernetes.io/enforce': 'strict' }) });
  assert.equal(still.error, undefined);

  const raised = await run({ operation: 'UPDATE', info: NAMESPACES, namespace: 'ns', name: 'ns', object: ns({ 'pod-security.kubernetes.io/enforce': 'baseline' }), oldObject: ns({}) });
  assert.equal(raised.error, undefined);
  assert.deepEqual(raised.warnings, [
    'existing pods in namespace "ns" violate the new PodSecurity enforce level "baseline:latest"',
    'a-priv (and 1 other pod): privileged',
    'c-priv: host namespaces, privileged',
    'r0 (and 1 other pod): host namespaces',
  ]);
  // relaxing, or keeping, the enforce level checks nothing
  const relaxed = await run({ operation: 'UPDATE', info: NAMESPACES, namespace: 'ns', name: 'ns', object: ns({ 'pod-security.kubernetes.io/enforce': 'baseline' }), oldObject: ns({ 'pod-security.kubernetes.io/enforce': 'restricted' }) });
  assert.deepEqual(relaxed.warnings, []);
});

test('an exempt namespace given a policy is told it will be ignored', async () => {
  const config = { apiVersion: CONFIG_V1, kind: 'PodSecurityConfiguration', exemptions: { namespaces: ['kube-system'] } };
  const run = harness({}, [privilegedPod()], config);
  const ns = (labels: Record<string, string>) => ({ metadata: { name: 'kube-system', labels } });
  const r = await run({ operation: 'UPDATE', info: NAMESPACES, namespace: 'kube-system', name: 'kube-system', object: ns({ 'pod-security.kubernetes.io/enforce': 'baseline', 'pod-security.kubernetes.io/warn': 'restricted' }), oldObject: ns({}) });
  assert.deepEqual(r.warnings, ['namespace "kube-system" is exempt from Pod Security, and the policy (enforce=baseline:latest, warn=restricted:latest) will be ignored']);
});

test('a namespace whose labels cannot be parsed enforces restricted:latest, and the audit says why', async () => {
  const run = harness({ ns: { 'pod-security.kubernetes.io/enforce': 'bogus' } });
  const r = await run({ object: privilegedPod() });
  assert.equal(r.error?.code, 403);
  assert.match(r.error!.message, /^pods "p" is forbidden: violates PodSecurity "restricted:latest": privileged/);
  assert.equal(r.audit['pod-security.kubernetes.io/error'], 'Failed to parse policy: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "bogus": must be one of privileged, baseline, restricted');
  assert.equal(r.audit['pod-security.kubernetes.io/enforce-policy'], 'restricted:latest');
});
