// PUT: the object (or its status, or another subresource the store updates) replaced by the
// body. (PUT of a Scale: scale.ts.)
import { readObjectBody } from './body.ts';
import { requestContext } from './options.ts';
import { respondObject } from './shape.ts';
import type { ResourceRequest } from './request.ts';

export async function update({ ctx, info, ns, ri, deps }: ResourceRequest): Promise<void> {
  const rc = requestContext(ctx, 'UpdateOptions');
  const body = await readObjectBody(ctx, info, info.definition, rc, deps.model);
  const updated = await deps.store.update(info, ns, ri.name, body, rc, ri.subresource);
  return respondObject(ctx, info, updated, 200, rc);
}
