// The zero value of a kind, which kube compares a create with.
import type { TypeNode } from '../../schema/types.ts';

/** Go shape of a struct field, as schemas/protobuf.json records it (only `ptr` matters here). */
export type FieldShapeLookup = (definition: string, field: string) => { ptr?: boolean } | undefined;

const NULL_STRUCTS = new Set(['io.k8s.apimachinery.pkg.apis.meta.v1.Time', 'io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime']);

/**
 * The object kube compares a create with: the kind's Go zero value as JSON — non-pointer structs
 * present (empty), required pointers, lists and maps null, required scalars at their zero value,
 * optional ones absent. Pass it as `emptyObject` so created objects get kube's managedFields
 * (e.g. `f:spec` without `.`, `f:labels` with it).
 */
export function zeroObject(node: TypeNode, shape: FieldShapeLookup): Record<string, unknown> {
  return zeroStruct(node, shape, 0);
}

function zeroStruct(node: TypeNode, shape: FieldShapeLookup, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (node.type !== 'object' || !node.properties || depth > 20) return out;
  const required = new Set(node.required ?? []);
  for (const [name, child] of Object.entries(node.properties)) {
    // A field the shape table does not know is taken for a pointer (absent).
    const info = node.definition ? shape(node.definition, name) : undefined;
    const ptr = info ? info.ptr === true : true;
    const req = required.has(name);
    if (child.definition && NULL_STRUCTS.has(child.definition)) {
      if (!ptr || req) out[name] = null;
      continue;
    }
    if (child.type === 'object' && child.definition) {
      if (!ptr) out[name] = zeroStruct(child, shape, depth + 1);
      else if (req) out[name] = null;
      continue;
    }
    if (!req) continue;
    if (ptr || child.type === 'array' || child.type === 'map' || child.type === 'object' || child.type === 'any') out[name] = null;
    else if (child.format === 'quantity') out[name] = '0';
    else if (child.type === 'string') out[name] = '';
    else if (child.type === 'boolean') out[name] = false;
    else out[name] = 0;
  }
  return out;
}
