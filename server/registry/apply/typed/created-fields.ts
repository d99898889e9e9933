// The FieldsV1 a create records for its writer, written in one walk of the object against the
// kind's zero value: compareObjects, set difference and FieldSet.toFieldsV1 in one, without sets.
import type { TypeNode } from '../../../schema/types.ts';
import { deepEqual, hasOwn, isPlainObject } from '../../../util/json.ts';
import type { PathElement } from '../fieldpath/element.ts';
import { PathStack } from '../fieldpath/path.ts';
import { fieldNamed } from '../fieldpath/serialize-pe.ts';
import { FieldSet, sortEntries } from '../fieldpath/set.ts';
import { asList, asMap, emptyList, emptyMap } from '../fieldpath/value.ts';
import { mapChildNode, orderedFields, resolveAtom, type Atom, type FieldInfo } from './atom.ts';
import { bothUndefined, equalKeys, groupItems, oneSided, untypedShapeChange, type Group } from './compare.ts';
import { indexItems, type IndexedItem } from './list-items.ts';

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
    } else if (deepEqual(lhs, rhs)) return undefined;
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
  const owned = lhs === undefined ? true : rhs === undefined ? false : !deepEqual(lhs, rhs);
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
    v = !deepEqual(l!.items, r!.items) && !se?.member ? LEAF : undefined;
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
