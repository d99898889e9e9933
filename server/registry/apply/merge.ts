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
  type PathElement,
  fieldPE,
  indexList,
  isPlainObject,
  jsonEqual,
  mapChildNode,
  resolveAtom,
} from './fieldset.ts';

function clone<T>(v: T): T {
  return v === undefined ? v : (structuredClone(v) as T);
}

const sameKind = (a: Atom, b: Atom): boolean => a.kind === b.kind;

const emptyMap = (m: Record<string, unknown> | undefined): boolean => m === undefined || Object.keys(m).length === 0;
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
  if (al && ar && !sameKind(al, ar)) lhs = undefined; // untyped value changing shape: the config's wins
  const atom = (ar ?? al)!;
  const leaf = (): unknown => clone(rhs !== undefined ? rhs : lhs);

  if (atom.kind === 'scalar') return leaf();

  if (atom.kind === 'map') {
    const lm = asMap(lhs);
    const rm = asMap(rhs);
    if (atom.atomic || (emptyMap(lm) && emptyMap(rm))) return leaf();
    if ((lhs !== undefined && lhs !== null && !lm) || (rhs !== undefined && rhs !== null && !rm)) return leaf();
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(lm ?? {})) {
      const r = rm && Object.prototype.hasOwnProperty.call(rm, k) ? rm[k] : undefined;
      const v = mergeValue(mapChildNode(atom, k), lm![k], r, [...path, fieldPE(k)]);
      if (v !== undefined) out[k] = v;
    }
    for (const k of Object.keys(rm ?? {})) {
      if (lm && Object.prototype.hasOwnProperty.call(lm, k)) continue;
      const v = mergeValue(mapChildNode(atom, k), undefined, rm![k], [...path, fieldPE(k)]);
      if (v !== undefined) out[k] = v;
    }
    return Object.keys(out).length > 0 ? out : undefined;
  }

  const ll = asList(lhs);
  const rl = asList(rhs);
  if (atom.relationship === 'atomic' || (emptyList(ll) && emptyList(rl))) return leaf();
  if ((lhs !== undefined && lhs !== null && !ll) || (rhs !== undefined && rhs !== null && !rl)) return leaf();
  return mergeList(atom, ll ?? [], rl ?? [], path);
}

/**
 * Element order follows structured-merge-diff: elements only in the live list keep their place,
 * elements in the configuration come in the configuration's order, and a new element is placed
 * before the next element the two lists share.
 */
function mergeList(atom: Atom & { kind: 'list' }, lhs: unknown[], rhs: unknown[], path: PathElement[]): unknown[] | undefined {
  const r = indexList(atom, rhs, path, true);
  const l = indexList(atom, lhs, path, false);
  const rItems = new Map(r.map((e) => [e.name, e]));
  const lCount = new Map<string, number>();
  const lFirst = new Map<string, unknown>();
  for (const e of l) {
    lCount.set(e.name, (lCount.get(e.name) ?? 0) + 1);
    if (!lFirst.has(e.name)) lFirst.set(e.name, e.item);
  }
  // A live element repeated under one key is replaced by the configuration's, not merged.
  const liveFor = (name: string): unknown => (lCount.get(name) === 1 ? lFirst.get(name) : undefined);

  const shared = r.filter((e) => lCount.has(e.name)).map((e) => e.name);
  let si = 0;
  let nextShared: string | undefined = shared[0];
  const advance = (): void => {
    si++;
    nextShared = shared[si];
  };
  const merged = new Set<string>();
  const out: unknown[] = [];
  const emit = (pe: PathElement, lv: unknown, rv: unknown): void => {
    const v = mergeValue(atom.elem, lv, rv, [...path, pe]);
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

/** Which fields changed between two versions of an object, by the schema's notion of a field. */
export function compareObjects(node: TypeNode, lhs: unknown, rhs: unknown): Comparison {
  const c: Comparison = { added: new FieldSet(), modified: new FieldSet(), removed: new FieldSet() };
  if (lhs !== undefined || rhs !== undefined) compareValue(node, lhs, rhs, [], c);
  return c;
}

function compareValue(node: TypeNode, lhs: unknown, rhs: unknown, path: PathElement[], c: Comparison): void {
  if (lhs !== undefined && rhs !== undefined && jsonEqual(lhs, rhs)) return;
  const leaf = (): void => {
    if (lhs === undefined) c.added.add(path);
    else if (rhs === undefined) c.removed.add(path);
    else if (!jsonEqual(lhs, rhs)) c.modified.add(path);
  };
  const al = lhs === undefined ? undefined : resolveAtom(node, lhs);
  const ar = rhs === undefined ? undefined : resolveAtom(node, rhs);
  if (al && ar && !sameKind(al, ar)) return leaf();
  const atom = (ar ?? al)!;
  if (atom.kind === 'scalar') return leaf();

  if (atom.kind === 'map') {
    const lm = asMap(lhs);
    const rm = asMap(rhs);
    if (atom.atomic || (emptyMap(lm) && emptyMap(rm))) return leaf();
    const keys = new Set([...Object.keys(lm ?? {}), ...Object.keys(rm ?? {})]);
    for (const k of keys) {
      const lv = lm && Object.prototype.hasOwnProperty.call(lm, k) ? lm[k] : undefined;
      const rv = rm && Object.prototype.hasOwnProperty.call(rm, k) ? rm[k] : undefined;
      compareValue(mapChildNode(atom, k), lv, rv, [...path, fieldPE(k)], c);
    }
  } else {
    const ll = asList(lhs);
    const rl = asList(rhs);
    if (atom.relationship === 'atomic' || (emptyList(ll) && emptyList(rl))) return leaf();
    compareList(atom, ll ?? [], rl ?? [], path, c);
  }
  if (lhs === undefined) c.added.add(path);
  else if (rhs === undefined) c.removed.add(path);
}

function compareList(atom: Atom & { kind: 'list' }, lhs: unknown[], rhs: unknown[], path: PathElement[], c: Comparison): void {
  const group = (items: { pe: PathElement; name: string; item: unknown }[]) => {
    const m = new Map<string, { pe: PathElement; items: unknown[] }>();
    for (const e of items) {
      const g = m.get(e.name);
      if (g) g.items.push(e.item);
      else m.set(e.name, { pe: e.pe, items: [e.item] });
    }
    return m;
  };
  const lg = group(indexList(atom, lhs, path, false));
  const rg = group(indexList(atom, rhs, path, false));
  const names = new Set([...lg.keys(), ...rg.keys()]);
  for (const name of names) {
    const l = lg.get(name);
    const r = rg.get(name);
    const pe = (l ?? r)!.pe;
    const ln = l?.items.length ?? 0;
    const rn = r?.items.length ?? 0;
    const p = [...path, pe];
    if (ln <= 1 && rn <= 1) compareValue(atom.elem, l?.items[0], r?.items[0], p, c);
    else if (ln >= 2 && rn >= 2) {
      if (!jsonEqual(l!.items, r!.items)) c.modified.add(p);
    } else if (ln >= 2) {
      if (rn === 1) compareValue(atom.elem, undefined, r!.items[0], p, c);
      c.removed.add(p);
    } else {
      if (ln === 1) compareValue(atom.elem, l!.items[0], undefined, p, c);
      c.added.add(p);
    }
  }
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
  const out = removeValue(node, obj, fields, []);
  return out === undefined && isPlainObject(obj) ? {} : out;
}

function removeValue(node: TypeNode, value: unknown, toRemove: FieldSet, path: FieldPath): unknown {
  const atom = resolveAtom(node, value);
  if (atom.kind === 'scalar') return clone(value);
  if (atom.kind === 'list') {
    if (!Array.isArray(value) || value.length === 0 || atom.relationship === 'atomic') return clone(value);
    const out: unknown[] = [];
    for (const { pe, item } of indexList(atom, value, path, false)) {
      if (toRemove.hasMember(pe)) continue;
      const sub = toRemove.withPrefix(pe);
      const v = sub.isEmpty() ? clone(item) : removeValue(atom.elem, item, sub, [...path, pe]);
      if (v !== undefined) out.push(v);
    }
    return out.length > 0 ? out : undefined;
  }
  if (!isPlainObject(value) || Object.keys(value).length === 0 || atom.atomic) return clone(value);
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(value)) {
    const pe = fieldPE(k);
    if (toRemove.hasMember(pe)) continue;
    const sub = toRemove.withPrefix(pe);
    const v = sub.isEmpty() ? clone(value[k]) : removeValue(mapChildNode(atom, k), value[k], sub, [...path, pe]);
    if (v !== undefined) out[k] = v;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}
