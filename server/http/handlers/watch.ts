// GET ?watch: a stream of the resource's events (../watch.ts).
import type { ResourceRequest } from './request.ts';

export function watch({ ctx, info, ri, deps }: ResourceRequest): Promise<void> {
  return deps.watch.serve(ctx, info, ri);
}
