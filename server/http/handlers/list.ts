// GET of a collection: a list read with kube's resourceVersion semantics, transcoded from the
// stored rows when it is plain JSON, else shaped (list, Table, PartialObjectMetadataList).
import { decodeItemsInTurns, storedItemsOf, storedListJson } from '../../storage/rows/codec.ts';
import { TurnBudget } from '../../util/turns.ts';
import { int64Param, queryOf, sendInitialEventsOf } from '../request-info.ts';
import { jsonInTurns, prettyPrint, send, sendEncoded } from '../respond.ts';
import { LIST_SHAPES, objectList, outputFormat, shapeList } from './shape.ts';
import type { ResourceRequest } from './request.ts';

/** Lists longer than this are encoded in pieces (jsonInTurns). */
const LARGE_LIST = 64;

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
  // Decoded, shaped and (as compact JSON) encoded a page at a time, yielding between pages.
  const turns = new TurnBudget();
  const pause = () => turns.pause();
  await decodeItemsInTurns(result, pause);
  const body = shapeList(info, result, fmt, q.get('includeObject')) as Record<string, unknown>;
  const arrayKey = fmt.shape === 'Table' ? 'rows' : 'items';
  if (fmt.encoding !== 'json' || prettyPrint(ctx) || (body[arrayKey] as unknown[]).length <= LARGE_LIST) return send(ctx, 200, body, fmt);
  ctx.state.audit?.logResponseObject(body);
  return sendEncoded(ctx, 200, await jsonInTurns(body, arrayKey, pause), fmt);
}
