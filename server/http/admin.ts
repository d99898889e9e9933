// Operator endpoints outside the Kubernetes API. Authorization applies as for any non-resource
// path (kube's `post path "/admin/compact"`): cluster-admin's `nonResourceURLs: ["*"]` reaches
// them, so system:masters and whoever is bound to cluster-admin; no other default role does.
import type Router from '@koa/router';
import type { EventLog } from '../storage/log/event-log.ts';
import { badRequest } from '../errors.ts';
import { queryOf } from './request-info.ts';

export function registerAdminRoutes(router: Router, log: EventLog): void {
  /** POST /admin/compact[?resourceVersion=N]: compact now, up to N (default: the newest), then give the freed space back. */
  router.post('/admin/compact', async (ctx) => {
    const v = queryOf(ctx).get('resourceVersion');
    if (v !== null && !/^\d+$/.test(v)) throw badRequest(`invalid resource version: ${JSON.stringify(v)}`);
    const r = await log.compact(v === null ? log.currentRv : Number(v));
    ctx.set('Content-Type', 'application/json');
    ctx.body = JSON.stringify({
      compactedResourceVersion: String(r.compactedRv),
      removedEvents: r.removed,
      slices: r.slices,
      longestSliceMs: Number(r.longestSliceMs.toFixed(3)),
      longestPauseMs: Number(r.longestPauseMs.toFixed(3)),
      pagesReleased: r.pagesReleased,
      vacuumSlices: r.vacuumSlices,
      longestVacuumMs: Number(r.longestVacuumMs.toFixed(3)),
    }) + '\n';
  });
}
