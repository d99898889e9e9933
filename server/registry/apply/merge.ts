// Schema-driven merge, comparison and removal of objects, as Server-Side Apply performs them.
//
// Structs and granular maps merge key by key; scalars, atomic lists and atomic maps/structs are
// replaced whole by the configuration's value; list-maps merge element by element (matched by their
// key fields) and sets by value. Lists without x-kubernetes-list-type follow their patch strategy
// (merge with a key → list-map, merge without → set), else they are atomic. Without a schema ('any',
// e.g. preserve-unknown-fields) maps are granular and lists atomic.
import type { TypeNode } from '../../schema/types.ts';
import {
  type Atom,
  type Entry,
  type FieldInfo,
  type FieldsMemo,
  FieldSet,
  type IndexedItem,
  type PathElement,
  PathStack,
  SetBuilder,
  fieldNamed,
  indexItems,
  jsonEqual,
  level,
  listItem,
  mapChildNode,
  orderedFields,
  resolveAtom,
  rootLevel,
  sortEntries,
  type Walk,
  walkFieldsBelow,
  walkedSelf,
  declaredField,
  nullOrEmptyMap,
  ensuringWalk,
} from './fieldset.ts';
import { cloneJSON, isPlainObject } from '../../util/json.ts';

export { cloneJSON };

const clone = cloneJSON;
function share<T>(v: T): T {
  return v;
}

const ownProperty = Object.prototype.hasOwnProperty;
function hasOwn(o: object, k: string): boolean {
  return ownProperty.call(o, k);
}
function emptyMap(m: Record<string, unknown> | undefined): boolean {
  if (m === undefined) return true;
  for (const k in m) if (hasOwn(m, k)) return false;
  return true;
}
function emptyList(l: unknown[] | undefined): boolean {
  return l === undefined || l.length === 0;
}
function asMap(v: unknown): Record<string, unknown> | undefined {
  return isPlainObject(v) ? v : undefined;
}
function asList(v: unknown): unknown[] | undefined {
  return Array.isArray(v) ? v : undefined;
}

// ---------------------------------------------------------------------------------------------
// Merge

/**
 * Merges an apply configuration into the live object (undefined when it does not exist yet).
 * Values are copied; neither input is modified. Throws SchemaError for a configuration whose list
 * elements cannot be identified (missing key fields, repeated keys).
 */
export function applyMerge(node: TypeNode, live: unknown, config: unknown): any {
  if (live === undefined && config === undefined) return undefined;
  return mergeValue(node, live, config, [], undefined);
}

/**
 * applyMerge, finding on the way what ensuredFieldsOf(node, merged, memo, true) would: the fields
 * of the result (ensureNamedFieldsAreMembers applied) and a memo of its containers. `fields` is
 * undefined when the result is one the walk would fail on (or find repeated list elements in):
 * walk it then.
 */
export function applyMergeWithFields(
  node: TypeNode,
  live: unknown,
  config: unknown,
): { merged: any; fields: FieldSet | undefined; memo: FieldsMemo; foreignElementsUnder: readonly string[] | null; comparison: Comparison | undefined } {
  const memo: FieldsMemo = new Map();
  if (live === undefined && config === undefined) return { merged: undefined, fields: undefined, memo, foreignElementsUnder: null, comparison: undefined };
  const f: Fields = { w: ensuringWalk(memo), failed: false, foreignElementsUnder: [], cmp: live !== undefined && config !== undefined, stack: undefined };
  const merged = mergeValue(node, live, config, [], f);
  if (merged === undefined || f.failed) return { merged, fields: undefined, memo: new Map(), foreignElementsUnder: null, comparison: undefined };
  const fields = rootLevel(mergedSub);
  const comparison = f.cmp && !modSelf && !addSelf ? { added: rootLevel(addSub), modified: rootLevel(modSub), removed: new FieldSet() } : undefined;
  return { merged, fields, memo, foreignElementsUnder: f.foreignElementsUnder, comparison };
}

/** Where a merge is, for error messages: path elements, and field names standing for theirs. */
type MergePath = (PathElement | string)[];

/** State of a merge that also finds the fields of its result. */
interface Fields {
  w: Walk;
  failed: boolean;
  /**
   * The top-level fields (keys of the object) with list-map elements below them that are not
   * elementsFromConfig's (null: anywhere). Elsewhere every list-map element of the result is one
   * the configuration names (once), and each of its key fields is there as the configuration sets
   * it (a scalar), or else absent from the configuration and absent or a scalar in the live
   * element (which then holds the key's default: the two are named alike). What prune's shortcut
   * needs to know of key fields nobody may own (status conditions, say, are no applier's).
   */
  foreignElementsUnder: string[] | null;
  /**
   * Also find compareObjects(node, live, merged) on the way (modSub... below): true until a case
   * that walk would see otherwise turns up (then compareObjects decides).
   */
  cmp: boolean;
  /** oneSided's stack (only read for error messages, which nobody sees here). */
  stack: PathStack | undefined;
}

/**
 * With Fields.cmp: what compareValue(node, lhs, merged) finds at and below the path of the value
 * mergeValue returned: modified (the path itself, fields below) and added. Removed: never (a merge
 * keeps all the live object has, else cmp is given up).
 */
let modSub: FieldSet | undefined;
let modSelf = false;
let addSub: FieldSet | undefined;
let addSelf = false;

function unchanged(): void {
  modSub = undefined;
  modSelf = false;
  addSub = undefined;
  addSelf = false;
}

/** compareValue's leaf() for two values both there. */
function leafChanged(lhs: unknown, rhs: unknown): void {
  unchanged();
  modSelf = !jsonEqual(lhs, rhs);
}

/** The changes below a map or list, from its entries' (undefined: none). */
function changedBelow(mod: Entry[] | undefined, add: Entry[] | undefined): void {
  modSub = mod === undefined ? undefined : level(mod, false);
  addSub = add === undefined ? undefined : level(add, false);
  modSelf = false;
  addSelf = false;
}

/** Adds what was found at an entry of a map or list to its entries; returns them. */
function changedEntry(out: Entry[] | undefined, self: boolean, sub: FieldSet | undefined, name: string, pe: PathElement): Entry[] | undefined {
  if (!self && sub === undefined) return out;
  (out ??= []).push({ name, pe, member: self, sub });
  return out;
}

/** With Fields: what walkFields finds below the value mergeValue returned, and whether its path is a field itself. */
let mergedSub: FieldSet | undefined;
let mergedSelf = false;

/** The fields of a value the merge copied whole. */
function leafFields(node: TypeNode, v: unknown, f: Fields | undefined): void {
  if (f === undefined || f.failed) return;
  try {
    mergedSub = walkFieldsBelow(node, v, f.w, true);
    mergedSelf = walkedSelf();
  } catch {
    f.failed = true;
  }
}

function mergeValue(node: TypeNode, lhs: unknown, rhs: unknown, path: MergePath, f: Fields | undefined): unknown {
  if (f === undefined || !f.cmp) return mergeTyped(node, lhs, rhs, path, f);
  // Values on one side only, and untyped values changing shape, are compared without the merge's help.
  if (lhs === undefined || rhs === undefined || (node.type === 'any' && untypedShapeChange(node, lhs, rhs))) {
    f.cmp = false;
    const v = mergeTyped(node, lhs, rhs, path, f);
    // (a merge only gives up on cmp below values both sides have: no need to look again)
    f.cmp = true;
    unchanged();
    if (v === undefined) {
      // The live value gone: compareObjects decides (a config value that gives nothing: nothing to compare).
      if (lhs !== undefined) f.cmp = false;
    } else if (lhs === undefined) {
      addSelf = true;
      addSub = oneSided(node, v, (f.stack ??= new PathStack()));
    } else if (rhs !== undefined) modSelf = true; // (untyped, a map for a list...: never equal)
    return v;
  }
  const v = mergeTyped(node, lhs, rhs, path, f);
  if (v === undefined) f.cmp = false;
  return v;
}

/**
 * Whether two untyped values (both there) differ in shape: a map for a list, a scalar for a map...
 * — except null against a map, which structured-merge-diff takes for an empty map (a null value
 * fits any shape, and a map is tried first): merged and compared as two maps.
 */
function untypedShapeChange(node: TypeNode, lhs: unknown, rhs: unknown): boolean {
  const kl = resolveAtom(node, lhs).kind;
  const kr = resolveAtom(node, rhs).kind;
  if (kl === kr) return false;
  return !((lhs === null && kr === 'map') || (rhs === null && kl === 'map'));
}

/** mergeValue itself; with Fields.cmp (both values there), it also leaves what changed in modSub... */
function mergeTyped(node: TypeNode, lhs: unknown, rhs: unknown, path: MergePath, f: Fields | undefined): unknown {
  let al = lhs === undefined ? undefined : resolveAtom(node, lhs);
  let ar = rhs === undefined ? undefined : al !== undefined && node.type !== 'any' ? al : resolveAtom(node, rhs); // (a typed node's atom does not depend on the value)
  if (al && ar && al.kind !== ar.kind) {
    // (untyped values only) null goes with a map; any other change of shape: the config's value wins
    if (rhs === null && al.kind === 'map') ar = al;
    else if (lhs === null && ar.kind === 'map') al = ar;
    else lhs = undefined;
  }
  const atom = (ar ?? al)!;

  const cmp = f !== undefined && f.cmp;
  if (atom.kind === 'scalar') {
    const v = atomValue(rhs !== undefined ? rhs : lhs, f);
    if (cmp) leafChanged(lhs, rhs);
    return v;
  }

  if (atom.kind === 'map') {
    const lm = asMap(lhs);
    const rm = asMap(rhs);
    if (atom.atomic || (emptyMap(lm) && emptyMap(rm))) {
      const v = atom.atomic ? atomValue(rhs !== undefined ? rhs : lhs, f) : leafValue(node, rhs !== undefined ? rhs : lhs, f);
      if (cmp) leafChanged(lhs, rhs);
      return v;
    }
    if ((lhs !== undefined && lhs !== null && !lm) || (rhs !== undefined && rhs !== null && !rm)) {
      if (cmp) f!.cmp = false; // (compareObjects walks one side as a map)
      if (f !== undefined) foreignElements(path, f); // (a value taken whole, elements unchecked)
      return leafValue(node, rhs !== undefined ? rhs : lhs, f);
    }
    const out: Record<string, unknown> = {};
    let any = false;
    const entries: Entry[] | undefined = f !== undefined ? [] : undefined;
    let mod: Entry[] | undefined;
    let add: Entry[] | undefined;
    const elem = atom.elem;
    if (lm) {
      for (const k of Object.keys(lm)) {
        const r = rm && hasOwn(rm, k) ? rm[k] : undefined;
        const declared = declaredField(atom, k);
        path.push(k);
        const v = mergeValue(declared ?? elem, lm[k], r, path, f);
        path.pop();
        if (cmp && (modSelf || modSub !== undefined || addSelf || addSub !== undefined)) {
          const n = fieldNamed(k);
          mod = changedEntry(mod, modSelf, modSub, n.name, n.pe);
          add = changedEntry(add, addSelf, addSub, n.name, n.pe);
        }
        if (v !== undefined) {
          out[k] = v;
          any = true;
          if (entries !== undefined) mapEntry(declared !== undefined, k, entries, v);
        }
      }
    }
    if (rm) {
      for (const k of Object.keys(rm)) {
        if (lm && hasOwn(lm, k)) continue;
        const declared = declaredField(atom, k);
        path.push(k);
        const v = mergeValue(declared ?? elem, undefined, rm[k], path, f);
        path.pop();
        if (cmp && (addSelf || addSub !== undefined)) {
          const n = fieldNamed(k);
          add = changedEntry(add, addSelf, addSub, n.name, n.pe);
        }
        if (v !== undefined) {
          out[k] = v;
          any = true;
          if (entries !== undefined) mapEntry(declared !== undefined, k, entries, v);
        }
      }
    }
    if (cmp) changedBelow(mod, add);
    if (!any) return undefined;
    if (entries !== undefined) containerFields(node, out, entries, f!);
    return out;
  }

  const ll = asList(lhs);
  const rl = asList(rhs);
  if (atom.relationship === 'atomic' || (emptyList(ll) && emptyList(rl))) {
    const v = atom.relationship === 'atomic' ? atomValue(rhs !== undefined ? rhs : lhs, f) : leafValue(node, rhs !== undefined ? rhs : lhs, f);
    if (cmp) leafChanged(lhs, rhs);
    return v;
  }
  if ((lhs !== undefined && lhs !== null && !ll) || (rhs !== undefined && rhs !== null && !rl)) {
    if (cmp) f!.cmp = false;
    if (f !== undefined) foreignElements(path, f);
    return leafValue(node, rhs !== undefined ? rhs : lhs, f);
  }
  return mergeList(node, atom, ll ?? [], rl ?? [], path, f);
}

/** A copy of the value (which the merge takes whole), and its fields. */
function leafValue(node: TypeNode, v: unknown, f: Fields | undefined): unknown {
  const out = clone(v);
  if (f !== undefined && out !== undefined) leafFields(node, out, f);
  return out;
}

/**
 * leafValue of a scalar, atomic map or atomic list (by the atom the merge resolved, which is the
 * one the walk resolves for the copy): one field with nothing below, without walking it.
 */
function atomValue(v: unknown, f: Fields | undefined): unknown {
  const out = clone(v);
  if (f !== undefined && !f.failed && out !== undefined) {
    mergedSub = undefined;
    mergedSelf = true;
  }
  return out;
}

/** The entry of a merged map key, from the fields its value was found to have. */
function mapEntry(declared: boolean, k: string, entries: Entry[], v: unknown): void {
  const sub = mergedSub;
  const member = !declared || mergedSelf || sub !== undefined || nullOrEmptyMap(v);
  if (member || sub !== undefined) {
    const n = fieldNamed(k);
    entries.push({ name: n.name, pe: n.pe, member, sub });
  }
}

/** The fields of a merged map or list, from its entries; remembered for later walks. */
function containerFields(node: TypeNode, value: object, entries: Entry[], f: Fields): void {
  if (f.failed) return;
  const sub = entries.length > 0 ? level(entries, false) : undefined;
  f.w.memo!.set(value, { node, set: sub });
  mergedSub = sub;
  mergedSelf = false;
}

/**
 * Element order follows structured-merge-diff: elements only in the live list keep their place,
 * elements in the configuration come in the configuration's order, and a new element is placed
 * before the next element the two lists share.
 */
function mergeList(node: TypeNode, atom: Atom & { kind: 'list' }, lhs: unknown[], rhs: unknown[], path: MergePath, f: Fields | undefined): unknown[] | undefined {
  const r = indexItems(atom, rhs, path, true);
  const l = indexItems(atom, lhs, path, false);
  const rItems = new Names(r);
  const lItems = new Names(l);
  if (f !== undefined && f.foreignElementsUnder !== null && atom.relationship === 'map' && !elementsFromConfig(atom, r, l, rItems, lItems)) foreignElements(path, f);
  const shared: string[] = [];
  for (const e of r) if (lItems.count(e.name) > 0) shared.push(e.name);
  let si = 0;
  let nextShared: string | undefined = shared[0];
  const merged = new Names([]);
  const out: unknown[] = [];
  const cmp = f !== undefined && f.cmp;
  const m: MergedItems = { out, entries: f !== undefined ? [] : undefined, cmp, mod: undefined, add: undefined };
  // compareObjects groups repeated live elements (a configuration's are an error): it decides then.
  if (cmp) for (let i = 0; i < l.length && f.cmp; i++) if (lItems.count(l[i].name) > 1) f.cmp = m.cmp = false;

  let li = 0;
  let ri = 0;
  while (li < l.length || ri < r.length) {
    if (li < l.length && ri < r.length) {
      const le = l[li];
      if (le.name === r[ri].name && merged.count(le.name) === 0) {
        merged.add(le.name);
        mergeItem(atom, le, lItems.single(le.name), r[ri].item, path, m, f);
        li++;
        ri++;
        nextShared = shared[++si];
        continue;
      }
      if (rItems.count(le.name) > 0 && nextShared !== undefined && nextShared !== le.name) {
        li++; // a shared element, merged when the configuration reaches it
        continue;
      }
    }
    if (li < l.length) {
      const le = l[li];
      if (rItems.count(le.name) === 0) {
        mergeItem(atom, le, le.item, undefined, path, m, f);
        li++;
        continue;
      }
      if (merged.count(le.name) > 0) {
        li++;
        continue;
      }
    }
    if (ri < r.length) {
      const re = r[ri];
      merged.add(re.name);
      mergeItem(atom, re, lItems.single(re.name), re.item, path, m, f);
      ri++;
      if (nextShared === re.name) nextShared = shared[++si];
      continue;
    }
    li++; // only reachable with inconsistent input; never loop forever
  }
  if (m.cmp && f!.cmp) changedBelow(m.mod, m.add);
  if (out.length === 0) return undefined;
  if (f !== undefined && !f.failed) listFields(node, atom, out, m.entries!, f);
  return out;
}

/** Notes list-map elements that are not elementsFromConfig's at path (in Fields.foreignElementsUnder). */
function foreignElements(path: MergePath, f: Fields): void {
  const under = f.foreignElementsUnder;
  if (under === null) return;
  const top = path.length > 0 && typeof path[0] === 'string' ? path[0] : undefined;
  if (top === undefined) f.foreignElementsUnder = null;
  else if (!under.includes(top)) under.push(top);
}

/** Whether a list-map's elements (the configuration's r, the live l) are all as Fields.foreignElementsUnder wants them. */
function elementsFromConfig(atom: Atom & { kind: 'list' }, r: IndexedItem[], l: IndexedItem[], rItems: Names, lItems: Names): boolean {
  for (const e of l) if (rItems.count(e.name) === 0) return false; // an element only the live object has
  for (const e of r) {
    if (rItems.count(e.name) > 1 || lItems.count(e.name) > 1 || !isPlainObject(e.item)) return false;
    const lv = lItems.count(e.name) === 1 ? lItems.single(e.name) : undefined;
    for (const k of atom.keys) {
      if (hasOwn(e.item, k)) {
        if (!isScalar(e.item[k])) return false;
      } else if (lv !== undefined && (!isPlainObject(lv) || (hasOwn(lv, k) && !isScalar(lv[k])))) return false;
    }
  }
  return true;
}

function isScalar(v: unknown): boolean {
  return v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
}

interface MergedItems {
  out: unknown[];
  /** With Fields: an entry per merged element, named as it was merged. */
  entries: Entry[] | undefined;
  /** With Fields.cmp: the elements' changes (modSub... of each). */
  cmp: boolean;
  mod: Entry[] | undefined;
  add: Entry[] | undefined;
}

/** The names of a list's elements: how often each occurs (searched in order while few). */
class Names {
  private readonly names: string[] = [];
  private readonly items: unknown[] = [];
  private counts: Map<string, number> | undefined;
  private firsts: Map<string, unknown> | undefined;

  constructor(list: readonly IndexedItem[]) {
    for (const e of list) this.add(e.name, e.item);
  }

  add(name: string, item?: unknown): void {
    this.names.push(name);
    this.items.push(item);
    if (this.counts !== undefined) this.index(name, item);
    else if (this.names.length > 16) {
      this.counts = new Map();
      this.firsts = new Map();
      for (let i = 0; i < this.names.length; i++) this.index(this.names[i], this.items[i]);
    }
  }

  private index(name: string, item: unknown): void {
    const c = this.counts!.get(name);
    if (c === undefined) {
      this.counts!.set(name, 1);
      this.firsts!.set(name, item);
    } else this.counts!.set(name, c + 1);
  }

  count(name: string): number {
    if (this.counts !== undefined) return this.counts.get(name) ?? 0;
    let n = 0;
    for (let i = 0; i < this.names.length; i++) if (this.names[i] === name) n++;
    return n;
  }

  /** The element named so, when it is the only one (a live element repeated under one key is replaced by the configuration's, not merged). */
  single(name: string): unknown {
    if (this.counts !== undefined) return this.counts.get(name) === 1 ? this.firsts!.get(name) : undefined;
    let found: unknown;
    let n = 0;
    for (let i = 0; i < this.names.length; i++) {
      if (this.names[i] !== name) continue;
      if (n++ === 0) found = this.items[i];
    }
    return n === 1 ? found : undefined;
  }
}

function mergeItem(atom: Atom & { kind: 'list' }, e: IndexedItem, lv: unknown, rv: unknown, path: MergePath, m: MergedItems, f: Fields | undefined): void {
  path.push(e.pe);
  const v = mergeValue(atom.elem, lv, rv, path, f);
  path.pop();
  if (m.cmp && (modSelf || modSub !== undefined || addSelf || addSub !== undefined)) {
    m.mod = changedEntry(m.mod, modSelf, modSub, e.name, e.pe);
    m.add = changedEntry(m.add, addSelf, addSub, e.name, e.pe);
  }
  if (v === undefined) return;
  m.out.push(v);
  m.entries?.push({ name: e.name, pe: e.pe, member: true, sub: mergedSub });
}

/**
 * The fields of a merged list, when its elements are named as they were merged, once each (else
 * the walk of the result decides).
 */
function listFields(node: TypeNode, atom: Atom & { kind: 'list' }, out: unknown[], entries: Entry[], f: Fields): void {
  let seen: Set<string> | undefined;
  try {
    for (let i = 0; i < out.length; i++) {
      const name = listItem(atom, i, out[i], []).name;
      if (name !== entries[i].name || seen?.has(name)) {
        f.failed = true;
        return;
      }
      if (i > 0) {
        if (seen === undefined) {
          seen = new Set();
          for (let j = 0; j < i; j++) seen.add(entries[j].name);
        }
        if (seen.has(name)) {
          f.failed = true;
          return;
        }
        seen.add(name);
      }
    }
  } catch {
    f.failed = true;
    return;
  }
  containerFields(node, out, entries, f);
}

// ---------------------------------------------------------------------------------------------
// Compare

export interface Comparison {
  /** Fields present only in the new object (non-leaf fields too, when added whole). */
  added: FieldSet;
  /** Leaf fields present in both with different values. */
  modified: FieldSet;
  /** Fields present only in the old object. */
  removed: FieldSet;
}

interface Comparing {
  stack: PathStack;
  added: SetBuilder;
  modified: SetBuilder;
  removed: SetBuilder;
}

/** Which fields changed between two versions of an object, by the schema's notion of a field. */
export function compareObjects(node: TypeNode, lhs: unknown, rhs: unknown): Comparison {
  const stack = new PathStack();
  const c: Comparing = { stack, added: new SetBuilder(stack), modified: new SetBuilder(stack), removed: new SetBuilder(stack) };
  if (lhs !== undefined || rhs !== undefined) compareValue(node, lhs, rhs, c);
  return { added: c.added.root, modified: c.modified.root, removed: c.removed.root };
}

// Values that are equal (jsonEqual) compare as unchanged without being looked into (so problems
// inside them, such as list elements without keys, are never reported).
// equalPrefix: sameOrPrefix(lhs, rhs), when the caller has asked already.
function compareValue(node: TypeNode, lhs: unknown, rhs: unknown, c: Comparing, equalPrefix = sameOrPrefix(lhs, rhs)): void {
  if (equalPrefix < 0) return;
  // A value on one side only: everything in it was added (removed); built as a whole and put in place.
  if ((lhs === undefined) !== (rhs === undefined) && c.stack.depth > 0) {
    const added = lhs === undefined;
    const b = added ? c.added : c.removed;
    const sub = oneSided(node, added ? rhs : lhs, c.stack);
    if (sub === undefined || b.attach(sub)) {
      b.add();
      return;
    }
  }
  const al = lhs === undefined ? undefined : resolveAtom(node, lhs);
  const ar = rhs === undefined ? undefined : al !== undefined && node.type !== 'any' ? al : resolveAtom(node, rhs);
  if (al && ar && al.kind !== ar.kind && untypedShapeChange(node, lhs, rhs)) return leaf(lhs, rhs, c);
  const atom = al?.kind === 'map' ? al : (ar ?? al)!;
  if (atom.kind === 'scalar') return leaf(lhs, rhs, c);

  if (atom.kind === 'map') {
    const lm = asMap(lhs);
    const rm = asMap(rhs);
    if (atom.atomic || (emptyMap(lm) && emptyMap(rm))) return leaf(lhs, rhs, c);
    compareMaps(atom, lm, rm, c, lm && rm ? equalPrefix : 0);
  } else {
    const ll = asList(lhs);
    const rl = asList(rhs);
    if (atom.relationship === 'atomic' || (emptyList(ll) && emptyList(rl))) return leaf(lhs, rhs, c);
    compareList(atom, ll ?? [], rl ?? [], c);
  }
  if (lhs === undefined) c.added.add();
  else if (rhs === undefined) c.removed.add();
}

/**
 * -1 when both values are there and equal (nothing changed, nothing to look into); else, for two
 * maps, how many of the live map's first keys hold equal values (no need to look at them again),
 * 0 otherwise.
 */
function sameOrPrefix(lhs: unknown, rhs: unknown): number {
  if (lhs === undefined || rhs === undefined) return 0;
  if (lhs === rhs) return -1;
  if (isPlainObject(lhs) && isPlainObject(rhs)) return equalKeys(lhs, rhs);
  return jsonEqual(lhs, rhs) ? -1 : 0;
}

/**
 * What compareValue adds below a value's path when the value is on one side only (it always adds
 * the path itself); undefined when nothing.
 */
function oneSided(node: TypeNode, v: unknown, stack: PathStack): FieldSet | undefined {
  const atom = resolveAtom(node, v);
  if (atom.kind === 'scalar') return undefined;
  if (atom.kind === 'map') {
    const m = asMap(v);
    if (atom.atomic || emptyMap(m)) return undefined;
    const entries: Entry[] = [];
    for (const k of Object.keys(m!)) {
      const x = m![k];
      const n = fieldNamed(k);
      if (x === undefined) bothUndefined();
      stack.push(n);
      const sub = oneSided(mapChildNode(atom, k), x, stack);
      stack.pop();
      entries.push({ name: n.name, pe: n.pe, member: true, sub });
    }
    return level(entries, false);
  }
  const l = asList(v);
  if (atom.relationship === 'atomic' || emptyList(l)) return undefined;
  const items = indexItems(atom, l!, stack, false);
  const entries: Entry[] = [];
  const first: unknown[] = [];
  let byName: Map<string, Entry> | undefined;
  let repeated: Set<string> | undefined;
  for (let i = 0; i < items.length; i++) {
    const it = items[i];
    let dup: Entry | undefined;
    if (byName !== undefined) dup = byName.get(it.name);
    else for (let j = 0; j < entries.length; j++) if (entries[j].name === it.name) dup = entries[j];
    if (dup !== undefined) {
      (repeated ??= new Set()).add(it.name);
      continue;
    }
    const e: Entry = { name: it.name, pe: it.pe, member: true, sub: undefined };
    entries.push(e);
    first.push(it.item);
    if (byName !== undefined) byName.set(e.name, e);
    else if (entries.length > 16) {
      byName = new Map();
      for (const x of entries) byName.set(x.name, x);
    }
  }
  // An element repeated on its side is added (removed) as a whole; a single one with its fields.
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i];
    if (repeated?.has(e.name)) continue;
    stack.push(e);
    e.sub = oneSided(atom.elem, first[i], stack);
    stack.pop();
  }
  return level(entries, false);
}

/** Comparing a key both sides hold as undefined fails as it always did. */
function bothUndefined(): never {
  const atom = undefined as unknown as { kind: string };
  atom.kind.toString();
  throw new TypeError('undefined');
}

function leaf(lhs: unknown, rhs: unknown, c: Comparing): void {
  if (lhs === undefined) c.added.add();
  else if (rhs === undefined) c.removed.add();
  else if (!jsonEqual(lhs, rhs)) c.modified.add();
}

/**
 * -1 when the maps are equal (jsonEqual); else how many of a's first keys (Object.keys order) b
 * holds with equal values.
 */
function equalKeys(a: Record<string, unknown>, b: Record<string, unknown>): number {
  // for-in over own keys visits them in Object.keys order, without allocating the arrays.
  let i = 0;
  for (const k in a) {
    if (!hasOwn(a, k)) continue;
    const v = a[k];
    // (an undefined value is compared, and fails, as it always was)
    if (v === undefined || !hasOwn(b, k) || !jsonEqual(v, b[k])) return i;
    i++;
  }
  let nb = 0;
  for (const k in b) if (hasOwn(b, k)) nb++;
  return i === nb ? -1 : i;
}

function compareMaps(
  atom: Atom & { kind: 'map' },
  lm: Record<string, unknown> | undefined,
  rm: Record<string, unknown> | undefined,
  c: Comparing,
  equalPrefix: number,
): void {
  if (lm) {
    const keys = Object.keys(lm);
    // The first equalPrefix keys compare as unchanged, without looking into them.
    for (let i = equalPrefix; i < keys.length; i++) {
      const k = keys[i];
      const lv = lm[k];
      const rv = rm && hasOwn(rm, k) ? rm[k] : undefined;
      // Unchanged values (most, in an update) are passed over before their path is made.
      const p = sameOrPrefix(lv, rv);
      if (p < 0) continue;
      c.stack.push(fieldNamed(k));
      compareValue(mapChildNode(atom, k), lv, rv, c, p);
      c.stack.pop();
    }
  }
  if (rm) {
    for (const k of Object.keys(rm)) {
      if (lm && hasOwn(lm, k)) continue;
      c.stack.push(fieldNamed(k));
      compareValue(mapChildNode(atom, k), undefined, rm[k], c);
      c.stack.pop();
    }
  }
}

interface Group {
  pe: PathElement;
  name: string;
  items: unknown[];
}

function groupItems(items: IndexedItem[]): Map<string, Group> {
  const m = new Map<string, Group>();
  for (const e of items) {
    const g = m.get(e.name);
    if (g) g.items.push(e.item);
    else m.set(e.name, { pe: e.pe, name: e.name, items: [e.item] });
  }
  return m;
}

function compareList(atom: Atom & { kind: 'list' }, lhs: unknown[], rhs: unknown[], c: Comparing): void {
  const lg = groupItems(indexItems(atom, lhs, c.stack, false));
  const rg = groupItems(indexItems(atom, rhs, c.stack, false));
  for (const [name, l] of lg) compareGroup(atom, l, rg.get(name), c);
  for (const [name, r] of rg) if (!lg.has(name)) compareGroup(atom, undefined, r, c);
}

function compareGroup(atom: Atom & { kind: 'list' }, l: Group | undefined, r: Group | undefined, c: Comparing): void {
  const ln = l?.items.length ?? 0;
  const rn = r?.items.length ?? 0;
  c.stack.push((l ?? r)!);
  if (ln <= 1 && rn <= 1) compareValue(atom.elem, l?.items[0], r?.items[0], c);
  else if (ln >= 2 && rn >= 2) {
    if (!jsonEqual(l!.items, r!.items)) c.modified.add();
  } else if (ln >= 2) {
    if (rn === 1) compareValue(atom.elem, undefined, r!.items[0], c);
    c.removed.add();
  } else {
    if (ln === 1) compareValue(atom.elem, l!.items[0], undefined, c);
    c.added.add();
  }
  c.stack.pop();
}

// ---------------------------------------------------------------------------------------------
// The FieldsV1 a create records

/** An entry of a FieldsV1 level being written: its name, its element (for kube's order) and its value. */
interface Written {
  name: string;
  pe: PathElement;
  v: Record<string, unknown>;
}

/**
 * The FieldsV1 `{}` below the root of what a create records, one object shared by every leaf (and
 * every `"."`): frozen, for nothing changes a FieldsV1 once written (readers only read it, and the
 * store serializes it). Saves an allocation per owned field.
 */
const LEAF: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>;

/**
 * The FieldsV1 of structs whose fields are all typed scalars, by the key list orderedFields
 * remembers (what is written depends only on the keys then), shared and frozen as LEAF is; null
 * for key lists that do not qualify.
 */
const SCALAR_STRUCTS = new WeakMap<readonly FieldInfo[], Record<string, unknown> | null>();

/** The entry of SCALAR_STRUCTS for a key list; undefined for lists with undeclared keys (orderedFields makes those anew each time: not kept). */
function scalarStructV1(fields: readonly FieldInfo[]): Record<string, unknown> | null | undefined {
  let scalars = true;
  for (let i = 0; i < fields.length; i++) {
    const n = fields[i].node;
    if (fields[i].rank < 0) return undefined;
    if (n.type === 'any' || resolveAtom(n, undefined).kind !== 'scalar') scalars = false;
  }
  if (!scalars) return null;
  const o: Record<string, unknown> = { '.': LEAF };
  for (let i = 0; i < fields.length; i++) o[fields[i].name] = LEAF;
  return Object.freeze(o);
}

/** The stack oneSided needs for paths (only ever read for error messages, which nobody sees here). */
const SCRATCH = new PathStack();
const NO_PATH: PathElement[] = [];

/**
 * What a create records for its writer, written as FieldsV1 in one walk: the fields
 * compareObjects(node, zero, obj) finds modified or added (what it finds removed goes first: what
 * is both, a newly repeated element, stays), minus `ignored` with everything below them, minus the
 * exact paths `stripped` — with no FieldSet in between. recordUpdate with no managers and no live object ends in the same set, written by
 * FieldSet.toFieldsV1 (test/unit/registry/apply/engine.test.ts compares the two). Throws wherever
 * compareObjects may throw (and perhaps elsewhere): callers take the general path then.
 */
export function createdFieldsV1(node: TypeNode, zero: unknown, obj: unknown, ignored: FieldSet, stripped: FieldSet): Record<string, unknown> {
  SCRATCH.depth = 0;
  // The root is compared as compareValue compares it: never one-sided, never a field itself.
  return compared(node, zero, obj, ignored, stripped, true, true) ?? {};
}

/** The FieldsV1 object of a path: `.` when it is owned itself and has fields below, then those in kube's order; undefined for nothing. */
function written(below: Written[] | undefined, self: boolean): Record<string, unknown> | undefined {
  if (below === undefined) return self ? LEAF : undefined;
  const o: Record<string, unknown> = {};
  if (self) o['.'] = LEAF;
  sortEntries(below);
  for (let i = 0; i < below.length; i++) o[below[i].name] = below[i].v;
  return o;
}

function push(out: Written[] | undefined, name: string, pe: PathElement, v: Record<string, unknown> | undefined): Written[] | undefined {
  if (v === undefined) return out;
  (out ??= []).push({ name, pe, v });
  return out;
}

/**
 * compareValue, keeping what is modified or added: the FieldsV1 object of the path (undefined:
 * nothing owned at or below it). `ig` and `st` are the levels of ignored and stripped below the
 * path, `strip` tells whether stripped has the path itself.
 */
function compared(node: TypeNode, lhs: unknown, rhs: unknown, ig: FieldSet | undefined, st: FieldSet | undefined, strip: boolean, root: boolean): Record<string, unknown> | undefined {
  let equalPrefix = 0;
  if (lhs !== undefined && rhs !== undefined) {
    if (lhs === rhs) return undefined;
    if (isPlainObject(lhs) && isPlainObject(rhs)) {
      equalPrefix = equalKeys(lhs, rhs);
      if (equalPrefix < 0) return undefined;
    } else if (jsonEqual(lhs, rhs)) return undefined;
  }
  if ((lhs === undefined) !== (rhs === undefined) && !root) {
    if (lhs === undefined) return addedAt(node, rhs, ig, st, strip);
    oneSided(node, lhs, SCRATCH); // removed: nothing owned (walked for its errors)
    return undefined;
  }
  const al = lhs === undefined ? undefined : resolveAtom(node, lhs);
  const ar = rhs === undefined ? undefined : al !== undefined && node.type !== 'any' ? al : resolveAtom(node, rhs);
  if (al && ar && al.kind !== ar.kind && untypedShapeChange(node, lhs, rhs)) return leafOwned(lhs, rhs, strip);
  const atom = al?.kind === 'map' ? al : (ar ?? al)!;
  if (atom.kind === 'scalar') return leafOwned(lhs, rhs, strip);
  let below: Written[] | undefined;
  if (atom.kind === 'map') {
    const lm = asMap(lhs);
    const rm = asMap(rhs);
    if (atom.atomic || (emptyMap(lm) && emptyMap(rm))) return leafOwned(lhs, rhs, strip);
    below = comparedMaps(atom, lm, rm, lm && rm ? equalPrefix : 0, ig, st);
  } else {
    const ll = asList(lhs);
    const rl = asList(rhs);
    if (atom.relationship === 'atomic' || (emptyList(ll) && emptyList(rl))) return leafOwned(lhs, rhs, strip);
    below = comparedList(atom, ll ?? [], rl ?? [], ig, st);
  }
  return written(below, lhs === undefined && !strip && !root);
}

/** leaf(): added or modified are owned, removed is not. */
function leafOwned(lhs: unknown, rhs: unknown, strip: boolean): Record<string, unknown> | undefined {
  const owned = lhs === undefined ? true : rhs === undefined ? false : !jsonEqual(lhs, rhs);
  return owned && !strip ? LEAF : undefined;
}

/** The value of one child path: not at all when ignored (walked all the same, for its errors). */
function comparedChild(
  out: Written[] | undefined,
  n: { name: string; pe: PathElement },
  node: TypeNode,
  lv: unknown,
  rv: unknown,
  ig: FieldSet | undefined,
  st: FieldSet | undefined,
): Written[] | undefined {
  const ie = ig === undefined ? undefined : ig._get(n.name);
  const se = st === undefined ? undefined : st._get(n.name);
  const v = compared(node, lv, rv, ie?.sub, se?.sub, se?.member === true, false);
  return ie?.member ? out : push(out, n.name, n.pe, v);
}

function comparedMaps(
  atom: Atom & { kind: 'map' },
  lm: Record<string, unknown> | undefined,
  rm: Record<string, unknown> | undefined,
  equalPrefix: number,
  ig: FieldSet | undefined,
  st: FieldSet | undefined,
): Written[] | undefined {
  let out: Written[] | undefined;
  if (lm) {
    const keys = Object.keys(lm);
    for (let i = equalPrefix; i < keys.length; i++) {
      const k = keys[i];
      const rv = rm && hasOwn(rm, k) ? rm[k] : undefined;
      out = comparedChild(out, fieldNamed(k), mapChildNode(atom, k), lm[k], rv, ig, st);
    }
  }
  if (rm) {
    for (const k of Object.keys(rm)) {
      if (lm && hasOwn(lm, k)) continue;
      out = comparedChild(out, fieldNamed(k), mapChildNode(atom, k), undefined, rm[k], ig, st);
    }
  }
  return out;
}

function comparedList(atom: Atom & { kind: 'list' }, lhs: unknown[], rhs: unknown[], ig: FieldSet | undefined, st: FieldSet | undefined): Written[] | undefined {
  const lg = groupItems(indexItems(atom, lhs, NO_PATH, false));
  const rg = groupItems(indexItems(atom, rhs, NO_PATH, false));
  let out: Written[] | undefined;
  for (const [name, l] of lg) out = comparedGroup(out, atom, l, rg.get(name), ig, st);
  for (const [name, r] of rg) if (!lg.has(name)) out = comparedGroup(out, atom, undefined, r, ig, st);
  return out;
}

/**
 * compareGroup: where an element is repeated on one side, it is removed (as the single element it
 * was, or as the repetition) and added (as the repetition, or as the single element with what it
 * holds); the writer removes what was removed first, then takes what was added: it owns the element.
 */
function comparedGroup(out: Written[] | undefined, atom: Atom & { kind: 'list' }, l: Group | undefined, r: Group | undefined, ig: FieldSet | undefined, st: FieldSet | undefined): Written[] | undefined {
  const g = (l ?? r)!;
  const ln = l?.items.length ?? 0;
  const rn = r?.items.length ?? 0;
  if (ln <= 1 && rn <= 1) return comparedChild(out, g, atom.elem, l?.items[0], r?.items[0], ig, st);
  const ie = ig === undefined ? undefined : ig._get(g.name);
  const se = st === undefined ? undefined : st._get(g.name);
  let v: Record<string, unknown> | undefined;
  if (ln >= 2 && rn >= 2) {
    v = !jsonEqual(l!.items, r!.items) && !se?.member ? LEAF : undefined;
  } else if (ln >= 2) {
    // No longer repeated: the single element added with what it holds.
    if (rn === 1) v = addedAt(atom.elem, r!.items[0], ie?.sub, se?.sub, se?.member === true);
  } else {
    if (ln === 1) compared(atom.elem, l!.items[0], undefined, undefined, undefined, false, false); // for its errors
    // Newly repeated: the element itself, without what it holds.
    v = !se?.member ? LEAF : undefined;
  }
  return ie?.member ? out : push(out, g.name, g.pe, v);
}

/** The FieldsV1 object of a value added whole (oneSided: it and all it holds are owned), filtered. */
function addedAt(node: TypeNode, v: unknown, ig: FieldSet | undefined, st: FieldSet | undefined, strip: boolean): Record<string, unknown> | undefined {
  if (ig === undefined && st === undefined && !strip) return addedValue(node, v);
  return written(addedBelow(node, v, ig, st), !strip);
}

/** What an added value holds, filtered (the general walk; addedValue when nothing is filtered). */
function addedBelow(node: TypeNode, v: unknown, ig: FieldSet | undefined, st: FieldSet | undefined): Written[] | undefined {
  const atom = resolveAtom(node, v);
  let out: Written[] | undefined;
  if (atom.kind === 'map') {
    const m = asMap(v);
    if (atom.atomic || emptyMap(m)) return undefined;
    for (const k of Object.keys(m!)) {
      const x = m![k];
      if (x === undefined) bothUndefined();
      const n = fieldNamed(k);
      const ie = ig === undefined ? undefined : ig._get(n.name);
      const se = st === undefined ? undefined : st._get(n.name);
      const w = addedAt(mapChildNode(atom, k), x, ie?.sub, se?.sub, se?.member === true);
      if (!ie?.member) out = push(out, n.name, n.pe, w);
    }
    return out;
  }
  if (atom.kind !== 'list') return undefined;
  const l = asList(v);
  if (atom.relationship === 'atomic' || emptyList(l)) return undefined;
  const { firsts, repeated } = distinctItems(indexItems(atom, l!, NO_PATH, false));
  for (const it of firsts) {
    const ie = ig === undefined ? undefined : ig._get(it.name);
    const se = st === undefined ? undefined : st._get(it.name);
    const strip = se?.member === true;
    const w = repeated?.has(it.name) ? (strip ? undefined : LEAF) : addedAt(atom.elem, it.item, ie?.sub, se?.sub, strip);
    if (!ie?.member) out = push(out, it.name, it.pe, w);
  }
  return out;
}

/** Elements named once each (the first of each name), and the names that are repeated (owned whole, without their fields). */
function distinctItems(items: IndexedItem[]): { firsts: IndexedItem[]; repeated: Set<string> | undefined } {
  if (items.length < 2) return { firsts: items, repeated: undefined };
  const seen = new Set<string>();
  let repeated: Set<string> | undefined;
  for (let i = 0; i < items.length; i++) {
    const name = items[i].name;
    if (!seen.has(name)) seen.add(name);
    else (repeated ??= new Set()).add(name);
  }
  if (repeated === undefined) return { firsts: items, repeated };
  const firsts: IndexedItem[] = [];
  const kept = new Set<string>();
  for (const it of items) {
    if (kept.has(it.name)) continue;
    kept.add(it.name);
    firsts.push(it);
  }
  return { firsts, repeated };
}

/**
 * addedAt with nothing filtered, written as it is walked: keys and elements sorted first (struct
 * fields by their precomputed rank), then each written in place — the shape of most of a create.
 */
function addedValue(node: TypeNode, v: unknown): Record<string, unknown> {
  const atom = resolveAtom(node, v);
  if (atom.kind === 'map') {
    const m = asMap(v);
    if (atom.atomic || emptyMap(m)) return LEAF;
    const fields = orderedFields(atom, Object.keys(m!));
    if (atom.declared !== undefined) {
      // A struct of scalars (most leaves of a custom resource): written once for its keys.
      let t = SCALAR_STRUCTS.get(fields);
      if (t === undefined) {
        t = scalarStructV1(fields);
        if (t !== undefined) SCALAR_STRUCTS.set(fields, t);
      }
      if (t != null) {
        for (let i = 0; i < fields.length; i++) if (m![fields[i].key] === undefined) bothUndefined();
        return t;
      }
    }
    const o: Record<string, unknown> = { '.': LEAF };
    for (let i = 0; i < fields.length; i++) {
      const f = fields[i];
      const x = m![f.key];
      if (x === undefined) bothUndefined();
      // (what addedValue gives for a typed scalar, without asking)
      o[f.name] = f.scalar ? LEAF : addedValue(f.node, x);
    }
    return o;
  }
  if (atom.kind !== 'list') return LEAF;
  const l = asList(v);
  if (atom.relationship === 'atomic' || emptyList(l)) return LEAF;
  const { firsts, repeated } = distinctItems(indexItems(atom, l!, NO_PATH, false));
  sortEntries(firsts); // (indexItems made the array: ours to sort)
  const o: Record<string, unknown> = { '.': LEAF };
  for (let i = 0; i < firsts.length; i++) {
    const it = firsts[i];
    o[it.name] = repeated?.has(it.name) ? LEAF : addedValue(atom.elem, it.item);
  }
  return o;
}

// ---------------------------------------------------------------------------------------------
// Remove

/**
 * A copy of obj without the fields in the set: a member path removes the field, element or map
 * entry with everything below it. A map or list that loses its last entry this way is left null,
 * as structured-merge-diff's RemoveItems leaves it (whoever owns the field itself keeps it; the
 * built-in kinds' decoding then omits it); a list-map element that loses every field is dropped
 * (structured-merge-diff would keep a null element, which no key names).
 */
export function removeFields(node: TypeNode, obj: unknown, fields: FieldSet): any {
  if (fields.isEmpty()) return clone(obj);
  const out = removeValue(node, obj, fields, [], clone);
  return out === null && isPlainObject(obj) ? {} : out;
}

/**
 * removeFields without the copy: what the set leaves alone is shared with obj (for values that
 * are only read, or when obj itself is a private copy).
 */
export function removeFieldsShared(node: TypeNode, obj: unknown, fields: FieldSet): any {
  if (fields.isEmpty()) return obj;
  const out = removeValue(node, obj, fields, [], share);
  return out === null && isPlainObject(obj) ? {} : out;
}

function removeValue(node: TypeNode, value: unknown, toRemove: FieldSet, path: PathElement[], copy: <T>(v: T) => T): unknown {
  const atom = resolveAtom(node, value);
  if (atom.kind === 'scalar') return copy(value);
  if (atom.kind === 'list') {
    if (!Array.isArray(value) || value.length === 0 || atom.relationship === 'atomic') return copy(value);
    const out: unknown[] = [];
    for (const { pe, name, item } of indexItems(atom, value, path, false)) {
      const e = toRemove._get(name);
      if (e?.member) continue;
      let v: unknown;
      if (e?.sub) {
        path.push(pe);
        v = removeValue(atom.elem, item, e.sub, path, copy);
        path.pop();
      } else v = copy(item);
      // (an element emptied here is dropped, not left null)
      if (v !== undefined && (v !== null || item === null)) out.push(v);
    }
    return out.length > 0 ? out : null;
  }
  if (!isPlainObject(value) || emptyMap(value) || atom.atomic) return copy(value);
  const out: Record<string, unknown> = {};
  let any = false;
  for (const k of Object.keys(value)) {
    const n = fieldNamed(k);
    const e = toRemove._get(n.name);
    if (e?.member) continue;
    let v: unknown;
    if (e?.sub) {
      path.push(n.pe);
      v = removeValue(mapChildNode(atom, k), value[k], e.sub, path, copy);
      path.pop();
    } else v = copy(value[k]);
    if (v !== undefined) {
      out[k] = v;
      any = true;
    }
  }
  return any ? out : null;
}
