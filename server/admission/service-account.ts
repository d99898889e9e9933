// The ServiceAccount admission plugin (kube's plugin/pkg/admission/serviceaccount/admission.go):
// a pod created without a ServiceAccount gets `default`; the one it names must exist (403
// otherwise, kube's message); a pod without imagePullSecrets takes its ServiceAccount's; a mirror
// pod (the kubelet's copy of a static pod) is left as it is, and may name no ServiceAccount and
// mount no secret or token. Unless automountServiceAccountToken is false (the pod's, else its
// ServiceAccount's), the pod gets the projected `kube-api-access-<5 chars>` volume
// (TokenVolumeSource: a bound token of 3607 s, kube-root-ca.crt's ca.crt and the namespace), and
// every container and init container — not ephemeral ones, as kube — that mounts nothing at
// /var/run/secrets/kubernetes.io/serviceaccount mounts it there read-only. The plugin mints no
// token: the kubelet asks TokenRequest for one bound to the pod. Only creates are looked at, as
// kube's, and updates of pods/ephemeralcontainers (what `kubectl debug` adds). A ServiceAccount
// annotated `kubernetes.io/enforce-mountable-secrets: "true"` limits the Secrets its pods may use
// to those it lists (kube's limitSecretReferences, with CVE-2024-3177's envFrom checks).
import { newForbidden } from './forbidden.ts';
import type { AdmissionAttributes, AdmissionPlugin } from './types.ts';
import { generateNameFrom } from '../validation/names.ts';
// (1 h 7 s: the API server recognizes it, --service-account-extend-token-expiration)
import { WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS } from '../authentication/service-account-token.ts';
import { visitPodSecretNames } from '../util/pod-references.ts';

export const DEFAULT_SERVICE_ACCOUNT_NAME = 'default';
/** kube's MirrorPodAnnotationKey: a pod the kubelet made from a static manifest. */
const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

/** What the plugin reads of a ServiceAccount. */
export interface ServiceAccountRef {
  metadata?: { name?: string; annotations?: Record<string, string> };
  secrets?: { name?: string }[];
  imagePullSecrets?: { name?: string }[];
  automountServiceAccountToken?: boolean;
}

/** kube's EnforceMountableSecretsAnnotation: "true" limits a pod to the Secrets its ServiceAccount lists. */
export const ENFORCE_MOUNTABLE_SECRETS_ANNOTATION = 'kubernetes.io/enforce-mountable-secrets';

/** kube's DefaultAPITokenMountPath. */
export const DEFAULT_API_TOKEN_MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
/** kube's ServiceAccountVolumeName: the projected volume is this, a dash and 5 generated characters. */
export const SERVICE_ACCOUNT_VOLUME_NAME = 'kube-api-access';
/** corev1.ProjectedVolumeSourceDefaultMode (0644), set explicitly as kube does (kubernetes#104464). */
const PROJECTED_VOLUME_DEFAULT_MODE = 0o644;

/** kube's TokenVolumeSource: what the kube-api-access volume projects. */
export function tokenVolumeSource() {
  return {
    defaultMode: PROJECTED_VOLUME_DEFAULT_MODE,
    sources: [
      { serviceAccountToken: { expirationSeconds: WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS, path: 'token' } },
      { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
      { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
    ],
  };
}

/** Looks a ServiceAccount up (a read of the store, no request). */
export type ServiceAccountGetter = (namespace: string, name: string) => ServiceAccountRef | undefined;

interface ContainerShape {
  name?: string;
  volumeMounts?: { name?: string; readOnly?: boolean; mountPath?: string }[];
  env?: { name?: string; valueFrom?: { secretKeyRef?: { name?: string } } }[];
  envFrom?: { secretRef?: { name?: string } }[];
}

interface PodShape {
  metadata?: { name?: string; generateName?: string; annotations?: Record<string, string> };
  spec?: {
    serviceAccountName?: string;
    serviceAccount?: string;
    automountServiceAccountToken?: boolean;
    imagePullSecrets?: { name?: string }[];
    volumes?: { name?: string; secret?: { secretName?: string }; projected?: { sources?: { serviceAccountToken?: unknown }[] } }[];
    containers?: ContainerShape[];
    initContainers?: ContainerShape[];
    ephemeralContainers?: ContainerShape[];
  };
}

/**
 * kube looks `default` up ten times, 100–200 ms apart, before refusing: the ServiceAccount
 * controller makes it right after the namespace, and a pod may come first. Another name is looked
 * up once.
 */
const DEFAULT_ATTEMPTS = 10;

export function serviceAccountAdmission(getServiceAccount: ServiceAccountGetter, sleep: (ms: number) => Promise<void> = realSleep): AdmissionPlugin {
  /**
   * The ServiceAccount, or the 403 kube answers when it is missing: at once when it is there (no
   * promise: the chain stays synchronous), else after the retries for `default`.
   */
  function lookUp(a: AdmissionAttributes, name: string): ServiceAccountRef | Promise<ServiceAccountRef> {
    const sa = getServiceAccount(a.namespace, name);
    if (sa) return sa;
    return retried(a, name);
  }

  async function retried(a: AdmissionAttributes, name: string): Promise<ServiceAccountRef> {
    const attempts = name === DEFAULT_SERVICE_ACCOUNT_NAME ? DEFAULT_ATTEMPTS : 1;
    const interval = 100 + Math.floor(Math.random() * 100);
    for (let i = 1; i < attempts; i++) {
      await sleep(interval);
      const sa = getServiceAccount(a.namespace, name);
      if (sa) return sa;
    }
    throw newForbidden(a, `error looking up service account ${a.namespace}/${name}: serviceaccount "${name}" not found`);
  }

  /** Runs `then` on the ServiceAccount, synchronously when it is at hand. */
  function withServiceAccount(a: AdmissionAttributes, name: string, then: (sa: ServiceAccountRef) => void): void | Promise<void> {
    const sa = lookUp(a, name);
    return sa instanceof Promise ? sa.then(then) : then(sa);
  }

  return {
    name: 'ServiceAccount',
    admit(a) {
      const pod = podOf(a);
      if (!pod || a.operation !== 'CREATE') return;
      // A mirror pod's spec is the kubelet's: left as it is, only validated.
      if (isMirrorPod(pod)) return;
      const spec = (pod.spec ??= {});
      // (kube's v1 conversion, before admission, reads the deprecated field when the name is empty)
      if (!spec.serviceAccountName) spec.serviceAccountName = spec.serviceAccount || DEFAULT_SERVICE_ACCOUNT_NAME;
      return withServiceAccount(a, spec.serviceAccountName, (sa) => {
        if (shouldAutomount(sa, spec)) mountServiceAccountToken(spec);
        if (!spec.imagePullSecrets?.length && sa.imagePullSecrets?.length) {
          spec.imagePullSecrets = sa.imagePullSecrets.map((s) => ({ name: s.name }));
        }
      });
    },
    validate(a) {
      const ephemeral = a.operation === 'UPDATE' && a.subresource === 'ephemeralcontainers';
      const pod = ephemeral ? objectOf(a) : podOf(a);
      if (!pod || (a.operation !== 'CREATE' && !ephemeral)) return;
      const spec = pod.spec ?? {};
      if (ephemeral) {
        if (!spec.serviceAccountName) throw newForbidden(a, `no service account specified for pod ${a.namespace}/${pod.metadata?.name ?? ''}`);
        return withServiceAccount(a, spec.serviceAccountName, (sa) => {
          const refused = enforcesMountableSecrets(sa) ? ephemeralContainerSecretRefusal(sa, spec) : undefined;
          if (refused) throw newForbidden(a, refused);
        });
      }
      if (isMirrorPod(pod)) {
        if (spec.serviceAccountName) throw newForbidden(a, 'a mirror pod may not reference service accounts');
        if (!visitPodSecretNames(pod, () => false)) throw newForbidden(a, 'a mirror pod may not reference secrets');
        for (const v of spec.volumes ?? []) {
          if (v?.projected?.sources?.some((s) => s?.serviceAccountToken)) throw newForbidden(a, 'a mirror pod may not use ServiceAccountToken volume projections');
        }
        return;
      }
      if (!spec.serviceAccountName) throw newForbidden(a, `no service account specified for pod ${a.namespace}/${pod.metadata?.name ?? ''}`);
      return withServiceAccount(a, spec.serviceAccountName, (sa) => {
        const refused = enforcesMountableSecrets(sa) ? secretReferenceRefusal(sa, spec) : undefined;
        if (refused) throw newForbidden(a, refused);
      });
    },
  };
}

/** kube's enforceMountableSecrets: the annotation, read as Go's strconv.ParseBool reads it (no global switch in kube-apiserver). */
function enforcesMountableSecrets(sa: ServiceAccountRef): boolean {
  const value = sa.metadata?.annotations?.[ENFORCE_MOUNTABLE_SECRETS_ANNOTATION];
  return value !== undefined && ['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value);
}

const namesOf = (refs: { name?: string }[] | undefined): Set<string> => new Set((Array.isArray(refs) ? refs : []).map((r) => r?.name ?? ''));
const list = <T>(v: T[] | undefined): T[] => (Array.isArray(v) ? v : []);

/**
 * kube's limitSecretReferences: the first Secret a pod uses that its ServiceAccount does not list
 * (secret volumes, init containers' and containers' env and envFrom, imagePullSecrets against the
 * ServiceAccount's imagePullSecrets), in kube's order and words; undefined when all are listed.
 */
function secretReferenceRefusal(sa: ServiceAccountRef, spec: NonNullable<PodShape['spec']>): string | undefined {
  const mountable = namesOf(sa.secrets);
  const saName = sa.metadata?.name ?? '';
  for (const v of list(spec.volumes)) {
    const secretName = v?.secret ? (v.secret.secretName ?? '') : undefined;
    if (secretName !== undefined && !mountable.has(secretName)) return `volume with secret.secretName="${secretName}" is not allowed because service account ${saName} does not reference that secret`;
  }
  for (const [kind, containers] of [['init container', spec.initContainers], ['container', spec.containers]] as const) {
    const refused = containerSecretRefusal(kind, list(containers), mountable, saName);
    if (refused) return refused;
  }
  const pullSecrets = namesOf(sa.imagePullSecrets);
  const pod = list(spec.imagePullSecrets);
  for (let i = 0; i < pod.length; i++) {
    const name = pod[i]?.name ?? '';
    if (!pullSecrets.has(name)) return `imagePullSecrets[${i}].name="${name}" is not allowed because service account ${saName} does not reference that imagePullSecret`;
  }
  return undefined;
}

/** kube's limitEphemeralContainerSecretReferences: the ephemeral containers' env and envFrom. */
function ephemeralContainerSecretRefusal(sa: ServiceAccountRef, spec: NonNullable<PodShape['spec']>): string | undefined {
  return containerSecretRefusal('ephemeral container', list(spec.ephemeralContainers), namesOf(sa.secrets), sa.metadata?.name ?? '');
}

function containerSecretRefusal(kind: string, containers: ContainerShape[], mountable: Set<string>, saName: string): string | undefined {
  for (const c of containers) {
    for (const env of list(c?.env)) {
      const ref = env?.valueFrom?.secretKeyRef;
      if (ref && !mountable.has(ref.name ?? '')) return `${kind} ${c.name ?? ''} with envVar ${env.name ?? ''} referencing secret.secretName="${ref.name ?? ''}" is not allowed because service account ${saName} does not reference that secret`;
    }
    for (const from of list(c?.envFrom)) {
      const ref = from?.secretRef;
      if (ref && !mountable.has(ref.name ?? '')) return `${kind} ${c.name ?? ''} with envFrom referencing secret.secretName="${ref.name ?? ''}" is not allowed because service account ${saName} does not reference that secret`;
    }
  }
  return undefined;
}

/** kube's shouldAutomount: the pod's choice, else its ServiceAccount's, else yes. */
function shouldAutomount(sa: ServiceAccountRef, spec: NonNullable<PodShape['spec']>): boolean {
  if (typeof spec.automountServiceAccountToken === 'boolean') return spec.automountServiceAccountToken;
  if (typeof sa.automountServiceAccountToken === 'boolean') return sa.automountServiceAccountToken;
  return true;
}

/**
 * kube's mountServiceAccountToken: a volume already named `kube-api-access-…` is the one mounted
 * (and not added again); each init container and container without a mount at the token path
 * gets one; the volume is added only when some container needed the mount.
 */
function mountServiceAccountToken(spec: NonNullable<PodShape['spec']>): void {
  // (a malformed spec is left as it came, for validation to refuse)
  if (spec.volumes != null && !Array.isArray(spec.volumes)) return;
  const volumes = spec.volumes ?? [];
  const existing = volumes.find((v) => typeof v?.name === 'string' && v.name.startsWith(SERVICE_ACCOUNT_VOLUME_NAME + '-'))?.name;
  const volumeName = existing ?? generateNameFrom(SERVICE_ACCOUNT_VOLUME_NAME + '-');
  let needsVolume = false;
  for (const list of [spec.initContainers, spec.containers]) {
    if (!Array.isArray(list)) continue;
    for (const c of list) {
      if (c === null || typeof c !== 'object' || (c.volumeMounts != null && !Array.isArray(c.volumeMounts))) continue;
      const mounts = c.volumeMounts ?? [];
      if (mounts.some((m) => m?.mountPath === DEFAULT_API_TOKEN_MOUNT_PATH)) continue;
      c.volumeMounts = [...mounts, { name: volumeName, readOnly: true, mountPath: DEFAULT_API_TOKEN_MOUNT_PATH }];
      needsVolume = true;
    }
  }
  if (existing === undefined && needsVolume) spec.volumes = [...volumes, { name: volumeName, projected: tokenVolumeSource() }];
}

/** The pod of a write of pods itself (kube ignores subresources but ephemeralcontainers: objectOf). */
function podOf(a: AdmissionAttributes): PodShape | undefined {
  return a.subresource === '' ? objectOf(a) : undefined;
}

/** The pod a write of pods or one of its subresources stores. */
function objectOf(a: AdmissionAttributes): PodShape | undefined {
  if (a.info.group !== '' || a.info.resource !== 'pods') return undefined;
  return a.object !== null && typeof a.object === 'object' ? (a.object as PodShape) : undefined;
}

function isMirrorPod(pod: PodShape): boolean {
  return pod.metadata?.annotations?.[MIRROR_POD_ANNOTATION] !== undefined;
}

function realSleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
