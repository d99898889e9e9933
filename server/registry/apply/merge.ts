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
  type FieldPath,
  FieldSet,
  type IndexedItem,
  type PathElement,
  PathStack,
  SetBuilder,
  fieldNamed,
  indexItems,
  isPlainObject,
  jsonEqual,
  mapChildNode,
  resolveAtom,
} from './fieldset.ts';

/** A deep copy of a JSON value (structuredClone for anything that is not plain JSON data). */
export function cloneJSON<T>(v: T): T {
  if (typeof v !== 'object' || v === null) return v;
  if (Array.isArray(v)) {
    const out = new Array(v.length);
    for (let i = 0; i < v.length; i++) {
      if (!(i in v)) return structuredClone(v);
      out[i] = cloneJSON(v[i]);
    }
    return out as T;
  }
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return structuredClone(v);
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) out[k] = cloneJSON((v as Record<string, unknown>)[k]);
  return out as T;
}

const clone = cloneJSON;
const share = <T>(v: T): T => v;

const hasOwn = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);
const emptyMap = (m: Record<string, unknown> | undefined): boolean => {
  if (m === undefined) return true;
  for (const k in m) if (hasOwn(m, k)) return false;
  return true;
};
const emptyList = (l: unknown[] | undefined): boolean => l === undefined || l.length === 0;
const asMap = (v: unknown): Record<string, unknown> | undefined => (isPlainObject(v) ? v : undefined);
const asList = (v: unknown): unknown[] | undefined => (Array.isArray(v) ? v : undefined);

// ---------------------------------------------------------------------------------------------
// Merge

/**
 * Merges an apply configuration into the live object (undefined when it does not exist yet).
 * Values are copied; neither input is modified. Throws SchemaError for a configuration whose list
 * elements cannot be identified (missing key fields, repeated keys).
 */
export function applyMerge(node: TypeNode, live: unknown, config: unknown): any {
  if (live === undefined && config === undefined) return undefined;
  return mergeValue(node, live, config, []);
}

function mergeValue(node: TypeNode, lhs: unknown, rhs: unknown, path: PathElement[]): unknown {
  const al = lhs === undefined ? undefined : resolveAtom(node, lhs);
  const ar = rhs === undefined ? undefined : resolveAtom(node, rhs);
  if (al && ar && al.kind !== ar.kind) lhs = undefined; // untyped value changing shape: the config's wins
  const atom = (ar ?? al)!;

  if (atom.kind === 'scalar') return clone(rhs !== undefined ? rhs : lhs);

  if (atom.kind === 'map') {
    const lm = asMap(lhs);
    const rm = asMap(rhs);
    if (atom.atomic || (emptyMap(lm) && emptyMap(rm))) return clone(rhs !== undefined ? rhs : lhs);
    if ((lhs !== undefined && lhs !== null && !lm) || (rhs !== undefined && rhs !== null && !rm)) return clone(rhs !== undefined ? rhs : lhs);
    const out: Record<string, unknown> = {};
    let any = false;
    if (lm) {
      for (const k of Object.keys(lm)) {
        const r = rm && hasOwn(rm, k) ? rm[k] : undefined;
        path.push(fieldNamed(k).pe);
        const v = mergeValue(mapChildNode(atom, k), lm[k], r, path);
        path.pop();
        if (v !== undefined) {
          out[k] = v;
          any = true;
        }
      }
    }
    if (rm) {
      for (const k of Object.keys(rm)) {
        if (lm && hasOwn(lm, k)) continue;
        path.push(fieldNamed(k).pe);
        const v = mergeValue(mapChildNode(atom, k), undefined, rm[k], path);
        path.pop();
        if (v !== undefined) {
          out[k] = v;
          any = true;
        }
      }
    }
    return any ? out : undefined;
  }

  const ll = asList(lhs);
  const rl = asList(rhs);
  if (atom.relationship === 'atomic' || (emptyList(ll) && emptyList(rl))) return clone(rhs !== undefined ? rhs : lhs);
  if ((lhs !== undefined && lhs !== null && !ll) || (rhs !== undefined && rhs !== null && !rl)) return clone(rhs !== undefined ? rhs : lhs);
  return mergeList(atom, ll ?? [], rl ?? [], path);
}

/**
 * Element order follows structured-merge-diff: elements only in the live list keep their place,
 * elements in the configuration come in the configuration's order, and a new element is placed
 * before the next element the two lists share.
 */
function mergeList(atom: Atom & { kind: 'list' }, lhs: unknown[], rhs: unknown[], path: PathElement[]): unknown[] | undefined {
  const at = (): FieldPath => path.slice();
  const r = indexItems(atom, rhs, at, true);
  const l = indexItems(atom, lhs, at, false);
  const rItems = new Set<string>();
  for (const e of r) rItems.add(e.name);
  const lCount = new Map<string, number>();
  const lFirst = new Map<string, unknown>();
  for (const e of l) {
    const c = lCount.get(e.name);
    if (c === undefined) {
      lCount.set(e.name, 1);
      lFirst.set(e.name, e.item);
    } else lCount.set(e.name, c + 1);
  }
  // A live element repeated under one key is replaced by the configuration's, not merged.
  const liveFor = (name: string): unknown => (lCount.get(name) === 1 ? lFirst.get(name) : undefined);

  const shared: string[] = [];
  for (const e of r) if (lCount.has(e.name)) shared.push(e.name);
  let si = 0;
  let nextShared: string | undefined = shared[0];
  const advance = (): void => {
    si++;
    nextShared = shared[si];
  };
  const merged = new Set<string>();
  const out: unknown[] = [];
  const emit = (pe: PathElement, lv: unknown, rv: unknown): void => {
    path.push(pe);
    const v = mergeValue(atom.elem, lv, rv, path);
    path.pop();
    if (v !== undefined) out.push(v);
  };

  let li = 0;
  let ri = 0;
  while (li < l.length || ri < r.length) {
    if (li < l.length && ri < r.length) {
      const le = l[li];
      if (le.name === r[ri].name && !merged.has(le.name)) {
        merged.add(le.name);
        emit(le.pe, liveFor(le.name), r[ri].item);
        li++;
        ri++;
        advance();
        continue;
      }
      if (rItems.has(le.name) && nextShared !== undefined && nextShared !== le.name) {
        li++; // a shared element, merged when the configuration reaches it
        continue;
      }
    }
    if (li < l.length) {
      const le = l[li];
      if (!rItems.has(le.name)) {
        emit(le.pe, le.item, undefined);
        li++;
        continue;
      }
      if (merged.has(le.name)) {
        li++;
        continue;
      }
    }
    if (ri < r.length) {
      const re = r[ri];
      merged.add(re.name);
      emit(re.pe, liveFor(re.name), re.item);
      ri++;
      if (nextShared === re.name) advance();
      continue;
    }
    li++; // only reachable with inconsistent input; never loop forever
  }
  return out.length > 0 ? out : undefined;
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
  // Equal objects (a no-op write) are the common case: nothing to look into.
  if ((lhs !== undefined || rhs !== undefined) && !jsonEqual(lhs, rhs)) compareValue(node, lhs, rhs, c);
  return { added: c.added.root, modified: c.modified.root, removed: c.removed.root };
}

// Values that are equal (jsonEqual) compare as unchanged without being looked into, so problems
// inside them (list elements without keys...) are never reported. Maps are looked into directly
// (an equal map yields no changes) and such a problem is checked against equality where it surfaces.
function compareValue(node: TypeNode, lhs: unknown, rhs: unknown, c: Comparing): void {
  const both = lhs !== undefined && rhs !== undefined;
  if (both && lhs === rhs) return;
  const al = lhs === undefined ? undefined : resolveAtom(node, lhs);
  const ar = rhs === undefined ? undefined : resolveAtom(node, rhs);
  if (al && ar && al.kind !== ar.kind) return leaf(lhs, rhs, c);
  const atom = (ar ?? al)!;
  if (atom.kind === 'scalar') return leaf(lhs, rhs, c);

  if (atom.kind === 'map') {
    const lm = asMap(lhs);
    const rm = asMap(rhs);
    if (atom.atomic || (emptyMap(lm) && emptyMap(rm))) return leaf(lhs, rhs, c);
    if (both) {
      const depth = c.stack.depth;
      try {
        compareMaps(atom, lm, rm, c);
      } catch (e) {
        c.stack.depth = depth;
        if (jsonEqual(lhs, rhs)) return;
        throw e;
      }
    } else compareMaps(atom, lm, rm, c);
  } else {
    if (both && jsonEqual(lhs, rhs)) return;
    const ll = asList(lhs);
    const rl = asList(rhs);
    if (atom.relationship === 'atomic' || (emptyList(ll) && emptyList(rl))) return leaf(lhs, rhs, c);
    compareList(atom, ll ?? [], rl ?? [], c);
  }
  if (lhs === undefined) c.added.add();
  else if (rhs === undefined) c.removed.add();
}

function leaf(lhs: unknown, rhs: unknown, c: Comparing): void {
  if (lhs === undefined) c.added.add();
  else if (rhs === undefined) c.removed.add();
  else if (!jsonEqual(lhs, rhs)) c.modified.add();
}

function compareMaps(atom: Atom & { kind: 'map' }, lm: Record<string, unknown> | undefined, rm: Record<string, unknown> | undefined, c: Comparing): void {
  if (lm) {
    for (const k of Object.keys(lm)) {
      const rv = rm && hasOwn(rm, k) ? rm[k] : undefined;
      c.stack.push(fieldNamed(k));
      compareValue(mapChildNode(atom, k), lm[k], rv, c);
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
  const at = (): FieldPath => c.stack.path();
  const lg = groupItems(indexItems(atom, lhs, at, false));
  const rg = groupItems(indexItems(atom, rhs, at, false));
  const one = (name: string, l: Group | undefined, r: Group | undefined): void => {
    const g = (l ?? r)!;
    const ln = l?.items.length ?? 0;
    const rn = r?.items.length ?? 0;
    c.stack.push(g);
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
    void name;
  };
  for (const [name, l] of lg) one(name, l, rg.get(name));
  for (const [name, r] of rg) if (!lg.has(name)) one(name, undefined, r);
}

// ---------------------------------------------------------------------------------------------
// Remove

/**
 * A copy of obj without the fields in the set: a member path removes the field, element or map
 * entry with everything below it; a map or list that loses its last entry this way is dropped
 * from its parent (the built-in types omit it when empty).
 */
export function removeFields(node: TypeNode, obj: unknown, fields: FieldSet): any {
  if (fields.isEmpty()) return clone(obj);
  const out = removeValue(node, obj, fields, [], clone);
  return out === undefined && isPlainObject(obj) ? {} : out;
}

/**
 * removeFields without the copy: what the set leaves alone is shared with obj (for values that
 * are only read, or when obj itself is a private copy).
 */
export function removeFieldsShared(node: TypeNode, obj: unknown, fields: FieldSet): any {
  if (fields.isEmpty()) return obj;
  const out = removeValue(node, obj, fields, [], share);
  return out === undefined && isPlainObject(obj) ? {} : out;
}

function removeValue(node: TypeNode, value: unknown, toRemove: FieldSet, path: PathElement[], copy: <T>(v: T) => T): unknown {
  const atom = resolveAtom(node, value);
  if (atom.kind === 'scalar') return copy(value);
  if (atom.kind === 'list') {
    if (!Array.isArray(value) || value.length === 0 || atom.relationship === 'atomic') return copy(value);
    const out: unknown[] = [];
    for (const { pe, name, item } of indexItems(atom, value, () => path.slice(), false)) {
      const e = toRemove._m.get(name);
      if (e?.member) continue;
      let v: unknown;
      if (e?.sub) {
        path.push(pe);
        v = removeValue(atom.elem, item, e.sub, path, copy);
        path.pop();
      } else v = copy(item);
      if (v !== undefined) out.push(v);
    }
    return out.length > 0 ? out : undefined;
  }
  if (!isPlainObject(value) || emptyMap(value) || atom.atomic) return copy(value);
  const out: Record<string, unknown> = {};
  let any = false;
  for (const k of Object.keys(value)) {
    const n = fieldNamed(k);
    const e = toRemove._m.get(n.name);
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
  return any ? out : undefined;
}
