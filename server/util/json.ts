// Small helpers on JSON-shaped values (what decoded request bodies and stored objects are).

const hasOwnProperty = Object.prototype.hasOwnProperty;

/** Whether o has k as an own property (the keys Object.keys lists, and non-enumerable ones). */
export function hasOwn(o: object, k: string): boolean {
  return hasOwnProperty.call(o, k);
}

export function isPlainObject(v: unknown): v is Record<string, any> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Deep equality of JSON values (object key order ignored). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || a === null || typeof b !== 'object' || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  // for-in with own keys only (what Object.keys lists), without allocating the key arrays: this
  // runs on every write (Server-Side Apply compares values field by field).
  let n = 0;
  for (const k in a) {
    if (!hasOwn(a, k)) continue;
    if (!hasOwn(b, k) || !deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
    n++;
  }
  for (const k in b) if (hasOwn(b, k)) n--;
  return n === 0;
}

/**
 * apimachinery's Semantic.DeepEqual on JSON: an absent, null or empty list equals another. An
 * empty object does not equal an absent one: it may be a struct behind a pointer, which Go tells
 * from nil (a CRD's `subresources: {}`); the rare empty map that Go would drop compares unequal.
 */
export function semanticEqual(a: unknown, b: unknown): boolean {
  const empty = (v: unknown) => v === undefined || v === null || (Array.isArray(v) && v.length === 0);
  if (empty(a) && empty(b)) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => semanticEqual(x, b[i]));
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) if (!semanticEqual(a[k], b[k])) return false;
    return true;
  }
  return a === b;
}

/** A deep copy of a JSON value (structuredClone for anything that is not plain JSON data). */
export function cloneJSON<T>(v: T): T {
  if (typeof v !== 'object' || v === null) return v;
  if (Array.isArray(v)) {
    const out = new Array(v.length);
    for (let i = 0; i < v.length; i++) {
      if (!(i in v)) return structuredClone(v);
      out[i] = cloneJSON(v[i]);
    }
    return out as T;
  }
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return structuredClone(v);
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) {
    const x = cloneJSON((v as Record<string, unknown>)[k]);
    // An own "__proto__" key stays one (as structuredClone keeps it).
    if (k === '__proto__') Object.defineProperty(out, k, { value: x, enumerable: true, writable: true, configurable: true });
    else out[k] = x;
  }
  return out as T;
}

/** A list's entries as objects: an entry that is none reads as {} (the schema walk reports it); no list, none. */
export function objectsOf(v: unknown): Record<string, any>[] {
  return Array.isArray(v) ? v.map((x) => (isPlainObject(x) ? x : {})) : [];
}

/** Freezes o and everything under it: for values shared between requests that nobody may change. */
export function deepFreeze<T extends object>(o: T): T {
  for (const k in o) {
    const v = (o as Record<string, unknown>)[k];
    if (typeof v === 'object' && v !== null) deepFreeze(v);
  }
  return Object.freeze(o);
}
