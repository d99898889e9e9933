// The objects a pod refers to by name, as kube's pkg/api/v1/pod VisitPodSecretNames and
// VisitPodConfigmapNames find them. Shared by whoever needs a pod's references: the legacy
// token cleaner (is a token Secret in use?), the Node authorizer's graph (may a node read this
// Secret?), and admission (a mirror pod may reference no Secret; a ServiceAccount may enforce
// mountable secrets). Transitive references (pod → PVC → PV → Secret) are not followed, and
// empty names are skipped, as kube's skipEmptyNames does. Works on the decoded JSON of any pod,
// however malformed: what is not the expected shape refers to nothing.

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const list = (v: unknown): Json[] => (Array.isArray(v) ? v.map(obj) : []);
const stringOf = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);
const nameOf = (v: unknown): string | undefined => stringOf(obj(v).name);

/** The containers of a pod spec in kube's order: init containers, containers, ephemeral containers. */
export function podContainers(spec: unknown): Json[] {
  const s = obj(spec);
  return [...list(s.initContainers), ...list(s.containers), ...list(s.ephemeralContainers)];
}

/** Volume plugins whose source names a Secret in `secretRef` (kube's switch in VisitPodSecretNames). */
const SECRET_REF_VOLUME_PLUGINS = ['cephfs', 'cinder', 'flexVolume', 'rbd', 'scaleIO', 'iscsi', 'storageos'];

/**
 * Every Secret name a pod refers to: image pull secrets, the containers' (init, ephemeral) env
 * and envFrom, and the volumes' secrets (secret, projected, and the volume plugins' secret
 * references). The visitor may return false to stop; the result says whether visiting completed.
 */
export function visitPodSecretNames(pod: unknown, visit: (name: string) => unknown): boolean {
  const spec = obj(obj(pod).spec);
  const emit = (n: string | undefined): boolean => n === undefined || visit(n) !== false;
  for (const ref of list(spec.imagePullSecrets)) if (!emit(nameOf(ref))) return false;
  for (const c of podContainers(spec)) {
    for (const from of list(c.envFrom)) if (!emit(nameOf(from.secretRef))) return false;
    for (const env of list(c.env)) if (!emit(nameOf(obj(env.valueFrom).secretKeyRef))) return false;
  }
  for (const v of list(spec.volumes)) {
    if (!emit(stringOf(obj(v.secret).secretName))) return false;
    for (const source of list(obj(v.projected).sources)) if (!emit(nameOf(source.secret))) return false;
    if (!emit(stringOf(obj(v.azureFile).secretName))) return false;
    for (const plugin of SECRET_REF_VOLUME_PLUGINS) if (!emit(nameOf(obj(v[plugin]).secretRef))) return false;
    if (!emit(nameOf(obj(v.csi).nodePublishSecretRef))) return false;
  }
  return true;
}

/**
 * Every ConfigMap name a pod refers to: the containers' (init, ephemeral) envFrom and env, and
 * configMap and projected volumes. The visitor may return false to stop, as above.
 */
export function visitPodConfigMapNames(pod: unknown, visit: (name: string) => unknown): boolean {
  const spec = obj(obj(pod).spec);
  const emit = (n: string | undefined): boolean => n === undefined || visit(n) !== false;
  for (const c of podContainers(spec)) {
    for (const from of list(c.envFrom)) if (!emit(nameOf(from.configMapRef))) return false;
    for (const env of list(c.env)) if (!emit(nameOf(obj(env.valueFrom).configMapKeyRef))) return false;
  }
  for (const v of list(spec.volumes)) {
    for (const source of list(obj(v.projected).sources)) if (!emit(nameOf(source.configMap))) return false;
    if (!emit(nameOf(v.configMap))) return false;
  }
  return true;
}
