// Quantities in built-in objects, written in canonical form as kube-apiserver writes them back
// after decoding a resource.Quantity ("1000m" → "1", "1024Mi" → "1Gi", a JSON number 0.5 → "500m").
// The walk goes only where the type can hold a Quantity: most kinds have none, and a Pod's are
// in its containers' resources, its overhead and its volumes.
import { canonicalQuantity } from '../util/quantity.ts';
import { cloneJSON, isPlainObject } from '../util/json.ts';
import { TypeModel } from './model.ts';
import type { TypeNode } from './types.ts';

/** Where below a node Quantities can be: itself, some struct fields, map values or list elements. */
type Plan =
  | { kind: 'quantity' }
  | { kind: 'struct'; fields: [string, Plan][] }
  | { kind: 'map'; values: Plan }
  | { kind: 'list'; items: Plan };

const PLANS = new WeakMap<TypeNode, Plan | null>();

function planOf(node: TypeNode): Plan | null {
  const known = PLANS.get(node);
  if (known !== undefined) return known;
  // A recursive type (JSONSchemaProps) meets itself holding none so far: none is its answer there.
  PLANS.set(node, null);
  let plan: Plan | null = null;
  if (node.type === 'int-or-string' && node.format === 'quantity') plan = { kind: 'quantity' };
  else if (node.type === 'object' && node.properties) {
    const fields: [string, Plan][] = [];
    for (const [k, child] of Object.entries(node.properties)) {
      const p = planOf(child);
      if (p) fields.push([k, p]);
    }
    if (fields.length) plan = { kind: 'struct', fields };
  } else if (node.type === 'map' && node.values) {
    const p = planOf(node.values);
    if (p) plan = { kind: 'map', values: p };
  } else if (node.type === 'array' && node.items) {
    const p = planOf(node.items);
    if (p) plan = { kind: 'list', items: p };
  }
  PLANS.set(node, plan);
  return plan;
}

/**
 * Rewrites, in place, every Quantity of a built-in object of type `node` in canonical form. Values
 * that are no quantity are left for validation to report.
 */
export function canonicalizeQuantities(node: TypeNode, obj: unknown): void {
  const plan = planOf(node);
  if (plan && plan.kind !== 'quantity') walk(plan, obj);
}

function walk(plan: Plan, v: unknown): void {
  switch (plan.kind) {
    case 'struct':
      if (!isPlainObject(v)) return;
      for (const [k, p] of plan.fields) {
        const x = v[k];
        if (x === undefined || x === null) continue;
        if (p.kind === 'quantity') v[k] = canonical(x);
        else walk(p, x);
      }
      return;
    case 'map':
      if (!isPlainObject(v)) return;
      for (const k of Object.keys(v)) {
        if (plan.values.kind === 'quantity') v[k] = canonical(v[k]);
        else walk(plan.values, v[k]);
      }
      return;
    case 'list':
      if (!Array.isArray(v)) return;
      for (let i = 0; i < v.length; i++) {
        if (plan.items.kind === 'quantity') v[i] = canonical(v[i]);
        else walk(plan.items, v[i]);
      }
      return;
  }
}

function canonical(x: unknown): unknown {
  if (typeof x !== 'string' && typeof x !== 'number') return x;
  return canonicalQuantity(String(x)) ?? x;
}

/**
 * A copy of a built-in value of type `definition` with its quantities canonical: how an update
 * compares an object stored before quantities were (kube compares Quantities by value).
 */
export function withCanonicalQuantities<T>(definition: string, value: T): T {
  const copy = cloneJSON(value);
  canonicalizeQuantities(TypeModel.loadBuiltins().node(definition), copy);
  return copy;
}
