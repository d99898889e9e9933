// Server-Side Apply: field sets (FieldsV1), the schema-driven merge, and managedFields bookkeeping.
// Pure functions over JSON objects and the typed schema view; no storage, no I/O.
export { compareValues } from './fieldpath/value.ts';
export { fieldPE, indexPE, keyPE, valuePE, type PathElement } from './fieldpath/element.ts';
export { parsePathElement, serializePathElement } from './fieldpath/serialize-pe.ts';
export { fieldPath, pathString, type FieldPath } from './fieldpath/path.ts';
export { FieldSet } from './fieldpath/set.ts';
export { SchemaError, UNTYPED } from './typed/atom.ts';
export { fieldsOf } from './typed/tofieldset.ts';
export { validateApplyConfiguration } from './typed/validate.ts';
export { applyMerge } from './typed/merge.ts';
export { compareObjects, type Comparison } from './typed/compare.ts';
export { removeFields } from './typed/remove.ts';
export {
  ANCIENT_CHANGES_MANAGER,
  BEFORE_FIRST_APPLY_MANAGER,
  LAST_APPLIED_ANNOTATION,
  MAX_UPDATE_MANAGERS,
  apply,
  checkApplyTarget,
  conflictError,
  decodeManagedFields,
  encodeManagedFields,
  isResetManagedFields,
  managerIdentifier,
  update,
  upgradeManagedFields,
  zeroObject,
  type ApplyOptions,
  type ApplyResult,
  type FieldShapeLookup,
  type ManagedFieldsEntry,
  type UpdateOptions,
  type OtherVersion,
} from './managed-fields.ts';
