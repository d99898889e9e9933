// GET of a collection: a list read with kube's resourceVersion semantics, transcoded from the
// stored rows when it is plain JSON, else shaped (list, Table, PartialObjectMetadataList).
import { storedItemsOf, storedListJson } from '../../storage/rows/codec.ts';
import { int64Param, queryOf, sendInitialEventsOf } from '../request-info.ts';
import { prettyPrint, send, sendEncoded } from '../respond.ts';
import { LIST_SHAPES, objectList, outputFormat, shapeList } from './shape.ts';
import type { ResourceRequest } from './request.ts';

export async function list({ ctx, info, ri, deps }: ResourceRequest): Promise<void> {
  const q = queryOf(ctx);
  const fmt = outputFormat(ctx, info, LIST_SHAPES);
  // (as kube's storage: a limit of 0 or less is no limit)
  const limit = int64Param(q, 'limit');
  int64Param(q, 'timeoutSeconds'); // (decoded as kube decodes it, for its error; a list does not wait)
  const result = await deps.store.list(info, info.namespaced ? ri.namespace || undefined : undefined, {
    labelSelector: q.get('labelSelector') ?? undefined,
    fieldSelector: q.get('fieldSelector') ?? undefined,
    limit,
    continue: q.get('continue') || undefined,
    resourceVersion: q.get('resourceVersion') ?? undefined,
    resourceVersionMatch: q.get('resourceVersionMatch') ?? undefined,
    sendInitialEvents: sendInitialEventsOf(q),
  });
  // A plain JSON list of stored objects: transcoded from the stored bytes, never decoded.
  const stored = fmt.shape === 'object' && fmt.encoding === 'json' && !prettyPrint(ctx) ? storedItemsOf(result) : undefined;
  if (stored) return sendEncoded(ctx, 200, storedListJson(objectList(info, result, []), stored), fmt);
  const body = shapeList(info, result, fmt, q.get('includeObject'));
  return send(ctx, 200, body, fmt);
}
