// LimitRanger (kube's plugin/pkg/admission/limitranger, on by default): the LimitRanges of a
// pod's namespace give its containers default requests and limits (mutating phase, noted in the
// `kubernetes.io/limit-ranger` annotation) and bound them (validating phase): min, max and
// maxLimitRequestRatio per Container and per Pod, min and max of a PersistentVolumeClaim's
// storage request. Pods are checked on create (their containers are immutable after; a resize
// is checked again), claims on create and update (only a request the update changes).
// LimitRanges come from memory (the commit stream's copy `server.ts` passes), never a read.
import { aggregateErrors as aggregate } from '../go/errors.ts';
import type { AdmissionAttributes, AdmissionPlugin } from './types.ts';
import { newForbidden } from './forbidden.ts';
import { podLimits, podRequests, type ContainerView, type PodSpecView } from './pod-resources.ts';
import { compare, quantityOf, quantityString, sign, type Quantity, type ResourceList, resourceListOf } from './resource-quota/resource-lists.ts';

export const LIMIT_RANGER_ANNOTATION = 'kubernetes.io/limit-ranger';

interface LimitRangeItem {
  type?: unknown;
  min?: Record<string, unknown>;
  max?: Record<string, unknown>;
  default?: Record<string, unknown>;
  defaultRequest?: Record<string, unknown>;
  maxLimitRequestRatio?: Record<string, unknown>;
}

export interface LimitRangeView {
  spec?: { limits?: LimitRangeItem[] };
}

interface ObjectView {
  metadata?: { annotations?: Record<string, string>; deletionTimestamp?: unknown };
  spec?: PodSpecView & { resources?: { requests?: unknown } };
}

/** The LimitRanges of a namespace, as last committed. */
export type LimitRangesIn = (namespace: string) => readonly LimitRangeView[];

export function limitRanger(limitRangesIn: LimitRangesIn): AdmissionPlugin {
  return {
    name: 'LimitRanger',
    admit(a) {
      if (a.info.resource !== 'pods' || a.info.group !== '' || !isPodWrite(a)) return;
      const ranges = limitRangesIn(a.namespace);
      if (ranges.length === 0 || isBeingDeleted(a.oldObject)) return;
      const pod = a.object as ObjectView;
      for (const range of ranges) setDefaults(range, pod);
    },
    validate(a) {
      const { info } = a;
      if (info.group !== '') return;
      const isPod = info.resource === 'pods';
      if (isPod ? !isPodWrite(a) : info.resource !== 'persistentvolumeclaims' || a.subresource || (a.operation !== 'CREATE' && a.operation !== 'UPDATE')) return;
      const ranges = limitRangesIn(a.namespace);
      if (ranges.length === 0 || isBeingDeleted(a.oldObject)) return;
      const obj = a.object as ObjectView;
      const old = a.oldObject as ObjectView | undefined;
      for (const range of ranges) {
        const errors = isPod ? validatePod(range, obj, old) : validateClaim(range, obj, old);
        if (errors.length) throw newForbidden(a, aggregate(errors));
      }
    },
  };
}

/** kube's SupportsAttributes for pods: a create, or an update through pods/resize. */
function isPodWrite(a: AdmissionAttributes): boolean {
  return a.subresource === '' ? a.operation === 'CREATE' : a.subresource === 'resize' && a.operation === 'UPDATE';
}

function isBeingDeleted(old: unknown): boolean {
  return !!(old as ObjectView | undefined)?.metadata?.deletionTimestamp;
}


// ---- defaults (mutating) ----

/** defaultContainerResourceRequirements + mergePodResourceRequirements, annotation included. */
export function setDefaults(range: LimitRangeView, pod: ObjectView): void {
  const requests: Record<string, unknown> = {};
  const limits: Record<string, unknown> = {};
  for (const item of range.spec?.limits ?? []) {
    if (item.type !== 'Container') continue;
    Object.assign(requests, item.defaultRequest ?? {});
    Object.assign(limits, item.default ?? {});
  }
  const notes: string[] = [];
  for (const c of pod.spec?.containers ?? []) mergeContainer(c, requests, limits, 'container', notes);
  for (const c of pod.spec?.initContainers ?? []) mergeContainer(c, requests, limits, 'init container', notes);
  if (notes.length) {
    const meta = (pod.metadata ??= {});
    (meta.annotations ??= {})[LIMIT_RANGER_ANNOTATION] = `LimitRanger plugin set: ${notes.join('; ')}`;
  }
}

function mergeContainer(c: ContainerView, requests: Record<string, unknown>, limits: Record<string, unknown>, kind: string, notes: string[]): void {
  const resources = (c.resources ??= {}) as { requests?: Record<string, unknown>; limits?: Record<string, unknown> };
  const own = { limits: (resources.limits ??= {}), requests: (resources.requests ??= {}) };
  const setLimits = Object.keys(limits).filter((k) => !(k in own.limits));
  for (const k of setLimits) own.limits[k] = limits[k];
  const setRequests = Object.keys(requests).filter((k) => !(k in own.requests));
  for (const k of setRequests) own.requests[k] = requests[k];
  // kube's order: the requests set, then the limits set, each sorted.
  if (setRequests.length) notes.push(`${setRequests.sort().join(', ')} request for ${kind} ${String(c.name)}`);
  if (setLimits.length) notes.push(`${setLimits.sort().join(', ')} limit for ${kind} ${String(c.name)}`);
  // An empty map kube's omitempty would drop is dropped here too.
  if (Object.keys(own.limits).length === 0) delete resources.limits;
  if (Object.keys(own.requests).length === 0) delete resources.requests;
}

// ---- constraints (validating) ----

interface Observed {
  /** The quantity and the text it had in the object (what kube's message prints). */
  requests: ResourceList;
  limits: ResourceList;
}

function text(q: Quantity): string {
  return quantityString(q);
}

function minConstraint(type: string, name: string, enforced: Quantity, o: Observed): string | undefined {
  const req = o.requests.get(name);
  const lim = o.limits.get(name);
  if (!req) return `minimum ${name} usage per ${type} is ${text(enforced)}.  No request is specified`;
  if (compare(enforced, req) > 0) return `minimum ${name} usage per ${type} is ${text(enforced)}, but request is ${text(req)}`;
  if (lim && compare(enforced, lim) > 0) return `minimum ${name} usage per ${type} is ${text(enforced)}, but limit is ${text(lim)}`;
  return undefined;
}

function maxRequestConstraint(type: string, name: string, enforced: Quantity, o: Observed): string | undefined {
  const req = o.requests.get(name);
  if (!req) return `maximum ${name} usage per ${type} is ${text(enforced)}.  No request is specified`;
  if (compare(req, enforced) > 0) return `maximum ${name} usage per ${type} is ${text(enforced)}, but request is ${text(req)}`;
  return undefined;
}

function maxConstraint(type: string, name: string, enforced: Quantity, o: Observed): string | undefined {
  const req = o.requests.get(name);
  const lim = o.limits.get(name);
  if (!lim) return `maximum ${name} usage per ${type} is ${text(enforced)}.  No limit is specified`;
  if (compare(lim, enforced) > 0) return `maximum ${name} usage per ${type} is ${text(enforced)}, but limit is ${text(lim)}`;
  if (req && compare(req, enforced) > 0) return `maximum ${name} usage per ${type} is ${text(enforced)}, but request is ${text(req)}`;
  return undefined;
}

function ratioConstraint(type: string, name: string, enforced: Quantity, o: Observed): string | undefined {
  const req = o.requests.get(name);
  const lim = o.limits.get(name);
  if (!req || sign(req) === 0) return `${name} max limit to request ratio per ${type} is ${text(enforced)}, but no request is specified or request is 0`;
  if (!lim || sign(lim) === 0) return `${name} max limit to request ratio per ${type} is ${text(enforced)}, but no limit is specified or limit is 0`;
  // |limit| > |request| × ratio, exactly.
  const l = abs(lim.value);
  const r = abs(req.value);
  const e = enforced.value;
  if (l.num * r.den * e.den > r.num * e.num * l.den) {
    return `${name} max limit to request ratio per ${type} is ${text(enforced)}, but provided ratio is ${ratioText(l, r)}`;
  }
  return undefined;
}

const abs = (v: { num: bigint; den: bigint }) => ({ num: v.num < 0n ? -v.num : v.num, den: v.den });

/** limit / request to six decimals, rounded half to even (inf.Dec QuoRound). */
export function ratioText(limit: { num: bigint; den: bigint }, request: { num: bigint; den: bigint }): string {
  const num = limit.num * request.den * 1_000_000n;
  const den = limit.den * request.num;
  let q = num / den;
  const rem = num - q * den;
  if (rem * 2n > den || (rem * 2n === den && q % 2n === 1n)) q += 1n;
  const digits = q.toString().padStart(7, '0');
  return `${digits.slice(0, -6)}.${digits.slice(-6)}`;
}

type Check = (type: string, name: string, enforced: Quantity, o: Observed) => string | undefined;

function checkEach(bounds: Record<string, unknown> | undefined, check: Check, type: string, o: Observed, unchanged: (name: string) => boolean, errors: string[]): void {
  for (const [name, value] of Object.entries(bounds ?? {})) {
    const enforced = quantityOf(value);
    if (!enforced || unchanged(name)) continue;
    const err = check(type, name, enforced, o);
    if (err) errors.push(err);
  }
}

function observedOf(resources: ContainerView['resources']): Observed {
  return { requests: resourceListOf(resources?.requests), limits: resourceListOf(resources?.limits) };
}

/** Whether a resource's request and limit are both as they were (each absent, or equal). */
function sameIn(name: string, now: Observed, before: Observed | undefined): boolean {
  if (!before) return false;
  for (const which of ['requests', 'limits'] as const) {
    const a = now[which].get(name);
    const b = before[which].get(name);
    if (!a !== !b || (a && b && compare(a, b) !== 0)) return false;
  }
  return true;
}

/** PodValidateLimitFunc. */
export function validatePod(range: LimitRangeView, pod: ObjectView, oldPod: ObjectView | undefined): string[] {
  const errors: string[] = [];
  for (const item of range.spec?.limits ?? []) {
    if (item.type === 'Container') {
      for (const list of ['containers', 'initContainers'] as const) {
        const olds = oldPod?.spec?.[list] ?? [];
        for (const c of pod.spec?.[list] ?? []) {
          const o = observedOf(c.resources);
          const oldC = olds.find((x) => x.name === c.name);
          const before = oldC ? observedOf(oldC.resources) : undefined;
          const unchanged = (name: string) => sameIn(name, o, before);
          checkEach(item.min, minConstraint, 'Container', o, unchanged, errors);
          checkEach(item.max, maxConstraint, 'Container', o, unchanged, errors);
          checkEach(item.maxLimitRequestRatio, ratioConstraint, 'Container', o, unchanged, errors);
        }
      }
    } else if (item.type === 'Pod') {
      const o: Observed = { requests: podRequests(pod.spec, false), limits: podLimits(pod.spec, false) };
      const before: Observed | undefined = oldPod ? { requests: podRequests(oldPod.spec, false), limits: podLimits(oldPod.spec, false) } : undefined;
      const unchanged = (name: string) => sameIn(name, o, before);
      checkEach(item.min, minConstraint, 'Pod', o, unchanged, errors);
      checkEach(item.max, maxConstraint, 'Pod', o, unchanged, errors);
      checkEach(item.maxLimitRequestRatio, ratioConstraint, 'Pod', o, unchanged, errors);
    }
  }
  return errors;
}

/** PersistentVolumeClaimValidateLimitFunc: min and max of what the claim requests (its limits are not user input). */
export function validateClaim(range: LimitRangeView, pvc: ObjectView, oldPvc: ObjectView | undefined): string[] {
  const errors: string[] = [];
  const o: Observed = { requests: resourceListOf(pvc.spec?.resources?.requests), limits: new Map() };
  const oldRequests = oldPvc ? resourceListOf(oldPvc.spec?.resources?.requests) : undefined;
  // A request the claim already held is valid as stored.
  const unchanged = (name: string) => {
    const now = o.requests.get(name);
    const before = oldRequests?.get(name);
    return !!now && !!before && compare(now, before) === 0;
  };
  for (const item of range.spec?.limits ?? []) {
    if (item.type !== 'PersistentVolumeClaim') continue;
    checkEach(item.min, minConstraint, 'PersistentVolumeClaim', o, unchanged, errors);
    checkEach(item.max, maxRequestConstraint, 'PersistentVolumeClaim', o, unchanged, errors);
  }
  return errors;
}
