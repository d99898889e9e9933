// The path elements of list elements (structured-merge-diff's typed/helpers.go): `k:` for the
// elements of a list-map (named by their key fields, defaults filled in), `v:` for sets, `i:` for
// atomic lists; with a schema problem (a missing key, a null element, a repeated key) reported at
// the list's path. Names of scalar-keyed elements are remembered per list atom (bounded).
import { goJsonMarshal } from '../../../go/json.ts';
import { compareStrings } from '../../../go/strings.ts';
import type { TypeNode } from '../../../schema/types.ts';
import { hasOwn, isPlainObject } from '../../../util/json.ts';
import { pathElementString, type PathElement } from '../fieldpath/element.ts';
import { snapshot, type PathSource } from '../fieldpath/path.ts';
import { withName, type Named } from '../fieldpath/serialize-pe.ts';
import { isScalarValue } from '../fieldpath/value.ts';
import { SchemaError, type Atom } from './atom.ts';

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
export function listItemNamed(atom: Atom & { kind: 'list' }, index: number, item: unknown): Named {
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
  const def = keyFieldDefault(atom.elem, k);
  if (def === undefined) throw new Error(`associative list with keys has an element that omits key field ${JSON.stringify(k)} (and doesn't have default value)`);
  return def;
}

/** Marks the TypeError of naming an undefined value, so that the caller does not wrap it. */
export class NamingError extends Error {
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
