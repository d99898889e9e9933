// What encoding/json writes of a built-in object, and what it leaves out. kube-apiserver decodes
// every body into its Go types and writes them back. Left out: a field tagged `omitempty` that
// holds its zero value ("", 0, false) when it is a non-pointer scalar, so a `apiGroup: ""` or
// `hostNetwork: false` a client sends, or one a defaulter sets to "" (an RBAC subject of kind
// ServiceAccount), is never served; pointer fields keep their explicit zeros (`replicas: 0`);
// slices, maps and structs are left as they are (omitempty does not drop structs; the tag facts
// do not cover slices and maps). Written however empty: non-pointer structs and scalars without
// omitempty (fillGoZeros, for a kind's status and a Node's spec). Built-in bodies get both here,
// before managedFields are computed and the object is stored.
import { goOmitsZero, goZeroFields } from './go-structs.ts';
import { isPlainObject } from '../util/json.ts';
import type { TypeNode } from './types.ts';

/** Per struct node: its fields that encoding/json leaves out at their zero value. */
const OMITTED = new WeakMap<TypeNode, readonly string[]>();

function omittedFieldsOf(node: TypeNode): readonly string[] {
  let out = OMITTED.get(node);
  if (out === undefined) {
    const def = node.definition;
    out = def && node.properties ? Object.keys(node.properties).filter((k) => isScalar(node.properties![k]) && goOmitsZero(def, k)) : [];
    OMITTED.set(node, out);
  }
  return out;
}

function isScalar(node: TypeNode): boolean {
  return node.type === 'string' || node.type === 'integer' || node.type === 'number' || node.type === 'boolean';
}

/** Removes, in place, every field of a built-in object of type `node` that encoding/json would leave out. */
export function dropOmittedZeros(node: TypeNode, v: unknown): void {
  if (v === null || typeof v !== 'object') return;
  if (Array.isArray(v)) {
    if (node.type === 'array' && node.items) for (let i = 0; i < v.length; i++) dropOmittedZeros(node.items, v[i]);
    return;
  }
  const o = v as Record<string, unknown>;
  if (node.type === 'map') {
    if (node.values) for (const k in o) dropOmittedZeros(node.values, o[k]);
    return;
  }
  const props = node.properties;
  if (node.type !== 'object' || !props) return;
  for (const k of omittedFieldsOf(node)) {
    const x = o[k];
    if (x === '' || x === 0 || x === false) delete o[k];
  }
  for (const k in o) {
    const child = props[k];
    if (child !== undefined && typeof o[k] === 'object') dropOmittedZeros(child, o[k]);
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
