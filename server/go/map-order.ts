// Go's encoding/json writes a map's keys sorted: the objects of a custom object, which
// kube-apiserver holds as a map (unstructured), and a built-in kind's Go maps (see
// schema/go-order.ts).
import { compareStrings } from './strings.ts';

/**
 * A JSON value with the keys of every object in it in Go's map order (UTF-8 byte order, see
 * strings.ts). The values of `keep`'s keys are left as they are. What is already in order is
 * returned as it is (no copy); what is not is copied, so nothing given is changed.
 */
export function goMapOrder<T>(value: T, keep?: ReadonlySet<string>): T {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const e = value[i];
      const s = goMapOrder(e, keep);
      if (s !== e) (out ??= value.slice())[i] = s;
    }
    return (out ?? value) as T;
  }
  return sortedMap(value as Record<string, unknown>, (c, k) => (keep?.has(k) ? c : goMapOrder(c, keep))) as T;
}

/**
 * A map's keys in Go's order, the values that are objects or lists replaced by inner's result
 * for them: the object itself when neither changes anything, else a copy.
 */
export function sortedMap(o: Record<string, unknown>, inner?: (value: object, key: string) => unknown): Record<string, unknown> {
  let prev: string | undefined;
  let inOrder = true;
  let changed: Map<string, unknown> | undefined;
  for (const k in o) {
    if (prev !== undefined && compareStrings(prev, k) > 0) inOrder = false;
    prev = k;
    const c = o[k];
    if (inner && c !== null && typeof c === 'object') {
      const s = inner(c, k);
      if (s !== c) (changed ??= new Map()).set(k, s);
    }
  }
  if (inOrder && !changed) return o;
  const out: Record<string, unknown> = {};
  for (const k of inOrder ? Object.keys(o) : Object.keys(o).sort(compareStrings)) out[k] = changed?.has(k) ? changed.get(k) : o[k];
  return out;
}

