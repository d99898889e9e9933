// The FieldsV1 names of path elements (structured-merge-diff's serialize-pe.go): `f:name`,
// `k:{"name":"c"}`, `v:"x"`, `i:0`, written and read. Names are computed once per element, and the
// elements of field names and of scalar names read are interned (bounded): the same names recur in
// every object of a kind.
import { isPlainObject } from '../../../util/json.ts';
import { goJsonMarshal } from '../../../go/json.ts';
import { keyPE, type PathElement } from './element.ts';
import { isScalarValue } from './value.ts';

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

/** An element whose name the caller wrote already (as serializePathElement would), remembered as its name. */
export function withName(pe: PathElement, name: string): Named {
  NAMES.set(pe, name);
  return { pe, name };
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

/** A path element with its name (interned for fields). */
export function namedElement(pe: PathElement): Named {
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

export function parseNamed(s: string): Named | undefined {
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
