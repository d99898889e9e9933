// Sets of field paths, as Server-Side Apply tracks ownership, and their FieldsV1 wire form.
//
// A path is a list of path elements: `f:<name>` (a struct field or map key), `k:<json>` (the element
// of a list-map, named by its key fields), `v:<json>` (the element of a set) and `i:<index>` (an
// element of an atomic list; never produced from a schema, only carried when read). A set is a trie:
// at each level the elements that are members themselves and the children that lead to deeper
// members. Serialized, a member is `{}`, a child is an object of its own, and a node that is both
// begins with `".":{}` — the order and spelling kube-apiserver writes.
//
// The schema-aware half of this file turns an object into the set of fields it sets (fieldsOf),
// the way ownership is recorded for an applied configuration.
//
// Performance notes (this code runs on every write): a trie level is an array of entries keyed by
// the element's FieldsV1 name (indexed by a Map when large), so names are computed once per
// element (interned for field names and scalar-keyed list elements) and never again per
// operation; levels remember whether they are in kube's order, so only new ones are sorted; set
// operations share unchanged levels copy-on-write (frozen) instead of cloning them, and frozen
// levels remember what is derived from them; schema atoms are computed once per TypeNode; walks
// build their sets bottom-up, without paths.
import type { TypeNode } from '../../schema/types.ts';
import { isPlainObject } from '../../util/json.ts';
import { goJsonMarshal } from '../../go/json.ts';
import { goSprint, goTypeName, goSharpV } from '../../go/fmt.ts';
import { compareStrings } from '../../go/strings.ts';

export type PathElement =
  | { readonly field: string }
  | { readonly key: ReadonlyArray<readonly [string, unknown]> }
  | { readonly value: unknown }
  | { readonly index: number };

export type FieldPath = readonly PathElement[];

// ---------------------------------------------------------------------------------------------
// Values: the JSON encoding kube uses inside k:/v: names, ordering and human-readable form.

const ownProperty = Object.prototype.hasOwnProperty;
function hasOwn(o: object, k: string): boolean {
  return ownProperty.call(o, k);
}

// (a module-level function: a closure made per call costs an allocation and, under tsx, a __name call)
function valueRank(v: unknown): number {
  return typeof v === 'number' ? 0 : typeof v === 'string' ? 1 : typeof v === 'boolean' ? 2 : Array.isArray(v) ? 3 : isPlainObject(v) ? 4 : 5;
}

/** Total order over JSON values: numbers, strings, booleans, lists, maps, null (structured-merge-diff's value.Compare). */
export function compareValues(a: unknown, b: unknown): number {
  // Key values are mostly strings (names) or numbers (ports): compared without ranking.
  if (typeof a === 'string' && typeof b === 'string') return compareStrings(a, b);
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
  const ra = valueRank(a);
  const rb = valueRank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  switch (ra) {
    case 0:
      return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
    case 1:
      return compareStrings(a as string, b as string);
    case 2:
      return a === b ? 0 : a ? 1 : -1;
    case 3: {
      const la = a as unknown[];
      const lb = b as unknown[];
      for (let i = 0; i < Math.min(la.length, lb.length); i++) {
        const c = compareValues(la[i], lb[i]);
        if (c !== 0) return c;
      }
      return la.length === lb.length ? 0 : la.length < lb.length ? -1 : 1;
    }
    case 4: {
      const ka = Object.keys(a as object).sort(compareStrings);
      const kb = Object.keys(b as object).sort(compareStrings);
      for (let i = 0; i < Math.min(ka.length, kb.length); i++) {
        let c = compareStrings(ka[i], kb[i]);
        if (c !== 0) return c;
        c = compareValues((a as Record<string, unknown>)[ka[i]], (b as Record<string, unknown>)[kb[i]]);
        if (c !== 0) return c;
      }
      return ka.length === kb.length ? 0 : ka.length < kb.length ? -1 : 1;
    }
    default:
      return 0;
  }
}

/** Deep equality of JSON values (object key order ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || a === null || typeof b !== 'object' || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  // for-in with own keys only (what Object.keys lists), without allocating the key arrays.
  let n = 0;
  for (const k in a) {
    if (!hasOwn(a, k)) continue;
    if (!hasOwn(b, k) || !jsonEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
    n++;
  }
  for (const k in b) if (hasOwn(b, k)) n--;
  return n === 0;
}

/** Go's value.ToString: how a key or set value appears in a path such as `[name="nginx"]`. */
function valueToString(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return '[' + v.map(valueToString).join(',') + ']';
  if (isPlainObject(v)) return '{' + Object.keys(v).map((k) => `${k}=${valueToString(v[k])}`).join(',') + '}';
  return String(v);
}

function isScalarValue(v: unknown): boolean {
  return v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
}

// ---------------------------------------------------------------------------------------------
// Path elements

export const fieldPE = (name: string): PathElement => ({ field: name });
export const valuePE = (value: unknown): PathElement => ({ value });
export const indexPE = (index: number): PathElement => ({ index });
/** A list-map element named by its key fields (kept sorted by name, as kube does). */
export function keyPE(fields: Record<string, unknown>): PathElement {
  const key = Object.keys(fields)
    .sort(compareStrings)
    .map((k) => [k, fields[k]] as const);
  return { key };
}

const kindRank = (pe: PathElement): number => ('field' in pe ? 0 : 'key' in pe ? 1 : 'value' in pe ? 2 : 3);

export function comparePathElements(a: PathElement, b: PathElement): number {
  if ('field' in a && 'field' in b) return compareStrings(a.field, b.field);
  const ra = kindRank(a);
  const rb = kindRank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  if ('field' in a) return compareStrings(a.field, (b as { field: string }).field);
  if ('key' in a) {
    const ka = a.key;
    const kb = (b as { key: ReadonlyArray<readonly [string, unknown]> }).key;
    for (let i = 0; ; i++) {
      if (i >= ka.length && i >= kb.length) return 0;
      if (i >= ka.length) return -1;
      if (i >= kb.length) return 1;
      let c = compareStrings(ka[i][0], kb[i][0]);
      if (c !== 0) return c;
      c = compareValues(ka[i][1], kb[i][1]);
      if (c !== 0) return c;
    }
  }
  if ('value' in a) return compareValues(a.value, (b as { value: unknown }).value);
  const ia = a.index;
  const ib = (b as { index: number }).index;
  return ia < ib ? -1 : ia > ib ? 1 : 0;
}

/** Names of k:/v: elements, computed once per element object. */
const NAMES = new WeakMap<object, string>();

function computeName(pe: PathElement): string {
  if ('key' in pe) return 'k:{' + pe.key.map(([k, v]) => goJsonMarshal(k) + ':' + goJsonMarshal(v)).join(',') + '}';
  if ('value' in pe) return 'v:' + goJsonMarshal(pe.value);
  return 'i:' + (pe as { index: number }).index;
}

/** The FieldsV1 name of a path element: `f:name`, `k:{"name":"c"}`, `v:"x"`, `i:0`. */
export function serializePathElement(pe: PathElement): string {
  if ('field' in pe) return 'f:' + pe.field;
  let name = NAMES.get(pe);
  if (name === undefined) {
    name = computeName(pe);
    NAMES.set(pe, name);
  }
  return name;
}

/** A path element together with its FieldsV1 name. */
export interface Named {
  readonly pe: PathElement;
  readonly name: string;
}

/** Bounded intern tables: the same field names and list keys recur in every object of a kind. */
const INTERN_LIMIT = 20_000;
const FIELDS = new Map<string, Named>();

/** The field (or map key) element `f:<name>`, interned. */
export function fieldNamed(field: string): Named {
  let n = FIELDS.get(field);
  if (n === undefined) {
    if (FIELDS.size >= INTERN_LIMIT) FIELDS.clear();
    n = { pe: { field }, name: 'f:' + field };
    FIELDS.set(field, n);
  }
  return n;
}

function namedElement(pe: PathElement): Named {
  if ('field' in pe) return fieldNamed(pe.field);
  return { pe, name: serializePathElement(pe) };
}

/** Parses a FieldsV1 name; undefined for an unknown element type (kube drops those silently). */
export function parsePathElement(s: string): PathElement | undefined {
  if (s.length < 2) throw new Error('key must be 2 characters long:');
  if (s[1] !== ':') throw new Error(`missing colon: ${s}`);
  const body = s.slice(2);
  switch (s[0]) {
    case 'f':
      return { field: body };
    case 'v':
      return { value: JSON.parse(body) as unknown };
    case 'k': {
      const obj = JSON.parse(body) as unknown;
      if (!isPlainObject(obj)) throw new Error(`key is not an object: ${s}`);
      return keyPE(obj);
    }
    case 'i': {
      if (!/^-?\d+$/.test(body)) throw new Error(`invalid index: ${s}`);
      return { index: Number(body) };
    }
    default:
      return undefined;
  }
}

/** Parsed FieldsV1 names (null: an unknown element type), keyed by the name as written. */
const PARSED = new Map<string, Named | null>();

function parseNamed(s: string): Named | undefined {
  const hit = PARSED.get(s);
  if (hit !== undefined) return hit ?? undefined;
  const pe = parsePathElement(s); // throws on malformed names; those are not remembered
  let n: Named | null = null;
  if (pe !== undefined) {
    n = 'field' in pe ? fieldNamed(pe.field) : { pe, name: serializePathElement(pe) };
    // Elements holding structured values are not shared between sets read at different times.
    if ('key' in pe ? !pe.key.every(([, v]) => isScalarValue(v)) : 'value' in pe && !isScalarValue(pe.value)) return n;
  }
  if (PARSED.size >= INTERN_LIMIT) PARSED.clear();
  PARSED.set(s, n);
  return n ?? undefined;
}

/** `.spec`, `[name="nginx"]`, `[=value]`, `[0]` — how kube prints a path element. */
export function pathElementString(pe: PathElement): string {
  if ('field' in pe) return '.' + pe.field;
  if ('key' in pe) return '[' + pe.key.map(([k, v]) => `${k}=${valueToString(v)}`).join(',') + ']';
  if ('value' in pe) return `[=${valueToString(pe.value)}]`;
  return `[${pe.index}]`;
}

/** `.spec.template.spec.containers[name="nginx"].image` */
export function pathString(path: FieldPath): string {
  return path.map(pathElementString).join('');
}

/** A path from field names, e.g. fieldPath('spec', 'replicas'). */
export function fieldPath(...names: string[]): FieldPath {
  return names.map(fieldPE);
}

// ---------------------------------------------------------------------------------------------
// The set

/**
 * One element at one level of the trie: a member itself, a prefix of deeper members (sub), or
 * both. Invariant: every entry is a member or has a non-empty sub.
 */
export interface Entry {
  readonly name: string;
  readonly pe: PathElement;
  member: boolean;
  sub: FieldSet | undefined;
}

/** What kube's order looks at in an entry (or anything named like one). */
interface Ordered {
  readonly name: string;
  readonly pe: PathElement;
}

function byElement(a: Ordered, b: Ordered): number {
  // Field names (the most) order as their names do.
  const x = a.name;
  const y = b.name;
  if (x.charCodeAt(0) === 102 && y.charCodeAt(0) === 102) {
    // Past the common "f:": the field names' own order.
    const n = x.length < y.length ? x.length : y.length;
    for (let i = 2; i < n; i++) {
      const a = x.charCodeAt(i);
      const b = y.charCodeAt(i);
      if (a !== b) return a < 0xd800 && b < 0xd800 ? (a < b ? -1 : 1) : compareStrings(x, y);
    }
    return x.length - y.length;
  }
  return comparePathElements(a.pe, b.pe);
}

/** Sorts a level's entries (or anything named like them) into kube's order. */
export function sortEntries(e: Ordered[]): void {
  sortSmall(e, byElement);
}

/** Sorts in place: small arrays (the most, here) by insertion, which beats Array#sort on them. */
function sortSmall<T>(a: T[], cmp: (x: T, y: T) => number): T[] {
  if (a.length > 16) return a.sort(cmp);
  for (let i = 1; i < a.length; i++) {
    const x = a[i];
    let j = i - 1;
    while (j >= 0 && cmp(a[j], x) > 0) {
      a[j + 1] = a[j];
      j--;
    }
    a[j + 1] = x;
  }
  return a;
}

/** Levels up to this many entries are searched in order; larger ones get an index by name. */
const INDEX_AT = 8;

export class FieldSet {
  /** @internal The level's entries. */
  _e: Entry[] = [];
  /** @internal Entries by FieldsV1 name, for large levels. */
  _idx: Map<string, Entry> | undefined = undefined;
  /**
   * @internal A frozen set is shared (by another set, or a cache) and never changes again; writes
   * through a parent replace a frozen child by a copy of its level first (copy-on-write).
   */
  _frozen = false;
  /** @internal The entries are in kube's order (as read, sorted, or kept so by a subset). */
  _ordered = true;
  /** @internal For frozen sets: schemaMismatches below this level, and the node they are for. */
  _mm: SchemaMismatches | undefined = undefined;
  _mmNode: TypeNode | undefined = undefined;
  /** @internal For frozen sets: ensureNamedFieldsAreMembers of this level, and the node (null: none) it is for. */
  _en: FieldSet | undefined = undefined;
  _enNode: TypeNode | null | undefined = undefined;

  static of(...paths: FieldPath[]): FieldSet {
    const s = new FieldSet();
    for (const p of paths) s.add(p);
    return s;
  }

  /** Adds a path (mutates). Parents are not added; the empty path (the whole object) is never tracked. */
  add(path: FieldPath): this {
    if (path.length === 0) return this;
    if (this._frozen) throw new Error('FieldSet is shared and cannot be modified');
    let s: FieldSet = this;
    for (let i = 0; i < path.length - 1; i++) {
      const n = namedElement(path[i]);
      s = s._child(n.name, n.pe);
    }
    const last = namedElement(path[path.length - 1]);
    s._member(last.name, last.pe);
    return this;
  }

  /** @internal The entry named name. */
  _get(name: string): Entry | undefined {
    let idx = this._idx;
    if (idx !== undefined) return idx.get(name);
    const e = this._e;
    if (e.length > INDEX_AT) {
      idx = this._idx = new Map();
      for (let i = 0; i < e.length; i++) idx.set(e[i].name, e[i]);
      return idx.get(name);
    }
    for (let i = 0; i < e.length; i++) if (e[i].name === name) return e[i];
    return undefined;
  }

  /** @internal Appends an entry for a name the level does not have. */
  _push(en: Entry): void {
    const e = this._e;
    e.push(en);
    if (this._idx !== undefined) this._idx.set(en.name, en);
    if (e.length > 1) this._ordered = false;
  }

  /** @internal The writable child level under name, created when missing (the caller adds to it). */
  _child(name: string, pe: PathElement): FieldSet {
    const e = this._get(name);
    if (e === undefined) {
      const sub = new FieldSet();
      this._push({ name, pe, member: false, sub });
      return sub;
    }
    let sub = e.sub;
    if (sub === undefined) e.sub = sub = new FieldSet();
    else if (sub._frozen) e.sub = sub = sub._thaw();
    return sub;
  }

  /** @internal Marks name a member of this (writable) level. */
  _member(name: string, pe: PathElement): void {
    const e = this._get(name);
    if (e === undefined) this._push({ name, pe, member: true, sub: undefined });
    else e.member = true;
  }

  /** @internal A writable copy of this level; the levels below are shared (frozen). */
  _thaw(): FieldSet {
    const out = new FieldSet();
    const src = this._e;
    const e: Entry[] = new Array(src.length);
    for (let i = 0; i < src.length; i++) {
      const x = src[i];
      e[i] = { name: x.name, pe: x.pe, member: x.member, sub: x.sub ? freeze(x.sub) : undefined };
    }
    out._adopt(e, this._ordered);
    return out;
  }

  /** @internal Takes entries (distinct names) as this empty level's. */
  _adopt(e: Entry[], ordered: boolean): void {
    this._e = e;
    this._ordered = ordered || e.length <= 1;
  }

  /** @internal The (possibly shared) level below name. */
  _sub(name: string): FieldSet | undefined {
    return this._get(name)?.sub;
  }

  /** @internal Entries in kube's order (sorted in place when needed: the order of a level is not observable). */
  _entries(): Entry[] {
    const e = this._e;
    if (!this._ordered) {
      sortEntries(e);
      this._ordered = true;
    }
    return e;
  }

  has(path: FieldPath): boolean {
    if (path.length === 0) return false;
    let s: FieldSet | undefined = this;
    for (let i = 0; i < path.length - 1 && s; i++) s = s._get(serializePathElement(path[i]))?.sub;
    return s ? s._get(serializePathElement(path[path.length - 1]))?.member === true : false;
  }

  /** The paths below pe, without the prefix (empty when none). */
  withPrefix(pe: PathElement): FieldSet {
    return this._get(serializePathElement(pe))?.sub ?? new FieldSet();
  }

  hasMember(pe: PathElement): boolean {
    return this._get(serializePathElement(pe))?.member === true;
  }

  isEmpty(): boolean {
    return this._e.length === 0;
  }

  /** Number of member paths. */
  size(): number {
    let n = 0;
    for (const e of this._e) {
      if (e.member) n++;
      if (e.sub) n += e.sub.size();
    }
    return n;
  }

  union(o: FieldSet): FieldSet {
    return unionSets(this, o, true);
  }

  intersection(o: FieldSet): FieldSet {
    return intersectSets(this, o) ?? new FieldSet();
  }

  /** Members of this set not in o. A parent in o does not remove its children (structured-merge-diff's Difference). */
  difference(o: FieldSet): FieldSet {
    return subtractSets(this, o, false, true) ?? new FieldSet();
  }

  /** Like difference, but a member of o also removes everything below it. */
  recursiveDifference(o: FieldSet): FieldSet {
    return subtractSets(this, o, true, true) ?? new FieldSet();
  }

  equals(o: FieldSet): boolean {
    if (this === o) return true;
    if (this._e.length !== o._e.length) return false;
    for (const e of this._e) {
      const oe = o._get(e.name);
      if (oe === undefined || oe.member !== e.member) return false;
      if (e.sub === undefined ? oe.sub !== undefined : oe.sub === undefined || !e.sub.equals(oe.sub)) return false;
    }
    return true;
  }

  /** Only the leaf paths: members that have no members below them. */
  leaves(): FieldSet {
    const out: Entry[] = [];
    for (const e of this._e) {
      const l = e.sub ? e.sub.leaves() : undefined;
      const member = e.member && !e.sub;
      const sub = l && !l.isEmpty() ? l : undefined;
      if (member || sub) out.push({ name: e.name, pe: e.pe, member, sub });
    }
    const s = new FieldSet();
    s._adopt(out, this._ordered);
    return s;
  }

  clone(): FieldSet {
    return this._thaw();
  }

  /** Every member path, in kube's iteration order: this level's members sorted, then each child's. */
  paths(): FieldPath[] {
    const out: FieldPath[] = [];
    this.collect([], out);
    return out;
  }

  private collect(prefix: PathElement[], out: FieldPath[]): void {
    const entries = this._entries();
    for (const e of entries) if (e.member) out.push([...prefix, e.pe]);
    for (const e of entries) if (e.sub) e.sub.collect([...prefix, e.pe], out);
  }

  /** Member path elements at this level, sorted. */
  memberElements(): PathElement[] {
    const out: PathElement[] = [];
    for (const e of this._entries()) if (e.member) out.push(e.pe);
    return out;
  }

  /** Child path elements (those with paths below them) at this level, sorted. */
  childElements(): PathElement[] {
    const out: PathElement[] = [];
    for (const e of this._entries()) if (e.sub) out.push(e.pe);
    return out;
  }

  toString(): string {
    return this.paths().map(pathString).join('\n');
  }

  /** The FieldsV1 object, keys in the order kube writes them. */
  toFieldsV1(): Record<string, unknown> {
    return this.emit(false);
  }

  private emit(includeSelf: boolean): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    if (includeSelf && this._e.length > 0) out['.'] = {};
    const entries = this._entries();
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i];
      out[e.name] = e.sub ? e.sub.emit(e.member) : {};
    }
    return out;
  }

  /** Reads a FieldsV1 object. Throws on malformed input; unknown element types are dropped. */
  static fromFieldsV1(fields: unknown): FieldSet {
    if (!isPlainObject(fields)) throw new Error('FieldsV1 must be a JSON object');
    return readLevel(fields) ?? new FieldSet();
  }
}

function freeze(s: FieldSet): FieldSet {
  s._frozen = true;
  return s;
}

/** The set, made immutable (to be shared: by a cache, or as part of other sets). */
export function frozen(s: FieldSet): FieldSet {
  return freeze(s);
}

/**
 * Whether FieldSet.fromFieldsV1(raw) would read exactly this set; false (read it then) also when
 * raw is not written as kube writes it.
 */
export function describesExactly(raw: unknown, set: FieldSet): boolean {
  if (raw === undefined || raw === null) return set.isEmpty();
  return isPlainObject(raw) && matchesLevel(raw, set);
}

function matchesLevel(raw: Record<string, unknown>, set: FieldSet): boolean {
  let n = 0;
  // Written as kube writes it, raw lists the names in the level's order: the n-th name is
  // (nearly always) the n-th entry's, found without a lookup. (for-in over own keys: no key array.)
  const entries = set._entries();
  for (const key in raw) {
    if (key === '.' || !hasOwn(raw, key)) continue;
    let e: Entry | undefined = n < entries.length ? entries[n] : undefined;
    if (e === undefined || e.name !== key) e = set._get(key);
    if (e === undefined) return false;
    const v = raw[key];
    if (!isPlainObject(v)) return false;
    if (e.sub === undefined) {
      // A member with nothing below: `{}` or `{".":{}}`.
      for (const k in v) if (k !== '.' && hasOwn(v, k)) return false;
    } else if (e.member !== hasOwn(v, '.') || !matchesLevel(v, e.sub)) return false;
    n++;
  }
  return n === set._e.length;
}

/** The second result of readLevel: whether the level's own path is a member. */
let readMember = false;

/**
 * The set below a FieldsV1 object (undefined: nothing below), readMember telling whether its own
 * path is a member. Names written as kube writes them (canonical, sorted) take the fast way.
 */
function readLevel(obj: Record<string, unknown>): FieldSet | undefined {
  let entries: Entry[] | undefined;
  let isMember = false;
  let prev: Entry | undefined;
  let ordered = true;
  const keys = Object.keys(obj);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    if (key === '.') {
      isMember = true;
      continue;
    }
    const n = parseNamed(key);
    if (n === undefined) continue;
    if (n.name !== key) return readLevelSlowly(obj);
    const v = obj[key];
    if (!isPlainObject(v)) throw new Error(`expected an object for ${key}`);
    const sub = readLevel(v);
    const e: Entry = { name: key, pe: n.pe, member: readMember, sub };
    if (ordered && prev !== undefined && byElement(prev, e) >= 0) ordered = false;
    (entries ??= []).push(e);
    prev = e;
  }
  readMember = isMember || entries === undefined;
  return entries === undefined ? undefined : level(entries, ordered);
}

/** readLevel for names that are not in kube's spelling: two may name the same element. */
function readLevelSlowly(obj: Record<string, unknown>): FieldSet | undefined {
  let children: FieldSet | undefined;
  let isMember = false;
  for (const key of Object.keys(obj)) {
    if (key === '.') {
      isMember = true;
      continue;
    }
    const n = parseNamed(key);
    if (n === undefined) continue;
    const v = obj[key];
    if (!isPlainObject(v)) throw new Error(`expected an object for ${key}`);
    const sub = readLevel(v);
    const member = readMember;
    children ??= new FieldSet();
    const e = children._get(n.name);
    if (e === undefined) {
      children._push({ name: n.name, pe: n.pe, member, sub });
      continue;
    }
    if (member) e.member = true;
    if (sub) e.sub = e.sub ? unionSets(e.sub, sub, true) : sub;
  }
  readMember = isMember || children === undefined;
  return children;
}

function shareEntry(e: Entry): Entry {
  return { name: e.name, pe: e.pe, member: e.member, sub: e.sub ? freeze(e.sub) : undefined };
}

/** @internal A level made of entries with distinct names. */
export function level(e: Entry[], ordered: boolean): FieldSet {
  const s = new FieldSet();
  s._adopt(e, ordered);
  return s;
}

/** a ∪ b; levels found in only one of them are shared, not copied. `fresh`: never return a or b itself. */
function unionSets(a: FieldSet, b: FieldSet, fresh: boolean): FieldSet {
  if (!fresh) {
    if (a === b || b._e.length === 0) return freeze(a);
    if (a._e.length === 0) return freeze(b);
  }
  const ae = a._e;
  const out: Entry[] = [];
  let fromB = 0;
  for (let i = 0; i < ae.length; i++) {
    const e = ae[i];
    const oe = b._get(e.name);
    if (oe === undefined) out.push(shareEntry(e));
    else {
      fromB++;
      const sub = e.sub ? (oe.sub ? unionSets(e.sub, oe.sub, false) : freeze(e.sub)) : oe.sub ? freeze(oe.sub) : undefined;
      out.push({ name: e.name, pe: oe.member && !e.member ? oe.pe : e.pe, member: e.member || oe.member, sub });
    }
  }
  const be = b._e;
  const fromA = out.length;
  if (fromB < be.length) for (let i = 0; i < be.length; i++) if (a._get(be[i].name) === undefined) out.push(shareEntry(be[i]));
  // Still in order when one side brought every name.
  return level(out, out.length === fromA ? a._ordered : fromA === 0 ? b._ordered : false);
}

/** Whether every member of a is a member of b. */
export function isSubset(a: FieldSet, b: FieldSet): boolean {
  if (a === b) return true;
  if (a._e.length > b._e.length) return false;
  for (const e of a._e) {
    const oe = b._get(e.name);
    if (oe === undefined || (e.member && !oe.member)) return false;
    if (e.sub !== undefined && (oe.sub === undefined || !isSubset(e.sub, oe.sub))) return false;
  }
  return true;
}

/** a ∩ b, undefined when empty. */
function intersectSets(a: FieldSet, b: FieldSet): FieldSet | undefined {
  if (a === b) return a._e.length === 0 ? undefined : a._thaw();
  const aSmall = a._e.length <= b._e.length;
  const small = aSmall ? a : b;
  const large = aSmall ? b : a;
  let out: Entry[] | undefined;
  for (const se of small._e) {
    const le = large._get(se.name);
    if (le === undefined) continue;
    const e = aSmall ? se : le;
    const oe = aSmall ? le : se;
    const member = e.member && oe.member;
    const sub = e.sub && oe.sub ? (e.sub === oe.sub ? freeze(e.sub) : intersectSets(e.sub, oe.sub)) : undefined;
    if (!member && !sub) continue;
    (out ??= []).push({ name: e.name, pe: e.pe, member, sub });
  }
  return out === undefined ? undefined : level(out, small._ordered);
}

/** a − b (recursive: a member of b also removes what is below it); undefined when empty. `fresh`: never return a itself. */
function subtractSets(a: FieldSet, b: FieldSet, recursive: boolean, fresh: boolean): FieldSet | undefined {
  if (a === b || a._e.length === 0) return undefined;
  if (!fresh && b._e.length === 0) return freeze(a);
  const out: Entry[] = [];
  let changed = false;
  for (const e of a._e) {
    const oe = b._get(e.name);
    if (oe === undefined) {
      out.push(shareEntry(e));
      continue;
    }
    if (recursive && oe.member) {
      changed = true;
      continue;
    }
    const member = e.member && !oe.member;
    const sub = e.sub ? (oe.sub ? subtractSets(e.sub, oe.sub, recursive, false) : freeze(e.sub)) : undefined;
    if (member !== e.member || sub !== e.sub) changed = true;
    if (!member && !sub) continue;
    out.push({ name: e.name, pe: e.pe, member, sub });
  }
  if (!changed && !fresh) return freeze(a);
  return out.length === 0 ? undefined : level(out, a._ordered);
}

// ---------------------------------------------------------------------------------------------
// Building sets while walking objects

/** The path of a walk: names and elements by depth, and a stamp per push so builders know their levels. */
export class PathStack {
  names: string[] = [];
  pes: PathElement[] = [];
  stamps: number[] = [0];
  depth = 0;
  private counter = 0;

  push(n: Named): void {
    this.names[this.depth] = n.name;
    this.pes[this.depth] = n.pe;
    this.depth++;
    this.stamps[this.depth] = ++this.counter;
  }

  pop(): void {
    this.depth--;
  }

  path(): PathElement[] {
    return this.pes.slice(0, this.depth);
  }
}

/** Where a walk is, for error messages: its stack, or the path elements so far (copied when an error is made). */
export type PathSource = PathStack | readonly (PathElement | string)[];

/** The path a source stands for (a string stands for a field). */
function snapshot(src: PathSource): FieldPath {
  if (src instanceof PathStack) return src.path();
  return src.map((x) => (typeof x === 'string' ? fieldPE(x) : x));
}

/** Adds the current path of a walk to a set, creating the levels on the way only when needed. */
export class SetBuilder {
  readonly root = new FieldSet();
  private readonly levels: FieldSet[] = [this.root];
  private readonly stamps: number[] = [0];

  constructor(private readonly stack: PathStack) {}

  /** The (writable) level below the first d elements of the current path. */
  private level(d: number): FieldSet {
    if (d === 0) return this.root;
    const st = this.stack;
    if (this.stamps[d] === st.stamps[d]) {
      const l = this.levels[d];
      if (!l._frozen) return l;
    }
    const s = this.level(d - 1)._child(st.names[d - 1], st.pes[d - 1]);
    this.levels[d] = s;
    this.stamps[d] = st.stamps[d];
    return s;
  }

  /** Adds the stack's current path (nothing at the root). */
  add(): void {
    const d = this.stack.depth;
    if (d === 0) return;
    this.level(d - 1)._member(this.stack.names[d - 1], this.stack.pes[d - 1]);
  }

  /** Whether something was added below the current path since it was pushed. */
  hasBelow(): boolean {
    const d = this.stack.depth;
    return d === 0 ? !this.root.isEmpty() : this.stamps[d] === this.stack.stamps[d];
  }

  /** What was added below the current path since it was pushed. */
  below(): FieldSet | undefined {
    const d = this.stack.depth;
    if (d === 0) return this.root;
    return this.stamps[d] === this.stack.stamps[d] ? this.levels[d] : undefined;
  }

  /**
   * Puts a (non-empty) set below the current path, shared; false when the path already has
   * something below it (then the caller adds its paths one by one).
   */
  attach(sub: FieldSet): boolean {
    const st = this.stack;
    const d = st.depth;
    if (d === 0 || this.stamps[d] === st.stamps[d]) return false;
    const parent = this.level(d - 1);
    const name = st.names[d - 1];
    const e = parent._get(name);
    if (e?.sub) return false;
    if (e) e.sub = freeze(sub);
    else parent._push({ name, pe: st.pes[d - 1], member: false, sub: freeze(sub) });
    this.levels[d] = sub;
    this.stamps[d] = st.stamps[d];
    return true;
  }
}

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
  const pe: PathElement = { key };
  NAMES.set(pe, name);
  return { pe, name };
}

function namedValue(v: unknown): Named {
  const name = 'v:' + goJSONOrThrow(v);
  const pe: PathElement = { value: v };
  NAMES.set(pe, name);
  return { pe, name };
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
        return hit.set === undefined ? undefined : freeze(hit.set);
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
      return hit.set === undefined ? undefined : freeze(hit.set);
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
    freeze(set);
    if (set._enNode === (node ?? null)) return set._en!;
    const en = freeze(ensureLevel(node, set, false, true));
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
  return out === undefined ? freeze(set) : level(out, set._ordered);
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
  if (m._e.length === 0) return freeze(a);
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
    const sub = e.sub ? (oe.sub ? subtractEnsured(e.sub, oe.sub, ensureChild(node, oe.pe)) : freeze(e.sub)) : undefined;
    if (member !== e.member || sub !== e.sub) changed = true;
    if (!member && !sub) continue;
    out.push({ name: e.name, pe: e.pe, member, sub });
  }
  if (!changed) return freeze(a);
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
  if (immutable) freeze(s);
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
