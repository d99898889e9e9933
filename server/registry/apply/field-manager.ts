// The field manager's entry points (kube's fieldmanager.go): metadata.managedFields as
// kube-apiserver maintains it.
//
// apply() is a server-side apply (PATCH application/apply-patch+yaml): it merges the configuration
// into the live object, records the applier as owner of exactly the fields in its configuration,
// removes the fields the applier owned before, dropped now and nobody else owns, and refuses (409)
// to change a field another manager owns unless forced. update() is every other write: the writer
// takes the fields it changed or added from everybody else, removed fields leave every set.
//
// The layers follow kube's field manager: entries are keyed by manager, operation, subresource and
// (for Update only) apiVersion; an Update only counts, and only gets a new time, when it changed
// something; metadata bookkeeping fields are never owned; an object without managedFields gets its
// current fields attributed to "before-first-apply" at its first apply; kubectl's first server-side
// apply over a client-side-applied object may take the fields its last-applied annotation still
// matches; more than ten Update entries are folded, oldest first, into "ancient-changes".
import { ApiError, badRequest } from '../../errors.ts';
import type { TypeNode } from '../../schema/types.ts';
import { isPlainObject } from '../../util/json.ts';
import { parseGroupVersion } from '../../validation/object-meta.ts';
import { FieldSet } from './fieldpath/set.ts';
import { SchemaError } from './typed/atom.ts';
import { createdFieldsV1 } from './typed/created-fields.ts';
import { checkedFieldsOf } from './typed/validate.ts';
import { ApplyConflicts, conflictError } from './conflicts.ts';
import { allowedConflictsFromLastApplied, buildLastApplied, KUBECTL_MANAGER, LAST_APPLIED_ANNOTATION, setLastApplied } from './last-applied.ts';
import { decodeEntries, emptyManaged, encodeManagedFields, isResetManagedFields, type Managed, type ManagedFieldsEntry, managerIdentifier, metadataField, parseIdentifier, stringOrEmpty } from './managed-fields.ts';
import { keptUid, uidOf } from './recent-sets.ts';
import { applyOnce, type ApplyOptions, recordUpdate, resetFieldSet, STRIPPED_FIELDS, type UpdateOptions } from './updater.ts';

export const BEFORE_FIRST_APPLY_MANAGER = 'before-first-apply';

export interface ApplyResult {
  /** The merged object, its managedFields set (absent when nobody owns anything). */
  object: any;
  managedFields: ManagedFieldsEntry[];
}

/** The object without metadata.managedFields; a shallow copy (the engine never modifies its inputs). */
function withoutManagedFields(obj: unknown): unknown {
  const o = obj ?? {};
  if (!isPlainObject(o) || Object.getPrototypeOf(o) !== Object.prototype) return structuredClone(o);
  const meta = o.metadata;
  if (!isPlainObject(meta) || !Object.prototype.hasOwnProperty.call(meta, 'managedFields')) return o;
  const m = { ...meta };
  delete m.managedFields;
  return { ...o, metadata: m };
}

/**
 * What structured-merge-diff checks of an apply configuration before anything else: its
 * group-version (a 400), then that its kind is a type it knows (a 500 naming the object).
 */
export function checkApplyTarget(config: unknown, apiVersion: string, kind: string): void {
  if (!isPlainObject(config)) return;
  // Unstructured reads a missing or non-string apiVersion as "", an unparsable one as no group-version.
  const gv = parseGroupVersion(typeof config.apiVersion === 'string' ? config.apiVersion : '');
  const specified = gv === null ? '' : gv.group ? `${gv.group}/${gv.version}` : gv.version;
  if (specified !== apiVersion) {
    throw badRequest(`Incorrect version specified in apply patch. Specified patch version: ${specified}, expected: ${apiVersion}`);
  }
  if (config.kind !== kind) {
    const gvk = `${gv!.group}/${gv!.version}, Kind=${typeof config.kind === 'string' ? config.kind : ''}`;
    const meta = isPlainObject(config.metadata) ? config.metadata : {};
    throw new ApiError(500, '', `failed to create typed patch object (${stringOrEmpty(meta.namespace)}/${stringOrEmpty(meta.name)}; ${gvk}): no corresponding type for ${gvk}`);
  }
}

function objectName(config: unknown): string {
  const obj = isPlainObject(config) ? config : {};
  const meta = isPlainObject(obj.metadata) ? obj.metadata : {};
  const av = typeof obj.apiVersion === 'string' ? obj.apiVersion : '';
  const gv = av.includes('/') ? av : `/${av}`;
  return `${stringOrEmpty(meta.namespace)}/${stringOrEmpty(meta.name)}; ${gv}, Kind=${stringOrEmpty(obj.kind)}`;
}

/**
 * Server-side apply of `config` to `live` (undefined: the object does not exist yet). Returns the
 * merged object (with metadata.managedFields) and its managedFields, or throws: 400 when the
 * configuration carries managedFields, 500 when it is not a valid typed object, 409 on conflicts.
 */
export function apply(node: TypeNode, live: unknown, config: unknown, opts: ApplyOptions): ApplyResult {
  return applyWith(node, live, config, opts, true);
}

/** apply() without its shortcuts (the prune shortcut): the reference they are tested against. */
export function applyGenerally(node: TypeNode, live: unknown, config: unknown, opts: ApplyOptions): ApplyResult {
  return applyWith(node, live, config, opts, false);
}

function applyWith(node: TypeNode, live: unknown, config: unknown, opts: ApplyOptions, shortcuts: boolean): ApplyResult {
  if (!isPlainObject(config)) throw badRequest('the apply configuration must be an object');
  const cfgMeta = config.metadata;
  if (isPlainObject(cfgMeta) && cfgMeta.managedFields !== undefined && cfgMeta.managedFields !== null) {
    throw badRequest('metadata.managedFields must be nil');
  }
  const { problems, fields: configFields } = checkedFieldsOf(node, config);
  if (problems.length > 0) {
    const detail = problems.length === 1 ? problems[0] : 'errors:\n' + problems.map((p) => '  ' + p).join('\n');
    throw new ApiError(500, '', `failed to create typed patch object (${objectName(config)}): ${detail}`);
  }
  const ignored = resetFieldSet(opts);

  let managed: Managed;
  let uid: string | undefined;
  try {
    managed = decodeEntries(metadataField(live, 'managedFields'), (uid = keptUid(uidOf(live))));
  } catch (e) {
    throw new ApiError(500, '', `failed to decode managed fields: ${(e as Error).message}`);
  }
  const liveObj = withoutManagedFields(live ?? opts.emptyObject ?? {});
  const emptyObj = withoutManagedFields(opts.emptyObject ?? {});

  try {
    // Nothing tracked yet: what the object holds now was set by someone before the first apply.
    if (managed.fields.size === 0) {
      managed = recordUpdate(node, emptyObj, liveObj, managed, { ...opts, manager: BEFORE_FIRST_APPLY_MANAGER }, ignored, shortcuts);
    }
    let result: { object: unknown; managed: Managed };
    try {
      result = applyOnce(node, liveObj, config, configFields!, managed, opts, ignored, opts.force, shortcuts);
    } catch (e) {
      if (!(e instanceof ApplyConflicts) || opts.manager !== KUBECTL_MANAGER) throw e;
      // kubectl upgrading from client-side apply: fields last-applied still matches are not conflicts.
      const allowed = allowedConflictsFromLastApplied(node, liveObj, opts.apiVersion);
      if (!allowed) throw e;
      const remaining = e.conflicts.filter((c) => !allowed.has(c.path));
      if (remaining.length > 0) throw new ApplyConflicts(remaining);
      result = applyOnce(node, liveObj, config, configFields!, managed, opts, ignored, true, shortcuts);
    }

    const object = result.object as Record<string, any>;
    if (opts.manager === KUBECTL_MANAGER && isPlainObject(object?.metadata)) {
      const la = isPlainObject(object.metadata.annotations) ? object.metadata.annotations[LAST_APPLIED_ANNOTATION] : undefined;
      if (typeof la === 'string' && la !== '') setLastApplied(object.metadata, buildLastApplied(config));
    }
    // (a create's sets are not kept, nor those of objects not written often: keptUid)
    const managedFields = encodeManagedFields(result.managed, uid !== undefined ? uidOf(object) : undefined);
    if (object && typeof object === 'object') {
      if (managedFields.length > 0) {
        if (!isPlainObject(object.metadata)) object.metadata = {};
        object.metadata.managedFields = managedFields;
      } else if (isPlainObject(object.metadata)) delete object.metadata.managedFields;
    }
    return { object, managedFields };
  } catch (e) {
    if (e instanceof ApplyConflicts) throw conflictError(e.conflicts);
    if (e instanceof SchemaError) throw new ApiError(500, '', `failed to create typed live object (${objectName(live ?? config)}): ${e.message}`);
    throw e;
  }
}

/**
 * managedFields after a create, update or non-apply patch (live undefined for a create). The
 * writer takes every field it changed or added; removed fields leave every entry. managedFields
 * the request itself carries replace the live ones (direct edits), `[]` or `[{}]` reset them; an
 * existing object whose managedFields are empty stays untracked until its next apply. Never throws:
 * on an internal problem the live object's managedFields are kept.
 */
export function update(node: TypeNode, live: unknown, next: unknown, opts: UpdateOptions): ManagedFieldsEntry[] {
  return recordWrite(node, live, next, opts, true);
}

/** update() through kube's layers only, without the shortcut for creates: the reference the shortcut is tested against. */
export function updateGenerally(node: TypeNode, live: unknown, next: unknown, opts: UpdateOptions): ManagedFieldsEntry[] {
  return recordWrite(node, live, next, opts, false);
}

function recordWrite(node: TypeNode, live: unknown, next: unknown, opts: UpdateOptions, shortcuts: boolean): ManagedFieldsEntry[] {
  const liveMF = metadataField(live, 'managedFields');
  // A create's sets are not kept, nor those of an object written only once since (keptUid).
  const uid = live === undefined ? undefined : keptUid(uidOf(live) ?? uidOf(next));
  let managed: Managed;
  if (opts.subresource) managed = decodeOrEmpty(liveMF, uid);
  else {
    const newMF = metadataField(next, 'managedFields');
    if (isResetManagedFields(newMF)) managed = emptyManaged();
    else {
      let fromRequest: Managed | undefined;
      try {
        fromRequest = decodeEntries(newMF, uid);
      } catch {
        fromRequest = undefined;
      }
      managed = fromRequest && fromRequest.fields.size > 0 ? fromRequest : decodeOrEmpty(liveMF, uid);
    }
  }
  // An existing object nobody tracks stays untracked until it is applied to.
  if (managed.fields.size === 0 && live !== undefined) return [];
  try {
    const liveObj = withoutManagedFields(live ?? opts.emptyObject ?? {});
    const newObj = withoutManagedFields(next);
    const ignored = resetFieldSet(opts);
    if (shortcuts && live === undefined && managed.fields.size === 0) {
      const created = createdEntry(node, liveObj, newObj, opts, ignored);
      if (created !== undefined) return created;
    }
    return encodeManagedFields(recordUpdate(node, liveObj, newObj, managed, opts, ignored, shortcuts), uid);
  } catch {
    return Array.isArray(liveMF) ? (structuredClone(liveMF) as ManagedFieldsEntry[]) : [];
  }
}

/**
 * The managedFields of a create nobody else owns anything of: the writer's one Update entry,
 * what recordUpdate and encodeManagedFields make of it, its FieldsV1 written straight from the
 * comparison with the zero object (no sets, no set algebra). Undefined when that walk fails (the
 * general path decides then).
 */
function createdEntry(node: TypeNode, zero: unknown, obj: unknown, opts: UpdateOptions, ignored: FieldSet): ManagedFieldsEntry[] | undefined {
  let fieldsV1: Record<string, unknown>;
  try {
    fieldsV1 = createdFieldsV1(node, zero, obj, ignored, STRIPPED_FIELDS);
  } catch {
    return undefined;
  }
  // Nothing owned: no entry (recordUpdate drops the empty set).
  if (Object.keys(fieldsV1).length === 0) return [];
  // Spelled as encodeManagedFields spells the entry, from the identifier it reads.
  const info = parseIdentifier(managerIdentifier({ manager: opts.manager, operation: 'Update', apiVersion: opts.apiVersion, subresource: opts.subresource }));
  const time: string | undefined = opts.now;
  return [
    {
      manager: info.manager ?? '',
      operation: 'Update',
      apiVersion: opts.apiVersion,
      ...(time !== undefined ? { time } : {}),
      fieldsType: 'FieldsV1',
      fieldsV1,
      ...(info.subresource ? { subresource: info.subresource } : {}),
    },
  ];
}

function decodeOrEmpty(mf: unknown, uid: string | undefined): Managed {
  try {
    return decodeEntries(mf, uid);
  } catch {
    return emptyManaged();
  }
}
