// storage.k8s.io: StorageClasses as ValidateStorageClass and its update rules have them: a
// qualified provisioner, bounded parameters, known reclaim and binding modes; none of those change
// afterwards. Defaults of StorageClasses and CSIDrivers.
import type { Obj, Strategy } from '../../strategy.ts';
import { deepEqual, isPlainObject } from '../../../util/json.ts';
import { isQualifiedName } from '../../../validation/names.ts';
import { goQuote } from '../../../go/strconv.ts';
import { forbiddenError, invalidError, notSupportedError, requiredError, tooLongError, type FieldError } from '../../../validation/field.ts';
import { list, setPtr, struct, type Defaulters } from '../../defaulting.ts';

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

/** StorageClasses and CSIDrivers, by definition. */
export const storageDefaults: Defaulters = {
  'io.k8s.api.storage.v1.StorageClass': (sc) => {
    setPtr(sc, 'reclaimPolicy', 'Delete');
    setPtr(sc, 'volumeBindingMode', 'Immediate');
  },
  'io.k8s.api.storage.v1.CSIDriver': (d) => {
    const spec = struct(d, 'spec');
    if (!spec) return;
    setPtr(spec, 'attachRequired', true);
    setPtr(spec, 'podInfoOnMount', false);
    setPtr(spec, 'storageCapacity', false);
    setPtr(spec, 'fsGroupPolicy', 'ReadWriteOnceWithFSType');
    if (list(spec.volumeLifecycleModes).length === 0) spec.volumeLifecycleModes = ['Persistent'];
    setPtr(spec, 'requiresRepublish', false);
    setPtr(spec, 'seLinuxMount', false);
  },
};
