// The order encoding/json writes a built-in object's fields in: a struct's in the Go struct's
// field order (embedded structs' fields where they are embedded), a map's keys sorted, untyped
// values (RawExtension, JSON) as they are, since kube keeps their bytes. kube-apiserver answers in
// that order whatever order a request had; schemas/struct-order.json holds the structs' orders.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { TypeNode } from './types.ts';
import { sortedMap } from '../go/map-order.ts';

const STRUCT_ORDER_FILE = fileURLToPath(new URL('../../schemas/struct-order.json', import.meta.url));

let structOrders: Record<string, readonly string[]> | undefined;

/** A struct's fields in order, and each one's rank. */
interface StructOrder {
  fields: readonly string[];
  ranks: Map<string, number>;
}

/** Per type node; null for a type without a known order. */
const ORDERS = new WeakMap<TypeNode, StructOrder | null>();

function orderOf(node: TypeNode): StructOrder | null {
  let r = ORDERS.get(node);
  if (r !== undefined) return r;
  structOrders ??= (JSON.parse(readFileSync(STRUCT_ORDER_FILE, 'utf8')) as { definitions: Record<string, readonly string[]> }).definitions;
  const fields = node.definition ? structOrders[node.definition] : undefined;
  r = fields ? { fields, ranks: new Map(fields.map((k, i) => [k, i])) } : null;
  ORDERS.set(node, r);
  return r;
}

/** Whether a value of this type can be an object or list (what the walk looks inside). */
function composite(node: TypeNode): boolean {
  return node.type === 'object' || node.type === 'map' || node.type === 'array';
}

/**
 * A built-in object's fields in the order encoding/json writes them: struct fields by their Go
 * struct order (fields it does not know keep theirs, after the known ones), map keys sorted.
 * Copies only what changes, along its path; returns value itself when all is in order.
 */
export function goJsonOrder(node: TypeNode, value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    if (node.type !== 'array' || !node.items || !composite(node.items)) return value;
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const s = goJsonOrder(node.items, value[i]);
      if (s !== value[i]) (out ??= value.slice())[i] = s;
    }
    return out ?? value;
  }
  const o = value as Record<string, unknown>;
  if (node.type === 'map') {
    const values = node.values && composite(node.values) ? node.values : undefined;
    return sortedMap(o, values && ((c) => goJsonOrder(values, c)));
  }
  if (node.type !== 'object' || !node.properties) return value;
  const order = orderOf(node);
  let last = -1;
  let inOrder = true;
  let unknown = false;
  let changed: Map<string, unknown> | undefined;
  for (const k in o) {
    if (order) {
      // Unknown fields rank after every known one, in the order they came.
      const r = order.ranks.get(k);
      if (r === undefined) unknown = true;
      else if (r < last || unknown) inOrder = false;
      else last = r;
    }
    const child = node.properties[k];
    if (child !== undefined && composite(child)) {
      const s = goJsonOrder(child, o[k]);
      if (s !== o[k]) (changed ??= new Map()).set(k, s);
    }
  }
  if (inOrder && !changed) return value;
  const out: Record<string, unknown> = {};
  const put = (k: string) => (out[k] = changed?.has(k) ? changed.get(k) : o[k]);
  if (inOrder) for (const k in o) put(k);
  else {
    // The struct's fields that are here, in its order; then the others as they came.
    for (const k of order!.fields) if (Object.prototype.hasOwnProperty.call(o, k)) put(k);
    if (unknown) for (const k in o) if (!order!.ranks.has(k)) put(k);
  }
  return out;
}
