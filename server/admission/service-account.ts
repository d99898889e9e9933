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
// kube's. Not here yet: the kubernetes.io/enforce-mountable-secrets check.
import type { AdmissionAttributes, AdmissionPlugin } from './types.ts';
import { forbidden } from '../errors.ts';
import { generateNameFrom } from '../validation/names.ts';
// (1 h 7 s: the API server recognizes it, --service-account-extend-token-expiration)
import { WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS } from '../authentication/service-account-token.ts';

export const DEFAULT_SERVICE_ACCOUNT_NAME = 'default';
/** kube's MirrorPodAnnotationKey: a pod the kubelet made from a static manifest. */
const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

/** What the plugin reads of a ServiceAccount. */
export interface ServiceAccountRef {
  imagePullSecrets?: { name?: string }[];
  automountServiceAccountToken?: boolean;
}

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
  volumeMounts?: { name?: string; readOnly?: boolean; mountPath?: string }[];
}

interface PodShape {
  metadata?: { name?: string; generateName?: string; annotations?: Record<string, string> };
  spec?: {
    serviceAccountName?: string;
    serviceAccount?: string;
    automountServiceAccountToken?: boolean;
    imagePullSecrets?: { name?: string }[];
    volumes?: { name?: string; secret?: unknown; projected?: { sources?: { serviceAccountToken?: unknown }[] } }[];
    containers?: ContainerShape[];
    initContainers?: ContainerShape[];
  };
}

/**
 * kube looks `default` up ten times, 100–200 ms apart, before refusing: the ServiceAccount
 * controller makes it right after the namespace, and a pod may come first. Another name is looked
 * up once.
 */
const DEFAULT_ATTEMPTS = 10;

export function serviceAccountAdmission(getServiceAccount: ServiceAccountGetter, sleep: (ms: number) => Promise<void> = realSleep): AdmissionPlugin {
  /** The ServiceAccount, or the 403 kube answers when it is missing. */
  async function lookUp(a: AdmissionAttributes, pod: PodShape, name: string): Promise<ServiceAccountRef> {
    const attempts = name === DEFAULT_SERVICE_ACCOUNT_NAME ? DEFAULT_ATTEMPTS : 1;
    const interval = 100 + Math.floor(Math.random() * 100);
    for (let i = 0; i < attempts; i++) {
      if (i > 0) await sleep(interval);
      const sa = getServiceAccount(a.namespace, name);
      if (sa) return sa;
    }
    throw refuse(a, pod, `error looking up service account ${a.namespace}/${name}: serviceaccount "${name}" not found`);
  }

  return {
    name: 'ServiceAccount',
    async admit(a) {
      const pod = podOf(a);
      if (!pod || a.operation !== 'CREATE') return;
      // A mirror pod's spec is the kubelet's: left as it is, only validated.
      if (isMirrorPod(pod)) return;
      const spec = (pod.spec ??= {});
      // (kube's v1 conversion, before admission, reads the deprecated field when the name is empty)
      if (!spec.serviceAccountName) spec.serviceAccountName = spec.serviceAccount || DEFAULT_SERVICE_ACCOUNT_NAME;
      const sa = await lookUp(a, pod, spec.serviceAccountName);
      if (shouldAutomount(sa, spec)) mountServiceAccountToken(spec);
      if (!spec.imagePullSecrets?.length && sa.imagePullSecrets?.length) {
        spec.imagePullSecrets = sa.imagePullSecrets.map((s) => ({ name: s.name }));
      }
    },
    async validate(a) {
      const pod = podOf(a);
      if (!pod || a.operation !== 'CREATE') return;
      const spec = pod.spec ?? {};
      if (isMirrorPod(pod)) {
        if (spec.serviceAccountName) throw refuse(a, pod, 'a mirror pod may not reference service accounts');
        for (const v of spec.volumes ?? []) {
          if (v?.secret) throw refuse(a, pod, 'a mirror pod may not reference secrets');
          if (v?.projected?.sources?.some((s) => s?.serviceAccountToken)) throw refuse(a, pod, 'a mirror pod may not use ServiceAccountToken volume projections');
        }
        return;
      }
      if (!spec.serviceAccountName) throw refuse(a, pod, `no service account specified for pod ${a.namespace}/${pod.metadata?.name ?? ''}`);
      await lookUp(a, pod, spec.serviceAccountName);
    },
  };
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

/** The pod of a create of pods itself (kube ignores subresources but ephemeralcontainers, whose updates this part leaves alone). */
function podOf(a: AdmissionAttributes): PodShape | undefined {
  if (a.info.group !== '' || a.info.resource !== 'pods' || a.subresource !== '') return undefined;
  return a.object !== null && typeof a.object === 'object' ? (a.object as PodShape) : undefined;
}

function isMirrorPod(pod: PodShape): boolean {
  return pod.metadata?.annotations?.[MIRROR_POD_ANNOTATION] !== undefined;
}

/**
 * kube's admission.NewForbidden: `pods "<name>" is forbidden: <why>`. kube's admission runs before
 * the name is generated, so a pod made from generateName is named by its prefix; hearth has
 * generated it already, and a name that is the prefix and five more characters is taken for one.
 */
function refuse(a: AdmissionAttributes, pod: PodShape, message: string) {
  const generateName = pod.metadata?.generateName;
  const generated = !!generateName && a.name.startsWith(generateName) && a.name.length === generateName.length + 5;
  return forbidden('', 'pods', generated ? generateName : a.name || 'Unknown', message);
}

function realSleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
