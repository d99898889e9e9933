// application/merge-patch+json: RFC 7386 JSON Merge Patch, with the small deviations of the
// json-patch library kube-apiserver uses (nulls are pruned from values that land where there was
// no object to merge into, arrays included). Also home to the JSON helpers the other patchers share.

export type JsonObject = Record<string, unknown>;

export function isJsonObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function hasOwn(o: object, k: string): boolean {
  return Object.prototype.hasOwnProperty.call(o, k);
}

/** Own-property read: never reaches the prototype ("constructor", "__proto__" are plain keys). */
export function getOwn(o: JsonObject, k: string): unknown {
  return hasOwn(o, k) ? o[k] : undefined;
}

/** Own-property write that treats "__proto__" as data, like JSON.parse does. */
export function setOwn(o: JsonObject, k: string, v: unknown): void {
  if (k === '__proto__') Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  else o[k] = v;
}

/**
 * A copy of a patch value with null members removed from every object in it (arrays keep their
 * null elements). The input is not modified.
 */
export function pruneNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(pruneNulls);
  if (!isJsonObject(v)) return v;
  const out: JsonObject = {};
  for (const k of Object.keys(v)) {
    const child = v[k];
    if (child === null) continue;
    setOwn(out, k, pruneNulls(child));
  }
  return out;
}

/** Merge `patch` into the (existing, non-null) value `cur`. */
function mergeValue(cur: unknown, patch: unknown): unknown {
  if (!isJsonObject(cur)) return pruneNulls(patch);
  if (!isJsonObject(patch)) return patch;
  return mergeObjects(cur, patch);
}

function mergeObjects(doc: JsonObject, patch: JsonObject): JsonObject {
  let out: JsonObject | undefined;
  for (const k of Object.keys(patch)) {
    const v = patch[k];
    if (v === null) {
      if (hasOwn(doc, k)) {
        out ??= { ...doc };
        delete out[k];
      }
      continue;
    }
    const cur = getOwn(doc, k);
    const next = cur === undefined || cur === null ? pruneNulls(v) : mergeValue(cur, v);
    out ??= { ...doc };
    setOwn(out, k, next);
  }
  return out ?? doc;
}

/**
 * RFC 7386: members of an object patch merge recursively into the document, null deletes a
 * member, anything else replaces; a patch that is not an object replaces the whole document.
 * Pure: neither argument is modified; untouched subtrees of `doc` are shared with the result.
 */
export function applyMergePatch(doc: unknown, patch: unknown): unknown {
  if (!isJsonObject(patch)) return pruneNulls(patch);
  if (!isJsonObject(doc)) return pruneNulls(patch);
  return mergeObjects(doc, patch);
}

/** Merge-patch semantics for one existing value (used for schema-less parts of a strategic patch). */
export function mergePatchValue(cur: unknown, patch: unknown): unknown {
  if (cur === undefined || cur === null) return pruneNulls(patch);
  return mergeValue(cur, patch);
}
