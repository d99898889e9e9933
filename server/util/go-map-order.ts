// Go's encoding/json writes a map's keys sorted: a built-in kind's Go maps (labels, annotations,
// ...) and the objects of a custom object, which kube-apiserver holds as a map (unstructured).
import type { TypeNode } from '../schema/types.ts';

/**
 * A JSON value with the keys of every object in it in Go's map order: UTF-16 code unit order,
 * which is Go's UTF-8 byte order but for characters beyond U+FFFF. The values of `keep`'s keys
 * are left as they are. What is already in order is returned as it is (no copy); what is not is
 * copied, so nothing given is changed.
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
  const o = value as Record<string, unknown>;
  let prev: string | undefined;
  let inOrder = true;
  let changed: Map<string, unknown> | undefined;
  for (const k in o) {
    if (prev !== undefined && prev > k) inOrder = false;
    prev = k;
    const c = o[k];
    if (c !== null && typeof c === 'object' && !keep?.has(k)) {
      const s = goMapOrder(c, keep);
      if (s !== c) (changed ??= new Map()).set(k, s);
    }
  }
  if (inOrder && !changed) return value;
  const out: Record<string, unknown> = {};
  for (const k of inOrder ? Object.keys(o) : Object.keys(o).sort()) out[k] = changed?.has(k) ? changed.get(k) : o[k];
  return out as T;
}

/** Per type: the properties whose values may hold a map (a struct's), or whether it may hold one. */
const MAP_HOLDERS = new WeakMap<TypeNode, readonly string[] | boolean>();

/** Whether a value of this type may hold a Go map. A recursive type (JSONSchemaProps) counts as one. */
function holdsMaps(node: TypeNode): boolean {
  const known = MAP_HOLDERS.get(node);
  if (known !== undefined) return known !== false;
  MAP_HOLDERS.set(node, true); // while this type is looked at: a cycle back to it may hold maps
  let holds: readonly string[] | boolean = false;
  if (node.type === 'map') holds = true;
  else if (node.type === 'array') holds = !!node.items && holdsMaps(node.items);
  else if (node.type === 'object' && node.properties) {
    const props = Object.keys(node.properties).filter((k) => holdsMaps(node.properties![k]));
    holds = props.length > 0 ? props : false;
  }
  MAP_HOLDERS.set(node, holds);
  return holds !== false;
}

/**
 * A built-in object with the keys of its Go maps (labels, annotations, ConfigMap data, selectors,
 * resource lists, a CRD's schema properties, ...) in Go's map order; structs keep theirs, and
 * untyped values (RawExtension, JSON) their own, as kube keeps their bytes. Copies only what
 * changes, along its path; returns value itself when every map is in order.
 */
export function goMapsInOrder(node: TypeNode, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || !holdsMaps(node)) return value;
  if (Array.isArray(value)) {
    if (node.type !== 'array' || !node.items) return value;
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const s = goMapsInOrder(node.items, value[i]);
      if (s !== value[i]) (out ??= value.slice())[i] = s;
    }
    return out ?? value;
  }
  const o = value as Record<string, unknown>;
  if (node.type === 'map') {
    const values = node.values;
    let prev: string | undefined;
    let inOrder = true;
    let changed: Map<string, unknown> | undefined;
    for (const k in o) {
      if (prev !== undefined && prev > k) inOrder = false;
      prev = k;
      if (values) {
        const s = goMapsInOrder(values, o[k]);
        if (s !== o[k]) (changed ??= new Map()).set(k, s);
      }
    }
    if (inOrder && !changed) return value;
    const out: Record<string, unknown> = {};
    for (const k of inOrder ? Object.keys(o) : Object.keys(o).sort()) out[k] = changed?.has(k) ? changed.get(k) : o[k];
    return out;
  }
  const props = MAP_HOLDERS.get(node);
  if (node.type !== 'object' || !Array.isArray(props)) return value;
  let out: Record<string, unknown> | undefined;
  for (const k of props as readonly string[]) {
    const c = o[k];
    if (c === null || typeof c !== 'object') continue;
    const s = goMapsInOrder(node.properties![k], c);
    if (s !== c) (out ??= { ...o })[k] = s;
  }
  return out ?? value;
}
