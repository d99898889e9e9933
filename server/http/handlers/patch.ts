// PATCH: JSON patch, merge patch, strategic merge patch (built-in kinds only) or server-side
// apply, of the object or a subresource the store patches. (PATCH of a Scale: scale.ts.)
import { unsupportedMediaType } from '../../errors.ts';
import { forbiddenError, requiredError } from '../../validation/field.ts';
import { applyPatch, checkPatchedTypes, PATCH_TYPES } from '../../registry/patch/index.ts';
import type { RequestContext } from '../../registry/store.ts';
import { readBody, decodeBody, bodyEncoding, mediaTypeOf } from '../negotiation.ts';
import { queryOf } from '../request-info.ts';
import { findDuplicates, OBJECT_META } from './body.ts';
import { forceOf, requestContext } from './options.ts';
import { respondObject } from './shape.ts';
import type { ResourceRequest } from './request.ts';

const APPLY_TYPES = ['application/apply-patch+yaml', 'application/apply-patch+cbor'];
/** Custom resources have no patch strategies: strategic merge patch is not offered for them. */
const CUSTOM_PATCH_TYPES = PATCH_TYPES.filter((t) => t !== 'application/strategic-merge-patch+json');

/** A PATCH request read: a server-side apply's configuration, or a patch of `mediaType`. */
export type PatchRequest =
  | { apply: true; config: unknown; force: boolean | undefined; rc: RequestContext }
  | { apply: false; mediaType: string; patch: unknown; rc: RequestContext };

/** The media type, options and body of a PATCH, read and checked in kube-apiserver's order. */
export async function readPatch({ ctx, info }: ResourceRequest): Promise<PatchRequest> {
  const mediaType = mediaTypeOf(ctx.get('content-type'));
  const isApply = APPLY_TYPES.includes(mediaType);
  const patchTypes = info.custom ? CUSTOM_PATCH_TYPES : PATCH_TYPES;
  if (!isApply && !patchTypes.includes(mediaType)) {
    throw unsupportedMediaType(`the body of the request was in an unknown format - accepted media types include: ${[...patchTypes, ...APPLY_TYPES].join(', ')}`);
  }
  const force = forceOf(ctx);
  const rc = requestContext(ctx, 'PatchOptions', isApply
    ? (queryOf(ctx).get('fieldManager') ? [] : [requiredError('fieldManager', 'is required for apply patch')])
    : (force === undefined ? [] : [forbiddenError('force', 'may not be specified for non-apply patch')]));
  const raw = await readBody(ctx.req);
  ctx.state.audit?.logRequestPatch(raw);
  const enc = bodyEncoding(mediaType)!;
  if (isApply) {
    const decoded = decodeBody(raw, enc, undefined, { apply: true });
    rc.duplicateFields = findDuplicates(decoded, enc);
    return { apply: true, config: decoded.value, force, rc };
  }
  const decoded = decodeBody(raw, enc, undefined, { patch: mediaType, fieldValidation: rc.fieldValidation });
  if (mediaType !== 'application/json-patch+json') rc.duplicateFields = findDuplicates(decoded, enc);
  return { apply: false, mediaType, patch: decoded.value, rc };
}

export async function patch(req: ResourceRequest): Promise<void> {
  const { ctx, info, ns, ri, deps } = req;
  const p = await readPatch(req);
  const { rc } = p;
  if (p.apply) {
    const { object, created } = await deps.store.apply(info, ns, ri.name, p.config, rc, { force: p.force ?? false, subresource: ri.subresource });
    return respondObject(ctx, info, object, created ? 201 : 200, rc);
  }
  const { mediaType, patch: body } = p;
  const node = info.definition ? deps.model.node(info.definition) : info.custom?.typeNode();
  const metaNode = deps.model.node(OBJECT_META);
  const updated = await deps.store.patch(info, ns, ri.name, (cur) => {
    const patched = applyPatch(mediaType, cur, body, node);
    // A custom object is decoded into a map, but for its metadata.
    if (info.custom) checkPatchedTypes(mediaType, metaNode, patched, body, true);
    else if (node) checkPatchedTypes(mediaType, node, patched, body);
    return patched;
  }, rc, ri.subresource);
  return respondObject(ctx, info, updated, 200, rc);
}
