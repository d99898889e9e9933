// PersistentVolumeClaims as kube validates their spec (ValidatePersistentVolumeClaimSpec, shared
// with pods' ephemeral claim templates: pods/volume-validation.ts); and their updates
// (ValidatePersistentVolumeClaimUpdate): the spec is immutable but for a volumeName and a
// storageClassName set once, and a bound claim's storage request and volumeAttributesClassName.
// The defaults of claims and of PersistentVolumes (SetDefaults_PersistentVolume and their sources).
import type { Obj, Strategy } from '../../strategy.ts';
import { isPlainObject } from '../../../util/json.ts';
import { forbiddenError, type FieldError } from '../../../validation/field.ts';
import { specChangeError } from './pods/validation.ts';
import { compareRationals, parseQuantity } from '../../../util/quantity.ts';
import { withCanonicalQuantities } from '../../../schema/quantities.ts';
import { validatePersistentVolumeClaimSpec } from './pods/volume-validation.ts';
import { CORE, setPtr, setZero, struct, type Defaulters } from '../../defaulting.ts';
import { rbd, scaleIO } from './pods/defaults.ts';


/** ValidatePersistentVolumeClaimSpec, the same checks as a pod's ephemeral claim template gets. */
function validateClaimSpec(spec: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  validatePersistentVolumeClaimSpec(errs, isPlainObject(spec) ? spec : {}, path);
  return errs;
}

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

export const persistentVolumeClaimStrategy: Strategy = {
  validate: (pvc) => validateClaimSpec(pvc.spec, 'spec'),
  // (a status write carries the spec over)
  validateUpdate: (pvc, old, subresource) => [...validateClaimSpec(pvc.spec, 'spec'), ...(subresource === '' ? validateClaimUpdate(pvc, old) : [])],
};

function persistentVolume(pv: Obj): void {
  const status = struct(pv, 'status');
  if (status) setZero(status, 'phase', 'Pending');
  const spec = struct(pv, 'spec');
  if (!spec) return;
  setZero(spec, 'persistentVolumeReclaimPolicy', 'Retain');
  setPtr(spec, 'volumeMode', 'Filesystem');
}

/** PersistentVolumes, their sources and PersistentVolumeClaims, by definition. */
export const persistentVolumeDefaults: Defaulters = {
  [`${CORE}ISCSIPersistentVolumeSource`]: (s) => setZero(s, 'iscsiInterface', 'default'),
  [`${CORE}RBDPersistentVolumeSource`]: rbd,
  [`${CORE}ScaleIOPersistentVolumeSource`]: scaleIO,
  [`${CORE}PersistentVolumeClaimSpec`]: (s) => setPtr(s, 'volumeMode', 'Filesystem'),
  [`${CORE}PersistentVolumeClaim`]: (pvc) => {
    const status = struct(pvc, 'status');
    if (status) setZero(status, 'phase', 'Pending');
  },
  [`${CORE}PersistentVolume`]: persistentVolume,
};
