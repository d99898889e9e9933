// http/handlers/: the HTTP face of the generic store, one file per verb (get, list, watch,
// create, update, patch, delete, delete-collection) and one per subresource whose verbs are its
// own (scale, eviction); other subresources (status, binding...) take their object's verbs with
// the subresource passed to the store; the never-stored reviews (TokenReview, SelfSubjectReview:
// reviews.ts) take only create. Shared by the verbs: body.ts (decoding a body, its
// duplicate fields), options.ts (query options → the store's RequestContext), shape.ts (object,
// list, Table, PartialObjectMetadata, and writing them). This file routes a request to its
// verb's handler through tables, so adding a verb or a special subresource is a row, not a case.
// Handlers may import registry/, schema/, storage/'s codecs, util/ and the rest of http/; from
// outside this folder only app.ts imports it, through this file.
import { ApiError, methodNotRouted } from '../../errors.ts';
import { SERVED_SUBRESOURCES } from '../discovery.ts';
import type { HttpMiddleware } from '../state.ts';
import { create } from './create.ts';
import { deleteCollection } from './delete-collection.ts';
import { deleteOne } from './delete.ts';
import { evict } from './eviction.ts';
import { createToken } from './token-request.ts';
import { get } from './get.ts';
import { list } from './list.ts';
import { patch } from './patch.ts';
import { createSelfSubjectReview, isReview, tokenReviewHandler } from './reviews.ts';
import { accessReviewHandlers, isAccessReview } from './access-reviews.ts';
import { getScale, patchScale, updateScale } from './scale.ts';
import { OBJECT_SHAPES, outputFormat, setWarnings } from './shape.ts';
import { update } from './update.ts';
import { watch } from './watch.ts';
import type { ResourceHandlerDeps, VerbHandler } from './request.ts';

export type { ResourceHandlerDeps, TokenRequestConfig, TokenReviewer } from './request.ts';
export { reviewResources } from './reviews.ts';
export { accessReviewResources } from './access-reviews.ts';

/** The handler of each verb (kube's RequestInfo verbs). */
const VERBS = new Map<string, VerbHandler>([
  ['get', get],
  ['list', list],
  ['watch', watch],
  ['create', create],
  ['update', update],
  ['patch', patch],
  ['delete', deleteOne],
  ['deletecollection', deleteCollection],
]);

/** Subresource verbs that are not their object's, by `verb/subresource`. (Only pods have eviction; only serviceaccounts token.) */
const SUBRESOURCE_VERBS = new Map<string, VerbHandler>([
  ['get/scale', getScale],
  ['update/scale', updateScale],
  ['patch/scale', patchScale],
  ['create/eviction', evict],
  ['create/token', createToken],
]);

const NOT_FOUND = new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});

/** Routes a resource request to its verb's handler, after the checks kube's routes make. */
export function resourceHandler(deps: ResourceHandlerDeps): HttpMiddleware {
  const { catalog } = deps;
  // Never-stored reviews take only a POST to their collection (kube routes nothing else for them).
  const reviews = new Map<string, VerbHandler>([
    ['tokenreviews', tokenReviewHandler(deps.tokenReviewer)],
    ['selfsubjectreviews', createSelfSubjectReview],
  ]);
  // The access reviews ask the server's authorizer chain; LocalSubjectAccessReview is namespaced.
  const accessReviews = accessReviewHandlers(deps.authorizers ?? []);
  return async (ctx) => {
    const ri = ctx.state.requestInfo;
    const info = catalog.lookup(ri.apiGroup, ri.apiVersion, ri.resource);
    if (!info) throw NOT_FOUND;
    if (isReview(info)) {
      if (ri.namespace || ri.name || ri.subresource || ri.extraParts.length) throw NOT_FOUND;
      if (ri.verb !== 'create') throw methodNotRouted();
      outputFormat(ctx, info, OBJECT_SHAPES);
      return reviews.get(info.resource)!({ ctx, info, ri, ns: '', deps });
    }
    if (isAccessReview(info)) {
      if (info.namespaced !== !!ri.namespace || ri.name || ri.subresource || ri.extraParts.length) throw NOT_FOUND;
      if (ri.verb !== 'create') throw methodNotRouted();
      outputFormat(ctx, info, OBJECT_SHAPES);
      return accessReviews.get(info.resource)!({ ctx, info, ri, ns: ri.namespace, deps });
    }
    // Namespaced kinds: single objects and writes need a namespace; cluster-scoped kinds never take one.
    if (!info.namespaced && ri.namespace && !(info.resource === 'namespaces')) throw NOT_FOUND;
    if (info.namespaced && !ri.namespace && ri.verb !== 'list' && ri.verb !== 'watch') {
      if (ri.name) throw NOT_FOUND;
      throw methodNotRouted();
    }
    if (ri.subresource && !(SERVED_SUBRESOURCES.includes(ri.subresource) && info.subresources?.[ri.subresource])) throw NOT_FOUND;
    if (ri.extraParts.length) throw NOT_FOUND;
    // A collection takes GET, POST and DELETE; an object GET, PUT, PATCH and DELETE (kube's routes).
    if (!ri.subresource && (ri.name ? ri.verb === 'create' : ri.verb === 'update' || ri.verb === 'patch')) throw methodNotRouted();
    const verbs = ri.subresource ? info.subresources![ri.subresource].verbs : info.verbs;
    if (!verbs.includes(ri.verb)) throw methodNotRouted();
    // Every request to a deprecated custom resource version hears of it.
    if (info.custom?.deprecationWarning) setWarnings(ctx, [info.custom.deprecationWarning]);

    // A write decides the form of its answer first, as kube's handlers do: an Accept it cannot
    // answer in is a 406 before the body is read, and nothing is written.
    if (ri.verb !== 'get' && ri.verb !== 'list' && ri.verb !== 'watch') outputFormat(ctx, info, ri.verb === 'deletecollection' ? [] : OBJECT_SHAPES);
    const handler = (ri.subresource && SUBRESOURCE_VERBS.get(`${ri.verb}/${ri.subresource}`)) || VERBS.get(ri.verb);
    if (!handler) throw methodNotRouted();
    return handler({ ctx, info, ri, ns: info.namespaced ? ri.namespace : '', deps });
  };
}
