// application/strategic-merge-patch+json: Kubernetes strategic merge patch, driven by the TypeNode
// of the patched position (x-kubernetes-patch-strategy / x-kubernetes-patch-merge-key).
//
// - Objects merge per key; null deletes a key. Fields with patchStrategy "replace" are replaced.
// - Lists with patchStrategy "merge" and a patchMergeKey merge their elements by key; elements that
//   are new are added, and the result is ordered the way kube-apiserver orders it: patch elements in
//   patch order, interleaved with the server-only elements by their original position (so an element
//   new to a list without $setElementOrder lands before the existing ones).
// - Lists of scalars with patchStrategy "merge" are merged as sets; "$deleteFromPrimitiveList/<f>"
//   removes values.
// - Other lists are replaced wholesale.
// - Directives: "$patch": replace | delete | merge on maps and list elements; "$retainKeys";
//   "$setElementOrder/<f>".
// - Positions without type information ("any", or unknown fields) are merged as JSON merge patch.
// Values that land where there was nothing to merge into are cleaned of nulls and directives the
// way kube-apiserver does (a map carrying "$patch" there is dropped).
import type { TypeNode } from '../../schema/types.ts';
import { ApiError, badRequest } from '../../errors.ts';
import { goReflectKind, goSprint } from '../../go/fmt.ts';
import {
  applyMergePatch,
  getOwn,
  hasOwn,
  isJsonObject,
  mergePatchValue,
  setOwn,
  type JsonObject,
} from './merge-patch.ts';
import { jsonKind } from '../../go/json.ts';

const DIRECTIVE_MARKER = '$patch';
const RETAIN_KEYS_DIRECTIVE = '$retainKeys';
const DELETE_FROM_PRIMITIVE_LIST_PREFIX = '$deleteFromPrimitiveList';
const SET_ELEMENT_ORDER_PREFIX = '$setElementOrder';

// The texts of k8s.io/apimachinery/pkg/util/mergepatch's sentinel errors.
const ERR_BAD_PATCH_FORMAT_FOR_PRIMITIVE_LIST = 'invalid patch format of primitive list';
const ERR_BAD_PATCH_FORMAT_FOR_RETAIN_KEYS = 'invalid patch format of retainKeys';
const ERR_BAD_PATCH_FORMAT_FOR_SET_ELEMENT_ORDER_LIST = 'invalid patch format of setElementOrder list';
const ERR_NO_LIST_OF_LISTS = 'lists of lists are not supported';

/** A cleaned value that must not be stored at all (a map carrying "$patch"). */
const DROP = Symbol('drop');
type Cleaned = unknown | typeof DROP;

function errNoMergeKey(m: unknown, key: string): ApiError {
  return badRequest(`map: ${goSprint(m, 'integral')} does not contain declared merge key: ${key}`);
}

function errBadPatchType(t: unknown, m: JsonObject): ApiError {
  return badRequest(`unknown patch type: ${goSprint(t, 'integral')} in map: ${goSprint(m, 'integral')}`);
}

/** 422 the way interpretStrategicMergePatchError reports ErrNoListOfLists. */
function errUnprocessable(detail: string): ApiError {
  const err = new ApiError(422, 'Invalid', 'the server rejected our request due to an error in our request', {});
  err.cause = detail;
  return err;
}

/** Has enough type information to merge strategically. */
function isStructural(node: TypeNode | undefined): node is TypeNode {
  return node !== undefined && node.type !== 'any';
}

function isStruct(node: TypeNode | undefined): boolean {
  return node !== undefined && node.type === 'object';
}

function childNode(node: TypeNode | undefined, key: string): TypeNode | undefined {
  if (!node) return undefined;
  if (node.type === 'object') return node.properties && hasOwn(node.properties, key) ? node.properties[key] : undefined;
  if (node.type === 'map') return node.values;
  return undefined;
}

/** The patch strategy without "retainKeys" ("merge", "replace" or ""). */
function strategyOf(node: TypeNode | undefined): string {
  const s = node?.patchStrategy;
  if (!s) return '';
  const parts = s.split(',').map((p) => p.trim()).filter((p) => p !== 'retainKeys');
  return parts.length === 1 ? parts[0]! : '';
}

function isDirectiveKey(k: string): boolean {
  return (
    k === DIRECTIVE_MARKER ||
    k === RETAIN_KEYS_DIRECTIVE ||
    k.startsWith(SET_ELEMENT_ORDER_PREFIX) ||
    k.startsWith(DELETE_FROM_PRIMITIVE_LIST_PREFIX)
  );
}

/** A "$..." key in a struct that is neither a directive nor a declared field. */
function checkUnknownDirective(k: string, node: TypeNode | undefined): void {
  if (!k.startsWith('$') || isDirectiveKey(k)) return;
  if (isStruct(node) && !(node!.properties && hasOwn(node!.properties, k))) {
    throw badRequest(`unknown patch directive: ${k}`);
  }
}

/** "$setElementOrder/containers" → "containers" (the prefix must be followed by "/"). */
function directiveTarget(key: string, prefix: string, errText: string): string {
  const slash = key.indexOf('/');
  if (slash < 0 || key.slice(0, slash) !== prefix) throw badRequest(errText);
  return key.slice(slash + 1);
}

function without(o: JsonObject, key: string): JsonObject {
  const out: JsonObject = { ...o };
  delete out[key];
  return out;
}

/** Go's == on two decoded JSON values, for scalars (merge keys, primitive list items). */
function scalarEq(a: unknown, b: unknown): boolean {
  if (typeof a === 'object' && a !== null) return false;
  return a === b;
}

/** Identity used for ordering: the merge-key value for maps, the value itself for scalars. */
function identity(el: unknown, mergeKey: string): unknown {
  return mergeKey ? (isJsonObject(el) ? getOwn(el, mergeKey) ?? null : undefined) : el;
}

/** Position of each identity's first occurrence. */
function positions(list: readonly unknown[], mergeKey: string): Map<unknown, number> {
  const m = new Map<unknown, number>();
  list.forEach((el, i) => {
    const id = identity(el, mergeKey);
    if (typeof id === 'object' && id !== null) return;
    if (!m.has(id)) m.set(id, i);
  });
  return m;
}

/** Stable sort by position in `order`; items not in it keep their relative order at the end. */
function sortBy(items: unknown[], order: Map<unknown, number>, mergeKey: string): unknown[] {
  const rank = (el: unknown): number => order.get(identity(el, mergeKey)) ?? Number.MAX_SAFE_INTEGER;
  return items
    .map((el, i) => ({ el, i, r: rank(el) }))
    .sort((a, b) => a.r - b.r || a.i - b.i)
    .map((x) => x.el);
}

/**
 * Interleave server-only items into the patch items, as kube-apiserver's mergeSortedSlice does:
 * a server-only item goes first only when both items were in the original list and it came first
 * there.
 */
function interleave(serverOnly: unknown[], patchItems: unknown[], serverOrder: Map<unknown, number>, mergeKey: string): unknown[] {
  const out: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < serverOnly.length || j < patchItems.length) {
    if (i >= serverOnly.length) out.push(patchItems[j++]);
    else if (j >= patchItems.length) out.push(serverOnly[i++]);
    else {
      const li = serverOrder.get(identity(serverOnly[i], mergeKey));
      const ri = serverOrder.get(identity(patchItems[j], mergeKey));
      if (li !== undefined && ri !== undefined && li < ri) out.push(serverOnly[i++]);
      else out.push(patchItems[j++]);
    }
  }
  return out;
}

/** Partition `merged` by presence in `by` (by identity), then order and interleave. */
function normalizeOrder(merged: unknown[], by: readonly unknown[], serverList: readonly unknown[], mergeKey: string): unknown[] {
  const byPos = positions(by, mergeKey);
  const patchItems: unknown[] = [];
  const serverOnly: unknown[] = [];
  for (const el of merged) {
    const id = identity(el, mergeKey);
    if (byPos.has(id)) patchItems.push(el);
    else serverOnly.push(el);
  }
  const serverPos = positions(serverList, mergeKey);
  return interleave(sortBy(serverOnly, serverPos, mergeKey), sortBy(patchItems, byPos, mergeKey), serverPos, mergeKey);
}

/** The common element kind of the lists ("map" or a scalar kind); rejects mixes and nested lists. */
function elementKind(lists: readonly (readonly unknown[])[]): string | undefined {
  let kind: string | undefined;
  for (const list of lists) {
    for (const el of list) {
      const k = Array.isArray(el) ? 'slice' : isJsonObject(el) ? 'map' : jsonKind(el);
      if (kind === undefined) {
        if (k === 'slice') throw errUnprocessable(ERR_NO_LIST_OF_LISTS);
        kind = k;
      } else if (k !== kind) {
        throw badRequest(`list element types are not identical: ${goSprint(lists, 'integral')}`);
      }
    }
  }
  return kind;
}

// ---------------------------------------------------------------------------------------------
// Cleaning values that are set rather than merged.

function clean(value: unknown, node: TypeNode | undefined): Cleaned {
  if (Array.isArray(value)) {
    const items = node?.type === 'array' ? node.items : node?.type === 'any' ? node : undefined;
    const out: unknown[] = [];
    for (const el of value) {
      const c = clean(el, items);
      if (c !== DROP) out.push(c);
    }
    return out;
  }
  if (!isJsonObject(value)) return value;
  if (hasOwn(value, DIRECTIVE_MARKER)) return DROP;
  const keepDirectives = node?.type === 'any';
  const out: JsonObject = {};
  for (const k of Object.keys(value)) {
    const v = value[k];
    if (v === null) continue;
    if (!keepDirectives) {
      checkUnknownDirective(k, node);
      if (isDirectiveKey(k)) continue;
    }
    const c = clean(v, keepDirectives ? node : childNode(node, k));
    if (c !== DROP) setOwn(out, k, c);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Merging.

/** Merge `patch` into the existing, non-null value `cur` at a position typed by `node`. */
function mergeValue(cur: unknown, patch: unknown, node: TypeNode | undefined): Cleaned {
  if (!isStructural(node)) return mergePatchValue(cur, patch);
  // A value of another shape than the current one replaces it, as kube's mergeMap does: whether it
  // fits the type is the decoding's concern (checkPatchedTypes).
  if (isJsonObject(cur) && isJsonObject(patch) && (node.type === 'object' || node.type === 'map')) {
    if (strategyOf(node) === 'replace') return clean(patch, node);
    return mergeMap(cur, patch, node);
  }
  if (Array.isArray(cur) && Array.isArray(patch) && node.type === 'array') {
    if (strategyOf(node) !== 'merge') return clean(patch, node);
    return mergeList(cur, patch, node.items, node.patchMergeKey ?? '');
  }
  return clean(patch, node);
}

/** Merge a map patch into a map (struct or map-typed position). */
function mergeMap(original: JsonObject, patchIn: JsonObject, node: TypeNode): JsonObject {
  let patch = patchIn;
  if (hasOwn(patch, DIRECTIVE_MARKER)) {
    const directive = patch[DIRECTIVE_MARKER];
    if (directive === 'replace') {
      const replaced = clean(without(patch, DIRECTIVE_MARKER), node);
      return isJsonObject(replaced) ? replaced : {};
    }
    if (directive === 'delete') return {};
    if (directive !== 'merge') throw errBadPatchType(directive, patch);
    patch = without(patch, DIRECTIVE_MARKER);
  }

  const out: JsonObject = { ...original };

  if (hasOwn(patch, RETAIN_KEYS_DIRECTIVE)) {
    const retain = patch[RETAIN_KEYS_DIRECTIVE];
    if (!Array.isArray(retain)) throw badRequest(ERR_BAD_PATCH_FORMAT_FOR_RETAIN_KEYS);
    const keep = new Set(retain.filter((k): k is string => typeof k === 'string'));
    for (const k of Object.keys(patch)) {
      if (k === RETAIN_KEYS_DIRECTIVE || patch[k] === null) continue;
      if (k.startsWith(DELETE_FROM_PRIMITIVE_LIST_PREFIX) || k.startsWith(SET_ELEMENT_ORDER_PREFIX)) continue;
      if (!keep.has(k)) throw badRequest(ERR_BAD_PATCH_FORMAT_FOR_RETAIN_KEYS);
    }
    for (const k of Object.keys(out)) if (!keep.has(k)) delete out[k];
  }

  // $setElementOrder lists, merged together with the list they order.
  const consumed = new Set<string>();
  for (const k of Object.keys(patch)) {
    if (!k.startsWith(SET_ELEMENT_ORDER_PREFIX)) continue;
    consumed.add(k);
    const field = directiveTarget(k, SET_ELEMENT_ORDER_PREFIX, ERR_BAD_PATCH_FORMAT_FOR_SET_ELEMENT_ORDER_LIST);
    const order = patch[k];
    if (!Array.isArray(order)) throw badRequest(ERR_BAD_PATCH_FORMAT_FOR_SET_ELEMENT_ORDER_LIST);
    const fieldNode = childNode(node, field);
    const patchList = getOwn(patch, field);
    if (patchList === null) continue; // the field is deleted below
    if (patchList !== undefined && !Array.isArray(patchList)) throw badRequest(`expected a slice, but received a ${goReflectKind(patchList, 'integral')}`);
    const current = getOwn(out, field);
    const origList = Array.isArray(current) ? current : undefined;
    const mergeKey = fieldNode?.patchMergeKey ?? '';
    validateSetElementOrder(patchList ?? [], order, mergeKey);

    let merged: unknown[];
    if (patchList === undefined) {
      if (!origList) continue;
      merged = origList;
    } else {
      consumed.add(field);
      merged = origList ? (mergeValue(origList, patchList, fieldNode) as unknown[]) : (clean(patchList, fieldNode) as unknown[]);
    }
    setOwn(out, field, normalizeOrder(merged, order, origList ?? [], mergeKey));
  }

  const deletions: [string, unknown][] = [];
  for (const k of Object.keys(patch)) {
    if (consumed.has(k) || k === RETAIN_KEYS_DIRECTIVE) continue;
    const v = patch[k];
    if (k.startsWith(DELETE_FROM_PRIMITIVE_LIST_PREFIX)) {
      deletions.push([directiveTarget(k, DELETE_FROM_PRIMITIVE_LIST_PREFIX, ERR_BAD_PATCH_FORMAT_FOR_PRIMITIVE_LIST), v]);
      continue;
    }
    checkUnknownDirective(k, node);
    if (v === null) {
      delete out[k];
      continue;
    }
    const fieldNode = childNode(node, k);
    const cur = getOwn(out, k);
    const next = cur === undefined || cur === null ? clean(v, fieldNode) : mergeValue(cur, v, fieldNode);
    if (next === DROP) delete out[k];
    else setOwn(out, k, next);
  }

  // Deletions from primitive lists go last, after any additions to the same list.
  for (const [field, toDelete] of deletions) {
    if (toDelete === null) {
      delete out[field];
      continue;
    }
    const cur = getOwn(out, field);
    if (!Array.isArray(cur) || !Array.isArray(toDelete)) continue;
    if (toDelete.some((d) => typeof d === 'object' && d !== null)) throw badRequest(ERR_BAD_PATCH_FORMAT_FOR_PRIMITIVE_LIST);
    setOwn(
      out,
      field,
      cur.filter((el) => !toDelete.some((d) => scalarEq(d, el))),
    );
  }
  return out;
}

/**
 * $setElementOrder must list the (non-deleted) patch elements in the same relative order, and
 * every one of them.
 */
function validateSetElementOrder(patchList: unknown[], order: unknown[], mergeKey: string): void {
  if (order.length === 0 || patchList.length === 0) return;
  let items = patchList;
  if (mergeKey) {
    for (const el of patchList) if (!isJsonObject(el)) throw badRequest(`expected a map, but received a ${goReflectKind(el, 'integral')}`);
    items = patchList.filter((el) => (el as JsonObject)[DIRECTIVE_MARKER] !== 'delete');
  }
  let pi = 0;
  let oi = 0;
  while (pi < items.length && oi < order.length) {
    const item = items[pi];
    if (isJsonObject(item) && hasOwn(item, DIRECTIVE_MARKER)) {
      pi++;
      continue;
    }
    let equal: boolean;
    if (mergeKey) {
      const o = order[oi];
      if (!isJsonObject(o)) throw badRequest(`expected a map, but received a ${goReflectKind(o, 'integral')}`);
      if (!hasOwn(item as JsonObject, mergeKey)) throw errNoMergeKey(item, mergeKey);
      if (!hasOwn(o, mergeKey)) throw errNoMergeKey(o, mergeKey);
      equal = scalarEq((item as JsonObject)[mergeKey], o[mergeKey]);
    } else {
      equal = scalarEq(item, order[oi]);
    }
    if (equal) pi++;
    oi++;
  }
  if (pi < items.length && oi >= order.length) {
    throw badRequest(`The order in patch list:\n${goSprint(patchList, 'integral')}\n doesn't match ${SET_ELEMENT_ORDER_PREFIX} list:\n${goSprint(order, 'integral')}\n`);
  }
}

/** Merge a list with patchStrategy "merge". */
function mergeList(original: unknown[], patch: unknown[], itemNode: TypeNode | undefined, mergeKey: string): unknown[] {
  if (original.length === 0 && patch.length === 0) return original;
  const kind = elementKind([original, patch]);

  if (kind !== 'map') {
    // A set of scalars: union, then patch order interleaved with the original order.
    const merged: unknown[] = [];
    for (const el of [...original, ...patch]) if (!merged.some((m) => scalarEq(m, el))) merged.push(el);
    return normalizeOrder(merged, patch, original, '');
  }
  if (!mergeKey) throw badRequest(`cannot merge lists without merge key for type ${itemNode?.type === 'map' ? 'map' : 'struct'}`);

  // Elements carrying $patch act on the list first.
  let base = original;
  const regular: JsonObject[] = [];
  let replace = false;
  for (const el of patch as JsonObject[]) {
    if (!hasOwn(el, DIRECTIVE_MARKER)) {
      regular.push(el);
      continue;
    }
    const directive = el[DIRECTIVE_MARKER];
    if (directive === 'delete') {
      if (!hasOwn(el, mergeKey)) throw errNoMergeKey(el, mergeKey);
      const key = el[mergeKey];
      base = base.filter((o) => !(isJsonObject(o) && hasOwn(o, mergeKey) && scalarEq(o[mergeKey], key)));
    } else if (directive === 'replace') {
      replace = true;
    } else if (directive === 'merge') {
      regular.push(without(el, DIRECTIVE_MARKER));
    } else {
      throw errBadPatchType(directive, el);
    }
  }
  if (replace) {
    const out: unknown[] = [];
    for (const el of regular) {
      if (!hasOwn(el, mergeKey)) throw errNoMergeKey(el, mergeKey);
      const c = clean(el, itemNode);
      if (c !== DROP) out.push(c);
    }
    return out;
  }

  const merged = base.slice();
  for (const el of regular) {
    if (!hasOwn(el, mergeKey)) throw errNoMergeKey(el, mergeKey);
    const key = el[mergeKey];
    const idx = merged.findIndex((o) => isJsonObject(o) && hasOwn(o, mergeKey) && scalarEq(o[mergeKey], key));
    if (idx >= 0) {
      merged[idx] =
        isStructural(itemNode) && (itemNode.type === 'object' || itemNode.type === 'map')
          ? mergeMap(merged[idx] as JsonObject, el, itemNode)
          : applyMergePatch(merged[idx], el);
    } else {
      const c = clean(el, itemNode);
      if (c !== DROP) merged.push(c);
    }
  }
  return normalizeOrder(merged, regular, base, mergeKey);
}

/**
 * Apply a strategic merge patch (the parsed request body) to `doc`, typed by `node`. Without type
 * information (node missing or "any") this is a JSON merge patch. Pure: neither `doc` nor `patch`
 * is modified; untouched subtrees of `doc` are shared with the result.
 * Throws ApiError 400 for malformed patches and directives (kube-style messages), 422 for lists of lists.
 */
export function applyStrategicMergePatch(doc: unknown, patch: unknown, node: TypeNode | undefined): unknown {
  // The handler decodes the body into map[string]interface{}: null is an empty patch.
  if (patch === null || patch === undefined) return doc;
  if (!isJsonObject(patch)) throw badRequest(`json: cannot unmarshal ${jsonKind(patch)} into Go value of type map[string]interface {}`);
  if (!isStructural(node)) return applyMergePatch(doc, patch);
  const original = isJsonObject(doc) ? doc : {};
  if (node.type !== 'object' && node.type !== 'map') return applyMergePatch(doc, patch);
  return mergeMap(original, patch, node);
}
