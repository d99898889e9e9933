// Server-Side Apply: field ownership (metadata.managedFields) as kube-apiserver's field manager
// keeps it, on structured-merge-diff's model. Pure functions over JSON objects and the typed schema
// view; no storage, no I/O. Three floors, each importing only those below it:
//   fieldpath/  path elements, paths, sets of paths and their FieldsV1 form, the values path
//               elements carry (structured-merge-diff's fieldpath and value); imports go/ and util/.
//   typed/      the schema view of a TypeNode (atoms, list keys) and what is done with typed
//               values: fields of an object, merge, compare, remove, validate, reconcile with a
//               changed schema (structured-merge-diff's typed); imports fieldpath/ and schema/.
//   here        the field manager: managedFields' entries on the wire (managed-fields.ts), the
//               updater with kube's layers (updater.ts), conflicts, client-side apply's
//               last-applied annotation, the entry points (field-manager.ts) and a kind's zero value.
// The registry imports this file only.
export { compareValues } from './fieldpath/value.ts';
export { fieldPE, indexPE, keyPE, valuePE, type PathElement } from './fieldpath/element.ts';
export { parsePathElement, serializePathElement } from './fieldpath/serialize-pe.ts';
export { fieldPath, pathString, type FieldPath } from './fieldpath/path.ts';
export { FieldSet } from './fieldpath/set.ts';
export { SchemaError, UNTYPED, listRelationship } from './typed/atom.ts';
export { fieldsOf } from './typed/tofieldset.ts';
export { validateApplyConfiguration } from './typed/validate.ts';
export { applyMerge } from './typed/merge.ts';
export { compareObjects, type Comparison } from './typed/compare.ts';
export { removeFields } from './typed/remove.ts';
export { encodeManagedFields, isResetManagedFields, managerIdentifier, type ManagedFieldsEntry } from './managed-fields.ts';
export { ANCIENT_CHANGES_MANAGER, MAX_UPDATE_MANAGERS, type ApplyOptions, type OtherVersion, type UpdateOptions } from './updater.ts';
export { conflictError } from './conflicts.ts';
export { LAST_APPLIED_ANNOTATION, upgradeManagedFields } from './last-applied.ts';
export { BEFORE_FIRST_APPLY_MANAGER, apply, checkApplyTarget, update, type ApplyResult } from './field-manager.ts';
export { zeroObject, type FieldShapeLookup } from './zero-object.ts';
