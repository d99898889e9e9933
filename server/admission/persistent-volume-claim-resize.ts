// PersistentVolumeClaimResize (kube's plugin/pkg/admission/storage/persistentvolume/resize, on
// by default; a validating plugin): a claim may ask for more storage only once it is Bound, and
// only when it names, before and after, the same StorageClass and that class sets
// allowVolumeExpansion. StorageClasses are read from memory (registry/cluster-object-index.ts).
import type { AdmissionPlugin } from './types.ts';
import { newForbidden } from './forbidden.ts';
import { rec, str } from './json-fields.ts';
import { BETA_STORAGE_CLASS_ANNOTATION, type StorageClassView } from './default-storage-class.ts';
import { compareRationals, parseQuantity, type Rational } from '../util/quantity.ts';

export const PERSISTENT_VOLUME_CLAIM_RESIZE = 'PersistentVolumeClaimResize';

/** helper.GetPersistentVolumeClaimClass: the beta annotation first, then the field. */
function claimClass(pvc: Record<string, unknown>): string {
  const annotations = rec(rec(pvc.metadata).annotations);
  if (BETA_STORAGE_CLASS_ANNOTATION in annotations) return str(annotations[BETA_STORAGE_CLASS_ANNOTATION]);
  return str(rec(pvc.spec).storageClassName);
}

/** spec.resources.requests.storage, parsed; a missing or unparsable one is zero, as an empty Quantity. */
function requestedStorage(pvc: Record<string, unknown>): Rational {
  const q = rec(rec(rec(pvc.spec).resources).requests).storage;
  return (typeof q === 'string' && parseQuantity(q)) || ZERO;
}
const ZERO: Rational = { num: 0n, den: 1n };

export function persistentVolumeClaimResize(storageClass: (name: string) => StorageClassView | undefined): AdmissionPlugin {
  return {
    name: PERSISTENT_VOLUME_CLAIM_RESIZE,
    validate(a) {
      if (a.info.resource !== 'persistentvolumeclaims' || a.info.group !== '' || a.subresource || a.operation !== 'UPDATE') return;
      const pvc = rec(a.object);
      const oldPvc = rec(a.oldObject);
      if (compareRationals(requestedStorage(pvc), requestedStorage(oldPvc)) <= 0) return;
      if (rec(oldPvc.status).phase !== 'Bound') throw newForbidden(a, 'Only bound persistent volume claims can be expanded');
      // Growing is for claims whose class explicitly allows it.
      const [name, oldName] = [claimClass(pvc), claimClass(oldPvc)];
      if (!name || !oldName || name !== oldName || !storageClass(name)?.allowVolumeExpansion) {
        throw newForbidden(a, 'only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize');
      }
    },
  };
}
