// Field ownership: metadata.managedFields as kube-apiserver's field manager maintains it.
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
import { ApiError, badRequest, type StatusCause } from '../../errors.ts';
import type { TypeNode } from '../../schema/types.ts';
import { jsonEqual } from './fieldpath/value.ts';
import type { PathElement } from './fieldpath/element.ts';
import { fieldPath, pathString, type FieldPath } from './fieldpath/path.ts';
import { FieldSet, describesExactly, frozen, isSubset } from './fieldpath/set.ts';
import { SchemaError } from './typed/atom.ts';
import { keyFieldDefault } from './typed/list-items.ts';
import { differenceEnsured, ensureNamedShared, ensuredFieldsOf, fieldsOf, nodeBelow, type FieldsMemo } from './typed/tofieldset.ts';
import { NO_MISMATCHES, schemaMismatches } from './typed/reconcile-schema.ts';
import { checkedFieldsOf } from './typed/validate.ts';
import { goJsonMarshal } from '../../go/json.ts';
import { compareStrings } from '../../go/strings.ts';
import { applyMerge, applyMergeWithFields } from './typed/merge.ts';
import { compareObjects, type Comparison } from './typed/compare.ts';
import { createdFieldsV1 } from './typed/created-fields.ts';
import { removeFieldsShared } from './typed/remove.ts';
import { cloneJSON, deepFreeze, isPlainObject } from '../../util/json.ts';
import { parseGroupVersion } from '../../validation/object-meta.ts';

export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time?: string;
  fieldsType: 'FieldsV1';
  fieldsV1: object;
  subresource?: string;
}

export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';
/** Update entries kept before the oldest are folded together (kube's DefaultMaxUpdateManagers). */
export const MAX_UPDATE_MANAGERS = 10;
export const ANCIENT_CHANGES_MANAGER = 'ancient-changes';
export const BEFORE_FIRST_APPLY_MANAGER = 'before-first-apply';
/** The only manager whose applies upgrade client-side-applied objects and keep last-applied in sync. */
export const KUBECTL_MANAGER = 'kubectl';
const CURRENT_OPERATION = 'current-operation';
/** metav1 TotalAnnotationSizeLimitB */
const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

/** Fields no manager ever owns (kube's stripMetaManager; an exact-path difference). */
const STRIPPED_FIELDS = FieldSet.of(
  fieldPath('apiVersion'),
  fieldPath('kind'),
  fieldPath('metadata'),
  fieldPath('metadata', 'name'),
  fieldPath('metadata', 'namespace'),
  fieldPath('metadata', 'creationTimestamp'),
  fieldPath('metadata', 'selfLink'),
  fieldPath('metadata', 'uid'),
  fieldPath('metadata', 'clusterName'),
  fieldPath('metadata', 'generation'),
  fieldPath('metadata', 'managedFields'),
  fieldPath('metadata', 'resourceVersion'),
);

interface VersionedSet {
  set: FieldSet;
  apiVersion: string;
  applied: boolean;
}

/** Decoded managedFields: sets and times keyed by manager identifier. */
interface Managed {
  fields: Map<string, VersionedSet>;
  times: Map<string, string | undefined>;
}

const emptyManaged = (): Managed => ({ fields: new Map(), times: new Map() });

interface CommonOptions {
  /** The field manager (fieldManager parameter, or the name derived from the user agent). */
  manager: string;
  /** The version of the request, e.g. "apps/v1". */
  apiVersion: string;
  /** "status", "scale"... for writes through a subresource. */
  subresource?: string;
  /** RFC3339 time of the write, e.g. "2024-05-01T10:00:00Z". */
  now: string;
  /** The kind has a status subresource: a write to the main resource does not own or conflict on status. */
  statusSubresource?: boolean;
  /** Fields the strategy resets on this endpoint (kube's GetResetFields), as field-name paths. Replaces the status default. */
  resetFields?: string[][];
  /** The object as it looks before it exists (kube compares creates with the kind's zero value); default {}. */
  emptyObject?: unknown;
  /**
   * Another version of the kind, for managers that wrote in it: its schema and a conversion of
   * an object of the request's version to it (undefined: not known; the request's schema and
   * field paths stand in, as for versions that differ in nothing).
   */
  otherVersion?: (apiVersion: string) => OtherVersion | undefined;
}

export interface OtherVersion {
  node: TypeNode;
  convert(obj: unknown): unknown;
}

export interface ApplyOptions extends CommonOptions {
  force: boolean;
}

export type UpdateOptions = CommonOptions;

export interface ApplyResult {
  /** The merged object, its managedFields set (absent when nobody owns anything). */
  object: any;
  managedFields: ManagedFieldsEntry[];
}

// ---------------------------------------------------------------------------------------------
// Manager identity and the wire form

interface ManagerInfo {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  subresource?: string;
}

/** The identity of an entry: its manager, operation, subresource and — for Update only — apiVersion (kube's JSON spelling). */
export function managerIdentifier(info: ManagerInfo): string {
  const key = `${info.manager ?? ''}\u0000${info.operation ?? ''}\u0000${info.apiVersion ?? ''}\u0000${info.subresource ?? ''}`;
  let id = IDENTIFIER_OF.get(key);
  if (id === undefined) {
    id = writeIdentifier(info);
    if (IDENTIFIER_OF.size >= 4096) IDENTIFIER_OF.clear();
    IDENTIFIER_OF.set(key, id);
  }
  return id;
}

/** Identifiers by their parts (manager, operation, apiVersion, subresource), bounded. */
const IDENTIFIER_OF = new Map<string, string>();

function writeIdentifier(info: ManagerInfo): string {
  const parts: string[] = [];
  if (info.manager) parts.push(`"manager":${goJsonMarshal(info.manager)}`);
  if (info.operation) parts.push(`"operation":${goJsonMarshal(info.operation)}`);
  if (info.apiVersion && info.operation !== 'Apply') parts.push(`"apiVersion":${goJsonMarshal(info.apiVersion)}`);
  if (info.subresource) parts.push(`"subresource":${goJsonMarshal(info.subresource)}`);
  return '{' + parts.join(',') + '}';
}

/** Parsed identifiers (only read), bounded. */
const IDENTIFIERS = new Map<string, ManagerInfo>();

function parseIdentifier(id: string): ManagerInfo {
  let info = IDENTIFIERS.get(id);
  if (info !== undefined) return info;
  try {
    const v = JSON.parse(id) as unknown;
    info = isPlainObject(v) ? (v as ManagerInfo) : {};
  } catch {
    info = {};
  }
  if (IDENTIFIERS.size >= 4096) IDENTIFIERS.clear();
  IDENTIFIERS.set(id, info);
  return info;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Reads managedFields (kube's DecodeManagedFields); throws on an invalid entry. */
export function decodeManagedFields(entries: unknown): Managed {
  return decodeEntries(entries, undefined);
}

// ---------------------------------------------------------------------------------------------
// Sets recently written or read, by object (uid) and manager. The same managers write the same
// objects again and again: a set whose FieldsV1 has not changed since is taken as it is (after
// checking that the FieldsV1 describes exactly that set), with what was derived from it (schema
// reconciliation, ensureNamedFieldsAreMembers). Cached sets are frozen: nothing changes them.

const RECENT_SETS = new Map<string, FieldSet[]>();
/** At most this many objects and managers, and about this many set entries in all. */
const RECENT_SETS_LIMIT = 1024;
const RECENT_ENTRIES_LIMIT = 200_000;
let recentEntries = 0;
const RECENT_WEIGHT = new WeakMap<FieldSet, number>();
/** Sets kept per object and manager: the last written, and the one before (a write may be retried on the same live object). */
const RECENT_PER_KEY = 2;

function recentKey(uid: string | undefined, id: string): string | undefined {
  return uid ? uid + '\n' + id : undefined;
}

function rememberSet(key: string, set: FieldSet): FieldSet {
  const sets = RECENT_SETS.get(key);
  if (sets !== undefined) {
    RECENT_SETS.delete(key); // most recently used last
    // The same set again (often rebuilt from the one read: it shares most levels) keeps its first copy.
    // (set.equals looks names up in the kept sets, whose levels have their indexes already)
    let at = -1;
    for (let i = 0; i < sets.length && at < 0; i++) if (sets[i] === set || set.equals(sets[i])) at = i;
    if (at >= 0) set = sets.splice(at, 1)[0];
    else recentEntries += weigh(set);
    sets.unshift(set);
    while (sets.length > RECENT_PER_KEY) recentEntries -= weigh(sets.pop()!);
    RECENT_SETS.set(key, sets);
  } else {
    recentEntries += weigh(set);
    RECENT_SETS.set(key, [set]);
  }
  // Forget the least recently used beyond the limits (never the one just remembered).
  while (RECENT_SETS.size > 1 && (RECENT_SETS.size > RECENT_SETS_LIMIT || recentEntries > RECENT_ENTRIES_LIMIT)) {
    const oldest = RECENT_SETS.keys().next().value!;
    for (const s of RECENT_SETS.get(oldest)!) recentEntries -= weigh(s);
    RECENT_SETS.delete(oldest);
  }
  return set;
}

/** The entries of a set (levels shared with other sets counted again), remembered. */
function weigh(set: FieldSet): number {
  let w = RECENT_WEIGHT.get(set);
  if (w === undefined) {
    w = countEntries(set);
    RECENT_WEIGHT.set(set, w);
  }
  return w;
}

function countEntries(set: FieldSet): number {
  let n = set._e.length;
  for (const e of set._e) if (e.sub) n += countEntries(e.sub);
  return n;
}

/** A recent set the FieldsV1 describes exactly. */
function recentSet(key: string | undefined, raw: unknown): FieldSet | undefined {
  const sets = key === undefined ? undefined : RECENT_SETS.get(key);
  if (sets !== undefined) for (const s of sets) if (describesExactly(raw, s)) return s;
  return undefined;
}

/**
 * Whose sets are kept. Keeping an object's sets costs its write most of what it saves the next
 * one (a new set retained is a set the garbage collector promotes, and later evicts), so they are
 * kept only for objects written again: a create keeps nothing, an object's first write after it
 * is remembered by its uid only, and from its second write on its sets are kept.
 */
const WRITTEN_ONCE = new Map<string, true>();
const KEPT = new Map<string, true>();
/** Uids remembered in each map (a string each; the sets themselves are bounded by RECENT_SETS). */
const UIDS_LIMIT = 8192;

function bounded(m: Map<string, true>, uid: string): void {
  m.set(uid, true);
  if (m.size > UIDS_LIMIT) m.delete(m.keys().next().value!);
}

/** The uid to read and keep this write's sets under: undefined when the object is not written often enough. */
function keptUid(uid: string | undefined): string | undefined {
  if (uid === undefined) return undefined;
  if (KEPT.has(uid)) return uid;
  if (WRITTEN_ONCE.delete(uid)) {
    bounded(KEPT, uid);
    return uid;
  }
  bounded(WRITTEN_ONCE, uid);
  return undefined;
}

function uidOf(obj: unknown): string | undefined {
  const meta = isPlainObject(obj) ? obj.metadata : undefined;
  const uid = isPlainObject(meta) ? meta.uid : undefined;
  return typeof uid === 'string' && uid !== '' ? uid : undefined;
}

/** Reads managedFields; with the object's uid, through the recent sets (and then the sets are frozen). */
function decodeEntries(entries: unknown, uid: string | undefined): Managed {
  const managed = emptyManaged();
  if (entries === undefined || entries === null) return managed;
  if (!Array.isArray(entries)) throw new Error('managedFields must be a list');
  for (let i = 0; i < entries.length; i++) {
    const e: unknown = entries[i];
    if (!isPlainObject(e)) throw new Error(`managed fields entry ${i} is not an object`);
    const operation = str(e.operation);
    if (operation !== 'Apply' && operation !== 'Update') throw new Error('operation must be `Apply` or `Update`');
    if (str(e.apiVersion).length < 1) throw new Error('apiVersion must not be empty');
    const fieldsType = str(e.fieldsType);
    if (fieldsType === '') throw new Error(`missing fieldsType in managed fields entry ${i}`);
    if (fieldsType !== 'FieldsV1') throw new Error(`invalid fieldsType "${fieldsType}" in managed fields entry ${i}`);
    const id = managerIdentifier({ manager: str(e.manager), operation, apiVersion: str(e.apiVersion), subresource: str(e.subresource) });
    const key = recentKey(uid, id);
    let set = (typeof e.fieldsV1 === 'object' && e.fieldsV1 !== null ? SET_OF_FIELDS_V1.get(e.fieldsV1) : undefined) ?? recentSet(key, e.fieldsV1);
    if (set === undefined) {
      try {
        set = e.fieldsV1 === undefined || e.fieldsV1 === null ? new FieldSet() : FieldSet.fromFieldsV1(e.fieldsV1);
      } catch (err) {
        throw new Error(`error decoding versioned set from entry ${i}: error decoding set: ${(err as Error).message}`);
      }
      if (key !== undefined) rememberSet(key, (set = frozen(set)));
    }
    managed.fields.set(id, { set, apiVersion: str(e.apiVersion), applied: operation === 'Apply' });
    managed.times.set(id, typeof e.time === 'string' && e.time !== '' ? e.time : undefined);
  }
  return managed;
}

const seconds = (t: string | undefined): number => {
  if (!t) return 0;
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? 0 : Math.floor(ms / 1000);
};

/**
 * Writes managedFields, sorted as kube sorts them: Apply before Update, then by time, manager,
 * apiVersion, subresource. With the object's uid, the sets are remembered as its recent ones.
 */
export function encodeManagedFields(managed: Managed, uid?: string): ManagedFieldsEntry[] {
  const out: ManagedFieldsEntry[] = [];
  for (const [id, vs] of managed.fields) {
    const key = recentKey(uid, id);
    const set = key !== undefined ? rememberSet(key, frozen(vs.set)) : vs.set;
    const info = parseIdentifier(id);
    const time = managed.times.get(id);
    // Key order as kube writes an entry: manager, operation, apiVersion, time, fieldsType, fieldsV1, subresource.
    const entry: ManagedFieldsEntry = {
      manager: info.manager ?? '',
      operation: vs.applied || info.operation === 'Apply' ? 'Apply' : 'Update',
      apiVersion: vs.apiVersion,
      ...(time !== undefined ? { time } : {}),
      fieldsType: 'FieldsV1',
      fieldsV1: fieldsV1Of(set),
      ...(info.subresource ? { subresource: info.subresource } : {}),
    };
    out.push(entry);
  }
  out.sort((p, q) => {
    if (p.operation !== q.operation) return p.operation < q.operation ? -1 : 1;
    const ps = seconds(p.time);
    const qs = seconds(q.time);
    if (ps !== qs) return ps - qs;
    if (p.manager !== q.manager) return compareStrings(p.manager, q.manager);
    if (p.apiVersion !== q.apiVersion) return compareStrings(p.apiVersion, q.apiVersion);
    return compareStrings(p.subresource ?? '', q.subresource ?? '');
  });
  return out;
}

/**
 * The FieldsV1 of a set. Shared (frozen) sets are written again and again, mostly unchanged: their
 * FieldsV1 is made once and shared too, frozen so that no holder can change it for the others.
 */
function fieldsV1Of(set: FieldSet): Record<string, unknown> {
  if (!set._frozen) return set.toFieldsV1();
  const f = FIELDS_V1.get(set);
  if (f) return f;
  // Kept from the second time on: a set written once (a create's) is not worth freezing.
  if (f === undefined) {
    FIELDS_V1.set(set, null);
    return set.toFieldsV1();
  }
  const made = deepFreeze(set.toFieldsV1());
  FIELDS_V1.set(set, made);
  SET_OF_FIELDS_V1.set(made, set);
  return made;
}

/**
 * The set each shared FieldsV1 was made from. A write reads the object the last write stored
 * (the committed object itself, see StoredObject.committed), so its managedFields hold these
 * very objects: deep-frozen, they still describe their set, and are recognised without a walk.
 */
const SET_OF_FIELDS_V1 = new WeakMap<object, FieldSet>();

/** FieldsV1 by set: null once written, the shared frozen object from the second time on. */
const FIELDS_V1 = new WeakMap<FieldSet, Record<string, unknown> | null>();

/** True for managedFields that ask for a reset: an empty list, or a list of one empty entry. */
export function isResetManagedFields(mf: unknown): boolean {
  if (!Array.isArray(mf)) return false;
  if (mf.length === 0) return true;
  if (mf.length !== 1 || !isPlainObject(mf[0])) return false;
  const e = mf[0];
  return Object.keys(e).every((k) => {
    const v = e[k];
    if (k === 'fieldsV1') return v === undefined || v === null;
    return v === undefined || v === null || v === '';
  });
}

// ---------------------------------------------------------------------------------------------
// Conflicts

interface Conflict {
  manager: string; // identifier
  path: FieldPath;
}

class ApplyConflicts extends Error {
  constructor(readonly conflicts: Conflict[]) {
    super('conflicts');
  }
}

function conflictsFromManagers(sets: Map<string, FieldSet>): Conflict[] {
  const out: Conflict[] = [];
  for (const id of [...sets.keys()].sort(compareStrings)) for (const path of sets.get(id)!.paths()) out.push({ manager: id, path });
  return out;
}

/** `"kubectl"`, `"hpa" using apps/v1`, `"x" with subresource "status" using v1`. */
function printManager(id: string): string {
  let info: ManagerInfo;
  try {
    info = JSON.parse(id) as ManagerInfo;
  } catch {
    return JSON.stringify(id);
  }
  let s = JSON.stringify(info.manager ?? '');
  if (info.subresource) s += ` with subresource ${JSON.stringify(info.subresource)}`;
  if (info.operation === 'Update') s += ` using ${info.apiVersion ?? ''}`;
  return s;
}

/** The 409 kube-apiserver answers for apply conflicts, with one FieldManagerConflict cause per field. */
export function conflictError(conflicts: readonly Conflict[]): ApiError {
  const causes: StatusCause[] = conflicts.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with ${printManager(c.manager)}`, field: pathString(c.path) }));
  let message: string;
  if (conflicts.length === 1) {
    message = `Apply failed with 1 conflict: conflict with ${printManager(conflicts[0].manager)}: ${pathString(conflicts[0].path)}`;
  } else {
    const byManager = new Map<string, FieldPath[]>();
    for (const c of conflicts) {
      const list = byManager.get(c.manager) ?? [];
      list.push(c.path);
      byManager.set(c.manager, list);
    }
    const lines: string[] = [];
    for (const id of [...byManager.keys()].sort(compareStrings)) {
      lines.push(`conflicts with ${printManager(id)}:`);
      for (const p of byManager.get(id)!) lines.push(`- ${pathString(p)}`);
    }
    message = `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
  }
  return new ApiError(409, 'Conflict', message, { causes });
}

// ---------------------------------------------------------------------------------------------
// The structured-merge layer (kube's merge.Updater)

const RESET_STATUS = frozen(FieldSet.of(fieldPath('status')));
const RESET_SPEC = frozen(FieldSet.of(fieldPath('spec')));
const RESET_NOTHING = frozen(new FieldSet());

/** The fields reset on this endpoint (only read: the common ones are shared). */
function resetFieldSet(opts: CommonOptions): FieldSet {
  if (opts.resetFields) return FieldSet.of(...opts.resetFields.map((p) => fieldPath(...p)));
  if (!opts.subresource && opts.statusSubresource) return RESET_STATUS;
  if (opts.subresource === 'status') return RESET_SPEC;
  return RESET_NOTHING;
}

function excludeFields(c: Comparison, ignored: FieldSet): Comparison {
  if (ignored.isEmpty()) return c;
  return { added: c.added.recursiveDifference(ignored), modified: c.modified.recursiveDifference(ignored), removed: c.removed.recursiveDifference(ignored) };
}

/**
 * Takes the fields changed from old to new away from every manager but `workflow` (or, unless
 * forced, reports them as conflicts); fields that disappeared leave every set. Empty managers go.
 */
function updateSets(
  node: TypeNode,
  oldObj: unknown,
  newObj: unknown,
  managers: Map<string, VersionedSet>,
  workflow: string,
  force: boolean,
  ignored: FieldSet,
  compared?: Comparison,
  versions?: Pick<CommonOptions, 'apiVersion' | 'otherVersion'>,
): { managers: Map<string, VersionedSet>; compare: Comparison; taken: Map<string, FieldSet> } {
  // (compared: compareObjects(node, oldObj, newObj), found by the caller already)
  const compare = excludeFields(compared ?? compareObjects(node, oldObj, newObj), ignored);
  const changed = compare.modified.union(compare.added);
  // A manager that wrote in another version is compared in that version, as structured-merge-diff does.
  const byVersion = new Map<string, { compare: Comparison; changed: FieldSet }>();
  const comparisonFor = (vs: VersionedSet): { compare: Comparison; changed: FieldSet } => {
    const other = versions?.otherVersion && vs.apiVersion !== versions.apiVersion ? versions.otherVersion(vs.apiVersion) : undefined;
    if (!other) return { compare, changed };
    let r = byVersion.get(vs.apiVersion);
    if (!r) {
      const c = excludeFields(compareObjects(other.node, other.convert(oldObj), other.convert(newObj)), ignored);
      byVersion.set(vs.apiVersion, (r = { compare: c, changed: c.modified.union(c.added) }));
    }
    return r;
  };
  const conflicts = new Map<string, FieldSet>();
  for (const [id, vs] of managers) {
    if (id === workflow) continue;
    const c = vs.set.intersection(comparisonFor(vs).changed);
    if (!c.isEmpty()) conflicts.set(id, c);
  }
  if (!force && conflicts.size > 0) throw new ApplyConflicts(conflictsFromManagers(conflicts));
  const out = new Map<string, VersionedSet>();
  for (const [id, vs] of managers) {
    let set = vs.set;
    if (id !== workflow) {
      const c = conflicts.get(id);
      if (c) set = set.difference(c);
      const removed = comparisonFor(vs).compare.removed;
      if (!removed.isEmpty()) set = set.difference(removed);
    }
    if (!set.isEmpty()) out.set(id, set === vs.set ? vs : { ...vs, set });
  }
  return { managers: out, compare, taken: conflicts };
}

/** The fields of a merged object (ensured), found while merging, and its containers' (undefined fields: not found). */
interface MergedFields {
  fields: FieldSet | undefined;
  memo: FieldsMemo;
  /** applyMergeWithFields' foreignElementsUnder. */
  foreignElementsUnder: readonly string[] | null;
  /** compareObjects(node, live, merged), found while merging (undefined: not found). */
  comparison: Comparison | undefined;
}

/** Removes what the applier owned before, dropped now and nobody (the applier included) owns. */
function prune(
  node: TypeNode,
  merged: unknown,
  managers: Map<string, VersionedSet>,
  applied: FieldSet,
  lastSet: VersionedSet | undefined,
  found: MergedFields | undefined,
  shortcuts: boolean,
): unknown {
  if (!lastSet || lastSet.set.isEmpty()) return merged;
  if (shortcuts && found?.fields && elementsKept(found.foreignElementsUnder, lastSet.set) && appliedKeeps(lastSet.set, applied, found.fields)) return merged;
  // merged is a private copy: removals share what they keep with it, and the fields of what they
  // keep are taken from the walk of merged (memo) instead of being walked again.
  const memo: FieldsMemo = found?.fields ? found.memo : new Map();
  const last = ensureNamedShared(node, lastSet.set);
  let pruned = removeFieldsShared(node, merged, last);
  const mergedSet = found?.fields ?? ensuredFieldsOf(node, merged, memo, true);
  // What removing that loses, except what some manager owns: E(a ∪ b) = E(a) ∪ E(b).
  let lost = mergedSet.difference(ensuredFieldsOf(node, pruned, memo));
  for (const vs of managers.values()) lost = differenceEnsured(lost, vs.set, node);
  // Nothing lost that nobody owns: removing nothing keeps everything, and so does the last step.
  if (lost.isEmpty()) return merged;
  // What nobody owns (defaulted fields, mostly) is lost, and the last step removes nothing of it.
  if (shortcuts && keepsLast(node, lost, mergedSet, last, undefined)) return merged;
  pruned = removeFieldsShared(node, merged, lost);
  // Only remove what the applier itself owned before.
  return removeFieldsShared(node, merged, mergedSet.difference(ensuredFieldsOf(node, pruned, memo)).intersection(last));
}

/**
 * Whether prune keeps merged as it is, decided from the applier's sets alone: true when every
 * path of its last set (`last`, one level) that merged has (`merged`: mergedSet's level) is in
 * its new set (`applied`) and, where merged holds more below it, keeps a field of the new set
 * below it (keepsSome) — with elementsKept (checked by the caller), for key fields.
 * Then what the general path computes ends with merged: `lost` has none of those paths, as it has
 * none of E(applied) (an entry of a set walked from a configuration, as `applied` is, with
 * something below it is a member or a declared struct field: a member of E(applied)), none of
 * what is below them (same reason), loses no key field but a default that names its element
 * alike (elementsKept), and leaves each of them a field below it: lost is empty, or
 * keepsLast(lost) holds (its conditions one by one). Walks the last set, not merged.
 */
function appliedKeeps(last: FieldSet, applied: FieldSet, merged: FieldSet): boolean {
  const le = last._e;
  for (let i = 0; i < le.length; i++) {
    const e = le[i];
    const me = merged._get(e.name);
    if (me === undefined) continue; // not in merged: nothing there to lose
    const ae = applied._get(e.name);
    if (ae === undefined) return false;
    if (me.sub === undefined) continue;
    if (ae.sub === undefined || !keepsSome(me.sub, ae.sub)) return false;
    if (e.sub !== undefined && !appliedKeeps(e.sub, ae.sub, me.sub)) return false;
  }
  return true;
}

/**
 * Whether the list-map elements that are not the configuration's (applyMergeWithFields'
 * foreignElementsUnder) are under top-level fields the last set has nothing of: what prune
 * removes is all under those the last set has (or is one).
 */
function elementsKept(foreignUnder: readonly string[] | null, last: FieldSet): boolean {
  if (foreignUnder === null) return false;
  for (let i = 0; i < foreignUnder.length; i++) if (last._get('f:' + foreignUnder[i]) !== undefined) return false;
  return true;
}

/** Whether a level of mergedSet has a field of applied (its level at the same path) that nothing removed from merged below it can take away. */
function keepsSome(merged: FieldSet, applied: FieldSet): boolean {
  const me = merged._e;
  for (let i = 0; i < me.length; i++) {
    const e = me[i];
    const ae = applied._get(e.name);
    if (ae === undefined) continue;
    if (e.sub === undefined) return true;
    if (ae.sub !== undefined && keepsSome(e.sub, ae.sub)) return true;
  }
  return false;
}

/**
 * Whether prune's last step removes nothing — (mergedSet − E(merged − lost)) ∩ last is empty —
 * decided from the sets (false: perhaps something; the general path decides). Removing lost from
 * merged takes away the fields of lost, those below them, and perhaps those above them (a
 * list-map element left without fields; a map or struct left empty stays, as null); nothing
 * else. So the step removes nothing when last has none of lost, nothing below it, and every path
 * above lost that last has keeps a field below it that lost does not take (survives: needed for
 * elements only, and safe for the rest). Lost key fields of list-map
 * elements (an element renamed, or unnamable) go the general way. Levels: lost, mergedSet and last
 * at one path (the path's element `at`).
 */
function keepsLast(node: TypeNode | undefined, lost: FieldSet, merged: FieldSet, last: FieldSet | undefined, at: PathElement | undefined): boolean {
  for (const e of lost._e) {
    if (at !== undefined && 'key' in at && 'field' in e.pe) {
      // A key field the element names itself with: harmless only when its default names it the same.
      const field = e.pe.field;
      for (const [k, v] of at.key) if (k === field && (!e.member || e.sub !== undefined || keyFieldDefault(node, k) !== v)) return false;
    }
    const le = last?._get(e.name);
    const me = merged._get(e.name);
    if (me === undefined) return false; // (lost ⊆ mergedSet: never)
    if (e.member) {
      // Taken with all it holds: last must have nothing there.
      if (le !== undefined) return false;
      continue;
    }
    if (e.sub === undefined || me.sub === undefined) return false; // (invariants: never)
    if (le?.member && !survives(me.sub, e.sub)) return false;
    if (!keepsLast(nodeBelow(node, e.pe), e.sub, me.sub, le?.sub, e.pe)) return false;
  }
  return true;
}

/** Whether a level of mergedSet keeps a field when lost (its level at the same path) is removed. */
function survives(merged: FieldSet, lost: FieldSet): boolean {
  for (const me of merged._e) {
    const le = lost._get(me.name);
    if (le === undefined) return true;
    if (!le.member && le.sub !== undefined && me.sub !== undefined && survives(me.sub, le.sub)) return true;
  }
  return false;
}

/**
 * A manager's set after the schema made a granular field atomic: owning part of the field becomes
 * owning the field. The other way round nothing changes (structured-merge-diff treats such a field
 * as if it had always been granular: its owner owns the field itself, nothing below it).
 */
function reconcileWithSchema(node: TypeNode, managers: Map<string, VersionedSet>, opts: CommonOptions): Map<string, VersionedSet> {
  const out = new Map<string, VersionedSet>();
  for (const [id, vs] of managers) {
    // Each manager's set against the schema of the version it wrote in.
    const own = opts.otherVersion && vs.apiVersion !== opts.apiVersion ? (opts.otherVersion(vs.apiVersion)?.node ?? node) : node;
    const atomic = schemaMismatches(own, vs.set);
    if (atomic === NO_MISMATCHES) {
      out.set(id, vs);
      continue;
    }
    const fields = FieldSet.of(...atomic);
    out.set(id, { ...vs, set: vs.set.recursiveDifference(fields).union(fields) });
  }
  return out;
}

function stripManagers(managers: Map<string, VersionedSet>, id: string): void {
  const vs = managers.get(id);
  if (!vs) return;
  const set = vs.set.difference(STRIPPED_FIELDS);
  if (set.isEmpty()) managers.delete(id);
  else managers.set(id, { ...vs, set });
}

/** Folds the oldest Update entries into per-version "ancient-changes" entries beyond the cap. */
function capUpdateManagers(managed: Managed, max = MAX_UPDATE_MANAGERS): void {
  const updaters = [...managed.fields].filter(([, vs]) => !vs.applied).map(([id]) => id);
  if (updaters.length <= max) return;
  updaters.sort((a, b) => {
    const d = seconds(managed.times.get(a)) - seconds(managed.times.get(b));
    return d !== 0 ? d : compareStrings(a, b);
  });
  const firstOfVersion = new Map<string, string>();
  let length = updaters.length;
  for (let i = 0; i < updaters.length && length > max; i++) {
    const id = updaters[i];
    const vs = managed.fields.get(id);
    if (!vs) continue;
    const time = managed.times.get(id);
    const bucket = managerIdentifier({ manager: ANCIENT_CHANGES_MANAGER, operation: 'Update', apiVersion: vs.apiVersion });
    const first = firstOfVersion.get(vs.apiVersion);
    if (first === undefined) {
      firstOfVersion.set(vs.apiVersion, id);
      continue;
    }
    if (!managed.fields.has(bucket)) {
      const s = managed.fields.get(first)!;
      managed.fields.delete(first);
      managed.times.delete(first);
      managed.fields.set(bucket, s);
    }
    managed.fields.set(bucket, { set: vs.set.union(managed.fields.get(bucket)!.set), apiVersion: vs.apiVersion, applied: false });
    managed.fields.delete(id);
    managed.times.delete(id);
    length--;
    managed.times.set(bucket, time);
  }
}

/** A non-apply write through kube's layers: current-operation diff, strip, merge into the manager's entry, cap. */
function recordUpdate(node: TypeNode, liveObj: unknown, newObj: unknown, managed: Managed, opts: CommonOptions, ignored: FieldSet, shortcuts: boolean): Managed {
  let managers = reconcileWithSchema(node, managed.fields, opts);
  const before = managers;
  const res = updateSets(node, liveObj, newObj, managers, CURRENT_OPERATION, true, ignored, undefined, opts);
  managers = res.managers;
  const prev = managers.get(CURRENT_OPERATION)?.set ?? new FieldSet();
  // Removed first, then modified and added (structured-merge-diff's order since it handles repeated
  // list elements): an element that becomes repeated is both removed (as the single element it
  // was) and added (as the repeated one), and the writer owns it.
  const own = prev.difference(res.compare.removed).union(res.compare.modified).union(res.compare.added).recursiveDifference(ignored);
  if (own.isEmpty()) managers.delete(CURRENT_OPERATION);
  else managers.set(CURRENT_OPERATION, { set: own, apiVersion: opts.apiVersion, applied: false });
  stripManagers(managers, CURRENT_OPERATION);

  const times = new Map(managed.times);
  const current = managers.get(CURRENT_OPERATION);
  if (current) {
    managers.delete(CURRENT_OPERATION);
    const id = managerIdentifier({ manager: opts.manager, operation: 'Update', apiVersion: opts.apiVersion, subresource: opts.subresource });
    const previous = managers.get(id);
    let set = current.set;
    if (previous) {
      // The writer changing only fields it owned already (a PUT by their usual writer): updateSets
      // took them from its set (taken) and they come back, nothing else was removed — its set as
      // it was (the same set: encodeManagedFields then finds it among the recent ones at once).
      const had = before.get(id)?.set;
      const taken = res.taken.get(id);
      if (shortcuts && had !== undefined && res.compare.removed.isEmpty() && isSubset(set, had) && (taken === undefined || isSubset(taken, set))) set = had;
      else set = set.union(previous.set);
    }
    managers.set(id, { set, apiVersion: current.apiVersion, applied: false });
    times.set(id, opts.now);
  }
  for (const id of times.keys()) if (!managers.has(id)) times.delete(id);
  const result: Managed = { fields: managers, times };
  capUpdateManagers(result);
  return result;
}

function applyOnce(
  node: TypeNode,
  liveObj: unknown,
  config: unknown,
  configFields: FieldSet,
  managed: Managed,
  opts: ApplyOptions,
  ignored: FieldSet,
  force: boolean,
  shortcuts: boolean,
): { object: unknown; managed: Managed } {
  const id = managerIdentifier({ manager: opts.manager, operation: 'Apply', subresource: opts.subresource });
  let managers = reconcileWithSchema(node, managed.fields, opts);
  const lastSet = managers.get(id);
  // Pruning needs the fields of the merged object: found while merging.
  const found = lastSet !== undefined && !lastSet.set.isEmpty();
  let merged: unknown;
  let mergedFields: MergedFields | undefined;
  try {
    if (found) {
      const m = applyMergeWithFields(node, liveObj, config);
      merged = m.merged;
      mergedFields = m;
    } else merged = applyMerge(node, liveObj, config);
  } catch (e) {
    if (e instanceof SchemaError) throw new ApiError(500, '', `failed to merge config: ${e.message}`);
    throw e;
  }
  managers = new Map(managers);
  const applied = configFields.recursiveDifference(ignored);
  managers.set(id, { set: applied, apiVersion: opts.apiVersion, applied: true });
  const pruned = prune(node, merged, managers, applied, lastSet, mergedFields, shortcuts);
  // What changed from the live object to the merged one was found while merging (kept when nothing was pruned).
  const compared = shortcuts && pruned === merged ? mergedFields?.comparison : undefined;
  managers = updateSets(node, liveObj, pruned, managers, id, force, ignored, compared, opts).managers;
  stripManagers(managers, id);
  const times = new Map(managed.times);
  for (const k of times.keys()) if (!managers.has(k)) times.delete(k);
  const changed = !jsonEqual(liveObj, pruned);
  if (changed) times.set(id, opts.now);
  return { object: changed ? pruned : cloneJSON(liveObj), managed: { fields: managers, times } };
}

// ---------------------------------------------------------------------------------------------
// Client-side apply upgrade

/**
 * The fields kubectl's first server-side apply may take over without a conflict: those its
 * last-applied-configuration annotation sets to the values the object still has.
 */
function allowedConflictsFromLastApplied(node: TypeNode, liveObj: unknown, apiVersion: string): FieldSet | undefined {
  const annotations = (liveObj as any)?.metadata?.annotations;
  const lastApplied = isPlainObject(annotations) ? annotations[LAST_APPLIED_ANNOTATION] : undefined;
  if (typeof lastApplied !== 'string' || lastApplied === '') return undefined;
  let obj: unknown;
  try {
    obj = JSON.parse(lastApplied);
  } catch {
    return undefined;
  }
  if (!isPlainObject(obj) || obj.apiVersion !== apiVersion) return undefined;
  try {
    const set = fieldsOf(node, obj);
    const cmp = compareObjects(node, obj, liveObj);
    return set.difference(cmp.modified).difference(cmp.added).difference(cmp.removed);
  } catch {
    return undefined;
  }
}

/** The annotation kubectl keeps for client-side apply: the configuration as Go's JSON encoder writes it. */
function buildLastApplied(config: Record<string, unknown>): string {
  const copy = structuredClone(config);
  const meta = copy.metadata;
  if (isPlainObject(meta) && isPlainObject(meta.annotations)) delete meta.annotations[LAST_APPLIED_ANNOTATION];
  return goJsonMarshal(copy) + '\n';
}

function setLastApplied(obj: any, value: string): void {
  const annotations: Record<string, string> = { ...(obj.metadata.annotations ?? {}) };
  annotations[LAST_APPLIED_ANNOTATION] = value;
  let size = 0;
  for (const [k, v] of Object.entries(annotations)) size += Buffer.byteLength(k) + Buffer.byteLength(String(v));
  if (size > TOTAL_ANNOTATION_SIZE_LIMIT) delete annotations[LAST_APPLIED_ANNOTATION];
  obj.metadata.annotations = annotations;
}

/**
 * kubectl's client-side migration (client-go csaupgrade): the Update entries of the client-side
 * apply managers are merged into the server-side manager's Apply entry (converting the most recent
 * one when that entry does not exist yet), so a later apply does not leave stale owners behind.
 */
export function upgradeManagedFields(entries: readonly ManagedFieldsEntry[], csaManagers: readonly string[], ssaManager: string, subresource = ''): ManagedFieldsEntry[] {
  let current = entries.map((e) => ({ ...e }));
  const sub = (e: ManagedFieldsEntry): string => e.subresource ?? '';
  for (const csa of csaManagers) {
    const isCsa = (e: ManagedFieldsEntry): boolean => e.manager === csa && e.operation === 'Update' && sub(e) === subresource;
    let target = current.findIndex((e) => e.manager === ssaManager && e.operation === 'Apply' && sub(e) === subresource);
    if (target < 0) {
      target = current.findIndex(isCsa);
      if (target < 0) continue;
      current[target] = { ...current[target], operation: 'Apply', manager: ssaManager };
    }
    const t = current[target];
    const source = current.find((e) => isCsa(e) && e.apiVersion === t.apiVersion);
    if (source) current[target] = { ...t, fieldsV1: FieldSet.fromFieldsV1(t.fieldsV1).union(FieldSet.fromFieldsV1(source.fieldsV1)).toFieldsV1() };
    current = current.filter((e) => !isCsa(e));
  }
  return current;
}

// ---------------------------------------------------------------------------------------------
// Entry points

/** The object without metadata.managedFields; a shallow copy (the engine never modifies its inputs). */
function withoutManagedFields(obj: unknown): any {
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
    throw new ApiError(500, '', `failed to create typed patch object (${str(meta.namespace)}/${str(meta.name)}; ${gvk}): no corresponding type for ${gvk}`);
  }
}

function objectName(config: any): string {
  const meta = isPlainObject(config?.metadata) ? config.metadata : {};
  const av = typeof config?.apiVersion === 'string' ? config.apiVersion : '';
  const gv = av.includes('/') ? av : `/${av}`;
  return `${str(meta.namespace)}/${str(meta.name)}; ${gv}, Kind=${str(config?.kind)}`;
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
    managed = decodeEntries((live as any)?.metadata?.managedFields, (uid = keptUid(uidOf(live))));
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
      if (typeof la === 'string' && la !== '') setLastApplied(object, buildLastApplied(config));
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
  const liveMF = (live as any)?.metadata?.managedFields;
  // A create's sets are not kept, nor those of an object written only once since (keptUid).
  const uid = live === undefined ? undefined : keptUid(uidOf(live) ?? uidOf(next));
  let managed: Managed;
  if (opts.subresource) managed = decodeOrEmpty(liveMF, uid);
  else {
    const newMF = (next as any)?.metadata?.managedFields;
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

// ---------------------------------------------------------------------------------------------
// The zero value of a kind

/** Go shape of a struct field, as schemas/protobuf.json records it (only `ptr` matters here). */
export type FieldShapeLookup = (definition: string, field: string) => { ptr?: boolean } | undefined;

const NULL_STRUCTS = new Set(['io.k8s.apimachinery.pkg.apis.meta.v1.Time', 'io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime']);

/**
 * The object kube compares a create with: the kind's Go zero value as JSON — non-pointer structs
 * present (empty), required pointers, lists and maps null, required scalars at their zero value,
 * optional ones absent. Pass it as `emptyObject` so created objects get kube's managedFields
 * (e.g. `f:spec` without `.`, `f:labels` with it).
 */
export function zeroObject(node: TypeNode, shape: FieldShapeLookup): Record<string, unknown> {
  return zeroStruct(node, shape, 0);
}

function zeroStruct(node: TypeNode, shape: FieldShapeLookup, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (node.type !== 'object' || !node.properties || depth > 20) return out;
  const required = new Set(node.required ?? []);
  for (const [name, child] of Object.entries(node.properties)) {
    // A field the shape table does not know is taken for a pointer (absent).
    const info = node.definition ? shape(node.definition, name) : undefined;
    const ptr = info ? info.ptr === true : true;
    const req = required.has(name);
    if (child.definition && NULL_STRUCTS.has(child.definition)) {
      if (!ptr || req) out[name] = null;
      continue;
    }
    if (child.type === 'object' && child.definition) {
      if (!ptr) out[name] = zeroStruct(child, shape, depth + 1);
      else if (req) out[name] = null;
      continue;
    }
    if (!req) continue;
    if (ptr || child.type === 'array' || child.type === 'map' || child.type === 'object' || child.type === 'any') out[name] = null;
    else if (child.format === 'quantity') out[name] = '0';
    else if (child.type === 'string') out[name] = '';
    else if (child.type === 'boolean') out[name] = false;
    else out[name] = 0;
  }
  return out;
}
