// Sets of field paths (structured-merge-diff's fieldpath.Set), as Server-Side Apply tracks
// ownership, and their FieldsV1 wire form.
//
// A set is a trie: at each level the elements that are members themselves and the children that
// lead to deeper members. Serialized, a member is `{}`, a child is an object of its own, and a node
// that is both begins with `".":{}` — the order and spelling kube-apiserver writes.
//
// Performance notes (this code runs on every write): a trie level is an array of entries keyed by
// the element's FieldsV1 name (indexed by a Map when large), so names are computed once per
// element and never again per operation; levels remember whether they are in kube's order, so
// only new ones are sorted; set operations share unchanged levels copy-on-write (frozen) instead
// of cloning them, and frozen levels remember what typed/ derives from them.
import { hasOwn, isPlainObject } from '../../../util/json.ts';
import { compareStrings } from '../../../go/strings.ts';
import { comparePathElements, type PathElement } from './element.ts';
import { namedElement, parseNamed, serializePathElement } from './serialize-pe.ts';
import { pathString, type FieldPath, type PathStack } from './path.ts';

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
export function sortSmall<T>(a: T[], cmp: (x: T, y: T) => number): T[] {
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
  /**
   * @internal For frozen sets: typed/'s schemaMismatches below this level, and the schema node
   * they are for (a TypeNode, opaque here).
   */
  _mm: FieldPath[] | undefined = undefined;
  _mmNode: object | undefined = undefined;
  /** @internal For frozen sets: typed/'s ensureNamedFieldsAreMembers of this level, and the node (null: none) it is for. */
  _en: FieldSet | undefined = undefined;
  _enNode: object | null | undefined = undefined;

  static of(...paths: FieldPath[]): FieldSet {
    const s = new FieldSet();
    for (const p of paths) s.add(p);
    return s;
  }

  /** Adds a path (mutates). Parents are not added; the empty path (the whole object) is never tracked. */
  add(path: FieldPath): this {
    if (path.length === 0) return this;
    if (this._frozen) throw new Error('FieldSet is shared and cannot be modified');
    const parent = writableLevel(this, path, path.length - 1);
    const last = namedElement(path[path.length - 1]);
    parent._member(last.name, last.pe);
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
      e[i] = { name: x.name, pe: x.pe, member: x.member, sub: x.sub ? frozen(x.sub) : undefined };
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
    const s = levelBelow(this, path, path.length - 1);
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

/** The writable level below the first n elements of path, made on the way where missing. */
function writableLevel(root: FieldSet, path: FieldPath, n: number): FieldSet {
  let s = root;
  for (let i = 0; i < n; i++) {
    const e = namedElement(path[i]);
    s = s._child(e.name, e.pe);
  }
  return s;
}

/** The level below the first n elements of path (undefined: none). */
function levelBelow(root: FieldSet, path: FieldPath, n: number): FieldSet | undefined {
  let s: FieldSet | undefined = root;
  for (let i = 0; i < n && s; i++) s = s._get(serializePathElement(path[i]))?.sub;
  return s;
}

/** The set, made immutable (to be shared: by a cache, or as part of other sets). */
export function frozen(s: FieldSet): FieldSet {
  s._frozen = true;
  return s;
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

/** An entry with its level below shared (frozen). */
export function shareEntry(e: Entry): Entry {
  return { name: e.name, pe: e.pe, member: e.member, sub: e.sub ? frozen(e.sub) : undefined };
}

/** @internal A level made of entries with distinct names. */
export function level(e: Entry[], ordered: boolean): FieldSet {
  const s = new FieldSet();
  s._adopt(e, ordered);
  return s;
}

/** a ∪ b; levels found in only one of them are shared, not copied. `fresh`: never return a or b itself. */
export function unionSets(a: FieldSet, b: FieldSet, fresh: boolean): FieldSet {
  if (!fresh) {
    if (a === b || b._e.length === 0) return frozen(a);
    if (a._e.length === 0) return frozen(b);
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
      const sub = e.sub ? (oe.sub ? unionSets(e.sub, oe.sub, false) : frozen(e.sub)) : oe.sub ? frozen(oe.sub) : undefined;
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
    const sub = e.sub && oe.sub ? (e.sub === oe.sub ? frozen(e.sub) : intersectSets(e.sub, oe.sub)) : undefined;
    if (!member && !sub) continue;
    (out ??= []).push({ name: e.name, pe: e.pe, member, sub });
  }
  return out === undefined ? undefined : level(out, small._ordered);
}

/** a − b (recursive: a member of b also removes what is below it); undefined when empty. `fresh`: never return a itself. */
function subtractSets(a: FieldSet, b: FieldSet, recursive: boolean, fresh: boolean): FieldSet | undefined {
  if (a === b || a._e.length === 0) return undefined;
  if (!fresh && b._e.length === 0) return frozen(a);
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
    const sub = e.sub ? (oe.sub ? subtractSets(e.sub, oe.sub, recursive, false) : frozen(e.sub)) : undefined;
    if (member !== e.member || sub !== e.sub) changed = true;
    if (!member && !sub) continue;
    out.push({ name: e.name, pe: e.pe, member, sub });
  }
  if (!changed && !fresh) return frozen(a);
  return out.length === 0 ? undefined : level(out, a._ordered);
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
    if (e) e.sub = frozen(sub);
    else parent._push({ name, pe: st.pes[d - 1], member: false, sub: frozen(sub) });
    this.levels[d] = sub;
    this.stamps[d] = st.stamps[d];
    return true;
  }
}
