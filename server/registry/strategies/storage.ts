// PersistentVolumeClaims as kube validates their spec (ValidatePersistentVolumeClaimSpec): at least
// one supported access mode, and a storage request; and their updates
// (ValidatePersistentVolumeClaimUpdate): the spec is immutable but for a volumeName and a
// storageClassName set once, and a bound claim's storage request and volumeAttributesClassName.
import type { FieldError } from '../../schema/types.ts';
import { registerStrategy } from '../strategy.ts';
import { isPlainObject } from '../../util/json.ts';
import { goQuote } from '../metadata-validation.ts';
import { forbiddenError, notSupportedError, requiredError } from '../crd/schema-validator.ts';
import { specChangeError } from '../pod-validation.ts';
import { compareRationals, parseQuantity } from '../../util/quantity.ts';
import { withCanonicalQuantities } from '../../schema/quantities.ts';

/** The access modes kube supports, in the sorted order its message lists them. */
const ACCESS_MODES = ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod'];

function validateClaimSpec(spec: unknown, path: string): FieldError[] {
  const s: Record<string, any> = isPlainObject(spec) ? spec : {};
  const errs: FieldError[] = [];
  const modes: unknown[] = Array.isArray(s.accessModes) ? s.accessModes : [];
  if (modes.length === 0) errs.push(requiredError(`${path}.accessModes`, 'at least 1 access mode is required'));
  for (const m of modes) if (!ACCESS_MODES.includes(String(m))) errs.push(notSupportedError(`${path}.accessModes`, goQuote(String(m)), ACCESS_MODES));
  const requests = isPlainObject(s.resources) && isPlainObject(s.resources.requests) ? s.resources.requests : {};
  if (!Object.hasOwn(requests, 'storage')) errs.push(requiredError(`${path}.resources[storage]`));
  return errs;
}

type Obj = Record<string, any>;
const storageOf = (o: Obj | undefined): string | undefined => {
  const v = o?.resources?.requests?.storage;
  return typeof v === 'string' ? v : undefined;
};

function validateClaimUpdate(pvc: Obj, old: Obj): FieldError[] {
  const spec: Obj = isPlainObject(pvc.spec) ? pvc.spec : {};
  // (quantities by value, as for pods: an object stored before they were canonical)
  const was: Obj = isPlainObject(old.spec) ? withCanonicalQuantities('io.k8s.api.core.v1.PersistentVolumeClaimSpec', old.spec) : {};
  // What may change, taken from the new spec into the old one's copy.
  const allowed: Obj = { ...was };
  if (!was.volumeName) allowed.volumeName = spec.volumeName;
  if (was.storageClassName == null && spec.storageClassName != null) allowed.storageClassName = spec.storageClassName;
  if (pvc.status?.phase === 'Bound') {
    allowed.resources = { ...(isPlainObject(was.resources) ? was.resources : {}), requests: isPlainObject(spec.resources) ? spec.resources.requests : undefined };
    allowed.volumeAttributesClassName = spec.volumeAttributesClassName;
  }
  for (const k of Object.keys(allowed)) if (allowed[k] === undefined) delete allowed[k];
  const errs: FieldError[] = [];
  const changed = specChangeError('spec', 'spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims', 'core.PersistentVolumeClaimSpec', allowed, spec);
  if (changed) errs.push(changed);
  // Less than before only down to what the volume has (recovery from a failed expansion).
  const now = parseQuantity(storageOf(spec) ?? '0');
  const before = parseQuantity(storageOf(was) ?? '0');
  const capacity = parseQuantity(typeof old.status?.capacity?.storage === 'string' ? old.status.capacity.storage : '0');
  if (now && before && capacity && compareRationals(now, before) < 0 && compareRationals(now, capacity) <= 0) {
    errs.push(forbiddenError('spec.resources.requests.storage', 'field can not be less than status.capacity'));
  }
  return errs;
}

registerStrategy('', 'persistentvolumeclaims', {
  validate: (pvc) => validateClaimSpec(pvc.spec, 'spec'),
  // (a status write carries the spec over)
  validateUpdate: (pvc, old, subresource) => [...validateClaimSpec(pvc.spec, 'spec'), ...(subresource === '' ? validateClaimUpdate(pvc, old) : [])],
});
