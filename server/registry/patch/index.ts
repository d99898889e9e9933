// The three PATCH bodies kube-apiserver accepts besides server-side apply, and the dispatcher the
// PATCH handler calls. Rejecting strategic merge patch for custom resources (415) is the caller's
// decision; here a missing/"any" TypeNode simply merges like a JSON merge patch.
import type { TypeNode } from '../../schema/types.ts';
import { badRequest, invalid, unsupportedMediaType } from '../../errors.ts';
import { goJsonTypeError, goUnstructuredError } from '../../schema/go-decode.ts';
import { goJsonMarshal, goJsonText, jsonKind } from '../../go/json.ts';
import { goSprint } from '../../go/fmt.ts';
import { invalidError } from '../../validation/field.ts';
import { goQuote } from '../../go/strconv.ts';
import { MAX_BODY_DEPTH, jsonTextOf, valueDepthExceeds } from '../../util/json-depth.ts';
import { applyJsonPatch } from './json-patch.ts';
import { applyMergePatch, isJsonObject } from './merge-patch.ts';
import { applyStrategicMergePatch } from './strategic-merge-patch.ts';

export { applyJsonPatch, jsonPatchApplyError, MAX_JSON_PATCH_OPERATIONS } from './json-patch.ts';
export { applyMergePatch } from './merge-patch.ts';
export { applyStrategicMergePatch } from './strategic-merge-patch.ts';

export const JSON_PATCH = 'application/json-patch+json';
export const MERGE_PATCH = 'application/merge-patch+json';
export const STRATEGIC_MERGE_PATCH = 'application/strategic-merge-patch+json';

/** The content types handled here, in the order kube-apiserver lists them. */
export const PATCH_TYPES: readonly string[] = Object.freeze([JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH]);

/** The media type without parameters ("; charset=utf-8"), as the handler compares it. */
export function patchMediaType(contentType: string): string {
  const idx = contentType.indexOf(';');
  return (idx > 0 ? contentType.slice(0, idx) : contentType).trim();
}

/**
 * Apply a parsed PATCH body of the given Content-Type to `doc` (the current object as JSON).
 * Pure; throws ApiError: 415 for other content types, 400/413/422 as the patch types define.
 */
export function applyPatch(contentType: string, doc: unknown, patch: unknown, node: TypeNode | undefined): unknown {
  const patched = patchedDocument(contentType, doc, patch, node);
  // A JSON patch can build any depth (an add at a deep path, copies of the document into itself);
  // nothing walks the result before this loop has measured it. An object's managedFields go a
  // few levels deeper than the object (PATCHED_DEPTH), and any object accepted can be patched.
  if (valueDepthExceeds(patched, PATCHED_DEPTH)) {
    const text = goJsonText(jsonTextOf(patched, true));
    throw invalid('', '', '', [invalidError('patch', goQuote(text), "couldn't get version/kind; json parse error: invalid character '{' exceeded max depth")]);
  }
  return patched;
}

/**
 * The deepest a patched object may nest: a body's limit, and the levels managedFields add over
 * the fields they record (metadata, managedFields, an entry, fieldsV1's {} for a leaf).
 */
const PATCHED_DEPTH = MAX_BODY_DEPTH + 4;

function patchedDocument(contentType: string, doc: unknown, patch: unknown, node: TypeNode | undefined): unknown {
  const type = patchMediaType(contentType);
  switch (type) {
    case JSON_PATCH:
      return applyJsonPatch(doc, patch);
    case MERGE_PATCH:
      // The handler first decodes the body into map[string]interface{}; the merge library then
      // refuses a null patch.
      if (patch === null || patch === undefined) throw badRequest('Invalid JSON Patch');
      if (!isJsonObject(patch)) {
        throw badRequest(`error decoding patch: json: cannot unmarshal ${jsonKind(patch)} into Go value of type map[string]interface {}`);
      }
      return applyMergePatch(doc, patch);
    case STRATEGIC_MERGE_PATCH:
      return applyStrategicMergePatch(doc, patch, node);
    default:
      throw unsupportedMediaType(`the body of the request was in an unknown format - accepted media types include: ${PATCH_TYPES.join(', ')}`);
  }
}

/**
 * A built-in object's patch result is decoded into its Go type before anything else looks at it;
 * a value that does not fit (`labels: {a: 5}`, `replicas: "2"`) is a 422 on the field "patch",
 * with no kind or name, as kube-apiserver's patch handler answers. The value shown is the patched
 * object as JSON for JSON and merge patches (Go's encoding of a decoded map, keys sorted: kube
 * keeps untouched parts in their own order), the patch itself as Go prints a map for a strategic
 * merge patch, whose result is converted without JSON (the converter's wording).
 */
export function checkPatchedTypes(contentType: string, node: TypeNode, patched: unknown, patch: unknown, metadataOnly = false): void {
  if (!isJsonObject(patched)) return;
  // A custom object's metadata alone is decoded into ObjectMeta (node is then that type's).
  const decoded = metadataOnly ? patched.metadata : patched;
  if (!isJsonObject(decoded)) return;
  const smp = patchMediaType(contentType) === STRATEGIC_MERGE_PATCH;
  const err = smp ? goUnstructuredError(node, decoded) : goJsonTypeError(node, decoded);
  if (err === undefined) return;
  const value = smp ? goSprint(patch) : goJsonMarshal(patched);
  throw invalid('', '', '', [invalidError('patch', goQuote(value), err)]);
}
