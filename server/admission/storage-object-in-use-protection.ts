// StorageObjectInUseProtection (kube's plugin/pkg/admission/storage/storageobjectinuseprotection,
// on by default): every new PersistentVolumeClaim, PersistentVolume and VolumeAttributesClass gets
// its protection finalizer (kubernetes.io/pvc-protection, pv-protection, vac-protection), which
// the protection controllers remove once nothing uses the object, so it is not deleted from
// under a running pod, a bound claim or a claim's attributes.
import type { AdmissionPlugin } from './types.ts';
import { list, rec } from './json-fields.ts';

export const STORAGE_OBJECT_IN_USE_PROTECTION = 'StorageObjectInUseProtection';

/** pkg/volume/util's finalizers, by the qualified resource they protect. */
const FINALIZERS: Record<string, string> = {
  persistentvolumeclaims: 'kubernetes.io/pvc-protection',
  persistentvolumes: 'kubernetes.io/pv-protection',
  'volumeattributesclasses.storage.k8s.io': 'kubernetes.io/vac-protection',
};

export function storageObjectInUseProtection(): AdmissionPlugin {
  return {
    name: STORAGE_OBJECT_IN_USE_PROTECTION,
    admit(a) {
      if (a.operation !== 'CREATE' || a.subresource) return;
      const finalizer = FINALIZERS[a.info.group ? `${a.info.resource}.${a.info.group}` : a.info.resource];
      if (!finalizer) return;
      const meta = rec(a.object).metadata;
      if (typeof meta !== 'object' || meta === null) return;
      const m = meta as Record<string, unknown>;
      const finalizers = list(m.finalizers);
      if (!finalizers.includes(finalizer)) m.finalizers = [...finalizers, finalizer];
    },
  };
}
