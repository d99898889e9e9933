// The branchy rules of kube's small built-in plugins, case by case (kube's admission_test.go
// cases where they have them): Priority's resolution and its one-default rule,
// DefaultTolerationSeconds' "already tolerates", TaintNodesByCondition, the default class choice
// (newest, then lowest name), PersistentVolumeClaimResize's refusals, RuntimeClass' merging
// (MergeTolerations' supersets), the signer checks' wildcard, AlwaysPullImages on updates. The
// HTTPS path is test/e2e/admission/builtin-plugins.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AdmissionAttributes, AdmissionOperation } from '../../../server/admission/types.ts';
import type { ResourceInfo } from '../../../server/schema/types.ts';
import type { UserInfo } from '../../../server/authentication/user.ts';
import { ApiError } from '../../../server/errors.ts';
import { dig } from '../../helpers/identities.ts';
import { priority, type PriorityClassView } from '../../../server/admission/priority.ts';
import { defaultTolerationSeconds } from '../../../server/admission/default-toleration-seconds.ts';
import { taintNodesByCondition } from '../../../server/admission/taint-nodes-by-condition.ts';
import { defaultStorageClass, newestDefault, type StorageClassView } from '../../../server/admission/default-storage-class.ts';
import { persistentVolumeClaimResize } from '../../../server/admission/persistent-volume-claim-resize.ts';
import { storageObjectInUseProtection } from '../../../server/admission/storage-object-in-use-protection.ts';
import { mergeTolerations, runtimeClass, runtimeClassView } from '../../../server/admission/runtime-class.ts';
import { certificateApproval, certificateSigning, isAuthorizedForSignerName } from '../../../server/admission/certificate-approval.ts';
import { alwaysPullImages } from '../../../server/admission/always-pull-images.ts';
import { defaultIngressClass, ingressClassView } from '../../../server/admission/default-ingress-class.ts';

type Json = Record<string, unknown>;
const USER: UserInfo = { name: 'alice', groups: ['system:authenticated'] };
const info = (group: string, resource: string) => ({ group, resource, namespaced: true }) as ResourceInfo;
const PODS = info('', 'pods');

function attrs(resource: ResourceInfo, operation: AdmissionOperation, object: Json, oldObject?: Json, subresource = ''): AdmissionAttributes {
  return { operation, info: resource, subresource, namespace: 'ns', name: String(dig(object, 'metadata', 'name') ?? ''), object, oldObject, user: USER, dryRun: false } as AdmissionAttributes;
}
/** The 403 the call threw (its message), or undefined when it passed. */
async function refusal(f: () => unknown): Promise<string | undefined> {
  try {
    await f();
    return undefined;
  } catch (e) {
    assert.ok(e instanceof ApiError, String(e));
    assert.equal(e.code, 403, e.message);
    return e.message;
  }
}
const pod = (spec: Json = {}): Json => ({ metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'nginx' }], ...spec } });

// ---- Priority ----

function priorityPlugin(classes: PriorityClassView[]) {
  return priority({ priorityClass: (n) => classes.find((c) => c.name === n), priorityClasses: () => classes });
}

test('Priority: a pod gets its class value and policy; no class and no default gives 0 and PreemptLowerPriority', () => {
  const p = priorityPlugin([{ name: 'high', value: 1000, globalDefault: false, preemptionPolicy: 'Never' }]);
  const named = pod({ priorityClassName: 'high' });
  p.admit!(attrs(PODS, 'CREATE', named));
  assert.equal(dig(named, 'spec', 'priority'), 1000);
  assert.equal(dig(named, 'spec', 'preemptionPolicy'), 'Never');
  const plain: Json = pod();
  p.admit!(attrs(PODS, 'CREATE', plain));
  assert.deepEqual([dig(plain, 'spec', 'priority'), dig(plain, 'spec', 'preemptionPolicy'), dig(plain, 'spec', 'priorityClassName')], [0, 'PreemptLowerPriority', undefined]);
});

test('Priority: the global default (the lowest of two) names the class of a pod without one', () => {
  const p = priorityPlugin([
    { name: 'd1', value: 50, globalDefault: true, preemptionPolicy: 'PreemptLowerPriority' },
    { name: 'd2', value: 10, globalDefault: true, preemptionPolicy: 'Never' },
  ]);
  const plain: Json = pod();
  p.admit!(attrs(PODS, 'CREATE', plain));
  assert.deepEqual([dig(plain, 'spec', 'priorityClassName'), dig(plain, 'spec', 'priority'), dig(plain, 'spec', 'preemptionPolicy')], ['d2', 10, 'Never']);
});

test("Priority: kube's refusals of a missing class and of a priority or policy other than the class's", async () => {
  const p = priorityPlugin([{ name: 'high', value: 1000, globalDefault: false, preemptionPolicy: 'PreemptLowerPriority' }]);
  assert.equal(await refusal(() => p.admit!(attrs(PODS, 'CREATE', pod({ priorityClassName: 'nope' })))), 'pods "p" is forbidden: no PriorityClass with name nope was found');
  assert.equal(
    await refusal(() => p.admit!(attrs(PODS, 'CREATE', pod({ priorityClassName: 'high', priority: 5 })))),
    'pods "p" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 1000 from the given PriorityClass name',
  );
  assert.equal(
    await refusal(() => p.admit!(attrs(PODS, 'CREATE', pod({ priorityClassName: 'high', preemptionPolicy: 'Never' })))),
    'pods "p" is forbidden: the string value of PreemptionPolicy (Never) must not be provided in pod spec; priority admission controller computed PreemptLowerPriority from the given PriorityClass name',
  );
  // The value the class gives may be repeated.
  assert.equal(await refusal(() => p.admit!(attrs(PODS, 'CREATE', pod({ priorityClassName: 'high', priority: 1000 })))), undefined);
});

test('Priority: an update keeps the stored priority and policy', () => {
  const p = priorityPlugin([]);
  const updated: Json = pod();
  p.admit!(attrs(PODS, 'UPDATE', updated, pod({ priority: 7, preemptionPolicy: 'Never' })));
  assert.deepEqual([dig(updated, 'spec', 'priority'), dig(updated, 'spec', 'preemptionPolicy')], [7, 'Never']);
});

test('Priority: only one PriorityClass may be globalDefault', async () => {
  const PCS = info('scheduling.k8s.io', 'priorityclasses');
  const p = priorityPlugin([{ name: 'd', value: 1, globalDefault: true }]);
  const second = { metadata: { name: 'e' }, value: 2, globalDefault: true };
  const message = 'priorityclasses.scheduling.k8s.io "e" is forbidden: PriorityClass d is already marked as default. Only one default can exist';
  assert.equal(await refusal(() => p.validate!(attrs(PCS, 'CREATE', second))), message);
  assert.equal(await refusal(() => p.validate!(attrs(PCS, 'UPDATE', second, { ...second, globalDefault: false }))), message);
  // The default itself may be updated, and a class that is not default is never looked at.
  const d = { metadata: { name: 'd' }, value: 1, globalDefault: true };
  assert.equal(await refusal(() => p.validate!(attrs(PCS, 'UPDATE', d, d))), undefined);
  assert.equal(await refusal(() => p.validate!(attrs(PCS, 'CREATE', { metadata: { name: 'f' }, value: 3 }))), undefined);
});

// ---- DefaultTolerationSeconds, TaintNodesByCondition ----

test('DefaultTolerationSeconds: adds what is not tolerated yet, with the configured seconds', () => {
  const p = defaultTolerationSeconds({ notReadySeconds: 60 });
  const plain: Json = pod();
  p.admit!(attrs(PODS, 'CREATE', plain));
  assert.deepEqual(dig(plain, 'spec', 'tolerations'), [
    { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 },
    { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
  ]);
  // One with an empty effect covers not-ready; one with an empty key covers both.
  const partly: Json = pod({ tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists' }] });
  p.admit!(attrs(PODS, 'CREATE', partly));
  assert.deepEqual((dig(partly, 'spec', 'tolerations') as Json[]).map((t) => t.key), ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']);
  const all: Json = pod({ tolerations: [{ operator: 'Exists', effect: 'NoExecute' }] });
  p.admit!(attrs(PODS, 'CREATE', all));
  assert.equal(dig(all, 'spec', 'tolerations', 'length'), 1);
  // A NoSchedule toleration of not-ready does not count.
  const noSchedule: Json = pod({ tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoSchedule' }] });
  p.admit!(attrs(PODS, 'CREATE', noSchedule));
  assert.equal(dig(noSchedule, 'spec', 'tolerations', 'length'), 3);
});

test('TaintNodesByCondition: a new Node gets not-ready:NoSchedule once', () => {
  const NODES = info('', 'nodes');
  const p = taintNodesByCondition();
  const bare: Json = { metadata: { name: 'n' } };
  p.admit!(attrs(NODES, 'CREATE', bare));
  assert.deepEqual(dig(bare, 'spec', 'taints'), [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }]);
  const tainted: Json = { metadata: { name: 'n' }, spec: { taints: [{ key: 'node.kubernetes.io/not-ready', value: 'x', effect: 'NoSchedule' }] } };
  p.admit!(attrs(NODES, 'CREATE', tainted));
  assert.equal(dig(tainted, 'spec', 'taints', 'length'), 1);
  const updated: Json = { metadata: { name: 'n' }, spec: {} };
  p.admit!(attrs(NODES, 'UPDATE', updated, updated));
  assert.equal(dig(updated, 'spec', 'taints'), undefined);
});

// ---- storage ----

const sc = (name: string, created: string, isDefault = true, allowVolumeExpansion = false): StorageClassView => ({ name, created: Date.parse(created), isDefault, allowVolumeExpansion });

test('the default class: the newest marked default, then the lowest name', () => {
  assert.equal(newestDefault([sc('a', '2024-01-01T00:00:00Z'), sc('b', '2024-01-02T00:00:00Z'), sc('c', '2024-01-03T00:00:00Z', false)])?.name, 'b');
  assert.equal(newestDefault([sc('z', '2024-01-01T00:00:00Z'), sc('m', '2024-01-01T00:00:00Z')])?.name, 'm');
  assert.equal(newestDefault([sc('c', '2024-01-03T00:00:00Z', false)]), undefined);
  assert.equal(newestDefault([ingressClassView({ metadata: { name: 'i', annotations: { 'ingressclass.kubernetes.io/is-default-class': 'true' } } })])?.name, 'i');
});

test('DefaultStorageClass: only a claim that asks for no class, not even ""', () => {
  const PVCS = info('', 'persistentvolumeclaims');
  const p = defaultStorageClass(() => [sc('std', '2024-01-01T00:00:00Z')]);
  const plain: Json = { metadata: { name: 'c' }, spec: {} };
  p.admit!(attrs(PVCS, 'CREATE', plain));
  assert.equal(dig(plain, 'spec', 'storageClassName'), 'std');
  const empty: Json = { metadata: { name: 'c' }, spec: { storageClassName: '' } };
  p.admit!(attrs(PVCS, 'CREATE', empty));
  assert.equal(dig(empty, 'spec', 'storageClassName'), '');
  const beta: Json = { metadata: { name: 'c', annotations: { 'volume.beta.kubernetes.io/storage-class': 'x' } }, spec: {} };
  p.admit!(attrs(PVCS, 'CREATE', beta));
  assert.equal(dig(beta, 'spec', 'storageClassName'), undefined);
});

test('DefaultIngressClass: an Ingress without class or class annotation', () => {
  const INGRESSES = info('networking.k8s.io', 'ingresses');
  const p = defaultIngressClass(() => [{ name: 'nginx', isDefault: true, created: 0 }]);
  const bare: Json = { metadata: { name: 'i' } };
  p.admit!(attrs(INGRESSES, 'CREATE', bare));
  assert.equal(dig(bare, 'spec', 'ingressClassName'), 'nginx');
  const annotated: Json = { metadata: { name: 'i', annotations: { 'kubernetes.io/ingress.class': 'x' } }, spec: {} };
  p.admit!(attrs(INGRESSES, 'CREATE', annotated));
  assert.equal(dig(annotated, 'spec', 'ingressClassName'), undefined);
});

test('StorageObjectInUseProtection: the finalizer of each kind, once', () => {
  const p = storageObjectInUseProtection();
  const pv: Json = { metadata: { name: 'v', finalizers: ['x'] } };
  p.admit!(attrs(info('', 'persistentvolumes'), 'CREATE', pv));
  assert.deepEqual(dig(pv, 'metadata', 'finalizers'), ['x', 'kubernetes.io/pv-protection']);
  const pvc: Json = { metadata: { name: 'c', finalizers: ['kubernetes.io/pvc-protection'] } };
  p.admit!(attrs(info('', 'persistentvolumeclaims'), 'CREATE', pvc));
  assert.deepEqual(dig(pvc, 'metadata', 'finalizers'), ['kubernetes.io/pvc-protection']);
  const vac: Json = { metadata: { name: 'a' } };
  p.admit!(attrs(info('storage.k8s.io', 'volumeattributesclasses'), 'CREATE', vac));
  assert.deepEqual(dig(vac, 'metadata', 'finalizers'), ['kubernetes.io/vac-protection']);
});

test("PersistentVolumeClaimResize: kube's refusals, and shrinking or keeping the size is not its business", async () => {
  const PVCS = info('', 'persistentvolumeclaims');
  const classes = [sc('grow', '2024-01-01T00:00:00Z', false, true), sc('fixed', '2024-01-01T00:00:00Z', false, false)];
  const p = persistentVolumeClaimResize((n) => classes.find((c) => c.name === n));
  const claim = (size: string, cls: string, phase = 'Bound') => ({ metadata: { name: 'c' }, spec: { storageClassName: cls, resources: { requests: { storage: size } } }, status: { phase } });
  assert.equal(await refusal(() => p.validate!(attrs(PVCS, 'UPDATE', claim('2Gi', 'grow'), claim('1Gi', 'grow')))), undefined);
  assert.equal(await refusal(() => p.validate!(attrs(PVCS, 'UPDATE', claim('1024Mi', 'fixed'), claim('1Gi', 'fixed')))), undefined);
  assert.equal(await refusal(() => p.validate!(attrs(PVCS, 'UPDATE', claim('2Gi', 'grow'), claim('1Gi', 'grow', 'Pending')))), 'persistentvolumeclaims "c" is forbidden: Only bound persistent volume claims can be expanded');
  const notAllowed = 'persistentvolumeclaims "c" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize';
  assert.equal(await refusal(() => p.validate!(attrs(PVCS, 'UPDATE', claim('2Gi', 'fixed'), claim('1Gi', 'fixed')))), notAllowed);
  assert.equal(await refusal(() => p.validate!(attrs(PVCS, 'UPDATE', claim('2Gi', 'missing'), claim('1Gi', 'missing')))), notAllowed);
  assert.equal(await refusal(() => p.validate!(attrs(PVCS, 'UPDATE', claim('2Gi', ''), claim('1Gi', '')))), notAllowed);
});

// ---- RuntimeClass ----

test("MergeTolerations: kube's supersets (an empty key with Exists, an empty effect, fewer NoExecute seconds)", () => {
  const t = (key: string, operator: string, effect = '', extra: Json = {}) => ({ key, operator, effect, ...extra });
  const all = t('', 'Exists');
  assert.deepEqual(mergeTolerations([t('foo', 'Exists', 'NoSchedule')], [all]), [all]);
  assert.deepEqual(mergeTolerations([t('foo', 'Equal', 'NoSchedule', { value: 'bar' })], [t('foo', 'Exists')]), [t('foo', 'Exists')]);
  const ten = t('foo', 'Exists', 'NoExecute', { tolerationSeconds: 10 });
  const zero = t('foo', 'Exists', 'NoExecute', { tolerationSeconds: 0 });
  // 10 s covers 0 s, not the other way round.
  assert.deepEqual(mergeTolerations([zero], [ten]), [ten]);
  // Equal ones: the first is kept.
  const a = t('foo', 'Equal', 'NoSchedule', { value: 'x' });
  assert.deepEqual(mergeTolerations([a], [{ ...a }]), [a]);
  // Unrelated ones are all kept, in order.
  assert.deepEqual(mergeTolerations([t('a', 'Exists')], [t('b', 'Exists')]), [t('a', 'Exists'), t('b', 'Exists')]);
});

test("RuntimeClass: overhead and scheduling set, kube's refusals", async () => {
  const classes: Record<string, Json> = {
    kata: { metadata: { name: 'kata' }, handler: 'kata', overhead: { podFixed: { cpu: '250m', memory: '120Mi' } }, scheduling: { nodeSelector: { sandbox: 'kata' }, tolerations: [{ key: 'sandbox', operator: 'Exists' }] } },
    plain: { metadata: { name: 'plain' }, handler: 'runc' },
  };
  const p = runtimeClass((n) => (classes[n] ? runtimeClassView(classes[n]) : undefined));
  const kata: Json = pod({ runtimeClassName: 'kata', nodeSelector: { zone: 'a' } });
  p.admit!(attrs(PODS, 'CREATE', kata));
  assert.deepEqual(dig(kata, 'spec', 'overhead'), { cpu: '250m', memory: '120Mi' });
  assert.deepEqual(dig(kata, 'spec', 'nodeSelector'), { zone: 'a', sandbox: 'kata' });
  assert.deepEqual(dig(kata, 'spec', 'tolerations'), [{ key: 'sandbox', operator: 'Exists' }]);
  assert.equal(await refusal(() => p.validate!(attrs(PODS, 'CREATE', kata))), undefined);
  // The same overhead written differently is the same.
  assert.equal(await refusal(() => p.admit!(attrs(PODS, 'CREATE', pod({ runtimeClassName: 'kata', overhead: { cpu: '0.25', memory: '120Mi' } })))), undefined);
  assert.equal(await refusal(() => p.admit!(attrs(PODS, 'CREATE', pod({ runtimeClassName: 'nope' })))), 'pods "p" is forbidden: pod rejected: RuntimeClass "nope" not found');
  assert.equal(
    await refusal(() => p.admit!(attrs(PODS, 'CREATE', pod({ runtimeClassName: 'kata', overhead: { cpu: '1' } })))),
    "pods \"p\" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead",
  );
  assert.equal(
    await refusal(() => p.admit!(attrs(PODS, 'CREATE', pod({ runtimeClassName: 'kata', nodeSelector: { sandbox: 'gvisor' } })))),
    'pods "p" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = kata; pod.spec.nodeSelector[sandbox] = gvisor',
  );
  assert.equal(
    await refusal(() => p.validate!(attrs(PODS, 'CREATE', pod({ runtimeClassName: 'plain', overhead: { cpu: '1' } })))),
    'pods "p" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead',
  );
});

// ---- certificates ----

test('the signer checks: the signer, else its domain wildcard; approval and status only', async () => {
  const asked: string[] = [];
  const allow = new Set(['approve example.com/*', 'sign kubernetes.io/kube-apiserver-client']);
  const authorize = (_u: UserInfo, verb: string, name: string) => {
    asked.push(`${verb} ${name}`);
    return allow.has(`${verb} ${name}`);
  };
  assert.equal(isAuthorizedForSignerName(authorize, USER, 'approve', 'example.com/foo'), true);
  assert.deepEqual(asked, ['approve example.com/foo', 'approve example.com/*']);
  assert.equal(await isAuthorizedForSignerName(async (u, v, n) => authorize(u, v, n), USER, 'sign', 'example.com/foo'), false);

  const CSRS = info('certificates.k8s.io', 'certificatesigningrequests');
  const csr = (signerName: string, status: Json = {}) => ({ metadata: { name: 'csr' }, spec: { signerName }, status });
  const approval = certificateApproval(authorize);
  // The stored signer decides, not the one the update writes.
  assert.equal(
    await refusal(() => approval.validate!(attrs(CSRS, 'UPDATE', csr('example.com/x'), csr('other.io/x'), 'approval'))),
    'certificatesigningrequests.certificates.k8s.io "csr" is forbidden: user not permitted to approve requests with signerName "other.io/x"',
  );
  assert.equal(await refusal(() => approval.validate!(attrs(CSRS, 'UPDATE', csr('other.io/x'), csr('example.com/x'), 'approval'))), undefined);
  const signing = certificateSigning(authorize);
  const issued = { certificate: 'Y2VydA==' };
  assert.equal(
    await refusal(() => signing.validate!(attrs(CSRS, 'UPDATE', csr('example.com/x', issued), csr('example.com/x'), 'status'))),
    'certificatesigningrequests.certificates.k8s.io "csr" is forbidden: user not permitted to sign requests with signerName "example.com/x"',
  );
  assert.equal(await refusal(() => signing.validate!(attrs(CSRS, 'UPDATE', csr('kubernetes.io/kube-apiserver-client', issued), csr('kubernetes.io/kube-apiserver-client'), 'status'))), undefined);
  // A status update that changes neither the certificate nor the conditions is not signing.
  assert.equal(await refusal(() => signing.validate!(attrs(CSRS, 'UPDATE', csr('example.com/x', { conditions: [] }), csr('example.com/x'), 'status'))), undefined);
});

// ---- AlwaysPullImages ----

test('AlwaysPullImages: every container on create, an update only when it brings a new image', () => {
  const p = alwaysPullImages();
  const created: Json = pod({ initContainers: [{ name: 'i', image: 'busybox', imagePullPolicy: 'IfNotPresent' }] });
  p.admit!(attrs(PODS, 'CREATE', created));
  assert.deepEqual([dig(created, 'spec', 'initContainers', 0, 'imagePullPolicy'), dig(created, 'spec', 'containers', 0, 'imagePullPolicy')], ['Always', 'Always']);
  const old = pod({ containers: [{ name: 'c', image: 'nginx', imagePullPolicy: 'IfNotPresent' }] });
  const same: Json = pod({ containers: [{ name: 'c', image: 'nginx', imagePullPolicy: 'IfNotPresent' }] });
  p.admit!(attrs(PODS, 'UPDATE', same, old));
  assert.equal(dig(same, 'spec', 'containers', 0, 'imagePullPolicy'), 'IfNotPresent');
  const newImage: Json = pod({ containers: [{ name: 'c', image: 'nginx:2', imagePullPolicy: 'IfNotPresent' }] });
  p.admit!(attrs(PODS, 'UPDATE', newImage, old));
  assert.equal(dig(newImage, 'spec', 'containers', 0, 'imagePullPolicy'), 'Always');
  // What a later plugin set back is refused, as kube's aggregate (a 500).
  assert.throws(() => p.validate!(attrs(PODS, 'CREATE', pod({ containers: [{ name: 'c', image: 'x', imagePullPolicy: 'Never' }] }))), (e: unknown) => {
    assert.ok(e instanceof ApiError);
    assert.equal(e.code, 500);
    assert.equal(e.message, 'pods "p" is forbidden: spec.containers[0].imagePullPolicy: Unsupported value: "Never": supported values: "Always"');
    return true;
  });
});
