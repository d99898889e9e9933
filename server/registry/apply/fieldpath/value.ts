// The values path elements carry (structured-merge-diff's value package): their order and how kube
// prints them, and the shapes a walk asks a value about (equality is util/json.ts's deepEqual).
// JSON values only: no schema here.
import { hasOwn, isPlainObject } from '../../../util/json.ts';
import { compareStrings } from '../../../go/strings.ts';

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

/** Go's value.ToString: how a key or set value appears in a path such as `[name="nginx"]`. */
export function valueToString(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return '[' + v.map(valueToString).join(',') + ']';
  if (isPlainObject(v)) return '{' + Object.keys(v).map((k) => `${k}=${valueToString(v[k])}`).join(',') + '}';
  return String(v);
}

/** null, a string, a number or a boolean. */
export function isScalarValue(v: unknown): boolean {
  return v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
}

/** A map with no entries (or none at all). */
export function emptyMap(m: Record<string, unknown> | undefined): boolean {
  if (m === undefined) return true;
  for (const k in m) if (hasOwn(m, k)) return false;
  return true;
}

/** A list with no elements (or none at all). */
export function emptyList(l: unknown[] | undefined): boolean {
  return l === undefined || l.length === 0;
}

/** The value as a map, when it is one. */
export function asMap(v: unknown): Record<string, unknown> | undefined {
  return isPlainObject(v) ? v : undefined;
}

/** The value as a list, when it is one. */
export function asList(v: unknown): unknown[] | undefined {
  return Array.isArray(v) ? v : undefined;
}
