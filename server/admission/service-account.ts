// The ServiceAccount admission plugin (kube's plugin/pkg/admission/serviceaccount/admission.go),
// the part that needs no tokens: a pod created without a ServiceAccount gets `default`; the one it
// names must exist (403 otherwise, kube's message); a pod without imagePullSecrets takes its
// ServiceAccount's; a mirror pod (the kubelet's copy of a static pod) may name no ServiceAccount
// and mount no secret or token. Not here yet: the projected `kube-api-access-*` token volume,
// which needs the TokenRequest machinery, and the kubernetes.io/enforce-mountable-secrets check.
import type { AdmissionAttributes, AdmissionPlugin } from './types.ts';
import { forbidden } from '../errors.ts';

export const DEFAULT_SERVICE_ACCOUNT_NAME = 'default';
/** kube's MirrorPodAnnotationKey: a pod the kubelet made from a static manifest. */
const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

/** What the plugin reads of a ServiceAccount. */
export interface ServiceAccountRef {
  imagePullSecrets?: { name?: string }[];
}

/** Looks a ServiceAccount up (a read of the store, no request). */
export type ServiceAccountGetter = (namespace: string, name: string) => ServiceAccountRef | undefined;

interface PodShape {
  metadata?: { name?: string; generateName?: string; annotations?: Record<string, string> };
  spec?: {
    serviceAccountName?: string;
    serviceAccount?: string;
    imagePullSecrets?: { name?: string }[];
    volumes?: { secret?: unknown; projected?: { sources?: { serviceAccountToken?: unknown }[] } }[];
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
