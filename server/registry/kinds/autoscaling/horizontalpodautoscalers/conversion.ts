// HorizontalPodAutoscalers are kept as autoscaling/v2 (kube's storage version, field for field its
// internal type) and also served as autoscaling/v1, which has room for one CPU target only. As
// kube-apiserver does (pkg/apis/autoscaling/v1/conversion.go), whatever v1 cannot hold travels in
// annotations: the other metrics, the current metrics, the conditions and the behavior, each a
// JSON text exactly as Go's encoding/json writes it, so a v1 client that writes an object back
// loses nothing. Reading them back follows encoding/json too (field names matched without regard
// to case, unknown fields skipped); a text that does not decode is ignored, as kube ignores it.
import { cloneJSON, isPlainObject } from '../../../../util/json.ts';
import { goJsonString } from '../../../../go/json.ts';
import { canonicalQuantity } from '../../../../util/quantity.ts';
import { compareStrings, toGoString } from '../../../../go/strings.ts';
import { formatRFC3339, parseRFC3339 } from '../../../../go/time.ts';
import type { Obj } from '../../../strategy.ts';

const V1 = 'autoscaling/v1';
const V2 = 'autoscaling/v2';
const KIND = 'HorizontalPodAutoscaler';

// pkg/apis/autoscaling/annotations.go
const METRIC_SPECS = 'autoscaling.alpha.kubernetes.io/metrics';
const METRIC_STATUSES = 'autoscaling.alpha.kubernetes.io/current-metrics';
const CONDITIONS = 'autoscaling.alpha.kubernetes.io/conditions';
const BEHAVIOR = 'autoscaling.alpha.kubernetes.io/behavior';
/** Written only by the autoscaling/v2beta2 conversion, but dropped with the rest by every HPA conversion. */
const SCALE_DOWN_TOLERANCE = 'autoscaling.alpha.kubernetes.io/scale-down-tolerance';
const SCALE_UP_TOLERANCE = 'autoscaling.alpha.kubernetes.io/scale-up-tolerance';
/** What DropRoundTripHorizontalPodAutoscalerAnnotations (helpers.go) removes. */
const ROUND_TRIP = [METRIC_SPECS, BEHAVIOR, SCALE_DOWN_TOLERANCE, SCALE_UP_TOLERANCE, METRIC_STATUSES, CONDITIONS];
/** The CPU target v1 objects without any metric get (v1 once left it implicit in the controller). */
const DEFAULT_CPU_UTILIZATION = 80;

/**
 * A fresh object (the input is never changed; it may be deep-frozen) converted to apiVersion
 * ('autoscaling/v1' or 'autoscaling/v2'); apiVersion and kind set. An object already in that
 * version is deep-copied unchanged.
 */
export function convertHorizontalPodAutoscaler(obj: any, apiVersion: string): any {
  const src: Obj = isPlainObject(obj) ? obj : {};
  const from = src.apiVersion === V1 ? V1 : V2;
  const to = apiVersion === V1 ? V1 : V2;
  const out = from === to ? cloneJSON(src) : to === V1 ? toV1(src) : toV2(src);
  out.apiVersion = apiVersion;
  out.kind = KIND;
  return out;
}

// ---------------------------------------------------------------------------------------------
// v2 (internal) -> v1: Convert_autoscaling_HorizontalPodAutoscaler_To_v1_HorizontalPodAutoscaler

function toV1(src: Obj): Obj {
  const out = shell(src);
  const spec = obj(src.spec);
  const status = obj(src.status);
  const metrics: Obj[] = list(spec.metrics).map(obj);
  const currentMetrics: Obj[] = list(status.currentMetrics).map(obj);
  const conditions: Obj[] = list(status.conditions).map(obj);

  const outSpec: Obj = { scaleTargetRef: refToJSON(refFromJSON(spec.scaleTargetRef)) };
  putInt(outSpec, 'minReplicas', spec.minReplicas);
  outSpec.maxReplicas = int(spec.maxReplicas) ?? 0;
  // Only the first CPU metric is looked at: if it is not a utilization, v1 has no target.
  const firstCpu = metrics.find(isCpuResource);
  if (firstCpu) putInt(outSpec, 'targetCPUUtilizationPercentage', obj(firstCpu.resource.target).averageUtilization);
  out.spec = outSpec;

  const outStatus: Obj = {};
  putInt(outStatus, 'observedGeneration', status.observedGeneration);
  if (typeof status.lastScaleTime === 'string') outStatus.lastScaleTime = status.lastScaleTime;
  outStatus.currentReplicas = int(status.currentReplicas) ?? 0;
  outStatus.desiredReplicas = int(status.desiredReplicas) ?? 0;
  // No break here, unlike the spec: the last CPU utilization reported wins.
  for (const m of currentMetrics) {
    if (isCpuResource(m)) putInt(outStatus, 'currentCPUUtilizationPercentage', obj(m.resource.current).averageUtilization);
  }
  out.status = outStatus;

  // Stale round-trip annotations go first, so that only what this object holds is written.
  dropRoundTrip(out);
  const written: [string, string][] = [];
  // Every CPU utilization metric is left out, not only the one targetCPUUtilizationPercentage holds.
  const others = metrics.filter((m) => !(isCpuResource(m) && has(obj(m.resource.target).averageUtilization)));
  if (others.length > 0) written.push([METRIC_SPECS, marshal(sliceOf(V1_METRIC_SPEC), others.map(metricSpecToV1))]);
  // All of them, the CPU one too: v1's percentage would lose its raw value.
  if (currentMetrics.length > 0) written.push([METRIC_STATUSES, marshal(sliceOf(V1_METRIC_STATUS), currentMetrics.map(metricStatusToV1))]);
  if (conditions.length > 0) written.push([CONDITIONS, marshal(sliceOf(V1_CONDITION), conditions.map(conditionToV1))]);
  // kube marshals its internal behavior type here, which has no json tags: Go's field names.
  if (isPlainObject(spec.behavior)) written.push([BEHAVIOR, marshal(INTERNAL_BEHAVIOR, behaviorToInternal(spec.behavior))]);
  if (written.length > 0) {
    if (!isPlainObject(out.metadata)) out.metadata = {};
    if (!isPlainObject(out.metadata.annotations)) out.metadata.annotations = {};
    for (const [k, v] of written) out.metadata.annotations[k] = v;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// v1 -> v2 (internal): Convert_v1_HorizontalPodAutoscaler_To_autoscaling_HorizontalPodAutoscaler

function toV2(src: Obj): Obj {
  const out = shell(src);
  const spec = obj(src.spec);
  const status = obj(src.status);
  const annotations = isPlainObject(src.metadata) && isPlainObject(src.metadata.annotations) ? src.metadata.annotations : {};

  const outSpec: Obj = { scaleTargetRef: refToJSON(refFromJSON(spec.scaleTargetRef)) };
  putInt(outSpec, 'minReplicas', spec.minReplicas);
  outSpec.maxReplicas = int(spec.maxReplicas) ?? 0;
  const targetCpu = int(spec.targetCPUUtilizationPercentage);
  let metrics: Obj[] | undefined = targetCpu === undefined ? undefined : [cpuUtilizationMetric(targetCpu)];
  const others = decodeAnnotation(annotations, METRIC_SPECS, sliceOf(V1_METRIC_SPEC));
  // The annotated metrics come first, the CPU target after them.
  if (others !== UNDECODED) metrics = [...list(others).map(metricSpecToV2), ...(metrics ?? [])];
  if (!metrics || metrics.length === 0) metrics = [cpuUtilizationMetric(DEFAULT_CPU_UTILIZATION)];
  outSpec.metrics = metrics;
  const behavior = decodeAnnotation(annotations, BEHAVIOR, INTERNAL_BEHAVIOR);
  // A behavior with neither direction set is no behavior (kube compares with the zero value).
  if (behavior !== UNDECODED && (behavior.ScaleUp !== null || behavior.ScaleDown !== null)) outSpec.behavior = behaviorToV2(behavior);
  out.spec = outSpec;

  const outStatus: Obj = {};
  putInt(outStatus, 'observedGeneration', status.observedGeneration);
  if (typeof status.lastScaleTime === 'string') outStatus.lastScaleTime = status.lastScaleTime;
  const currentReplicas = int(status.currentReplicas) ?? 0;
  if (currentReplicas !== 0) outStatus.currentReplicas = currentReplicas;
  outStatus.desiredReplicas = int(status.desiredReplicas) ?? 0;
  const currentCpu = int(status.currentCPUUtilizationPercentage);
  if (currentCpu !== undefined) outStatus.currentMetrics = [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: currentCpu } } }];
  // The annotated statuses replace the percentage: they hold it and its raw value. Decoded, they
  // are a list even when the text is null, which v2 writes as [] (currentMetrics has no omitempty).
  const statuses = decodeAnnotation(annotations, METRIC_STATUSES, sliceOf(V1_METRIC_STATUS));
  if (statuses !== UNDECODED) outStatus.currentMetrics = list(statuses).map(metricStatusToV2);
  const conditions = decodeAnnotation(annotations, CONDITIONS, sliceOf(V1_CONDITION));
  if (conditions !== UNDECODED && list(conditions).length > 0) outStatus.conditions = list(conditions).map(conditionToV2);
  out.status = outStatus;

  // v2 has fields for all of it: the annotations are not kept.
  dropRoundTrip(out);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Plain JSON helpers

const obj = (v: unknown): Obj => (isPlainObject(v) ? v : {});
const list = (v: unknown): any[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const has = (v: unknown): boolean => v !== undefined && v !== null;
const int = (v: unknown): number | undefined => (typeof v === 'number' && Number.isInteger(v) ? v : undefined);

function putInt(o: Obj, key: string, v: unknown): void {
  const n = int(v);
  if (n !== undefined) o[key] = n;
}

/** A copy of everything but spec and status, which each direction builds anew. */
function shell(src: Obj): Obj {
  const out: Obj = {};
  for (const k of Object.keys(src)) if (k !== 'spec' && k !== 'status') setOwn(out, k, cloneJSON(src[k]));
  return out;
}

/** Sets a key, "__proto__" included, as an own property. */
function setOwn(o: Obj, k: string, v: unknown): void {
  if (k === '__proto__') Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  else o[k] = v;
}

/**
 * DropRoundTripHorizontalPodAutoscalerAnnotations. A map it empties stays empty in kube, and an
 * empty map is not written (omitempty), so the key goes; so does any empty annotations map.
 */
function dropRoundTrip(out: Obj): void {
  const meta = out.metadata;
  if (!isPlainObject(meta) || !isPlainObject(meta.annotations)) return;
  for (const k of ROUND_TRIP) delete meta.annotations[k];
  if (Object.keys(meta.annotations).length === 0) delete meta.annotations;
}

const isCpuResource = (m: Obj): boolean => m.type === 'Resource' && isPlainObject(m.resource) && m.resource.name === 'cpu';

function cpuUtilizationMetric(percent: number): Obj {
  return { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: percent } } };
}

/** A quantity as Go writes it (canonical); null when unset. */
function qty(v: unknown): string | null {
  if (typeof v !== 'string' && typeof v !== 'number') return null;
  const text = String(v);
  return canonicalQuantity(text) ?? text;
}

// ---------------------------------------------------------------------------------------------
// Go values: plain objects with every field of the Go struct, in the shapes below; nil is null.

type GoType =
  | { k: 'string' }
  | { k: 'int'; min: bigint; max: bigint }
  | { k: 'quantity' }
  | { k: 'time' }
  | { k: 'ptr'; elem: GoType }
  | { k: 'slice'; elem: GoType }
  | { k: 'map' }
  | { k: 'struct'; fields: GoField[] };

interface GoField {
  /** The JSON key: the json tag's name, or the Go field's name for the untagged internal types. */
  name: string;
  type: GoType;
  omitempty: boolean;
}

const STRING: GoType = { k: 'string' };
const INT32: GoType = { k: 'int', min: -(2n ** 31n), max: 2n ** 31n - 1n };
const INT64: GoType = { k: 'int', min: -(2n ** 63n), max: 2n ** 63n - 1n };
const QUANTITY: GoType = { k: 'quantity' };
const TIME: GoType = { k: 'time' };
const STRING_MAP: GoType = { k: 'map' };
const ptr = (elem: GoType): GoType => ({ k: 'ptr', elem });
const sliceOf = (elem: GoType): GoType => ({ k: 'slice', elem });
/** Fields as [name, type, omitempty?], in the Go struct's order (which is the order written). */
const struct = (fields: [string, GoType, boolean?][]): GoType => ({ k: 'struct', fields: fields.map(([name, type, omitempty]) => ({ name, type, omitempty: omitempty === true })) });

// metav1.LabelSelector
const LABEL_SELECTOR = struct([
  ['matchLabels', STRING_MAP, true],
  ['matchExpressions', sliceOf(struct([['key', STRING], ['operator', STRING], ['values', sliceOf(STRING), true]])), true],
]);
const SELECTOR = ptr(LABEL_SELECTOR);
// autoscaling/v1 (k8s.io/api/autoscaling/v1/types.go): the types of the annotations' lists
const V1_REFERENCE = struct([['kind', STRING], ['name', STRING], ['apiVersion', STRING, true]]);
const V1_METRIC_SPEC = struct([
  ['type', STRING],
  ['object', ptr(struct([['target', V1_REFERENCE], ['metricName', STRING], ['targetValue', QUANTITY], ['selector', SELECTOR, true], ['averageValue', ptr(QUANTITY), true]])), true],
  ['pods', ptr(struct([['metricName', STRING], ['targetAverageValue', QUANTITY], ['selector', SELECTOR, true]])), true],
  ['resource', ptr(struct([['name', STRING], ['targetAverageUtilization', ptr(INT32), true], ['targetAverageValue', ptr(QUANTITY), true]])), true],
  [
    'containerResource',
    ptr(struct([['name', STRING], ['targetAverageUtilization', ptr(INT32), true], ['targetAverageValue', ptr(QUANTITY), true], ['container', STRING]])),
    true,
  ],
  ['external', ptr(struct([['metricName', STRING], ['metricSelector', SELECTOR, true], ['targetValue', ptr(QUANTITY), true], ['targetAverageValue', ptr(QUANTITY), true]])), true],
]);
const V1_METRIC_STATUS = struct([
  ['type', STRING],
  ['object', ptr(struct([['target', V1_REFERENCE], ['metricName', STRING], ['currentValue', QUANTITY], ['selector', SELECTOR, true], ['averageValue', ptr(QUANTITY), true]])), true],
  ['pods', ptr(struct([['metricName', STRING], ['currentAverageValue', QUANTITY], ['selector', SELECTOR, true]])), true],
  ['resource', ptr(struct([['name', STRING], ['currentAverageUtilization', ptr(INT32), true], ['currentAverageValue', QUANTITY]])), true],
  ['containerResource', ptr(struct([['name', STRING], ['currentAverageUtilization', ptr(INT32), true], ['currentAverageValue', QUANTITY], ['container', STRING]])), true],
  ['external', ptr(struct([['metricName', STRING], ['metricSelector', SELECTOR, true], ['currentValue', QUANTITY], ['currentAverageValue', ptr(QUANTITY), true]])), true],
]);
// lastTransitionTime is a struct: omitempty never drops it, and its zero value is written as null.
const V1_CONDITION = struct([
  ['type', STRING],
  ['status', STRING],
  ['lastTransitionTime', TIME, true],
  ['reason', STRING, true],
  ['message', STRING, true],
  ['observedGeneration', ptr(INT64), true],
]);
// pkg/apis/autoscaling (internal): no json tags, so no omitempty and Go's own field names.
const INTERNAL_SCALING_RULES = struct([
  ['StabilizationWindowSeconds', ptr(INT32)],
  ['SelectPolicy', ptr(STRING)],
  ['Policies', sliceOf(struct([['Type', STRING], ['Value', INT32], ['PeriodSeconds', INT32]]))],
  ['Tolerance', ptr(QUANTITY)],
]);
const INTERNAL_BEHAVIOR = struct([
  ['ScaleUp', ptr(INTERNAL_SCALING_RULES)],
  ['ScaleDown', ptr(INTERNAL_SCALING_RULES)],
]);

function zero(t: GoType): any {
  switch (t.k) {
    case 'string':
      return '';
    case 'int':
      return 0;
    case 'quantity':
      return '0';
    case 'struct': {
      const o: Obj = {};
      for (const f of t.fields) o[f.name] = zero(f.type);
      return o;
    }
    default:
      return null; // pointer, slice, map, and the zero time (written as null)
  }
}

// ---------------------------------------------------------------------------------------------
// v2 JSON <-> v1 Go values, one function per kube conversion function

const refFromJSON = (v: unknown): Obj => {
  const r = obj(v);
  return { kind: str(r.kind), name: str(r.name), apiVersion: str(r.apiVersion) };
};
const refToJSON = (r: Obj): Obj => (r.apiVersion ? { kind: r.kind, name: r.name, apiVersion: r.apiVersion } : { kind: r.kind, name: r.name });

function selectorFromJSON(v: unknown): Obj | null {
  if (!isPlainObject(v)) return null;
  let matchLabels: Obj | null = null;
  if (isPlainObject(v.matchLabels)) {
    matchLabels = {};
    for (const k of Object.keys(v.matchLabels)) setOwn(matchLabels, k, str(v.matchLabels[k]));
  }
  const matchExpressions = Array.isArray(v.matchExpressions)
    ? v.matchExpressions.map((e: unknown) => {
        const r = obj(e);
        return { key: str(r.key), operator: str(r.operator), values: Array.isArray(r.values) ? r.values.map(str) : null };
      })
    : null;
  return { matchLabels, matchExpressions };
}

function selectorToJSON(s: Obj): Obj {
  const out: Obj = {};
  if (s.matchLabels && Object.keys(s.matchLabels).length > 0) out.matchLabels = cloneJSON(s.matchLabels);
  if (s.matchExpressions && s.matchExpressions.length > 0) {
    out.matchExpressions = s.matchExpressions.map((e: Obj) => (e.values && e.values.length > 0 ? { key: e.key, operator: e.operator, values: [...e.values] } : { key: e.key, operator: e.operator }));
  }
  return out;
}

/** A v2 MetricIdentifier from a v1 metric name and selector. */
function metricIdentifier(name: string, selector: Obj | null): Obj {
  return selector ? { name, selector: selectorToJSON(selector) } : { name };
}

/** Only the target fields that are set (all are omitempty but type). */
function metricValues(type: string | undefined, value: string | null, averageValue: string | null, averageUtilization: number | null): Obj {
  const out: Obj = type === undefined ? {} : { type };
  if (value !== null) out.value = value;
  if (averageValue !== null) out.averageValue = averageValue;
  if (averageUtilization !== null) out.averageUtilization = averageUtilization;
  return out;
}

// Convert_autoscaling_MetricSpec_To_v1_MetricSpec and the source conversions it calls.
function metricSpecToV1(m: Obj): Obj {
  const out: Obj = { type: str(m.type) };
  if (isPlainObject(m.object)) {
    const target = obj(m.object.target);
    const metric = obj(m.object.metric);
    out.object = {
      target: refFromJSON(m.object.describedObject),
      metricName: str(metric.name),
      targetValue: qty(target.value) ?? '0',
      selector: selectorFromJSON(metric.selector),
      averageValue: qty(target.averageValue),
    };
  }
  if (isPlainObject(m.pods)) {
    const target = obj(m.pods.target);
    const metric = obj(m.pods.metric);
    out.pods = { metricName: str(metric.name), targetAverageValue: qty(target.averageValue) ?? '0', selector: selectorFromJSON(metric.selector) };
  }
  if (isPlainObject(m.resource)) {
    const target = obj(m.resource.target);
    out.resource = { name: str(m.resource.name), targetAverageUtilization: int(target.averageUtilization) ?? null, targetAverageValue: qty(target.averageValue) };
  }
  if (isPlainObject(m.containerResource)) {
    const target = obj(m.containerResource.target);
    out.containerResource = {
      name: str(m.containerResource.name),
      targetAverageUtilization: int(target.averageUtilization) ?? null,
      targetAverageValue: qty(target.averageValue),
      container: str(m.containerResource.container),
    };
  }
  if (isPlainObject(m.external)) {
    const target = obj(m.external.target);
    const metric = obj(m.external.metric);
    out.external = { metricName: str(metric.name), metricSelector: selectorFromJSON(metric.selector), targetValue: qty(target.value), targetAverageValue: qty(target.averageValue) };
  }
  return out;
}

// Convert_v1_MetricSpec_To_autoscaling_MetricSpec: v1 has no target type, so it is inferred from
// which value is set; a v1 object or pods target value is not a pointer, so it is always set.
function metricSpecToV2(g: Obj): Obj {
  const out: Obj = { type: g.type };
  if (g.object) {
    const o = g.object;
    out.object = {
      describedObject: refToJSON(o.target),
      target: metricValues(o.averageValue === null ? 'Value' : 'AverageValue', o.targetValue, o.averageValue, null),
      metric: metricIdentifier(o.metricName, o.selector),
    };
  }
  if (g.pods) out.pods = { metric: metricIdentifier(g.pods.metricName, g.pods.selector), target: metricValues('AverageValue', null, g.pods.targetAverageValue, null) };
  for (const key of ['resource', 'containerResource']) {
    const r = g[key];
    if (!r) continue;
    const target = metricValues(r.targetAverageUtilization === null ? 'AverageValue' : 'Utilization', null, r.targetAverageValue, r.targetAverageUtilization);
    out[key] = key === 'resource' ? { name: r.name, target } : { name: r.name, target, container: r.container };
  }
  if (g.external) {
    const e = g.external;
    out.external = { metric: metricIdentifier(e.metricName, e.metricSelector), target: metricValues(e.targetValue === null ? 'AverageValue' : 'Value', e.targetValue, e.targetAverageValue, null) };
  }
  return out;
}

// Convert_autoscaling_MetricStatus_To_v1_MetricStatus and the status conversions it calls.
function metricStatusToV1(m: Obj): Obj {
  const out: Obj = { type: str(m.type) };
  if (isPlainObject(m.object)) {
    const current = obj(m.object.current);
    const metric = obj(m.object.metric);
    out.object = {
      target: refFromJSON(m.object.describedObject),
      metricName: str(metric.name),
      currentValue: qty(current.value) ?? '0',
      selector: selectorFromJSON(metric.selector),
      averageValue: qty(current.averageValue),
    };
  }
  if (isPlainObject(m.pods)) {
    const current = obj(m.pods.current);
    const metric = obj(m.pods.metric);
    out.pods = { metricName: str(metric.name), currentAverageValue: qty(current.averageValue) ?? '0', selector: selectorFromJSON(metric.selector) };
  }
  if (isPlainObject(m.resource)) {
    const current = obj(m.resource.current);
    out.resource = { name: str(m.resource.name), currentAverageUtilization: int(current.averageUtilization) ?? null, currentAverageValue: qty(current.averageValue) ?? '0' };
  }
  if (isPlainObject(m.containerResource)) {
    const current = obj(m.containerResource.current);
    out.containerResource = {
      name: str(m.containerResource.name),
      currentAverageUtilization: int(current.averageUtilization) ?? null,
      currentAverageValue: qty(current.averageValue) ?? '0',
      container: str(m.containerResource.container),
    };
  }
  if (isPlainObject(m.external)) {
    const current = obj(m.external.current);
    const metric = obj(m.external.metric);
    out.external = { metricName: str(metric.name), metricSelector: selectorFromJSON(metric.selector), currentValue: qty(current.value) ?? '0', currentAverageValue: qty(current.averageValue) };
  }
  return out;
}

// Convert_v1_MetricStatus_To_autoscaling_MetricStatus: v1's non-pointer current values come back set.
function metricStatusToV2(g: Obj): Obj {
  const out: Obj = { type: g.type };
  if (g.object) {
    const o = g.object;
    out.object = { metric: metricIdentifier(o.metricName, o.selector), current: metricValues(undefined, o.currentValue, o.averageValue, null), describedObject: refToJSON(o.target) };
  }
  if (g.pods) out.pods = { metric: metricIdentifier(g.pods.metricName, g.pods.selector), current: metricValues(undefined, null, g.pods.currentAverageValue, null) };
  for (const key of ['resource', 'containerResource']) {
    const r = g[key];
    if (!r) continue;
    const current = metricValues(undefined, null, r.currentAverageValue, r.currentAverageUtilization);
    out[key] = key === 'resource' ? { name: r.name, current } : { name: r.name, current, container: r.container };
  }
  if (g.external) {
    const e = g.external;
    out.external = { metric: metricIdentifier(e.metricName, e.metricSelector), current: metricValues(undefined, e.currentValue, e.currentAverageValue, null) };
  }
  return out;
}

// The generated condition conversions: the same fields both ways.
function conditionToV1(c: Obj): Obj {
  const t = typeof c.lastTransitionTime === 'string' ? c.lastTransitionTime : null;
  return {
    type: str(c.type),
    status: str(c.status),
    lastTransitionTime: t === null ? null : (canonicalTime(t) ?? t),
    reason: str(c.reason),
    message: str(c.message),
    observedGeneration: int(c.observedGeneration) ?? null,
  };
}

/** A zero lastTransitionTime (Go writes null) is left out, as hearth leaves out unset times. */
function conditionToV2(g: Obj): Obj {
  const out: Obj = { type: g.type, status: g.status };
  if (g.lastTransitionTime !== null) out.lastTransitionTime = g.lastTransitionTime;
  if (g.reason !== '') out.reason = g.reason;
  if (g.message !== '') out.message = g.message;
  if (g.observedGeneration !== null) out.observedGeneration = g.observedGeneration;
  return out;
}

function behaviorToInternal(b: Obj): Obj {
  const rules = (v: unknown): Obj | null => {
    if (!isPlainObject(v)) return null;
    return {
      StabilizationWindowSeconds: int(v.stabilizationWindowSeconds) ?? null,
      SelectPolicy: typeof v.selectPolicy === 'string' ? v.selectPolicy : null,
      Policies: Array.isArray(v.policies)
        ? v.policies.map((p: unknown) => {
            const q = obj(p);
            return { Type: str(q.type), Value: int(q.value) ?? 0, PeriodSeconds: int(q.periodSeconds) ?? 0 };
          })
        : null,
      Tolerance: qty(v.tolerance),
    };
  };
  return { ScaleUp: rules(b.scaleUp), ScaleDown: rules(b.scaleDown) };
}

function behaviorToV2(g: Obj): Obj {
  const rules = (r: Obj): Obj => {
    const out: Obj = {};
    if (r.StabilizationWindowSeconds !== null) out.stabilizationWindowSeconds = r.StabilizationWindowSeconds;
    if (r.SelectPolicy !== null) out.selectPolicy = r.SelectPolicy;
    if (r.Policies && r.Policies.length > 0) out.policies = r.Policies.map((p: Obj) => ({ type: p.Type, value: p.Value, periodSeconds: p.PeriodSeconds }));
    if (r.Tolerance !== null) out.tolerance = r.Tolerance;
    return out;
  };
  const out: Obj = {};
  if (g.ScaleUp !== null) out.scaleUp = rules(g.ScaleUp);
  if (g.ScaleDown !== null) out.scaleDown = rules(g.ScaleDown);
  return out;
}

// ---------------------------------------------------------------------------------------------
// encoding/json Marshal of the Go values above

function marshal(t: GoType, v: any): string {
  switch (t.k) {
    case 'string':
      return goJsonString(typeof v === 'string' ? v : '');
    case 'int':
      return String(typeof v === 'number' && Number.isInteger(v) ? v : 0);
    case 'quantity':
      return goJsonString(typeof v === 'string' ? v : '0');
    case 'time':
      return typeof v === 'string' ? goJsonString(v) : 'null';
    case 'ptr':
      return v === null || v === undefined ? 'null' : marshal(t.elem, v);
    case 'slice':
      return Array.isArray(v) ? `[${v.map((e) => marshal(t.elem, e)).join(',')}]` : 'null';
    case 'map': {
      if (!isPlainObject(v)) return 'null';
      // Keys are written sorted by their UTF-8 bytes.
      const entries = Object.keys(v).map((k) => [toGoString(k), v[k]] as const);
      entries.sort(([a], [b]) => compareStrings(a, b));
      return `{${entries.map(([k, e]) => `${goJsonString(k)}:${goJsonString(typeof e === 'string' ? e : '')}`).join(',')}}`;
    }
    case 'struct': {
      const o = obj(v);
      const parts: string[] = [];
      for (const f of t.fields) {
        const fv = o[f.name];
        if (f.omitempty && isEmpty(f.type, fv)) continue;
        parts.push(`${goJsonString(f.name)}:${marshal(f.type, fv)}`);
      }
      return `{${parts.join(',')}}`;
    }
  }
}

/** What omitempty drops: "", 0, nil, and empty lists and maps (never a struct: a quantity, a time). */
function isEmpty(t: GoType, v: any): boolean {
  switch (t.k) {
    case 'string':
      return !v;
    case 'int':
      return !v;
    case 'ptr':
      return v === null || v === undefined;
    case 'slice':
      return !Array.isArray(v) || v.length === 0;
    case 'map':
      return !isPlainObject(v) || Object.keys(v).length === 0;
    default:
      return false;
  }
}



// ---------------------------------------------------------------------------------------------
// encoding/json Unmarshal of an annotation into the Go types above

/** An annotation that is absent or does not decode (json.Unmarshal returned an error). */
const UNDECODED = Symbol('undecoded');

function decodeAnnotation(annotations: Obj, key: string, t: GoType): any {
  const text = annotations[key];
  if (!Object.prototype.hasOwnProperty.call(annotations, key) || typeof text !== 'string') return UNDECODED;
  const node = parseJSON(text);
  if (node === undefined) return UNDECODED;
  try {
    return decode(t, node, zero(t));
  } catch (e) {
    if (e === MISMATCH) return UNDECODED;
    throw e;
  }
}

/** Thrown where Go reports an UnmarshalTypeError or an UnmarshalJSON error: the whole text is ignored. */
const MISMATCH = new Error('annotation does not decode');

/**
 * node decoded into cur (the value there now) as encoding/json does: null leaves values alone
 * but clears pointers, lists and maps; an existing struct, pointer target, list element or map
 * is decoded into rather than replaced (which matters only for keys given twice).
 */
function decode(t: GoType, node: JNode, cur: any): any {
  switch (t.k) {
    case 'string':
      if (node.t === 'null') return cur;
      if (node.t !== 'str') throw MISMATCH;
      return node.v;
    case 'int': {
      if (node.t === 'null') return cur;
      // strconv.ParseInt of the literal: no fraction, no exponent, in range.
      if (node.t !== 'num' || !/^-?\d+$/.test(node.raw)) throw MISMATCH;
      const n = BigInt(node.raw);
      if (n < t.min || n > t.max) throw MISMATCH;
      return Number(n);
    }
    case 'quantity': {
      // Quantity.UnmarshalJSON: null is zero; quotes are cut off as they are (escapes stay, and fail).
      if (node.t === 'null') return '0';
      const q = node.t === 'str' || node.t === 'num' ? canonicalQuantity(node.raw) : undefined;
      if (q === undefined) throw MISMATCH;
      return q;
    }
    case 'time': {
      // metav1.Time.UnmarshalJSON: null is the zero time, else an RFC3339 string.
      if (node.t === 'null') return null;
      const s = node.t === 'str' ? canonicalTime(node.v) : undefined;
      if (s === undefined) throw MISMATCH;
      return s;
    }
    case 'ptr':
      if (node.t === 'null') return null;
      return decode(t.elem, node, cur ?? zero(t.elem));
    case 'slice':
      if (node.t === 'null') return null;
      if (node.t !== 'arr') throw MISMATCH;
      return node.items.map((item, i) => decode(t.elem, item, Array.isArray(cur) && i < cur.length ? cur[i] : zero(t.elem)));
    case 'map': {
      if (node.t === 'null') return null;
      if (node.t !== 'obj') throw MISMATCH;
      const out: Obj = {};
      if (isPlainObject(cur)) for (const k of Object.keys(cur)) setOwn(out, k, cur[k]);
      // Each value is decoded into a fresh string: a null one is "".
      node.keys.forEach((k, i) => setOwn(out, k, decode(STRING, node.vals[i], '')));
      return out;
    }
    case 'struct': {
      if (node.t === 'null') return cur;
      if (node.t !== 'obj') throw MISMATCH;
      const out: Obj = { ...cur };
      node.keys.forEach((k, i) => {
        const f = fieldFor(t, k);
        if (f) out[f.name] = decode(f.type, node.vals[i], out[f.name]);
      });
      return out;
    }
  }
}

/** The field a key names: exactly, or else by Go's case folding; unknown keys are skipped. */
function fieldFor(t: Extract<GoType, { k: 'struct' }>, key: string): GoField | undefined {
  const exact = t.fields.find((f) => f.name === key);
  if (exact) return exact;
  const folded = foldKey(key);
  return t.fields.find((f) => foldKey(f.name) === folded);
}

/** ASCII case folding, plus the two non-ASCII letters that fold to ASCII (ſ to s, the Kelvin sign to k). */
const foldKey = (s: string): string =>
  s.replace(/[A-Z\u017f\u212a]/g, (c) => (c === '\u017f' ? 's' : c === '\u212a' ? 'k' : c.toLowerCase()));

/**
 * time.Parse(time.RFC3339, s) written back as metav1.Time does (RFC3339 in UTC, whole seconds);
 * undefined when Go would not parse it.
 */
function canonicalTime(s: string): string | undefined {
  const t = parseRFC3339(s);
  return t && formatRFC3339(t.ms);
}

// ---------------------------------------------------------------------------------------------
// JSON text as encoding/json reads it, keeping what JSON.parse loses: number literals (ints are
// range-checked on their text) and the raw text of strings (Quantity.UnmarshalJSON parses it).

type JNode =
  | { t: 'null' | 'true' | 'false' }
  | { t: 'num'; raw: string }
  | { t: 'str'; v: string; raw: string }
  | { t: 'arr'; items: JNode[] }
  | { t: 'obj'; keys: string[]; vals: JNode[] };

type Container = { t: 'arr'; items: JNode[] } | { t: 'obj'; keys: string[]; vals: JNode[]; key: string };

/** encoding/json's limit on nesting. */
const MAX_DEPTH = 10000;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

/** The parsed text, or undefined where Go's scanner reports a syntax error. Iterative: nesting may be deep. */
function parseJSON(text: string): JNode | undefined {
  let i = 0;
  const stack: Container[] = [];
  const skipSpace = (): void => {
    while (i < text.length) {
      const c = text.charCodeAt(i);
      if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) break;
      i++;
    }
  };
  const hex4 = (at: number): number => (/^[0-9a-fA-F]{4}$/.test(text.slice(at, at + 4)) ? parseInt(text.slice(at, at + 4), 16) : -1);
  const readString = (): { v: string; raw: string } | undefined => {
    const start = ++i;
    let v = '';
    while (i < text.length) {
      const c = text[i];
      if (c === '"') {
        const raw = text.slice(start, i++);
        return { v, raw };
      }
      if (c.charCodeAt(0) < 0x20) return undefined;
      if (c !== '\\') {
        // A lone surrogate (from a request's "\ud800") stood for U+FFFD in Go's decoded request.
        const code = c.charCodeAt(0);
        if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length && /[\udc00-\udfff]/.test(text[i + 1])) {
          v += c + text[i + 1];
          i += 2;
        } else {
          v += code >= 0xd800 && code <= 0xdfff ? '\ufffd' : c;
          i++;
        }
        continue;
      }
      const e = text[i + 1];
      if (e !== undefined && ESCAPES[e] !== undefined) {
        v += ESCAPES[e];
        i += 2;
        continue;
      }
      if (e !== 'u') return undefined;
      const r = hex4(i + 2);
      if (r < 0) return undefined;
      i += 6;
      if (r < 0xd800 || r > 0xdfff) {
        v += String.fromCharCode(r);
        continue;
      }
      // A surrogate pair is one character; anything else is U+FFFD (and the next escape is read anew).
      const r2 = text[i] === '\\' && text[i + 1] === 'u' ? hex4(i + 2) : -1;
      if (r <= 0xdbff && r2 >= 0xdc00 && r2 <= 0xdfff) {
        v += String.fromCharCode(r, r2);
        i += 6;
      } else v += '\ufffd';
    }
    return undefined;
  };
  const readKey = (o: Extract<Container, { t: 'obj' }>): boolean => {
    skipSpace();
    if (text[i] !== '"') return false;
    const s = readString();
    if (!s) return false;
    skipSpace();
    if (text[i] !== ':') return false;
    i++;
    o.key = s.v;
    return true;
  };

  for (;;) {
    skipSpace();
    let value: JNode;
    const c = text[i];
    if (c === '{' || c === '[') {
      if (stack.length >= MAX_DEPTH) return undefined;
      i++;
      skipSpace();
      if (c === '{') {
        const o: Container = { t: 'obj', keys: [], vals: [], key: '' };
        if (text[i] === '}') {
          i++;
          value = { t: 'obj', keys: o.keys, vals: o.vals };
        } else {
          if (!readKey(o)) return undefined;
          stack.push(o);
          continue;
        }
      } else if (text[i] === ']') {
        i++;
        value = { t: 'arr', items: [] };
      } else {
        stack.push({ t: 'arr', items: [] });
        continue;
      }
    } else if (c === '"') {
      const s = readString();
      if (!s) return undefined;
      value = { t: 'str', v: s.v, raw: s.raw };
    } else if (c === 't' || c === 'f' || c === 'n') {
      const word: 'true' | 'false' | 'null' = c === 't' ? 'true' : c === 'f' ? 'false' : 'null';
      if (!text.startsWith(word, i)) return undefined;
      i += word.length;
      value = { t: word };
    } else {
      NUMBER.lastIndex = i;
      const m = NUMBER.exec(text);
      if (!m) return undefined;
      i += m[0].length;
      value = { t: 'num', raw: m[0] };
    }
    // Hand the value to its container; close every container that ends after it.
    for (;;) {
      const top = stack[stack.length - 1];
      skipSpace();
      if (!top) return i === text.length ? value : undefined;
      if (top.t === 'arr') top.items.push(value);
      else {
        top.keys.push(top.key);
        top.vals.push(value);
      }
      if (text[i] === ',') {
        i++;
        if (top.t === 'obj' && !readKey(top)) return undefined;
        break;
      }
      if (text[i] !== (top.t === 'arr' ? ']' : '}')) return undefined;
      i++;
      stack.pop();
      value = top.t === 'arr' ? { t: 'arr', items: top.items } : { t: 'obj', keys: top.keys, vals: top.vals };
    }
  }
}
