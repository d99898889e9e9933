// GET of one object: its stored bytes when they are served as they are, else the object in the
// negotiated shape. (GET of a Scale: scale.ts.)
import { queryOf } from '../request-info.ts';
import { prettyPrint, send, sendEncoded } from '../respond.ts';
import { OBJECT_SHAPES, outputFormat, shapeObject } from './shape.ts';
import type { ResourceRequest } from './request.ts';

/** JSON bodies end with a newline (as encode() writes them). */
const NEWLINE = Buffer.from('\n');

export async function get({ ctx, info, ns, ri, deps }: ResourceRequest): Promise<void> {
  const rv = queryOf(ctx).get('resourceVersion') ?? undefined;
  // Negotiated before the read, as kube-apiserver does: a missing object asked for in an unacceptable form is a 406.
  const fmt = outputFormat(ctx, info, OBJECT_SHAPES);
  if (fmt.shape === 'object' && fmt.encoding === 'json' && !prettyPrint(ctx)) {
    // The stored bytes when they are served as they are: never decoded, never encoded again.
    const got = await deps.store.getJsonAtLeast(info, ns, ri.name, rv);
    if ('json' in got) return sendEncoded(ctx, 200, Buffer.concat([got.json, NEWLINE]), fmt);
    return send(ctx, 200, got.object, fmt);
  }
  const obj = await deps.store.getAtLeast(info, ns, ri.name, rv);
  const body = shapeObject(info, obj, fmt, queryOf(ctx).get('includeObject'));
  return send(ctx, 200, body, fmt);
}
