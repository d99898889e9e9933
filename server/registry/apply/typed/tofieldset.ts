// The fields an object sets (structured-merge-diff's typed/tofieldset.go), and
// ensureNamedFieldsAreMembers: every declared struct field with members below it made a member.
// Walks build their sets bottom-up, without paths, and may remember what they found below each
// container (FieldsMemo) for a later walk of an object that shares it.
import type { TypeNode } from '../../../schema/types.ts';
import { hasOwn, isPlainObject } from '../../../util/json.ts';
import { pathElementString, type PathElement } from '../fieldpath/element.ts';
import { fieldNamed, type Named } from '../fieldpath/serialize-pe.ts';
import { FieldSet, frozen, level, shareEntry, unionSets, type Entry } from '../fieldpath/set.ts';
import { SchemaError, UNTYPED, declaredField, resolveAtom, type Atom } from './atom.ts';
import { listItem } from './list-items.ts';

/**
 * The fields an object sets, as recorded for an applier: every scalar, every atomic list/map/struct
 * as one field, each list-map or set element (`k:`/`v:`) and every map key; struct fields that hold
 * an empty or null map contribute nothing. `strict` rejects repeated list elements (apply configs).
 */
export function fieldsOf(node: TypeNode, obj: unknown, strict = false): FieldSet {
  const w: Walk = { path: [], strict, ensure: false, memo: undefined };
  return rootLevel(walkFields(node, obj, w, false));
}

/**
 * What a walk of one object found below each container (map or list) it went through: a later
 * walk of an object that shares those containers takes their sets instead of walking them again.
 * Only for objects nobody modifies in between (the private copies apply() works on).
 */
export type FieldsMemo = Map<object, { node: TypeNode; set: FieldSet | undefined }>;

/**
 * ensureNamedFieldsAreMembers(node, fieldsOf(node, obj)) in one walk. With a memo, containers
 * another walk recorded are taken from it, and (`record`) containers walked are recorded.
 */
export function ensuredFieldsOf(node: TypeNode, obj: unknown, memo?: FieldsMemo, record = false): FieldSet {
  const w: Walk = { path: [], strict: false, ensure: true, memo };
  return rootLevel(walkFields(node, obj, w, record && memo !== undefined));
}

/** A walk for ensuredFieldsOf that records what it finds in memo. */
export function ensuringWalk(memo: FieldsMemo): Walk {
  return { path: [], strict: false, ensure: true, memo };
}

/** walkFields for other walks that build sets the same way (applyMerge); then walkedSelf() is its second result. */
export function walkFieldsBelow(node: TypeNode, value: unknown, w: Walk, record: boolean): FieldSet | undefined {
  return walkFields(node, value, w, record);
}

export function walkedSelf(): boolean {
  return selfMember;
}

export function rootLevel(s: FieldSet | undefined): FieldSet {
  return s === undefined ? new FieldSet() : s._frozen ? s._thaw() : s;
}

export interface Walk {
  /** The path so far, for error messages. */
  path: PathElement[];
  strict: boolean;
  /** Also add declared struct fields that have members below them (ensureNamedFieldsAreMembers). */
  ensure: boolean;
  memo: FieldsMemo | undefined;
}

/** The second result of walkFields: whether the value's path itself is a field. */
let selfMember = false;

/**
 * What another walk recorded below a container (not the root) for the same node: its set, shared
 * (undefined: nothing below), selfMember false as for any container; null when nothing was
 * recorded or this walk records.
 */
function recorded(w: Walk, node: TypeNode, value: object, record: boolean): FieldSet | undefined | null {
  const memo = w.memo;
  if (memo === undefined || record || w.path.length === 0) return null;
  const hit = memo.get(value);
  if (hit === undefined || hit.node !== node) return null;
  selfMember = false;
  return hit.set === undefined ? undefined : frozen(hit.set);
}

/** The fields below a value's path (undefined: none); selfMember tells whether the path itself is one. */
function walkFields(node: TypeNode, value: unknown, w: Walk, record: boolean): FieldSet | undefined {
  const atom = resolveAtom(node, value);
  if (atom.kind === 'scalar') {
    selfMember = true;
    return undefined;
  }
  if (atom.kind === 'list') {
    if (atom.relationship === 'atomic' || !Array.isArray(value)) {
      selfMember = atom.relationship === 'atomic' || (value !== null && value !== undefined);
      return undefined;
    }
    const hit = recorded(w, node, value, record);
    if (hit !== null) return hit;
    const path = w.path;
    const strict = w.strict;
    // Every element is named (and checked) before any is walked.
    const names: Named[] = new Array(value.length);
    let seen: Set<string> | undefined;
    let repeated = false;
    for (let i = 0; i < value.length; i++) {
      const n = listItem(atom, i, value[i], path);
      if (i > 0) {
        if (seen === undefined) {
          seen = new Set();
          for (let j = 0; j < i; j++) seen.add(names[j].name);
        }
        if (seen.has(n.name)) {
          if (strict) throw new SchemaError(path.slice(), `duplicate entries for key ${pathElementString(n.pe)}`);
          repeated = true;
        }
        seen.add(n.name);
      }
      names[i] = n;
    }
    const entries: Entry[] = [];
    // Repeated elements share their path: no element's set is its own to remember.
    const recordItems = record && !repeated;
    for (let i = 0; i < value.length; i++) {
      const n = names[i];
      path.push(n.pe);
      const sub = walkFields(atom.elem, value[i], w, recordItems);
      path.pop();
      if (repeated) {
        let e: Entry | undefined;
        for (let j = 0; j < entries.length; j++) if (entries[j].name === n.name) e = entries[j];
        if (e !== undefined) {
          if (sub !== undefined) e.sub = e.sub === undefined ? sub : unionSets(e.sub, sub, true);
          continue;
        }
      }
      entries.push({ name: n.name, pe: n.pe, member: true, sub });
    }
    const out = entries.length > 0 ? level(entries, false) : undefined;
    if (record) w.memo!.set(value, { node, set: out });
    selfMember = false;
    return out;
  }
  if (atom.atomic) {
    selfMember = true;
    return undefined;
  }
  if (!isPlainObject(value)) {
    selfMember = value !== null && value !== undefined; // not a map at all: a leaf
    return undefined;
  }
  const hit = recorded(w, node, value, record);
  if (hit !== null) return hit;
  const path = w.path;
  const declared = atom.declared;
  const elem = atom.elem;
  const ensure = w.ensure;
  const entries: Entry[] = [];
  for (const key in value) {
    if (!hasOwn(value, key)) continue;
    const n = fieldNamed(key);
    const child = declared !== undefined ? declared.get(key) : atom.fields && hasOwn(atom.fields, key) ? atom.fields[key] : undefined;
    path.push(n.pe);
    const v = value[key];
    const sub = walkFields(child ?? elem, v, w, record);
    path.pop();
    const member = child === undefined || selfMember || (ensure && (sub !== undefined || nullOrEmptyMap(v)));
    if (member || sub !== undefined) entries.push({ name: n.name, pe: n.pe, member, sub });
  }
  const out = entries.length > 0 ? level(entries, false) : undefined;
  if (record) w.memo!.set(value, { node, set: out });
  selfMember = false;
  return out;
}

/**
 * A value structured-merge-diff records as a field wherever it is (a struct field's too): null, or
 * a map with no entries. (fieldsOf, the non-ensuring walk, does not: see walkFields.)
 */
export function nullOrEmptyMap(v: unknown): boolean {
  if (v === null) return true;
  if (typeof v !== 'object' || Array.isArray(v)) return false;
  for (const k in v) if (hasOwn(v, k)) return false;
  return true;
}

/**
 * The set plus, as members, every struct field declared by the schema that has members below it —
 * so that owning `.spec.replicas` also protects `.spec` itself when fields are pruned.
 */
export function ensureNamedFieldsAreMembers(node: TypeNode | undefined, set: FieldSet): FieldSet {
  return ensureNamed(node, set, true);
}

/** ensureNamedFieldsAreMembers for sets that are only read: the set itself (shared) when it has nothing to add. */
export function ensureNamedShared(node: TypeNode | undefined, set: FieldSet): FieldSet {
  return ensureNamed(node, set, false);
}

/** ensureNamedFieldsAreMembers; unless `fresh`, the set itself (shared) when it has nothing to add. */
function ensureNamed(node: TypeNode | undefined, set: FieldSet, fresh: boolean, immutable = set._frozen): FieldSet {
  if (!fresh && immutable) {
    frozen(set);
    if (set._enNode === (node ?? null)) return set._en!;
    const en = frozen(ensureLevel(node, set, false, true));
    set._en = en;
    set._enNode = node ?? null;
    return en;
  }
  return ensureLevel(node, set, fresh, false);
}

/** ensureNamed of one level (`immutable`: the level is frozen, and so everything below). */
function ensureLevel(node: TypeNode | undefined, set: FieldSet, fresh: boolean, immutable: boolean): FieldSet {
  let out: Entry[] | undefined;
  const m = set._e;
  if (fresh) out = [];
  for (let i = 0; i < m.length; i++) {
    const e = m[i];
    let member = e.member;
    let sub: FieldSet | undefined;
    if (e.sub) {
      const pe = e.pe;
      if (!member && declaredStructField(node, pe)) member = true;
      sub = ensureNamed(ensureChild(node, pe), e.sub, false, immutable || e.sub._frozen);
    }
    if (out === undefined && (member !== e.member || sub !== e.sub)) {
      // First difference: copy the entries before this one.
      out = [];
      for (let j = 0; j < i; j++) out.push(shareEntry(m[j]));
    }
    if (out !== undefined) out.push({ name: e.name, pe: e.pe, member, sub });
  }
  return out === undefined ? frozen(set) : level(out, set._ordered);
}

/** Whether ensureNamedFieldsAreMembers makes pe (with members below it) a member: a field the struct node declares. */
function declaredStructField(node: TypeNode | undefined, pe: PathElement): boolean {
  if (node === undefined || node.type !== 'object' || !('field' in pe)) return false;
  return declaredField(resolveAtom(node, undefined) as Atom & { kind: 'map' }, pe.field) !== undefined;
}

/** The node ensureNamedFieldsAreMembers looks below pe with (undefined: no struct fields below). */
function ensureChild(node: TypeNode | undefined, pe: PathElement): TypeNode | undefined {
  if (node === undefined) return undefined;
  if ('field' in pe) {
    switch (node.type) {
      case 'object':
        return declaredField(resolveAtom(node, undefined) as Atom & { kind: 'map' }, pe.field) ?? UNTYPED;
      case 'map':
        return node.values ?? UNTYPED;
      case 'any':
        return UNTYPED;
      default:
        return undefined;
    }
  }
  return 'key' in pe && node.type === 'array' ? node.items : undefined;
}

/** a − ensureNamedFieldsAreMembers(node, m), without building the latter; for sets that are only read. */
export function differenceEnsured(a: FieldSet, m: FieldSet, node: TypeNode | undefined): FieldSet {
  return subtractEnsured(a, m, node) ?? new FieldSet();
}

function subtractEnsured(a: FieldSet, m: FieldSet, node: TypeNode | undefined): FieldSet | undefined {
  if (a._e.length === 0) return undefined;
  if (m._e.length === 0) return frozen(a);
  const out: Entry[] = [];
  let changed = false;
  for (const e of a._e) {
    const oe = m._get(e.name);
    if (oe === undefined) {
      out.push(shareEntry(e));
      continue;
    }
    const oMember = oe.member || (oe.sub !== undefined && declaredStructField(node, oe.pe));
    const member = e.member && !oMember;
    const sub = e.sub ? (oe.sub ? subtractEnsured(e.sub, oe.sub, ensureChild(node, oe.pe)) : frozen(e.sub)) : undefined;
    if (member !== e.member || sub !== e.sub) changed = true;
    if (!member && !sub) continue;
    out.push({ name: e.name, pe: e.pe, member, sub });
  }
  if (!changed) return frozen(a);
  return out.length === 0 ? undefined : level(out, a._ordered);
}

/** The node below pe, as ensureNamedFieldsAreMembers looks (undefined: no struct fields below). */
export function nodeBelow(node: TypeNode | undefined, pe: PathElement): TypeNode | undefined {
  return ensureChild(node, pe);
}
