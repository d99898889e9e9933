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
// Performance notes (this code runs on every write): a trie level is one Map keyed by the
// element's FieldsV1 name, so names are computed once per element (interned for field names and
// scalar-keyed list elements) and never again per operation; set operations share unchanged
// subtrees copy-on-write instead of cloning them; schema atoms are computed once per TypeNode.
import type { TypeNode } from '../../schema/types.ts';

export type PathElement =
  | { readonly field: string }
  | { readonly key: ReadonlyArray<readonly [string, unknown]> }
  | { readonly value: unknown }
  | { readonly index: number };

export type FieldPath = readonly PathElement[];

// ---------------------------------------------------------------------------------------------
// Values: the JSON encoding kube uses inside k:/v: names, ordering and human-readable form.

const GO_ESCAPE = /[<>&\u2028\u2029]/;
const GO_ESCAPE_ALL = /[<>&\u2028\u2029]/g;
const goEscape = (c: string): string => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0');

/** Compact JSON as Go's encoding/json writes it: object keys sorted, <, >, & and U+2028/9 escaped. */
export function goJSON(v: unknown): string {
  if (typeof v === 'string') {
    const s = JSON.stringify(v);
    return GO_ESCAPE.test(s) ? s.replace(GO_ESCAPE_ALL, goEscape) : s;
  }
  if (typeof v === 'number' || typeof v === 'boolean' || v === null) return JSON.stringify(v);
  return JSON.stringify(sortKeys(v)).replace(GO_ESCAPE_ALL, goEscape);
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (isPlainObject(v)) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort(compareStrings)) out[k] = sortKeys(v[k]);
    return out;
  }
  return v;
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const hasOwn = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);

/** Byte-wise (UTF-8) string order, as Go's strings.Compare. */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  const n = a.length < b.length ? a.length : b.length;
  for (let i = 0; i < n; i++) {
    const ca = a.charCodeAt(i);
    const cb = b.charCodeAt(i);
    if (ca !== cb) {
      // Below the surrogates code units order like code points (and UTF-8 bytes).
      if (ca < 0xd800 && cb < 0xd800) return ca < cb ? -1 : 1;
      return compareCodePoints(a, b);
    }
  }
  return a.length < b.length ? -1 : a.length > b.length ? 1 : 0;
}

function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const ca = a.codePointAt(i)!;
    const cb = b.codePointAt(i)!;
    if (ca !== cb) return ca < cb ? -1 : 1;
    if (ca > 0xffff) i++;
  }
  return a.length < b.length ? -1 : a.length > b.length ? 1 : 0;
}

/** Total order over JSON values: numbers, strings, booleans, lists, maps, null (structured-merge-diff's value.Compare). */
export function compareValues(a: unknown, b: unknown): number {
  const rank = (v: unknown): number =>
    typeof v === 'number' ? 0 : typeof v === 'string' ? 1 : typeof v === 'boolean' ? 2 : Array.isArray(v) ? 3 : isPlainObject(v) ? 4 : 5;
  const ra = rank(a);
  const rb = rank(b);
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
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) if (!hasOwn(b, k) || !jsonEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  return true;
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

const isScalarValue = (v: unknown): boolean => v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

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
  if ('key' in pe) return 'k:{' + pe.key.map(([k, v]) => goJSON(k) + ':' + goJSON(v)).join(',') + '}';
  if ('value' in pe) return 'v:' + goJSON(pe.value);
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
const INTERN_LIMIT = 50_000;
const FIELDS = new Map<string, Named>();
const ELEMENTS = new Map<string, Named>();

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
interface Entry {
  readonly name: string;
  readonly pe: PathElement;
  member: boolean;
  sub: FieldSet | undefined;
}

const byElement = (a: Entry, b: Entry): number => comparePathElements(a.pe, b.pe);

export class FieldSet {
  /** @internal The level, keyed by FieldsV1 name. */
  _m = new Map<string, Entry>();
  /**
   * @internal A frozen set is shared (by another set, or a cache) and never changes again; writes
   * through a parent replace a frozen child by a copy of its level first (copy-on-write).
   */
  _frozen = false;
  /** @internal The entries sorted by element, while the level's names do not change. */
  _sorted: Entry[] | undefined = undefined;

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

  /** @internal The writable child level under name, created when missing (the caller adds to it). */
  _child(name: string, pe: PathElement): FieldSet {
    const e = this._m.get(name);
    if (e === undefined) {
      const sub = new FieldSet();
      this._m.set(name, { name, pe, member: false, sub });
      this._sorted = undefined;
      return sub;
    }
    let sub = e.sub;
    if (sub === undefined) e.sub = sub = new FieldSet();
    else if (sub._frozen) e.sub = sub = sub._thaw();
    return sub;
  }

  /** @internal Marks name a member of this (writable) level. */
  _member(name: string, pe: PathElement): void {
    const e = this._m.get(name);
    if (e === undefined) {
      this._m.set(name, { name, pe, member: true, sub: undefined });
      this._sorted = undefined;
    } else e.member = true;
  }

  /** @internal A writable copy of this level; the levels below are shared (frozen). */
  _thaw(): FieldSet {
    const out = new FieldSet();
    for (const [k, e] of this._m) out._m.set(k, { name: e.name, pe: e.pe, member: e.member, sub: e.sub ? freeze(e.sub) : undefined });
    return out;
  }

  /** @internal The (possibly shared) level below name. */
  _sub(name: string): FieldSet | undefined {
    return this._m.get(name)?.sub;
  }

  /** @internal Entries sorted by element (kube's order). */
  _entries(): Entry[] {
    let s = this._sorted;
    if (s === undefined) {
      s = [...this._m.values()];
      if (s.length > 1) s.sort(byElement);
      this._sorted = s;
    }
    return s;
  }

  has(path: FieldPath): boolean {
    if (path.length === 0) return false;
    let s: FieldSet | undefined = this;
    for (let i = 0; i < path.length - 1 && s; i++) s = s._m.get(serializePathElement(path[i]))?.sub;
    return s ? s._m.get(serializePathElement(path[path.length - 1]))?.member === true : false;
  }

  /** The paths below pe, without the prefix (empty when none). */
  withPrefix(pe: PathElement): FieldSet {
    return this._m.get(serializePathElement(pe))?.sub ?? new FieldSet();
  }

  hasMember(pe: PathElement): boolean {
    return this._m.get(serializePathElement(pe))?.member === true;
  }

  isEmpty(): boolean {
    return this._m.size === 0;
  }

  /** Number of member paths. */
  size(): number {
    let n = 0;
    for (const e of this._m.values()) {
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
    if (this._m.size !== o._m.size) return false;
    for (const [k, e] of this._m) {
      const oe = o._m.get(k);
      if (oe === undefined || oe.member !== e.member) return false;
      if (e.sub === undefined ? oe.sub !== undefined : oe.sub === undefined || !e.sub.equals(oe.sub)) return false;
    }
    return true;
  }

  /** Only the leaf paths: members that have no members below them. */
  leaves(): FieldSet {
    const out = new FieldSet();
    for (const [k, e] of this._m) {
      const l = e.sub ? e.sub.leaves() : undefined;
      const member = e.member && !e.sub;
      if (member || (l && !l.isEmpty())) out._m.set(k, { name: e.name, pe: e.pe, member, sub: l && !l.isEmpty() ? l : undefined });
    }
    return out;
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
    return this._entries()
      .filter((e) => e.member)
      .map((e) => e.pe);
  }

  /** Child path elements (those with paths below them) at this level, sorted. */
  childElements(): PathElement[] {
    return this._entries()
      .filter((e) => e.sub)
      .map((e) => e.pe);
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
    if (includeSelf && this._m.size > 0) out['.'] = {};
    for (const e of this._entries()) out[e.name] = e.sub ? e.sub.emit(e.member) : {};
    return out;
  }

  /** Reads a FieldsV1 object. Throws on malformed input; unknown element types are dropped. */
  static fromFieldsV1(fields: unknown): FieldSet {
    if (!isPlainObject(fields)) throw new Error('FieldsV1 must be a JSON object');
    return readLevel(fields).children ?? new FieldSet();
  }
}

function freeze(s: FieldSet): FieldSet {
  s._frozen = true;
  return s;
}

function readLevel(obj: Record<string, unknown>): { children: FieldSet | undefined; isMember: boolean } {
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
    if (!sub.isMember && !sub.children) continue;
    children ??= new FieldSet();
    const e = children._m.get(n.name);
    if (e === undefined) {
      children._m.set(n.name, { name: n.name, pe: n.pe, member: sub.isMember, sub: sub.children });
      continue;
    }
    if (sub.isMember) e.member = true;
    if (sub.children) e.sub = e.sub ? unionSets(e.sub, sub.children, true) : sub.children;
  }
  if (!children) isMember = true;
  return { children, isMember };
}

/** a ∪ b; levels found in only one of them are shared, not copied. `fresh`: never return a or b itself. */
function unionSets(a: FieldSet, b: FieldSet, fresh: boolean): FieldSet {
  if (!fresh) {
    if (a === b || b._m.size === 0) return freeze(a);
    if (a._m.size === 0) return freeze(b);
  }
  const out = new FieldSet();
  const om = out._m;
  for (const [k, e] of a._m) {
    const oe = b._m.get(k);
    if (oe === undefined) om.set(k, { name: k, pe: e.pe, member: e.member, sub: e.sub ? freeze(e.sub) : undefined });
    else {
      const sub = e.sub ? (oe.sub ? unionSets(e.sub, oe.sub, false) : freeze(e.sub)) : oe.sub ? freeze(oe.sub) : undefined;
      om.set(k, { name: k, pe: oe.member && !e.member ? oe.pe : e.pe, member: e.member || oe.member, sub });
    }
  }
  for (const [k, oe] of b._m) if (!a._m.has(k)) om.set(k, { name: k, pe: oe.pe, member: oe.member, sub: oe.sub ? freeze(oe.sub) : undefined });
  return out;
}

/** a ∩ b, undefined when empty. */
function intersectSets(a: FieldSet, b: FieldSet): FieldSet | undefined {
  if (a === b) return a._m.size === 0 ? undefined : a._thaw();
  let out: FieldSet | undefined;
  const aSmall = a._m.size <= b._m.size;
  const small = aSmall ? a._m : b._m;
  const large = aSmall ? b._m : a._m;
  for (const [k, se] of small) {
    const le = large.get(k);
    if (le === undefined) continue;
    const e = aSmall ? se : le;
    const oe = aSmall ? le : se;
    const member = e.member && oe.member;
    const sub = e.sub && oe.sub ? (e.sub === oe.sub ? freeze(e.sub) : intersectSets(e.sub, oe.sub)) : undefined;
    if (!member && !sub) continue;
    out ??= new FieldSet();
    out._m.set(k, { name: k, pe: e.pe, member, sub });
  }
  return out;
}

/** a − b (recursive: a member of b also removes what is below it); undefined when empty. `fresh`: never return a itself. */
function subtractSets(a: FieldSet, b: FieldSet, recursive: boolean, fresh: boolean): FieldSet | undefined {
  if (a === b || a._m.size === 0) return undefined;
  if (!fresh && b._m.size === 0) return freeze(a);
  let out: FieldSet | undefined;
  let changed = false;
  for (const [k, e] of a._m) {
    const oe = b._m.get(k);
    if (oe === undefined) {
      (out ??= new FieldSet())._m.set(k, { name: k, pe: e.pe, member: e.member, sub: e.sub ? freeze(e.sub) : undefined });
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
    (out ??= new FieldSet())._m.set(k, { name: k, pe: e.pe, member, sub });
  }
  if (!changed && !fresh) return freeze(a);
  return out;
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

/** Adds the current path of a walk to a set, creating the levels on the way only when needed. */
export class SetBuilder {
  readonly root = new FieldSet();
  private readonly levels: FieldSet[] = [this.root];
  private readonly stamps: number[] = [0];

  constructor(private readonly stack: PathStack) {}

  private level(d: number): FieldSet {
    if (d === 0) return this.root;
    const st = this.stack;
    if (this.stamps[d] === st.stamps[d]) return this.levels[d];
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
}

// ---------------------------------------------------------------------------------------------
// Schema view: how each TypeNode behaves for Server-Side Apply.

/** No type information: maps are granular, lists atomic, everything else a scalar. */
export const UNTYPED: TypeNode = { type: 'any' };

export type Atom =
  | { kind: 'scalar' }
  | { kind: 'map'; atomic: boolean; fields: Record<string, TypeNode> | undefined; elem: TypeNode }
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
    case 'object':
      return { kind: 'map', atomic: node.mapType === 'atomic', fields: node.properties ?? {}, elem: UNTYPED };
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
  if (atom.fields && hasOwn(atom.fields, key)) return atom.fields[key];
  return atom.elem;
}

export function isDeclaredField(atom: Atom & { kind: 'map' }, key: string): boolean {
  return !!atom.fields && hasOwn(atom.fields, key);
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

/** The path element naming a list element: k: for list-maps, v: for sets, i: for atomic lists. */
export function listItemPathElement(atom: Atom & { kind: 'list' }, index: number, item: unknown): PathElement {
  if (atom.relationship === 'map') {
    if (item === null) throw new Error('associative list with keys may not have a null element');
    if (!isPlainObject(item)) throw new Error('associative list with keys may not have non-map elements');
    const fields: Record<string, unknown> = {};
    for (const k of atom.keys) {
      if (hasOwn(item, k)) {
        fields[k] = item[k];
        continue;
      }
      const def = atom.elem.definition ? KEY_DEFAULTS[atom.elem.definition]?.[k] : undefined;
      if (def === undefined) throw new Error(`associative list with keys has an element that omits key field ${JSON.stringify(k)} (and doesn't have default value)`);
      fields[k] = def;
    }
    return keyPE(fields);
  }
  if (atom.relationship === 'set') {
    if (item === null) throw new Error("associative list without keys has an element that's an explicit null");
    if (isPlainObject(item)) throw new Error("associative list without keys has an element that's a map type");
    if (Array.isArray(item)) throw new Error('not supported: associative list with lists as elements');
    return valuePE(item);
  }
  return indexPE(index);
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
    const order = atom.keys.map((_, i) => i).sort((i, j) => compareStrings(atom.keys[i], atom.keys[j]));
    l = { order, prefixes: atom.keys.map((k) => goJSON(k) + ':') };
    KEY_LAYOUTS.set(atom, l);
  }
  return l;
}

/**
 * listItemPathElement with the element's name, interned for scalar keys and values. Schema
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
      return keyElement('k:{' + keyLayout(atom).prefixes[0] + goJSONOrThrow(v) + '}', isScalarValue(v), () => ({ key: [[k, v]] }));
    }
    const vals: unknown[] = [];
    let scalar = true;
    for (const k of keys) {
      const v = hasOwn(item, k) ? item[k] : keyDefault(atom, k);
      vals.push(v);
      if (!isScalarValue(v)) scalar = false;
    }
    const layout = keyLayout(atom);
    let name = 'k:{';
    for (let i = 0; i < layout.order.length; i++) {
      const j = layout.order[i];
      if (i > 0) name += ',';
      name += layout.prefixes[j] + goJSONOrThrow(vals[j]);
    }
    name += '}';
    return keyElement(name, scalar, () => ({ key: layout.order.map((j) => [keys[j], vals[j]] as const) }));
  }
  if (atom.relationship === 'set') {
    if (item === null) throw new Error("associative list without keys has an element that's an explicit null");
    if (isPlainObject(item)) throw new Error("associative list without keys has an element that's a map type");
    if (Array.isArray(item)) throw new Error('not supported: associative list with lists as elements');
    return keyElement('v:' + goJSONOrThrow(item), isScalarValue(item), () => ({ value: item }));
  }
  return { pe: { index }, name: 'i:' + index };
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
    return goJSON(v);
  } catch (e) {
    throw new NamingError(e);
  }
}

function keyElement(name: string, intern: boolean, make: () => PathElement): Named {
  if (!intern) {
    const pe = make();
    NAMES.set(pe, name);
    return { pe, name };
  }
  let n = ELEMENTS.get(name);
  if (n === undefined) {
    if (ELEMENTS.size >= INTERN_LIMIT) ELEMENTS.clear();
    const pe = make();
    NAMES.set(pe, name);
    n = { pe, name };
    ELEMENTS.set(name, n);
  }
  return n;
}

/** The element of list item i, with a schema problem reported at the list's path. */
export function listItem(atom: Atom & { kind: 'list' }, i: number, item: unknown, path: () => FieldPath): Named {
  try {
    return listItemNamed(atom, i, item);
  } catch (e) {
    if (e instanceof NamingError) throw e.inner;
    throw new SchemaError(path(), `element ${i}: ${(e as Error).message}`);
  }
}

export interface IndexedItem {
  pe: PathElement;
  name: string;
  item: unknown;
}

/** Path elements of a list's elements; with `strict`, a repeated element is an error. */
export function indexItems(atom: Atom & { kind: 'list' }, list: unknown[], path: () => FieldPath, strict: boolean): IndexedItem[] {
  const out: IndexedItem[] = new Array(list.length);
  const seen = strict ? new Set<string>() : undefined;
  for (let i = 0; i < list.length; i++) {
    const item = list[i];
    const n = listItem(atom, i, item, path);
    if (seen) {
      if (seen.has(n.name)) throw new SchemaError(path(), `duplicate entries for key ${pathElementString(n.pe)}`);
      seen.add(n.name);
    }
    out[i] = { pe: n.pe, name: n.name, item };
  }
  return out;
}

/** Path elements of a list's elements; with `strict`, a repeated element is an error. */
export function indexList(
  atom: Atom & { kind: 'list' },
  list: unknown[],
  path: FieldPath,
  strict: boolean,
): { pe: PathElement; name: string; item: unknown }[] {
  return indexItems(atom, list, () => path, strict);
}

/**
 * The fields an object sets, as recorded for an applier: every scalar, every atomic list/map/struct
 * as one field, each list-map or set element (`k:`/`v:`) and every map key; struct fields that hold
 * an empty or null map contribute nothing. `strict` rejects repeated list elements (apply configs).
 */
export function fieldsOf(node: TypeNode, obj: unknown, strict = false): FieldSet {
  const stack = new PathStack();
  const b = new SetBuilder(stack);
  walkFields(node, obj, stack, b, strict);
  return b.root;
}

function walkFields(node: TypeNode, value: unknown, stack: PathStack, set: SetBuilder, strict: boolean): void {
  const atom = resolveAtom(node, value);
  if (atom.kind === 'scalar') {
    set.add();
    return;
  }
  if (atom.kind === 'list') {
    if (atom.relationship === 'atomic' || !Array.isArray(value)) {
      if (atom.relationship === 'atomic' || (value !== null && value !== undefined)) set.add();
      return;
    }
    const seen = strict ? new Set<string>() : undefined;
    const path = (): FieldPath => stack.path();
    // Every element is named (and checked) before any is walked.
    const names: Named[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) {
      const n = listItem(atom, i, value[i], path);
      if (seen) {
        if (seen.has(n.name)) throw new SchemaError(path(), `duplicate entries for key ${pathElementString(n.pe)}`);
        seen.add(n.name);
      }
      names[i] = n;
    }
    for (let i = 0; i < value.length; i++) {
      stack.push(names[i]);
      walkFields(atom.elem, value[i], stack, set, strict);
      set.add();
      stack.pop();
    }
    return;
  }
  if (atom.atomic) {
    set.add();
    return;
  }
  if (!isPlainObject(value)) {
    if (value !== null && value !== undefined) set.add(); // not a map at all: a leaf
    return;
  }
  const fields = atom.fields;
  for (const key in value) {
    if (!hasOwn(value, key)) continue;
    stack.push(fieldNamed(key));
    const declared = fields !== undefined && hasOwn(fields, key);
    walkFields(declared ? fields[key] : atom.elem, value[key], stack, set, strict);
    if (!declared) set.add();
    stack.pop();
  }
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
function ensureNamed(node: TypeNode | undefined, set: FieldSet, fresh: boolean): FieldSet {
  const props = node?.type === 'object' ? node.properties : undefined;
  let out: FieldSet | undefined;
  const m = set._m;
  if (fresh) out = new FieldSet();
  let i = 0;
  for (const e of m.values()) {
    let member = e.member;
    let sub: FieldSet | undefined;
    if (e.sub) {
      let child: TypeNode | undefined;
      const pe = e.pe;
      if ('field' in pe) {
        if (props && hasOwn(props, pe.field)) {
          member = true;
          child = props[pe.field];
        } else if (node?.type === 'map') child = node.values ?? UNTYPED;
        else if (node?.type === 'object' || node?.type === 'any') child = UNTYPED;
      } else if ('key' in pe && node?.type === 'array') {
        child = node.items;
      }
      sub = ensureNamed(child, e.sub, false);
    }
    if (out === undefined && (member !== e.member || sub !== e.sub)) {
      // First difference: copy the entries before this one.
      out = new FieldSet();
      let j = 0;
      for (const p of m.values()) {
        if (j++ >= i) break;
        out._m.set(p.name, { name: p.name, pe: p.pe, member: p.member, sub: p.sub ? freeze(p.sub) : undefined });
      }
    }
    if (out !== undefined) out._m.set(e.name, { name: e.name, pe: e.pe, member, sub });
    i++;
  }
  return out ?? freeze(set);
}

/**
 * Problems that make an apply configuration unusable as a typed object, one message per problem
 * in structured-merge-diff's words: undeclared struct fields, list elements without their key
 * fields, repeated keys or set values.
 */
export function validateApplyConfiguration(node: TypeNode, obj: unknown): string[] {
  const errors: string[] = [];
  checkValue(node, obj, [], errors);
  return errors;
}

function checkValue(node: TypeNode, value: unknown, path: PathElement[], errors: string[]): void {
  const atom = resolveAtom(node, value);
  if (atom.kind === 'scalar') return;
  if (atom.kind === 'list') {
    if (!Array.isArray(value)) return;
    if (atom.relationship === 'atomic') {
      for (let i = 0; i < value.length; i++) {
        const item = value[i];
        if (resolveAtom(atom.elem, item).kind === 'scalar') continue;
        path.push(indexPE(i));
        checkValue(atom.elem, item, path, errors);
        path.pop();
      }
      return;
    }
    const seen = new Set<string>();
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
      if (seen.has(n.name)) {
        errors.push(new SchemaError(path, `duplicate entries for key ${pathElementString(n.pe)}`).message);
        continue;
      }
      seen.add(n.name);
      path.push(n.pe);
      checkValue(atom.elem, item, path, errors);
      path.pop();
    }
    return;
  }
  if (!isPlainObject(value)) return;
  const fields = atom.fields;
  for (const key of Object.keys(value)) {
    const declared = fields !== undefined && hasOwn(fields, key);
    if (fields && !declared && !node.preserveUnknownFields) {
      path.push(fieldNamed(key).pe);
      errors.push(new SchemaError(path, 'field not declared in schema').message);
      path.pop();
      continue;
    }
    const child = declared ? fields![key] : atom.elem;
    if (resolveAtom(child, value[key]).kind === 'scalar') continue;
    path.push(fieldNamed(key).pe);
    checkValue(child, value[key], path, errors);
    path.pop();
  }
}
