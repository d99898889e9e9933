// The schema view (structured-merge-diff's schema.Atom): what each TypeNode is for Server-Side
// Apply — a scalar, a map (granular or atomic; a struct is a map with declared fields) or a list
// (atomic, a set, or a list-map with its key fields) — and the declared fields of structs in kube's
// order. Atoms are computed once per TypeNode; untyped nodes ('any') take theirs from the value.
import { compareStrings } from '../../../go/strings.ts';
import type { TypeNode } from '../../../schema/types.ts';
import { hasOwn, isPlainObject } from '../../../util/json.ts';
import type { PathElement } from '../fieldpath/element.ts';
import { pathString, type FieldPath } from '../fieldpath/path.ts';
import { fieldNamed } from '../fieldpath/serialize-pe.ts';
import { sortSmall } from '../fieldpath/set.ts';

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
