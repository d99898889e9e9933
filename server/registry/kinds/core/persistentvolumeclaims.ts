// PersistentVolumeClaims as kube validates their spec (ValidatePersistentVolumeClaimSpec, shared
// with pods' ephemeral claim templates: pod-volume-validation.ts); and their updates
// (ValidatePersistentVolumeClaimUpdate): the spec is immutable but for a volumeName and a
// storageClassName set once, and a bound claim's storage request and volumeAttributesClassName.
// StorageClasses as ValidateStorageClass and its update rules have them: a qualified provisioner,
// bounded parameters, known reclaim and binding modes; none of those change afterwards.
import type { Strategy } from '../../strategy.ts';
import { deepEqual, isPlainObject } from '../../../util/json.ts';
import { isQualifiedName } from '../../../validation/names.ts';
import { goQuote } from '../../../go/strconv.ts';
import { forbiddenError, invalidError, notSupportedError, requiredError, tooLongError, type FieldError } from '../../../validation/field.ts';
import { specChangeError } from './pods/validation.ts';
import { compareRationals, parseQuantity } from '../../../util/quantity.ts';
import { withCanonicalQuantities } from '../../../schema/quantities.ts';
import { validatePersistentVolumeClaimSpec } from './pods/volume-validation.ts';


/** ValidatePersistentVolumeClaimSpec, the same checks as a pod's ephemeral claim template gets. */
function validateClaimSpec(spec: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  validatePersistentVolumeClaimSpec(errs, isPlainObject(spec) ? spec : {}, path);
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

export const persistentVolumeClaimStrategy: Strategy = {
  validate: (pvc) => validateClaimSpec(pvc.spec, 'spec'),
  // (a status write carries the spec over)
  validateUpdate: (pvc, old, subresource) => [...validateClaimSpec(pvc.spec, 'spec'), ...(subresource === '' ? validateClaimUpdate(pvc, old) : [])],
};

const RECLAIM_POLICIES = ['Delete', 'Retain'];
const BINDING_MODES = ['Immediate', 'WaitForFirstConsumer'];
const MAX_PARAMETERS = 512;
const MAX_PARAMETERS_SIZE = 256 * 1024;

function validateStorageClass(sc: Obj): FieldError[] {
  const errs: FieldError[] = [];
  const provisioner = typeof sc.provisioner === 'string' ? sc.provisioner : '';
  if (provisioner === '') errs.push(requiredError('provisioner'));
  else for (const m of isQualifiedName(provisioner.toLowerCase())) errs.push(invalidError('provisioner', goQuote(provisioner.toLowerCase()), m));
  const params: Obj = isPlainObject(sc.parameters) ? sc.parameters : {};
  const keys = Object.keys(params);
  if (keys.length > MAX_PARAMETERS) {
    errs.push(tooLongError('parameters', MAX_PARAMETERS));
  } else {
    let size = 0;
    for (const k of keys) {
      if (k === '') errs.push(invalidError('parameters', '""', 'field can not be empty.'));
      size += Buffer.byteLength(k) + Buffer.byteLength(String(params[k] ?? ''));
    }
    if (size > MAX_PARAMETERS_SIZE) errs.push(tooLongError('parameters', MAX_PARAMETERS_SIZE));
  }
  const reclaim = typeof sc.reclaimPolicy === 'string' ? sc.reclaimPolicy : '';
  if (reclaim !== '' && !RECLAIM_POLICIES.includes(reclaim)) errs.push(notSupportedError('reclaimPolicy', goQuote(reclaim), RECLAIM_POLICIES));
  const mode = sc.volumeBindingMode;
  if (mode == null) errs.push(requiredError('volumeBindingMode'));
  else if (!BINDING_MODES.includes(String(mode))) errs.push(notSupportedError('volumeBindingMode', goQuote(String(mode)), BINDING_MODES));
  return errs;
}

/** ValidateStorageClassUpdate: parameters, provisioner, reclaim policy and binding mode stay. */
function storageClassUpdate(sc: Obj, old: Obj): FieldError[] {
  const errs: FieldError[] = [];
  if (!deepEqual(sc.parameters ?? null, old.parameters ?? null)) errs.push(forbiddenError('parameters', 'updates to parameters are forbidden.'));
  if (sc.provisioner !== old.provisioner) errs.push(forbiddenError('provisioner', 'updates to provisioner are forbidden.'));
  if (sc.reclaimPolicy !== old.reclaimPolicy) errs.push(forbiddenError('reclaimPolicy', 'updates to reclaimPolicy are forbidden.'));
  if (sc.volumeBindingMode !== old.volumeBindingMode) errs.push(invalidError('volumeBindingMode', sc.volumeBindingMode == null ? '"null"' : goQuote(String(sc.volumeBindingMode)), 'field is immutable'));
  return errs;
}

export const storageClassStrategy: Strategy = {
  validate: validateStorageClass,
  validateUpdate: (sc, old) => [...validateStorageClass(sc), ...storageClassUpdate(sc, old)],
};
