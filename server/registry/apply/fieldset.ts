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
import type { TypeNode } from '../../schema/types.ts';

export type PathElement =
  | { readonly field: string }
  | { readonly key: ReadonlyArray<readonly [string, unknown]> }
  | { readonly value: unknown }
  | { readonly index: number };

export type FieldPath = readonly PathElement[];

// ---------------------------------------------------------------------------------------------
// Values: the JSON encoding kube uses inside k:/v: names, ordering and human-readable form.

/** Compact JSON as Go's encoding/json writes it: object keys sorted, <, >, & and U+2028/9 escaped. */
export function goJSON(v: unknown): string {
  return JSON.stringify(sortKeys(v)).replace(/[<>&\u2028\u2029]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
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

/** Byte-wise (UTF-8) string order, as Go's strings.Compare. */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
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
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (isPlainObject(a)) {
    if (!isPlainObject(b)) return false;
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    for (const k of ka) if (!Object.prototype.hasOwnProperty.call(b, k) || !jsonEqual(a[k], b[k])) return false;
    return true;
  }
  return false;
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

/** The FieldsV1 name of a path element: `f:name`, `k:{"name":"c"}`, `v:"x"`, `i:0`. */
export function serializePathElement(pe: PathElement): string {
  if ('field' in pe) return 'f:' + pe.field;
  if ('key' in pe) return 'k:{' + pe.key.map(([k, v]) => goJSON(k) + ':' + goJSON(v)).join(',') + '}';
  if ('value' in pe) return 'v:' + goJSON(pe.value);
  return 'i:' + pe.index;
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

interface Child {
  pe: PathElement;
  set: FieldSet;
}

export class FieldSet {
  private readonly members = new Map<string, PathElement>();
  private readonly children = new Map<string, Child>();

  static of(...paths: FieldPath[]): FieldSet {
    const s = new FieldSet();
    for (const p of paths) s.add(p);
    return s;
  }

  /** Adds a path (mutates). Parents are not added; the empty path (the whole object) is never tracked. */
  add(path: FieldPath): this {
    if (path.length === 0) return this;
    let s: FieldSet = this;
    for (let i = 0; i < path.length - 1; i++) s = s.descend(path[i]);
    const last = path[path.length - 1];
    s.members.set(serializePathElement(last), last);
    return this;
  }

  private descend(pe: PathElement): FieldSet {
    const name = serializePathElement(pe);
    let c = this.children.get(name);
    if (!c) this.children.set(name, (c = { pe, set: new FieldSet() }));
    return c.set;
  }

  has(path: FieldPath): boolean {
    if (path.length === 0) return false;
    let s: FieldSet | undefined = this;
    for (let i = 0; i < path.length - 1 && s; i++) s = s.children.get(serializePathElement(path[i]))?.set;
    return s ? s.members.has(serializePathElement(path[path.length - 1])) : false;
  }

  /** The paths below pe, without the prefix (empty when none). */
  withPrefix(pe: PathElement): FieldSet {
    return this.children.get(serializePathElement(pe))?.set ?? new FieldSet();
  }

  hasMember(pe: PathElement): boolean {
    return this.members.has(serializePathElement(pe));
  }

  isEmpty(): boolean {
    if (this.members.size > 0) return false;
    for (const c of this.children.values()) if (!c.set.isEmpty()) return false;
    return true;
  }

  /** Number of member paths. */
  size(): number {
    let n = this.members.size;
    for (const c of this.children.values()) n += c.set.size();
    return n;
  }

  union(o: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const [k, pe] of this.members) out.members.set(k, pe);
    for (const [k, pe] of o.members) out.members.set(k, pe);
    for (const [k, c] of this.children) {
      const oc = o.children.get(k);
      out.children.set(k, { pe: c.pe, set: oc ? c.set.union(oc.set) : c.set.clone() });
    }
    for (const [k, c] of o.children) if (!this.children.has(k)) out.children.set(k, { pe: c.pe, set: c.set.clone() });
    return out;
  }

  intersection(o: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const [k, pe] of this.members) if (o.members.has(k)) out.members.set(k, pe);
    for (const [k, c] of this.children) {
      const oc = o.children.get(k);
      if (!oc) continue;
      const r = c.set.intersection(oc.set);
      if (!r.isEmpty()) out.children.set(k, { pe: c.pe, set: r });
    }
    return out;
  }

  /** Members of this set not in o. A parent in o does not remove its children (structured-merge-diff's Difference). */
  difference(o: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const [k, pe] of this.members) if (!o.members.has(k)) out.members.set(k, pe);
    for (const [k, c] of this.children) {
      const oc = o.children.get(k);
      if (!oc) {
        out.children.set(k, { pe: c.pe, set: c.set.clone() });
        continue;
      }
      const d = c.set.difference(oc.set);
      if (!d.isEmpty()) out.children.set(k, { pe: c.pe, set: d });
    }
    return out;
  }

  /** Like difference, but a member of o also removes everything below it. */
  recursiveDifference(o: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const [k, pe] of this.members) if (!o.members.has(k)) out.members.set(k, pe);
    for (const [k, c] of this.children) {
      if (o.members.has(k)) continue;
      const oc = o.children.get(k);
      if (!oc) {
        out.children.set(k, { pe: c.pe, set: c.set.clone() });
        continue;
      }
      const d = c.set.recursiveDifference(oc.set);
      if (!d.isEmpty()) out.children.set(k, { pe: c.pe, set: d });
    }
    return out;
  }

  equals(o: FieldSet): boolean {
    if (this.members.size !== o.members.size) return false;
    for (const k of this.members.keys()) if (!o.members.has(k)) return false;
    const mine = [...this.children].filter(([, c]) => !c.set.isEmpty());
    const theirs = [...o.children].filter(([, c]) => !c.set.isEmpty());
    if (mine.length !== theirs.length) return false;
    for (const [k, c] of mine) {
      const oc = o.children.get(k);
      if (!oc || !c.set.equals(oc.set)) return false;
    }
    return true;
  }

  /** Only the leaf paths: members that have no members below them. */
  leaves(): FieldSet {
    const out = new FieldSet();
    for (const [k, pe] of this.members) {
      const c = this.children.get(k);
      if (!c || c.set.isEmpty()) out.members.set(k, pe);
    }
    for (const [k, c] of this.children) {
      const l = c.set.leaves();
      if (!l.isEmpty()) out.children.set(k, { pe: c.pe, set: l });
    }
    return out;
  }

  clone(): FieldSet {
    return this.union(new FieldSet());
  }

  /** Every member path, in kube's iteration order: this level's members sorted, then each child's. */
  paths(): FieldPath[] {
    const out: FieldPath[] = [];
    this.collect([], out);
    return out;
  }

  private collect(prefix: PathElement[], out: FieldPath[]): void {
    for (const pe of sortedElements(this.members.values())) out.push([...prefix, pe]);
    for (const c of sortedChildren(this.children.values())) c.set.collect([...prefix, c.pe], out);
  }

  /** Member path elements at this level, sorted. */
  memberElements(): PathElement[] {
    return sortedElements(this.members.values());
  }

  /** Child path elements (those with paths below them) at this level, sorted. */
  childElements(): PathElement[] {
    return sortedChildren(this.children.values()).map((c) => c.pe);
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
    const members = sortedElements(this.members.values());
    const children = sortedChildren([...this.children.values()].filter((c) => !c.set.isEmpty()));
    if (includeSelf && (members.length > 0 || children.length > 0)) out['.'] = {};
    let mi = 0;
    let ci = 0;
    while (mi < members.length || ci < children.length) {
      const m = members[mi];
      const c = children[ci];
      const cmp = m === undefined ? 1 : c === undefined ? -1 : comparePathElements(m, c.pe);
      if (cmp < 0) {
        out[serializePathElement(m)] = {};
        mi++;
      } else if (cmp > 0) {
        out[serializePathElement(c.pe)] = c.set.emit(false);
        ci++;
      } else {
        out[serializePathElement(c.pe)] = c.set.emit(true);
        mi++;
        ci++;
      }
    }
    return out;
  }

  /** Reads a FieldsV1 object. Throws on malformed input; unknown element types are dropped. */
  static fromFieldsV1(fields: unknown): FieldSet {
    if (!isPlainObject(fields)) throw new Error('FieldsV1 must be a JSON object');
    return FieldSet.readLevel(fields).children ?? new FieldSet();
  }

  private static readLevel(obj: Record<string, unknown>): { children: FieldSet | undefined; isMember: boolean } {
    let children: FieldSet | undefined;
    let isMember = false;
    for (const key of Object.keys(obj)) {
      const v = obj[key];
      if (key === '.') {
        isMember = true;
        continue;
      }
      const pe = parsePathElement(key);
      if (pe === undefined) continue;
      if (!isPlainObject(v)) throw new Error(`expected an object for ${key}`);
      const sub = FieldSet.readLevel(v);
      if (sub.isMember) {
        children ??= new FieldSet();
        children.add([pe]);
      }
      if (sub.children) {
        children ??= new FieldSet();
        const name = serializePathElement(pe);
        const existing = children.children.get(name);
        children.children.set(name, { pe, set: existing ? existing.set.union(sub.children) : sub.children });
      }
    }
    if (!children) isMember = true;
    return { children, isMember };
  }
}

function sortedElements(it: Iterable<PathElement>): PathElement[] {
  return [...it].sort(comparePathElements);
}

function sortedChildren(it: Iterable<Child>): Child[] {
  return [...it].sort((a, b) => comparePathElements(a.pe, b.pe));
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

/** The atom a node has, deducing it from the value where the schema says nothing ('any'). */
export function resolveAtom(node: TypeNode, value: unknown): Atom {
  switch (node.type) {
    case 'object':
      return { kind: 'map', atomic: node.mapType === 'atomic', fields: node.properties ?? {}, elem: UNTYPED };
    case 'map':
      return { kind: 'map', atomic: node.mapType === 'atomic', fields: undefined, elem: node.values ?? UNTYPED };
    case 'array': {
      const { relationship, keys } = listRelationship(node);
      return { kind: 'list', relationship, keys, elem: node.items ?? UNTYPED };
    }
    case 'any':
      if (Array.isArray(value)) return { kind: 'list', relationship: 'atomic', keys: [], elem: UNTYPED };
      if (isPlainObject(value)) return { kind: 'map', atomic: false, fields: undefined, elem: UNTYPED };
      return { kind: 'scalar' };
    default:
      return { kind: 'scalar' };
  }
}

/** The node of a map/struct entry. */
export function mapChildNode(atom: Atom & { kind: 'map' }, key: string): TypeNode {
  if (atom.fields && Object.prototype.hasOwnProperty.call(atom.fields, key)) return atom.fields[key];
  return atom.elem;
}

export function isDeclaredField(atom: Atom & { kind: 'map' }, key: string): boolean {
  return !!atom.fields && Object.prototype.hasOwnProperty.call(atom.fields, key);
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
      if (Object.prototype.hasOwnProperty.call(item, k)) {
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

/** Path elements of a list's elements; with `strict`, a repeated element is an error. */
export function indexList(
  atom: Atom & { kind: 'list' },
  list: unknown[],
  path: FieldPath,
  strict: boolean,
): { pe: PathElement; name: string; item: unknown }[] {
  const out: { pe: PathElement; name: string; item: unknown }[] = [];
  const seen = new Set<string>();
  list.forEach((item, i) => {
    let pe: PathElement;
    try {
      pe = listItemPathElement(atom, i, item);
    } catch (e) {
      throw new SchemaError(path, `element ${i}: ${(e as Error).message}`);
    }
    const name = serializePathElement(pe);
    if (strict && seen.has(name)) throw new SchemaError(path, `duplicate entries for key ${pathElementString(pe)}`);
    seen.add(name);
    out.push({ pe, name, item });
  });
  return out;
}

/**
 * The fields an object sets, as recorded for an applier: every scalar, every atomic list/map/struct
 * as one field, each list-map or set element (`k:`/`v:`) and every map key; struct fields that hold
 * an empty or null map contribute nothing. `strict` rejects repeated list elements (apply configs).
 */
export function fieldsOf(node: TypeNode, obj: unknown, strict = false): FieldSet {
  const set = new FieldSet();
  walkFields(node, obj, [], set, strict);
  return set;
}

function walkFields(node: TypeNode, value: unknown, path: PathElement[], set: FieldSet, strict: boolean): void {
  const atom = resolveAtom(node, value);
  if (atom.kind === 'scalar') {
    set.add(path);
    return;
  }
  if (atom.kind === 'list') {
    if (atom.relationship === 'atomic' || !Array.isArray(value)) {
      if (atom.relationship === 'atomic' || (value !== null && value !== undefined)) set.add(path);
      return;
    }
    for (const { pe, item } of indexList(atom, value, path, strict)) {
      const p = [...path, pe];
      walkFields(atom.elem, item, p, set, strict);
      set.add(p);
    }
    return;
  }
  if (atom.atomic) {
    set.add(path);
    return;
  }
  if (!isPlainObject(value)) {
    if (value !== null && value !== undefined) set.add(path); // not a map at all: a leaf
    return;
  }
  for (const key of Object.keys(value)) {
    const p = [...path, fieldPE(key)];
    walkFields(mapChildNode(atom, key), value[key], p, set, strict);
    if (!isDeclaredField(atom, key)) set.add(p);
  }
}

/**
 * The set plus, as members, every struct field declared by the schema that has members below it —
 * so that owning `.spec.replicas` also protects `.spec` itself when fields are pruned.
 */
export function ensureNamedFieldsAreMembers(node: TypeNode | undefined, set: FieldSet): FieldSet {
  const out = new FieldSet();
  const props = node?.type === 'object' ? node.properties : undefined;
  for (const pe of set.memberElements()) out.add([pe]);
  for (const pe of set.childElements()) {
    let child: TypeNode | undefined;
    if ('field' in pe) {
      if (props && Object.prototype.hasOwnProperty.call(props, pe.field)) {
        out.add([pe]);
        child = props[pe.field];
      } else if (node?.type === 'map') child = node.values ?? UNTYPED;
      else if (node?.type === 'object' || node?.type === 'any') child = UNTYPED;
    } else if ('key' in pe && node?.type === 'array') {
      child = node.items;
    }
    const sub = ensureNamedFieldsAreMembers(child, set.withPrefix(pe));
    for (const p of sub.paths()) out.add([pe, ...p]);
  }
  return out;
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
      value.forEach((item, i) => checkValue(atom.elem, item, [...path, indexPE(i)], errors));
      return;
    }
    const seen = new Set<string>();
    value.forEach((item, i) => {
      let pe: PathElement;
      try {
        pe = listItemPathElement(atom, i, item);
      } catch (e) {
        errors.push(new SchemaError(path, `element ${i}: ${(e as Error).message}`).message);
        return;
      }
      const name = serializePathElement(pe);
      if (seen.has(name)) {
        errors.push(new SchemaError(path, `duplicate entries for key ${pathElementString(pe)}`).message);
        return;
      }
      seen.add(name);
      checkValue(atom.elem, item, [...path, pe], errors);
    });
    return;
  }
  if (!isPlainObject(value)) return;
  for (const key of Object.keys(value)) {
    const p = [...path, fieldPE(key)];
    if (atom.fields && !isDeclaredField(atom, key) && !node.preserveUnknownFields) {
      errors.push(new SchemaError(p, 'field not declared in schema').message);
      continue;
    }
    checkValue(mapChildNode(atom, key), value[key], p, errors);
  }
}
