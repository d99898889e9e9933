// What encoding/json writes of a built-in object, and what it leaves out. kube-apiserver decodes
// every body into its Go types and writes them back. Left out: a field tagged `omitempty` that
// holds its zero value ("", 0, false) when it is a non-pointer scalar, so a `apiGroup: ""` or
// `hostNetwork: false` a client sends, or one a defaulter sets to "" (an RBAC subject of kind
// ServiceAccount), is never served; pointer fields keep their explicit zeros (`replicas: 0`);
// slices, maps and structs are left as they are (omitempty does not drop structs; the tag facts
// do not cover slices and maps). Written however empty: non-pointer structs and scalars without
// omitempty (fillGoZeros, for a kind's status and a Node's spec). Built-in bodies get both here,
// before managedFields are computed and the object is stored. The omitempty walk goes only where
// the type has such fields, one plan per type node, as quantities.ts's.
import { goOmitsZero, goZeroFields } from '../http/protobuf.ts';
import { isPlainObject } from '../util/json.ts';
import type { TypeNode } from './types.ts';

type Plan =
  | { kind: 'struct'; omitted: string[]; fields: [string, Plan][] }
  | { kind: 'map'; values: Plan }
  | { kind: 'list'; items: Plan };

const PLANS = new WeakMap<TypeNode, Plan | null>();

function planOf(node: TypeNode): Plan | null {
  const known = PLANS.get(node);
  if (known !== undefined) return known;
  // A recursive type meets itself with no plan yet: nothing more to find along that path.
  PLANS.set(node, null);
  let plan: Plan | null = null;
  if (node.type === 'object' && node.properties) {
    const def = node.definition;
    const omitted: string[] = [];
    const fields: [string, Plan][] = [];
    for (const [k, child] of Object.entries(node.properties)) {
      if (def && isScalar(child) && goOmitsZero(def, k)) omitted.push(k);
      const p = planOf(child);
      if (p) fields.push([k, p]);
    }
    if (omitted.length || fields.length) plan = { kind: 'struct', omitted, fields };
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

function isScalar(node: TypeNode): boolean {
  return node.type === 'string' || node.type === 'integer' || node.type === 'number' || node.type === 'boolean';
}

/** Removes, in place, every field of a built-in object of type `node` that encoding/json would leave out. */
export function dropOmittedZeros(node: TypeNode, obj: unknown): void {
  const plan = planOf(node);
  if (plan) walk(plan, obj);
}

function walk(plan: Plan, v: unknown): void {
  switch (plan.kind) {
    case 'struct': {
      if (!isPlainObject(v)) return;
      for (const k of plan.omitted) {
        const x = v[k];
        if (x === '' || x === 0 || x === false) delete v[k];
      }
      for (const [k, p] of plan.fields) {
        const x = v[k];
        if (x !== undefined && x !== null) walk(p, x);
      }
      return;
    }
    case 'map':
      if (isPlainObject(v)) for (const k in v) walk(plan.values, v[k]);
      return;
    case 'list':
      if (Array.isArray(v)) for (let i = 0; i < v.length; i++) walk(plan.items, v[i]);
      return;
  }
}

/**
 * Fills, in place, what encoding/json writes for a struct of type `node` that a body left out:
 * its non-pointer structs (`{}`, and so on inside them) and its scalars without omitempty at their
 * zero value (a VolumeAttachment's `attached: false`, a Node's `daemonEndpoints` and `nodeInfo`).
 * Only structs are walked (not lists or maps): it is for a kind's status, which kube decodes and
 * writes back whole, and for the specs nothing validates as required.
 */
export function fillGoZeros(node: TypeNode, obj: Record<string, unknown>): void {
  const props = node.properties;
  if (!node.definition || !props) return;
  for (const z of goZeroFields(node.definition)) {
    const child = props[z.field];
    if (!child) continue;
    const v = obj[z.field];
    if (z.zero !== 'struct') {
      if (v === undefined) obj[z.field] = z.zero;
    } else if (v === undefined) {
      const made: Record<string, unknown> = {};
      fillGoZeros(child, made);
      obj[z.field] = made;
    } else if (isPlainObject(v)) fillGoZeros(child, v);
  }
}
