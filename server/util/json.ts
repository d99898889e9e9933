// Small helpers on JSON-shaped values (what decoded request bodies and stored objects are).

export function isPlainObject(v: unknown): v is Record<string, any> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) {
    if (!Object.prototype.hasOwnProperty.call(b, k)) return false;
    if (!deepEqual((a as any)[k], (b as any)[k])) return false;
  }
  return true;
}

export function deepClone<T>(v: T): T {
  return structuredClone(v);
}

/** Freezes o and everything under it: for values shared between requests that nobody may change. */
export function deepFreeze<T extends object>(o: T): T {
  for (const k in o) {
    const v = (o as Record<string, unknown>)[k];
    if (typeof v === 'object' && v !== null) deepFreeze(v);
  }
  return Object.freeze(o);
}
