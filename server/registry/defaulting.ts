// Defaults kube-apiserver fills in built-in objects on every create and update (it decodes the
// body through the versioned Go types, whose SetDefaults_* functions and +default markers run).
// Each kind's defaulters live with the kind (kinds/<group>/...), keyed by OpenAPI definition name;
// kinds/index.ts gathers them into one table. This file holds what they share: the Go zero-value
// rules below and the walk: applyDefaults walks the object alongside its TypeNodes and calls the
// defaulter of every definition it meets, parents before children, so a Deployment's pod
// template gets exactly the PodSpec and Container defaults a Pod gets.
//
// Go semantics carried over: a non-pointer field is "unset" when it holds its zero value ("" or
// 0), a pointer field only when absent; `zero()` and `absent()` below say which rule a field uses.
//
// Not done (need resource.Quantity arithmetic): ResourceList rounding to milli-units, and the
// pod-level resources defaults of the PodLevelResources feature.
import type { TypeNode } from '../schema/types.ts';
import { TypeModel } from '../schema/model.ts';
import { isPlainObject } from '../util/json.ts';
import type { Obj } from './strategy.ts';

export type Defaulter = (obj: Obj) => void;
/** Defaulters by OpenAPI definition name. */
export type Defaulters = Record<string, Defaulter>;

/** A pointer (or slice/map) field: unset only when absent or null. */
export const absent = (v: unknown): boolean => v === undefined || v === null;
/** A non-pointer scalar field: unset when it holds the Go zero value. */
export const zero = (v: unknown): boolean => v === undefined || v === null || v === '' || v === 0;

export function setPtr(o: Obj, key: string, value: unknown): void {
  if (absent(o[key])) o[key] = value;
}
export function setZero(o: Obj, key: string, value: unknown): void {
  if (zero(o[key])) o[key] = value;
}
/** The object at o[key], created when absent (a non-pointer struct in Go); undefined when o[key] is not an object. */
export function struct(o: Obj, key: string): Obj | undefined {
  if (absent(o[key])) o[key] = {};
  return isPlainObject(o[key]) ? o[key] : undefined;
}
/**
 * A kind's status as its create strategy leaves it: the zero struct, which Go writes as `status: {}`
 * plus its counters without omitempty (statusCounters).
 */
export function statusStruct(o: Obj): void {
  struct(o, 'status');
}
/** A template's ObjectMeta: a non-pointer struct, written as `metadata: {}` when empty (creationTimestamp is omitzero). */
export function templateMetadata(t: Obj): void {
  struct(t, 'metadata');
}
/** Status counters whose Go field has no omitempty: written as 0 while unset. */
export const statusCounters =
  (...keys: string[]): Defaulter =>
  (s) => {
    for (const k of keys) setPtr(s, k, 0);
  };
export const list = (v: unknown): any[] => (Array.isArray(v) ? v : []);
export const objects = (v: unknown): Obj[] => list(v).filter(isPlainObject);
export const emptyMap = (v: unknown): boolean => !isPlainObject(v) || Object.keys(v).length === 0;
/** The prefix of core/v1's definition names. */
export const CORE = 'io.k8s.api.core.v1.';
/** A port whose protocol defaults to TCP (container, service and endpoint ports). */
export const protocolTCP = (p: Obj): void => setZero(p, 'protocol', 'TCP');
/** A webhook's service reference: port 443 unless given. */
export const servicePort443 = (s: Obj): void => setPtr(s, 'port', 443);

// ---------------------------------------------------------------------------------------------
// The walk

function children(n: TypeNode): TypeNode[] {
  const out: TypeNode[] = [];
  if (n.properties) out.push(...Object.values(n.properties));
  if (n.items) out.push(n.items);
  if (n.values) out.push(n.values);
  return out;
}

/**
 * What the walk does at a node that reaches a defaulter: its own defaulter, and only the
 * properties (in schema order) that lead to one. Built once per node, lazily (schemas recurse).
 */
interface Plan {
  node: TypeNode;
  defaulter: Defaulter | undefined;
  /** Properties that reach a defaulter; their plans resolved on first use. */
  fields: { key: string; node: TypeNode; plan?: Plan | null }[] | undefined;
  items: Plan | null | undefined;
  values: Plan | null | undefined;
}

export interface DefinitionDefaulting {
  /** Whether objects of this definition get any defaults at all. */
  hasDefaults(definitionName: string): boolean;
  /** Fills, in place, every default kube-apiserver fills in an object of this definition. */
  applyDefaults(definitionName: string, obj: any): void;
}

let model: TypeModel | undefined;
function builtins(): TypeModel {
  return (model ??= TypeModel.loadBuiltins());
}

/** The defaulting of the built-in definitions by this table of defaulters. */
export function definitionDefaulting(table: Defaulters): DefinitionDefaulting {
  /** Whether any node reachable from this one has a defaulter; memoised per node. */
  const reachCache = new WeakMap<TypeNode, boolean>();

  function reachesDefaulter(root: TypeNode): boolean {
    const cached = reachCache.get(root);
    if (cached !== undefined) return cached;
    const seen = new Set<TypeNode>();
    const stack = [root];
    let found = false;
    while (stack.length) {
      const n = stack.pop()!;
      if (seen.has(n)) continue;
      seen.add(n);
      if ((n.definition && table[n.definition]) || reachCache.get(n) === true) {
        found = true;
        break;
      }
      stack.push(...children(n));
    }
    reachCache.set(root, found);
    return found;
  }

  const plans = new WeakMap<TypeNode, Plan | null>();

  function planOf(node: TypeNode): Plan | null {
    const p = plans.get(node);
    if (p !== undefined) return p;
    if (!reachesDefaulter(node)) {
      plans.set(node, null);
      return null;
    }
    const plan: Plan = { node, defaulter: node.definition ? table[node.definition] : undefined, fields: undefined, items: undefined, values: undefined };
    plans.set(node, plan);
    if (node.properties) {
      const fields: Plan['fields'] = [];
      for (const [key, child] of Object.entries(node.properties)) if (reachesDefaulter(child)) fields.push({ key, node: child });
      plan.fields = fields.length ? fields : undefined;
    }
    return plan;
  }

  function walk(plan: Plan, value: unknown): void {
    const node = plan.node;
    if (Array.isArray(value)) {
      if (node.type === 'array' && node.items) {
        const items = plan.items === undefined ? (plan.items = planOf(node.items)) : plan.items;
        if (items) for (let i = 0; i < value.length; i++) walk(items, value[i]);
      }
      return;
    }
    if (!isPlainObject(value)) return;
    if (node.type === 'map' && node.values) {
      const values = plan.values === undefined ? (plan.values = planOf(node.values)) : plan.values;
      if (values) for (const k in value) walk(values, value[k]);
      return;
    }
    if (node.type !== 'object') return;
    if (plan.defaulter) plan.defaulter(value);
    const fields = plan.fields;
    if (!fields) return;
    for (let i = 0; i < fields.length; i++) {
      const f = fields[i];
      const v = value[f.key];
      if (v === undefined || v === null) continue;
      const child = f.plan === undefined ? (f.plan = planOf(f.node)) : f.plan;
      if (child) walk(child, v);
    }
  }

  return {
    hasDefaults(definitionName) {
      const m = builtins();
      return m.has(definitionName) && reachesDefaulter(m.node(definitionName));
    },
    applyDefaults(definitionName, obj) {
      const m = builtins();
      if (!m.has(definitionName)) return;
      const plan = planOf(m.node(definitionName));
      if (plan) walk(plan, obj);
    },
  };
}
