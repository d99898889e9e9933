// The schema-driven merge of an apply configuration into the live object (structured-merge-diff's
// typed/merge.go), which can find on the way the fields of its result and what changed.
//
// Structs and granular maps merge key by key; scalars, atomic lists and atomic maps/structs are
// replaced whole by the configuration's value; list-maps merge element by element (matched by their
// key fields) and sets by value. Lists without x-kubernetes-list-type follow their patch strategy
// (merge with a key → list-map, merge without → set), else they are atomic. Without a schema ('any',
// e.g. preserve-unknown-fields) maps are granular and lists atomic.
import type { TypeNode } from '../../../schema/types.ts';
import { cloneJSON, deepEqual, hasOwn, isPlainObject } from '../../../util/json.ts';
import type { PathElement } from '../fieldpath/element.ts';
import { PathStack } from '../fieldpath/path.ts';
import { fieldNamed } from '../fieldpath/serialize-pe.ts';
import { FieldSet, level, type Entry } from '../fieldpath/set.ts';
import { asList, asMap, emptyList, emptyMap, isScalarValue } from '../fieldpath/value.ts';
import { declaredField, resolveAtom, type Atom } from './atom.ts';
import { oneSided, untypedShapeChange, type Comparison } from './compare.ts';
import { indexItems, listItem, type IndexedItem } from './list-items.ts';
import { ensuringWalk, nullOrEmptyMap, rootLevel, walkFieldsBelow, walkedSelf, type FieldsMemo, type Walk } from './tofieldset.ts';

/**
 * Merges an apply configuration into the live object (undefined when it does not exist yet).
 * Values are copied; neither input is modified. Throws SchemaError for a configuration whose list
 * elements cannot be identified (missing key fields, repeated keys).
 */
export function applyMerge(node: TypeNode, live: unknown, config: unknown): unknown {
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
): { merged: unknown; fields: FieldSet | undefined; memo: FieldsMemo; foreignElementsUnder: readonly string[] | null; comparison: Comparison | undefined } {
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
  modSelf = !deepEqual(lhs, rhs);
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
  const out = cloneJSON(v);
  if (f !== undefined && out !== undefined) leafFields(node, out, f);
  return out;
}

/**
 * leafValue of a scalar, atomic map or atomic list (by the atom the merge resolved, which is the
 * one the walk resolves for the copy): one field with nothing below, without walking it.
 */
function atomValue(v: unknown, f: Fields | undefined): unknown {
  const out = cloneJSON(v);
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
        if (!isScalarValue(e.item[k])) return false;
      } else if (lv !== undefined && (!isPlainObject(lv) || (hasOwn(lv, k) && !isScalarValue(lv[k])))) return false;
    }
  }
  return true;
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
