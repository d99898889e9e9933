// DELETE of a collection: every object the selectors match, deleted one by one, answered with
// the list of what was deleted.
import { apiVersionOf } from '../../registry/store.ts';
import { queryOf } from '../request-info.ts';
import { deleteOptions, requestContext } from './options.ts';
import { respondObject } from './shape.ts';
import type { ResourceRequest } from './request.ts';

export async function deleteCollection({ ctx, info, ri, deps }: ResourceRequest): Promise<void> {
  const q = queryOf(ctx);
  const { opts, problems } = await deleteOptions(ctx, deps.model);
  const rc = requestContext(ctx, 'DeleteOptions', problems);
  const items = await deps.store.deleteCollection(info, info.namespaced ? ri.namespace || undefined : undefined, {
    labelSelector: q.get('labelSelector') ?? undefined,
    fieldSelector: q.get('fieldSelector') ?? undefined,
  }, opts, rc);
  const listObj = { kind: info.listKind, apiVersion: apiVersionOf(info), metadata: {}, items };
  return respondObject(ctx, info, listObj, 200, rc, true);
}
