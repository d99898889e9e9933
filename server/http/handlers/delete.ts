// DELETE of one object: gone at once (a Status naming it), or marked for deletion while
// finalizers remain (the object); and kube's unsafe delete of an object that cannot be read.
import { deleteOptions, requestContext } from './options.ts';
import { respondObject } from './shape.ts';
import type { ResourceRequest } from './request.ts';

export async function deleteOne({ ctx, info, ns, ri, deps }: ResourceRequest): Promise<void> {
  const { opts, problems } = await deleteOptions(ctx, deps.model); // may carry dryRun in the body
  const rc = requestContext(ctx, 'DeleteOptions', problems);
  if (opts.ignoreStoreReadErrorWithClusterBreakingPotential) {
    // kube's unsafe delete of a corrupt object: answered as a delete whose object could not be read.
    await deps.store.deleteCorrupt(info, ns, ri.name);
    const status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name: ri.name, group: info.group || undefined, kind: info.resource } };
    return respondObject(ctx, info, status, 200, rc, true);
  }
  const r = await deps.store.delete(info, ns, ri.name, opts, rc);
  if (r.deleted) {
    const status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name: ri.name, group: info.group || undefined, kind: info.resource, uid: r.object.metadata.uid } };
    return respondObject(ctx, info, status, 200, rc, true);
  }
  return respondObject(ctx, info, r.object, 200, rc);
}
