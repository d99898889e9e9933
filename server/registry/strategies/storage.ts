// PersistentVolumeClaims as kube validates their spec (ValidatePersistentVolumeClaimSpec): at least
// one supported access mode, and a storage request. (What an update may change is not restricted here.)
import type { FieldError } from '../../schema/types.ts';
import { registerStrategy } from '../strategy.ts';
import { isPlainObject } from '../../util/json.ts';
import { goQuote } from '../metadata-validation.ts';
import { notSupportedError, requiredError } from '../crd/schema-validator.ts';

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

registerStrategy('', 'persistentvolumeclaims', { validate: (pvc) => validateClaimSpec(pvc.spec, 'spec') });
