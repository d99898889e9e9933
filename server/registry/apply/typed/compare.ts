// Which fields changed between two versions of an object (structured-merge-diff's typed/compare.go):
// added, modified and removed, by the schema's notion of a field.
import type { TypeNode } from '../../../schema/types.ts';
import { deepEqual, hasOwn, isPlainObject } from '../../../util/json.ts';
import type { PathElement } from '../fieldpath/element.ts';
import { PathStack } from '../fieldpath/path.ts';
import { fieldNamed } from '../fieldpath/serialize-pe.ts';
import { FieldSet, SetBuilder, level, type Entry } from '../fieldpath/set.ts';
import { asList, asMap, emptyList, emptyMap } from '../fieldpath/value.ts';
import { mapChildNode, resolveAtom, type Atom } from './atom.ts';
import { indexItems, type IndexedItem } from './list-items.ts';

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

// Values that are equal (deepEqual) compare as unchanged without being looked into (so problems
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
 * Whether two untyped values (both there) differ in shape: a map for a list, a scalar for a map...
 * — except null against a map, which structured-merge-diff takes for an empty map (a null value
 * fits any shape, and a map is tried first): merged and compared as two maps.
 */
export function untypedShapeChange(node: TypeNode, lhs: unknown, rhs: unknown): boolean {
  const kl = resolveAtom(node, lhs).kind;
  const kr = resolveAtom(node, rhs).kind;
  if (kl === kr) return false;
  return !((lhs === null && kr === 'map') || (rhs === null && kl === 'map'));
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
  return deepEqual(lhs, rhs) ? -1 : 0;
}

/**
 * What compareValue adds below a value's path when the value is on one side only (it always adds
 * the path itself); undefined when nothing.
 */
export function oneSided(node: TypeNode, v: unknown, stack: PathStack): FieldSet | undefined {
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
export function bothUndefined(): never {
  const atom = undefined as unknown as { kind: string };
  atom.kind.toString();
  throw new TypeError('undefined');
}

function leaf(lhs: unknown, rhs: unknown, c: Comparing): void {
  if (lhs === undefined) c.added.add();
  else if (rhs === undefined) c.removed.add();
  else if (!deepEqual(lhs, rhs)) c.modified.add();
}

/**
 * -1 when the maps are equal (deepEqual); else how many of a's first keys (Object.keys order) b
 * holds with equal values.
 */
export function equalKeys(a: Record<string, unknown>, b: Record<string, unknown>): number {
  // for-in over own keys visits them in Object.keys order, without allocating the arrays.
  let i = 0;
  for (const k in a) {
    if (!hasOwn(a, k)) continue;
    const v = a[k];
    // (an undefined value is compared, and fails, as it always was)
    if (v === undefined || !hasOwn(b, k) || !deepEqual(v, b[k])) return i;
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

export interface Group {
  pe: PathElement;
  name: string;
  items: unknown[];
}

export function groupItems(items: IndexedItem[]): Map<string, Group> {
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
    if (!deepEqual(l!.items, r!.items)) c.modified.add();
  } else if (ln >= 2) {
    if (rn === 1) compareValue(atom.elem, undefined, r!.items[0], c);
    c.removed.add();
  } else {
    if (ln === 1) compareValue(atom.elem, l!.items[0], undefined, c);
    c.added.add();
  }
  c.stack.pop();
}
