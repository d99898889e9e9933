// The schema-aware half of Server-Side Apply's field sets: turning an object into the set of fields
// it sets (fieldsOf), the way ownership is recorded for an applied configuration. (Being split into
// typed/; the sets themselves are in fieldpath/.)
import type { TypeNode } from '../../schema/types.ts';
import { isPlainObject } from '../../util/json.ts';
import { goJsonMarshal } from '../../go/json.ts';
import { goSprint, goTypeName, goSharpV } from '../../go/fmt.ts';
import { compareStrings } from '../../go/strings.ts';
import { hasOwn, isScalarValue } from './fieldpath/value.ts';
import { indexPE, pathElementString, type PathElement } from './fieldpath/element.ts';
import { fieldNamed, withName, type Named } from './fieldpath/serialize-pe.ts';
import { pathString, snapshot, type FieldPath, type PathSource } from './fieldpath/path.ts';
import { FieldSet, frozen, level, shareEntry, sortSmall, unionSets, type Entry } from './fieldpath/set.ts';

export * from './fieldpath/value.ts';
export * from './fieldpath/element.ts';
export * from './fieldpath/serialize-pe.ts';
export * from './fieldpath/path.ts';
export * from './fieldpath/set.ts';

// ---------------------------------------------------------------------------------------------
// Schema view: how each TypeNode behaves for Server-Side Apply.

/** No type information: maps are granular, lists atomic, everything else a scalar. */
export const UNTYPED: TypeNode = { type: 'any' };

export type Atom =
  | { kind: 'scalar' }
  | { kind: 'map'; atomic: boolean; fields: Record<string, TypeNode> | undefined; elem: TypeNode; declared?: Map<string, TypeNode> }
  | { kind: 'list'; relationship: 'atomic' | 'set' | 'map'; keys: string[]; elem: TypeNode };

/** The list semantics of an array node: x-kubernetes-list-type, else a merge patch strategy, else atomic. */
export function listRelationship(node: TypeNode): { relationship: 'atomic' | 'set' | 'map'; keys: string[] } {
  if (node.listType === 'map') {
    const keys = node.listMapKeys ?? (node.patchMergeKey ? [node.patchMergeKey] : []);
    return keys.length > 0 ? { relationship: 'map', keys } : { relationship: 'set', keys: [] };
  }
  if (node.listType === 'set') return { relationship: 'set', keys: [] };
  if (node.listType === 'atomic') return { relationship: 'atomic', keys: [] };
  if (node.patchStrategy === 'merge' || node.patchStrategy === 'merge,retainKeys') {
    return node.patchMergeKey ? { relationship: 'map', keys: [node.patchMergeKey] } : { relationship: 'set', keys: [] };
  }
  return { relationship: 'atomic', keys: [] };
}

const SCALAR_ATOM: Atom = { kind: 'scalar' };
const UNTYPED_LIST: Atom = { kind: 'list', relationship: 'atomic', keys: [], elem: UNTYPED };
const UNTYPED_MAP: Atom = { kind: 'map', atomic: false, fields: undefined, elem: UNTYPED };
/** Atoms of typed nodes, which do not depend on the value. */
const ATOMS = new WeakMap<TypeNode, Atom>();

function typedAtom(node: TypeNode): Atom {
  switch (node.type) {
    case 'object': {
      const fields = node.properties ?? {};
      const declared = new Map<string, TypeNode>();
      for (const k of Object.getOwnPropertyNames(fields)) declared.set(k, fields[k]);
      return { kind: 'map', atomic: node.mapType === 'atomic', fields, elem: UNTYPED, declared };
    }
    case 'map':
      return { kind: 'map', atomic: node.mapType === 'atomic', fields: undefined, elem: node.values ?? UNTYPED };
    case 'array': {
      const { relationship, keys } = listRelationship(node);
      return { kind: 'list', relationship, keys, elem: node.items ?? UNTYPED };
    }
    default:
      return SCALAR_ATOM;
  }
}

/** The atom a node has, deducing it from the value where the schema says nothing ('any'). */
export function resolveAtom(node: TypeNode, value: unknown): Atom {
  if (node.type === 'any') {
    if (Array.isArray(value)) return UNTYPED_LIST;
    if (isPlainObject(value)) return UNTYPED_MAP;
    return SCALAR_ATOM;
  }
  let a = ATOMS.get(node);
  if (a === undefined) {
    a = typedAtom(node);
    ATOMS.set(node, a);
  }
  return a;
}

/** The node of a map/struct entry. */
export function mapChildNode(atom: Atom & { kind: 'map' }, key: string): TypeNode {
  const declared = atom.declared;
  if (declared !== undefined) return declared.get(key) ?? atom.elem;
  if (atom.fields && hasOwn(atom.fields, key)) return atom.fields[key];
  return atom.elem;
}

/** A key of a map or struct: its FieldsV1 name and element, its node, and (declared fields) its place in kube's order. */
export interface FieldInfo {
  readonly key: string;
  readonly name: string;
  readonly pe: PathElement;
  readonly node: TypeNode;
  /** Position among the struct's declared fields in kube's order; -1 for map keys and undeclared fields. */
  readonly rank: number;
  /** The node is a typed scalar: every value of it is one field, with nothing below it. */
  readonly scalar: boolean;
}

function typedScalar(node: TypeNode): boolean {
  return node.type !== 'any' && resolveAtom(node, undefined).kind === 'scalar';
}

/** The declared fields of struct atoms, by key. */
const FIELD_TABLES = new WeakMap<Atom, Map<string, FieldInfo> | null>();

function fieldTable(atom: Atom & { kind: 'map' }): Map<string, FieldInfo> | null {
  let t = FIELD_TABLES.get(atom);
  if (t === undefined) {
    t = null;
    if (atom.declared !== undefined && atom.declared.size > 0) {
      t = new Map();
      const keys = [...atom.declared.keys()].sort(compareStrings);
      for (let i = 0; i < keys.length; i++) {
        const n = fieldNamed(keys[i]);
        const node = atom.declared.get(keys[i])!;
        t.set(keys[i], { key: keys[i], name: n.name, pe: n.pe, node, rank: i, scalar: typedScalar(node) });
      }
    }
    FIELD_TABLES.set(atom, t);
  }
  return t;
}

function byRank(a: FieldInfo, b: FieldInfo): number {
  return a.rank - b.rank;
}

function byKey(a: FieldInfo, b: FieldInfo): number {
  return compareStrings(a.key, b.key);
}

/** Recent key lists of struct atoms and what orderedFields made of them (objects of a kind mostly list the same keys, in the same order). */
interface Shape {
  keys: readonly string[];
  fields: readonly FieldInfo[];
}
const SHAPES = new WeakMap<Atom, Shape[]>();
/** Shapes kept per atom, the most recently used first. */
const SHAPES_PER_ATOM = 4;

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * The keys of a map or struct with what mapChildNode and fieldNamed say of them, in kube's order
 * (that of their `f:` names): declared fields by their precomputed rank, other keys by name. For
 * structs whose keys are all declared, the answer for the same key list is remembered (shared:
 * callers only read it).
 */
export function orderedFields(atom: Atom & { kind: 'map' }, keys: readonly string[]): readonly FieldInfo[] {
  const table = fieldTable(atom);
  if (table === null) return sortFields(atom, table, keys);
  let shapes = SHAPES.get(atom);
  if (shapes !== undefined) {
    for (let i = 0; i < shapes.length; i++) {
      const sh = shapes[i];
      if (!sameKeys(sh.keys, keys)) continue;
      if (i > 0) {
        shapes.splice(i, 1);
        shapes.unshift(sh);
      }
      return sh.fields;
    }
  }
  const fields = sortFields(atom, table, keys);
  // Only key lists made of declared fields: those are few; map keys are data.
  for (let i = 0; i < fields.length; i++) if (fields[i].rank < 0) return fields;
  if (shapes === undefined) SHAPES.set(atom, (shapes = []));
  shapes.unshift({ keys: keys.slice(), fields });
  if (shapes.length > SHAPES_PER_ATOM) shapes.pop();
  return fields;
}

function sortFields(atom: Atom & { kind: 'map' }, table: Map<string, FieldInfo> | null, keys: readonly string[]): FieldInfo[] {
  const out: FieldInfo[] = new Array(keys.length);
  let ranked = true;
  let elemScalar: boolean | undefined;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i];
    let f = table === null ? undefined : table.get(k);
    if (f === undefined) {
      const n = fieldNamed(k);
      f = { key: k, name: n.name, pe: n.pe, node: atom.elem, rank: -1, scalar: (elemScalar ??= typedScalar(atom.elem)) };
      ranked = false;
    }
    out[i] = f;
  }
  return sortSmall(out, ranked ? byRank : byKey);
}

/** The declared node of a struct field; undefined for map keys and undeclared fields. */
export function declaredField(atom: Atom & { kind: 'map' }, key: string): TypeNode | undefined {
  const declared = atom.declared;
  if (declared !== undefined) return declared.get(key);
  return atom.fields && hasOwn(atom.fields, key) ? atom.fields[key] : undefined;
}

/** A schema problem in an object, reported with its path as structured-merge-diff does. */
export class SchemaError extends Error {
  constructor(
    readonly path: FieldPath,
    readonly detail: string,
  ) {
    super(path.length > 0 ? `${pathString(path)}: ${detail}` : detail);
  }
}

/**
 * Key fields the API defaults when an element omits them (kube fills the default in when it builds
 * the element's path). The stripped definitions carry no defaults, so the few that matter are here.
 */
const KEY_DEFAULTS: Record<string, Record<string, unknown>> = {
  'io.k8s.api.core.v1.ContainerPort': { protocol: 'TCP' },
  'io.k8s.api.core.v1.ServicePort': { protocol: 'TCP' },
};

/** The value a list-map element's key field takes when the element omits it (undefined: none). */
export function keyFieldDefault(elem: TypeNode | undefined, field: string): unknown {
  return elem?.definition ? KEY_DEFAULTS[elem.definition]?.[field] : undefined;
}

/** The node below pe, as ensureNamedFieldsAreMembers looks (undefined: no struct fields below). */
export function nodeBelow(node: TypeNode | undefined, pe: PathElement): TypeNode | undefined {
  return ensureChild(node, pe);
}

/** How a list-map's key fields are written: sorted by name, each with its JSON name prefix. */
interface KeyLayout {
  /** Positions in atom.keys, in name order. */
  order: number[];
  /** `"name":` for each key in atom.keys. */
  prefixes: string[];
}
const KEY_LAYOUTS = new WeakMap<object, KeyLayout>();

function keyLayout(atom: Atom & { kind: 'list' }): KeyLayout {
  let l = KEY_LAYOUTS.get(atom);
  if (l === undefined) {
    // A key named twice is written once (as an object's key would be).
    const order = atom.keys
      .map((_, i) => i)
      .filter((i) => atom.keys.indexOf(atom.keys[i]) === i)
      .sort((i, j) => compareStrings(atom.keys[i], atom.keys[j]));
    l = { order, prefixes: atom.keys.map((k) => goJsonMarshal(k) + ':') };
    KEY_LAYOUTS.set(atom, l);
  }
  return l;
}

/** Names of list elements by their scalar key values (or set values), per list atom. */
interface ElementCache {
  /** For one key (or a set): value → element; for several keys, nested by key in atom.keys order. */
  root: Map<unknown, unknown>;
  size: number;
}
const ELEMENT_CACHES = new WeakMap<object, ElementCache>();
const ELEMENT_CACHE_LIMIT = 10_000;

function elementCache(atom: object): ElementCache {
  let c = ELEMENT_CACHES.get(atom);
  if (c === undefined) {
    c = { root: new Map(), size: 0 };
    ELEMENT_CACHES.set(atom, c);
  }
  return c;
}

/**
 * listItemPathElement with the element's name, shared for scalar keys and values. Schema
 * problems throw plain Errors (wrapped by the caller); naming an undefined value throws a TypeError
 * as serializing it always did.
 */
function listItemNamed(atom: Atom & { kind: 'list' }, index: number, item: unknown): Named {
  if (atom.relationship === 'map') {
    if (item === null) throw new Error('associative list with keys may not have a null element');
    if (!isPlainObject(item)) throw new Error('associative list with keys may not have non-map elements');
    const keys = atom.keys;
    if (keys.length === 1) {
      const k = keys[0];
      const v = hasOwn(item, k) ? item[k] : keyDefault(atom, k);
      if (!isScalarValue(v)) return namedKey(atom, [v]);
      const cache = elementCache(atom);
      const hit = cache.root.get(v) as Named | undefined;
      if (hit !== undefined) return hit;
      const n = namedKey(atom, [v]);
      remember(cache, cache.root, v, n);
      return n;
    }
    const vals: unknown[] = new Array(keys.length);
    let scalar = true;
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i];
      const v = hasOwn(item, k) ? item[k] : keyDefault(atom, k);
      vals[i] = v;
      if (!isScalarValue(v)) scalar = false;
    }
    if (!scalar) return namedKey(atom, vals);
    const cache = elementCache(atom);
    let level = cache.root;
    for (let i = 0; i < vals.length - 1; i++) {
      let next = level.get(vals[i]) as Map<unknown, unknown> | undefined;
      if (next === undefined) level.set(vals[i], (next = new Map()));
      level = next;
    }
    const last = vals[vals.length - 1];
    const hit = level.get(last) as Named | undefined;
    if (hit !== undefined) return hit;
    const n = namedKey(atom, vals);
    remember(cache, level, last, n);
    return n;
  }
  if (atom.relationship === 'set') {
    if (item === null) throw new Error("associative list without keys has an element that's an explicit null");
    if (isPlainObject(item)) throw new Error("associative list without keys has an element that's a map type");
    if (Array.isArray(item)) throw new Error('not supported: associative list with lists as elements');
    if (!isScalarValue(item)) return namedValue(item);
    const cache = elementCache(atom);
    const hit = cache.root.get(item) as Named | undefined;
    if (hit !== undefined) return hit;
    const n = namedValue(item);
    remember(cache, cache.root, item, n);
    return n;
  }
  return { pe: { index }, name: 'i:' + index };
}

function remember(cache: ElementCache, level: Map<unknown, unknown>, v: unknown, n: Named): void {
  if (cache.size >= ELEMENT_CACHE_LIMIT) {
    cache.root.clear();
    cache.size = 0;
    return;
  }
  level.set(v, n);
  cache.size++;
}

/** The k: element of a list-map item whose key values (in atom.keys order) are vals. */
function namedKey(atom: Atom & { kind: 'list' }, vals: unknown[]): Named {
  const layout = keyLayout(atom);
  const keys = atom.keys;
  let name = 'k:{';
  const key: (readonly [string, unknown])[] = new Array(layout.order.length);
  for (let i = 0; i < layout.order.length; i++) {
    const j = layout.order[i];
    if (i > 0) name += ',';
    name += layout.prefixes[j] + goJSONOrThrow(vals[j]);
    key[i] = [keys[j], vals[j]];
  }
  name += '}';
  return withName({ key }, name);
}

function namedValue(v: unknown): Named {
  return withName({ value: v }, 'v:' + goJSONOrThrow(v));
}

function keyDefault(atom: Atom & { kind: 'list' }, k: string): unknown {
  const def = atom.elem.definition ? KEY_DEFAULTS[atom.elem.definition]?.[k] : undefined;
  if (def === undefined) throw new Error(`associative list with keys has an element that omits key field ${JSON.stringify(k)} (and doesn't have default value)`);
  return def;
}

/** Marks the TypeError of naming an undefined value, so that the caller does not wrap it. */
class NamingError extends Error {
  constructor(readonly inner: unknown) {
    super('naming');
  }
}

function goJSONOrThrow(v: unknown): string {
  try {
    return goJsonMarshal(v);
  } catch (e) {
    throw new NamingError(e);
  }
}

/** The element of list item i, with a schema problem reported at the list's path. */
export function listItem(atom: Atom & { kind: 'list' }, i: number, item: unknown, path: PathSource): Named {
  try {
    return listItemNamed(atom, i, item);
  } catch (e) {
    if (e instanceof NamingError) throw e.inner;
    throw new SchemaError(snapshot(path), `element ${i}: ${(e as Error).message}`);
  }
}

export interface IndexedItem {
  pe: PathElement;
  name: string;
  item: unknown;
}

/** Path elements of a list's elements; with `strict`, a repeated element is an error. */
export function indexItems(atom: Atom & { kind: 'list' }, list: unknown[], path: PathSource, strict: boolean): IndexedItem[] {
  const out: IndexedItem[] = new Array(list.length);
  const seen = strict ? new Set<string>() : undefined;
  for (let i = 0; i < list.length; i++) {
    const item = list[i];
    const n = listItem(atom, i, item, path);
    if (seen) {
      if (seen.has(n.name)) throw new SchemaError(snapshot(path), `duplicate entries for key ${pathElementString(n.pe)}`);
      seen.add(n.name);
    }
    out[i] = { pe: n.pe, name: n.name, item };
  }
  return out;
}

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
    const path = w.path;
    const memo = w.memo;
    if (memo !== undefined && !record && path.length > 0) {
      const hit = memo.get(value);
      if (hit !== undefined && hit.node === node) {
        selfMember = false;
        return hit.set === undefined ? undefined : frozen(hit.set);
      }
    }
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
    if (record) memo!.set(value, { node, set: out });
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
  const path = w.path;
  const memo = w.memo;
  if (memo !== undefined && !record && path.length > 0) {
    const hit = memo.get(value);
    if (hit !== undefined && hit.node === node) {
      selfMember = false;
      return hit.set === undefined ? undefined : frozen(hit.set);
    }
  }
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
  if (record) memo!.set(value, { node, set: out });
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

/**
 * Where a set disagrees with the schema after the schema made a granular field atomic: the paths
 * of atomic fields the set owns parts of. (A field made granular is not reconciled: as in
 * structured-merge-diff, its owner keeps owning the field itself and nothing below it.)
 */
export type SchemaMismatches = FieldPath[];

export const NO_MISMATCHES: SchemaMismatches = [];
const ATOMIC_HERE: SchemaMismatches = [[]];

export function schemaMismatches(node: TypeNode, set: FieldSet): SchemaMismatches {
  if (node.type === 'any' || set.isEmpty()) return NO_MISMATCHES; // untyped values carry no atomic/granular marks
  const atom = resolveAtom(node, undefined);
  if (atom.kind === 'scalar' || (atom.kind === 'list' ? atom.relationship === 'atomic' : atom.atomic)) return NO_MISMATCHES;
  return mismatchesBelow(node, set, set._frozen);
}

/**
 * The mismatches of a non-empty level at node, relative to the level's path; remembered on frozen
 * levels (`immutable`: below a frozen level, which makes this one unchangeable too).
 */
function mismatchesBelow(n: TypeNode, s: FieldSet, immutable: boolean): SchemaMismatches {
  if (n.type === 'any') return NO_MISMATCHES;
  const atom = resolveAtom(n, undefined);
  if (atom.kind === 'scalar') return NO_MISMATCHES;
  if (atom.kind === 'list' ? atom.relationship === 'atomic' : atom.atomic) return ATOMIC_HERE;
  if (immutable) frozen(s);
  else immutable = s._frozen;
  if (immutable && s._mmNode === n) return s._mm!;
  let out: SchemaMismatches | undefined;
  for (const e of s._e) {
    if (e.sub === undefined) continue;
    const pe = e.pe;
    const child = atom.kind === 'list' ? atom.elem : 'field' in pe ? mapChildNode(atom, pe.field) : UNTYPED;
    const r = mismatchesBelow(child, e.sub, immutable);
    if (r === NO_MISMATCHES) continue;
    out ??= [];
    for (const p of r) out.push([pe, ...p]);
  }
  const result = out ?? NO_MISMATCHES;
  if (immutable) {
    s._mm = result;
    s._mmNode = n;
  }
  return result;
}

/**
 * Problems that make an apply configuration unusable as a typed object, one message per problem
 * in structured-merge-diff's words: undeclared struct fields, list elements without their key
 * fields, repeated keys or set values.
 */
export function validateApplyConfiguration(node: TypeNode, obj: unknown): string[] {
  return checkedFieldsOf(node, obj).problems;
}

/**
 * validateApplyConfiguration, and in the same walk the fields the configuration sets —
 * fieldsOf(node, obj) — when it has no problems.
 */
export function checkedFieldsOf(node: TypeNode, obj: unknown): { problems: string[]; fields: FieldSet | undefined } {
  const problems: string[] = [];
  const fields = checkValue(node, obj, [], problems);
  return { problems, fields: problems.length > 0 ? undefined : rootLevel(fields) };
}

/**
 * Checks a value, returning (with selfMember) what walkFields returns for it — meaningful only
 * when no problem is found, for then the two walks go the same way.
 */
function checkValue(node: TypeNode, value: unknown, path: PathElement[], errors: string[]): FieldSet | undefined {
  const atom = resolveAtom(node, value);
  if (atom.kind === 'scalar') {
    if (node.type !== 'any' && value !== null && value !== undefined) {
      const problem = scalarProblem(node, value);
      if (problem !== undefined) errors.push(new SchemaError(path, problem).message);
    }
    selfMember = true;
    return undefined;
  }
  if (atom.kind === 'list') {
    if (!Array.isArray(value)) {
      if (value !== null && value !== undefined) errors.push(new SchemaError(path, `expected list, got ${valueV(value)}`).message);
      selfMember = atom.relationship === 'atomic' || (value !== null && value !== undefined);
      return undefined;
    }
    if (atom.relationship === 'atomic') {
      for (let i = 0; i < value.length; i++) {
        const item = value[i];
        if (resolveAtom(atom.elem, item).kind === 'scalar') continue;
        path.push(indexPE(i));
        checkValue(atom.elem, item, path, errors);
        path.pop();
      }
      selfMember = true;
      return undefined;
    }
    const entries: Entry[] = [];
    let seen: Set<string> | undefined;
    for (let i = 0; i < value.length; i++) {
      const item = value[i];
      let n: Named;
      try {
        n = listItemNamed(atom, i, item);
      } catch (e) {
        if (e instanceof NamingError) throw e.inner;
        errors.push(new SchemaError(path, `element ${i}: ${(e as Error).message}`).message);
        continue;
      }
      if (entries.length > 0) {
        if (seen === undefined) {
          seen = new Set();
          for (const x of entries) seen.add(x.name);
        }
        if (seen.has(n.name)) {
          errors.push(new SchemaError(path, `duplicate entries for key ${pathElementString(n.pe)}`).message);
          continue;
        }
      }
      seen?.add(n.name);
      path.push(n.pe);
      const sub = checkValue(atom.elem, item, path, errors);
      path.pop();
      entries.push({ name: n.name, pe: n.pe, member: true, sub });
    }
    selfMember = false;
    return entries.length > 0 ? level(entries, false) : undefined;
  }
  if (!isPlainObject(value)) {
    if (value !== null && value !== undefined) errors.push(new SchemaError(path, `expected map, got ${valueV(value)}`).message);
    selfMember = atom.atomic || (value !== null && value !== undefined);
    return undefined;
  }
  const fields = atom.fields;
  const entries: Entry[] = [];
  for (const key of Object.keys(value)) {
    const child = fields !== undefined ? declaredField(atom, key) : undefined;
    if (fields && child === undefined && !node.preserveUnknownFields) {
      path.push(fieldNamed(key).pe);
      errors.push(new SchemaError(path, 'field not declared in schema').message);
      path.pop();
      continue;
    }
    const n = fieldNamed(key);
    const v = value[key];
    path.push(n.pe);
    const sub = checkValue(child ?? atom.elem, v, path, errors);
    path.pop();
    // A declared field set to null or to an empty map is a field itself (what the configuration
    // says of it: owned, and not pruned), as structured-merge-diff records it.
    const member = child === undefined || selfMember || nullOrEmptyMap(v);
    if (member || sub !== undefined) entries.push({ name: n.name, pe: n.pe, member, sub });
  }
  // An atomic map or struct is one field, whatever it holds.
  selfMember = atom.atomic;
  return atom.atomic || entries.length === 0 ? undefined : level(entries, false);
}

/**
 * structured-merge-diff's check of a typed scalar (validateScalar), worded as it prints the value:
 * the value.Value holding it, with %T, %#v or %v. Integers and floats are both numeric;
 * int-or-string, Quantity and formatted strings take any scalar (kube-openapi's schemaconv).
 */
function scalarProblem(node: TypeNode, v: unknown): string | undefined {
  switch (node.type) {
    case 'integer':
    case 'number':
      return typeof v === 'number' ? undefined : `expected numeric (int or float), got ${goTypeName(v)}`;
    case 'string':
      // A format other than byte (date-time: metav1.Time) makes the scalar untyped there.
      if (node.format && node.format !== 'byte') return typeof v === 'object' ? `expected any scalar, got ${valueV(v)}` : undefined;
      return typeof v === 'string' ? undefined : `expected string, got &value.valueUnstructured{Value:${goSharpV(v)}}`;
    case 'boolean':
      return typeof v === 'boolean' ? undefined : `expected boolean, got ${valueV(v)}`;
    case 'int-or-string':
      return typeof v === 'object' ? `expected any scalar, got ${valueV(v)}` : undefined;
  }
  return undefined;
}

/** %v of the *valueUnstructured holding a decoded value: `&{5}`, `&{map[a:b]}`. */
function valueV(v: unknown): string {
  return `&{${goSprint(v)}}`;
}

