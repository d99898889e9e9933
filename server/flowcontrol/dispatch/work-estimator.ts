// How many seats a request takes (kube's flowcontrol/request: width.go, list_work_estimator.go,
// mutating_work_estimator.go, config.go). By default one. A LIST takes one seat per 100 objects
// it will process (from the resource's object count, kept in memory: no database read), at most
// the level's max seats; a WATCH asking for its initial events is costed as that LIST. A create,
// update, patch or delete holds, after it answers, ceil(watchers / 10) seats for 5 ms a seat's
// worth (its events' fan-out), reshaped to at most the level's max seats.
import type { RequestDigest } from '../types.ts';
import type { WorkEstimate } from './queueset.ts';

const MINIMUM_SEATS = 1;
/** MaximumSeatsLimit: no request takes more, whatever its level's own max. */
const MAXIMUM_SEATS_LIMIT = 10;
const OBJECTS_PER_SEAT = 100;
const WATCHES_PER_SEAT = 10;
const EVENT_ADDITIONAL_DURATION_MS = 5;

export const ONE_SEAT: WorkEstimate = Object.freeze({ initialSeats: 1, finalSeats: 0, additionalLatencyMs: 0 });
const ONE_SEAT_NO_EVENTS = ONE_SEAT;

export interface WorkEstimatorSources {
  /** Current objects of a resource (the log's qualified name: "pods", "deployments.apps"), undefined if unknown. */
  objectCount(resource: string): number | undefined;
  /** Watches that would see a write to what the digest names. */
  watchCount(digest: RequestDigest): number;
}

/** The seats of one request; maxSeats is its level's (from apf-config's nominal limit and hand size). */
export function estimateWork(digest: RequestDigest, query: () => URLSearchParams, maxSeatsOfLevel: number, sources: WorkEstimatorSources, observeWatchCount?: (n: number) => void): WorkEstimate {
  switch (digest.verb) {
    case 'list':
      return estimateList(digest, query(), maxSeats(maxSeatsOfLevel), sources);
    case 'watch':
      // Only a watch that asks for its initial events (WatchList) is costed as a list.
      if (query().get('sendInitialEvents') === 'true') return estimateList(digest, query(), maxSeats(maxSeatsOfLevel), sources);
      return ONE_SEAT;
    case 'create':
    case 'update':
    case 'patch':
    case 'delete':
      if (!digest.isResourceRequest) return ONE_SEAT;
      return estimateMutating(digest, maxSeats(maxSeatsOfLevel), sources, observeWatchCount);
  }
  return ONE_SEAT;
}

function maxSeats(ofLevel: number): number {
  return ofLevel === 0 || ofLevel > MAXIMUM_SEATS_LIMIT ? MAXIMUM_SEATS_LIMIT : ofLevel;
}

function estimateList(digest: RequestDigest, q: URLSearchParams, max: number, sources: WorkEstimatorSources): WorkEstimate {
  // A list of one name is a get in storage.
  if (digest.name !== '') return ONE_SEAT;
  const limitText = q.get('limit');
  const limit = limitText ? Number(limitText) : 0;
  if (limitText && !Number.isInteger(limit)) return seats(max);
  if (digest.verb === 'watch' && q.get('sendInitialEvents') !== 'true') return ONE_SEAT;
  const count = sources.objectCount(digest.apiGroup ? `${digest.resource}.${digest.apiGroup}` : digest.resource);
  // Unknown (an aggregated API's, say): the least, as kube.
  if (count === undefined) return ONE_SEAT;
  const limited = limit > 0 && limit < count ? limit : count;
  const rv = q.get('resourceVersion') ?? '';
  // kube lists from its watch cache unless the list asks for an exact revision or continues one;
  // from storage, a selector means reading everything plus the page.
  const fromStorage = q.get('resourceVersionMatch') === 'Exact' || !!q.get('continue') || (limit > 0 && rv !== '' && rv !== '0');
  const objects = digest.verb === 'watch' || !fromStorage ? count : q.get('fieldSelector') || q.get('labelSelector') ? count + limited : 2 * limited;
  return seats(Math.min(max, Math.max(MINIMUM_SEATS, Math.ceil(objects / OBJECTS_PER_SEAT))));
}

function estimateMutating(digest: RequestDigest, max: number, sources: WorkEstimatorSources, observeWatchCount?: (n: number) => void): WorkEstimate {
  // A service account's token is never stored: no event for anyone.
  if (digest.resource === 'serviceaccounts' && digest.subresource === 'token') return ONE_SEAT_NO_EVENTS;
  const watchCount = sources.watchCount(digest);
  observeWatchCount?.(watchCount);
  if (watchCount < WATCHES_PER_SEAT) return ONE_SEAT;
  let finalSeats = Math.ceil(watchCount / WATCHES_PER_SEAT);
  const finalWorkMs = finalSeats * EVENT_ADDITIONAL_DURATION_MS;
  if (finalSeats > max) finalSeats = max;
  return { initialSeats: 1, finalSeats, additionalLatencyMs: finalWorkMs / finalSeats };
}

const SEATS: readonly WorkEstimate[] = Array.from({ length: MAXIMUM_SEATS_LIMIT + 1 }, (_, n) => Object.freeze({ initialSeats: n, finalSeats: 0, additionalLatencyMs: 0 }));

/** A shared estimate of n initial seats (the common case allocates nothing). */
function seats(n: number): WorkEstimate {
  return SEATS[n] ?? { initialSeats: n, finalSeats: 0, additionalLatencyMs: 0 };
}

/**
 * kube's WatchTracker: watches counted by what they watch (group, resource, namespace, name),
 * registered when a watch is dispatched and forgotten when it ends. A write is seen by the watches
 * of its resource cluster-wide, of its namespace, and of its name.
 */
export class WatchTracker {
  private readonly counts = new Map<string, number>();

  register(d: RequestDigest): () => void {
    const key = watchKey(d.apiGroup, d.resource, d.namespace, d.name);
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    let forgotten = false;
    return () => {
      if (forgotten) return;
      forgotten = true;
      const n = (this.counts.get(key) ?? 1) - 1;
      if (n <= 0) this.counts.delete(key);
      else this.counts.set(key, n);
    };
  }

  interested(d: RequestDigest): number {
    if (this.counts.size === 0) return 0;
    let n = this.counts.get(watchKey(d.apiGroup, d.resource, '', '')) ?? 0;
    if (d.namespace) n += this.counts.get(watchKey(d.apiGroup, d.resource, d.namespace, '')) ?? 0;
    if (d.name) {
      n += this.counts.get(watchKey(d.apiGroup, d.resource, '', d.name)) ?? 0;
      if (d.namespace) n += this.counts.get(watchKey(d.apiGroup, d.resource, d.namespace, d.name)) ?? 0;
    }
    return n;
  }
}

function watchKey(group: string, resource: string, namespace: string, name: string): string {
  return `${group}/${resource}/${namespace}/${name}`;
}
