// POST: a new object; or, on a subresource a strategy creates (pods/binding), the subresource
// applied to its object, answered with a Status as kube-apiserver answers it.
import { readObjectBody } from './body.ts';
import { requestContext } from './options.ts';
import { respondObject } from './shape.ts';
import type { ResourceRequest } from './request.ts';

/** What kube-apiserver answers a create that returns a Status with. */
export function createdStatus(): Record<string, unknown> {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 };
}

export async function create({ ctx, info, ns, ri, deps }: ResourceRequest): Promise<void> {
  const { store, model } = deps;
  const rc = requestContext(ctx, 'CreateOptions');
  const sub = ri.subresource ? store.subresourceCreate(info, ri.subresource) : undefined;
  if (sub) {
    await store.createSubresource(info, ns, ri.name, ri.subresource, await readObjectBody(ctx, info, sub.definition, rc, model), rc);
    return respondObject(ctx, info, createdStatus(), 201, rc, true);
  }
  const body = await readObjectBody(ctx, info, info.definition, rc, model);
  const created = await store.create(info, ns, body, rc);
  return respondObject(ctx, info, created, 201, rc);
}
