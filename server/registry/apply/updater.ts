// The structured-merge layer (structured-merge-diff's merge.Updater, with kube's layers around it):
// an update takes the fields it changed from every other manager; an apply merges, prunes what
// its applier dropped, and reports (or, forced, takes) the fields others own. Also kube's
// stripMeta (bookkeeping fields nobody owns) and capManagers (the ten-entry cap on Updates).
import { ApiError } from '../../errors.ts';
import { compareStrings } from '../../go/strings.ts';
import type { TypeNode } from '../../schema/types.ts';
import { cloneJSON, deepEqual } from '../../util/json.ts';
import type { PathElement } from './fieldpath/element.ts';
import { fieldPath } from './fieldpath/path.ts';
import { FieldSet, frozen, isSubset } from './fieldpath/set.ts';
import { SchemaError } from './typed/atom.ts';
import { compareObjects, type Comparison } from './typed/compare.ts';
import { keyFieldDefault } from './typed/list-items.ts';
import { applyMerge, applyMergeWithFields } from './typed/merge.ts';
import { NO_MISMATCHES, schemaMismatches } from './typed/reconcile-schema.ts';
import { removeFieldsShared } from './typed/remove.ts';
import { differenceEnsured, ensuredFieldsOf, ensureNamedShared, type FieldsMemo, nodeBelow } from './typed/tofieldset.ts';
import { ApplyConflicts, conflictsFromManagers } from './conflicts.ts';
import { type Managed, managerIdentifier, seconds, type VersionedSet } from './managed-fields.ts';

/** Update entries kept before the oldest are folded together (kube's DefaultMaxUpdateManagers). */
export const MAX_UPDATE_MANAGERS = 10;
export const ANCIENT_CHANGES_MANAGER = 'ancient-changes';
const CURRENT_OPERATION = 'current-operation';

/** Fields no manager ever owns (kube's stripMetaManager; an exact-path difference). */
export const STRIPPED_FIELDS = FieldSet.of(
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

const RESET_STATUS = frozen(FieldSet.of(fieldPath('status')));
const RESET_SPEC = frozen(FieldSet.of(fieldPath('spec')));
const RESET_NOTHING = frozen(new FieldSet());

/** The fields reset on this endpoint (only read: the common ones are shared). */
export function resetFieldSet(opts: CommonOptions): FieldSet {
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
export function recordUpdate(node: TypeNode, liveObj: unknown, newObj: unknown, managed: Managed, opts: CommonOptions, ignored: FieldSet, shortcuts: boolean): Managed {
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

export function applyOnce(
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
  const changed = !deepEqual(liveObj, pruned);
  if (changed) times.set(id, opts.now);
  return { object: changed ? pruned : cloneJSON(liveObj), managed: { fields: managers, times } };
}
