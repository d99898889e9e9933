// DefaultStorageClass (kube's plugin/pkg/admission/storage/storageclass/setdefault, on by
// default): a new PersistentVolumeClaim that asks for no class (no spec.storageClassName, not
// even "", and no volume.beta.kubernetes.io/storage-class annotation) is given the default
// StorageClass's name: the class annotated storageclass.kubernetes.io/is-default-class "true"
// (or the beta annotation), the newest when several are (kube's GetDefaultClass: newest
// creationTimestamp, then the lowest name). With none the claim is left without a class.
// StorageClasses are read from memory (registry/cluster-object-index.ts).
import type { AdmissionPlugin } from './types.ts';
import { rec, str } from './json-fields.ts';

export const DEFAULT_STORAGE_CLASS = 'DefaultStorageClass';
/** core.BetaStorageClassAnnotation. */
export const BETA_STORAGE_CLASS_ANNOTATION = 'volume.beta.kubernetes.io/storage-class';
const IS_DEFAULT_ANNOTATION = 'storageclass.kubernetes.io/is-default-class';
const BETA_IS_DEFAULT_ANNOTATION = 'storageclass.beta.kubernetes.io/is-default-class';

/** What the storage plugins read of a StorageClass. */
export interface StorageClassView {
  name: string;
  isDefault: boolean;
  /** creationTimestamp in ms (RFC 3339 seconds: ties are broken by name). */
  created: number;
  allowVolumeExpansion: boolean;
}

export function storageClassView(sc: Record<string, unknown>): StorageClassView {
  const meta = rec(sc.metadata);
  const annotations = rec(meta.annotations);
  return {
    name: str(meta.name),
    isDefault: annotations[IS_DEFAULT_ANNOTATION] === 'true' || annotations[BETA_IS_DEFAULT_ANNOTATION] === 'true',
    created: Date.parse(str(meta.creationTimestamp)) || 0,
    allowVolumeExpansion: sc.allowVolumeExpansion === true,
  };
}

/** The newest of the classes marked default (ties: the lowest name); undefined when none is. */
export function newestDefault<T extends { name: string; isDefault: boolean; created: number }>(classes: Iterable<T>): T | undefined {
  let best: T | undefined;
  for (const c of classes) {
    if (!c.isDefault) continue;
    if (!best || c.created > best.created || (c.created === best.created && c.name < best.name)) best = c;
  }
  return best;
}

export function defaultStorageClass(storageClasses: () => Iterable<StorageClassView>): AdmissionPlugin {
  return {
    name: DEFAULT_STORAGE_CLASS,
    admit(a) {
      if (a.info.resource !== 'persistentvolumeclaims' || a.info.group !== '' || a.subresource || a.operation !== 'CREATE') return;
      const pvc = rec(a.object);
      // helper.PersistentVolumeClaimHasClass: the beta annotation, or the field (even "").
      if (BETA_STORAGE_CLASS_ANNOTATION in rec(rec(pvc.metadata).annotations)) return;
      const spec = pvc.spec;
      if (typeof spec !== 'object' || spec === null) return;
      const s = spec as Record<string, unknown>;
      if (s.storageClassName != null) return;
      const found = newestDefault(storageClasses());
      if (found) s.storageClassName = found.name;
    },
  };
}
