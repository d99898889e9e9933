// The scale subresource's verbs: GET, PUT and PATCH of an autoscaling/v1 Scale made from (and
// written back into) its object's replicas and selector (registry/kinds/autoscaling/scale.ts). Server-side apply
// is not offered on it.
import { unsupportedMediaType } from '../../errors.ts';
import { applyPatch, checkPatchedTypes } from '../../registry/patch/index.ts';
import { scaleFromObject, applyScaleToObject } from '../../registry/kinds/autoscaling/scale.ts';
import { queryOf } from '../request-info.ts';
import { send } from '../respond.ts';
import { readObjectBody } from './body.ts';
import { requestContext } from './options.ts';
import { readPatch } from './patch.ts';
import { OBJECT_SHAPES, outputFormat, respondScale, shapeScale } from './shape.ts';
import type { ResourceRequest } from './request.ts';

const SCALE = 'io.k8s.api.autoscaling.v1.Scale';

export async function getScale({ ctx, info, ns, ri, deps }: ResourceRequest): Promise<void> {
  const rv = queryOf(ctx).get('resourceVersion') ?? undefined;
  const fmt = outputFormat(ctx, info, OBJECT_SHAPES);
  const obj = await deps.store.getAtLeast(info, ns, ri.name, rv);
  return send(ctx, 200, shapeScale(ctx, info, scaleFromObject(info, obj), fmt), fmt);
}

export async function updateScale({ ctx, info, ns, ri, deps }: ResourceRequest): Promise<void> {
  const rc = requestContext(ctx, 'UpdateOptions');
  const body = await readObjectBody(ctx, info, SCALE, rc, deps.model);
  const updated = await deps.store.patch(info, ns, ri.name, (cur) => applyScaleToObject(info, cur, body), rc, 'scale');
  return respondScale(ctx, info, updated, rc);
}

export async function patchScale(req: ResourceRequest): Promise<void> {
  const { ctx, info, ns, ri, deps } = req;
  const p = await readPatch(req);
  if (p.apply) throw unsupportedMediaType('apply is not supported on the scale subresource');
  const { mediaType, patch: body, rc } = p;
  const scaleNode = deps.model.node(SCALE);
  const updated = await deps.store.patch(info, ns, ri.name, (cur) => {
    const patchedScale = applyPatch(mediaType, scaleFromObject(info, cur), body, scaleNode);
    checkPatchedTypes(mediaType, scaleNode, patchedScale, body);
    return applyScaleToObject(info, cur, patchedScale);
  }, rc, 'scale');
  return respondScale(ctx, info, updated, rc);
}
