// HorizontalPodAutoscalers as kube validates them (ValidateHorizontalPodAutoscaler): replica
// bounds, the scale target, then the metrics, then the scaling behavior. kube validates the
// internal (v2) form of either version, so what an autoscaling/v1 object holds is reported where
// v2 holds it. Quantities that are not positive are printed quoted (kube prints Go's %#v of the Quantity).
import type { Obj, Strategy } from '../../../strategy.ts';
import { isPlainObject } from '../../../../util/json.ts';
import { isPathSegmentName } from '../../../../validation/names.ts';
import { goQuote } from '../../../../go/strconv.ts';
import { forbiddenError, invalidError, notSupportedError, requiredError, type FieldError } from '../../../../validation/field.ts';
import { parseQuantity } from '../../../../util/quantity.ts';
import { convertHorizontalPodAutoscaler } from './conversion.ts';

const HUB_VERSION = 'autoscaling/v2';

const obj = (v: unknown): Obj => (isPlainObject(v) ? v : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

const METRIC_SOURCE_TYPES = ['ContainerResource', 'External', 'Object', 'Pods', 'Resource'];
/** The member each metric type fills, in the order validateMetricSpec looks at them. */
const SOURCE_FIELDS: [string, string][] = [
  ['object', 'Object'],
  ['external', 'External'],
  ['pods', 'Pods'],
  ['resource', 'Resource'],
  ['containerResource', 'ContainerResource'],
];
const TARGET_TYPES = ['Utilization', 'Value', 'AverageValue'];
const POLICY_TYPES = ['Percent', 'Pods'];
const SELECT_POLICIES = ['Disabled', 'Max', 'Min'];
const MAX_STABILIZATION_WINDOW_SECONDS = 3600;
const MAX_PERIOD_SECONDS = 1800;

/** ValidateCrossVersionObjectReference: kind and name, each a valid path segment. */
function objectReferenceErrors(errs: FieldError[], ref: Obj, path: string): void {
  for (const f of ['kind', 'name']) {
    const v = str(ref[f]);
    if (v === '') errs.push(requiredError(`${path}.${f}`));
    else for (const m of isPathSegmentName(v)) errs.push(invalidError(`${path}.${f}`, goQuote(v), m));
  }
}

function metricIdentifierErrors(errs: FieldError[], id: Obj, path: string): void {
  const name = str(id.name);
  if (name === '') errs.push(requiredError(`${path}.name`, 'must specify a metric name'));
  else for (const m of isPathSegmentName(name)) errs.push(invalidError(`${path}.name`, goQuote(name), m));
}

/** A quantity that is set and not positive (Sign() != 1). */
const notPositive = (q: unknown): boolean => {
  if (q === undefined || q === null) return false;
  const r = parseQuantity(String(q));
  return r !== undefined && r.num <= 0n;
};

function metricTargetErrors(errs: FieldError[], t: Obj, path: string): void {
  const type = str(t.type);
  if (type === '') errs.push(requiredError(`${path}.type`, 'must specify a metric target type'));
  if (!TARGET_TYPES.includes(type)) errs.push(invalidError(`${path}.type`, goQuote(type), 'must be either Utilization, Value, or AverageValue'));
  if (notPositive(t.value)) errs.push(invalidError(`${path}.value`, goQuote(String(t.value)), 'must be positive'));
  if (notPositive(t.averageValue)) errs.push(invalidError(`${path}.averageValue`, goQuote(String(t.averageValue)), 'must be positive'));
  if (typeof t.averageUtilization === 'number' && t.averageUtilization < 1) errs.push(invalidError(`${path}.averageUtilization`, String(t.averageUtilization), 'must be greater than 0'));
}

const has = (v: unknown): boolean => v !== undefined && v !== null;

/** validateObjectSource, validateExternalSource, ...: what each kind of metric source needs. */
function sourceErrors(errs: FieldError[], field: string, src: Obj, path: string): void {
  const target = obj(src.target);
  switch (field) {
    case 'object':
      objectReferenceErrors(errs, obj(src.describedObject), `${path}.describedObject`);
      metricIdentifierErrors(errs, obj(src.metric), `${path}.metric`);
      metricTargetErrors(errs, target, `${path}.target`);
      if (!has(target.value) && !has(target.averageValue)) errs.push(requiredError(`${path}.target.averageValue`, 'must set either a target value or averageValue'));
      return;
    case 'external':
      metricIdentifierErrors(errs, obj(src.metric), `${path}.metric`);
      metricTargetErrors(errs, target, `${path}.target`);
      if (!has(target.value) && !has(target.averageValue)) errs.push(requiredError(`${path}.target.averageValue`, 'must set either a target value for metric or a per-pod target'));
      if (has(target.value) && has(target.averageValue)) errs.push(forbiddenError(`${path}.target.value`, 'may not set both a target value for metric and a per-pod target'));
      return;
    case 'pods':
      metricIdentifierErrors(errs, obj(src.metric), `${path}.metric`);
      metricTargetErrors(errs, target, `${path}.target`);
      if (!has(target.averageValue)) errs.push(requiredError(`${path}.target.averageValue`, 'must specify a positive target averageValue'));
      return;
    default: {
      // resource, containerResource
      if (str(src.name) === '') errs.push(requiredError(`${path}.name`, 'must specify a resource name'));
      if (field === 'containerResource' && str(src.container) === '') errs.push(requiredError(`${path}.container`, 'must specify a container'));
      metricTargetErrors(errs, target, `${path}.target`);
      if (!has(target.averageUtilization) && !has(target.averageValue)) errs.push(requiredError(`${path}.target.averageUtilization`, 'must set either a target raw value or a target utilization'));
      if (has(target.averageUtilization) && has(target.averageValue)) errs.push(forbiddenError(`${path}.target.averageValue`, 'may not set both a target raw value and a target utilization'));
    }
  }
}

/** validateMetricSpec: a known type, its source filled (the first one filled is validated) and no other. */
function metricErrors(errs: FieldError[], m: Obj, path: string): void {
  const type = str(m.type);
  if (type === '') errs.push(requiredError(`${path}.type`, 'must specify a metric source type'));
  if (!METRIC_SOURCE_TYPES.includes(type)) errs.push(notSupportedError(`${path}.type`, goQuote(type), METRIC_SOURCE_TYPES));
  const present = SOURCE_FIELDS.filter(([f]) => has(m[f])).map(([f]) => f);
  if (present.length) sourceErrors(errs, present[0], obj(m[present[0]]), `${path}.${present[0]}`);
  const expected = SOURCE_FIELDS.find(([, t]) => t === type)?.[0];
  if (expected === undefined) errs.push(notSupportedError(`${path}.type`, goQuote(type), METRIC_SOURCE_TYPES));
  else if (!has(m[expected])) errs.push(requiredError(`${path}.${expected}`, 'must populate information for the given metric source'));
  if (present.length !== 1) {
    for (const f of present.filter((f) => f !== expected).sort()) errs.push(forbiddenError(`${path}.${f}`, 'must populate the given metric source only'));
  }
}

function scalingRulesErrors(errs: FieldError[], rules: unknown, path: string): void {
  if (!isPlainObject(rules)) return;
  const window = rules.stabilizationWindowSeconds;
  if (typeof window === 'number' && window < 0) errs.push(invalidError(`${path}.stabilizationWindowSeconds`, String(window), 'must be greater than or equal to zero'));
  if (typeof window === 'number' && window > MAX_STABILIZATION_WINDOW_SECONDS) {
    errs.push(invalidError(`${path}.stabilizationWindowSeconds`, String(window), `must be less than or equal to ${MAX_STABILIZATION_WINDOW_SECONDS}`));
  }
  if (has(rules.selectPolicy) && !SELECT_POLICIES.includes(str(rules.selectPolicy))) errs.push(notSupportedError(`${path}.selectPolicy`, goQuote(str(rules.selectPolicy)), SELECT_POLICIES));
  const policies: unknown[] = Array.isArray(rules.policies) ? rules.policies : [];
  if (policies.length === 0) errs.push(requiredError(`${path}.policies`, 'must specify at least one Policy'));
  policies.forEach((p, i) => {
    const policy = obj(p);
    const at = `${path}.policies[${i}]`;
    if (!POLICY_TYPES.includes(str(policy.type))) errs.push(notSupportedError(`${at}.type`, goQuote(str(policy.type)), POLICY_TYPES));
    const value = typeof policy.value === 'number' ? policy.value : 0;
    if (value <= 0) errs.push(invalidError(`${at}.value`, String(value), 'must be greater than zero'));
    const period = typeof policy.periodSeconds === 'number' ? policy.periodSeconds : 0;
    if (period <= 0) errs.push(invalidError(`${at}.periodSeconds`, String(period), 'must be greater than zero'));
    if (period > MAX_PERIOD_SECONDS) errs.push(invalidError(`${at}.periodSeconds`, String(period), `must be less than or equal to ${MAX_PERIOD_SECONDS}`));
  });
}

function validateAutoscaler(given: Obj): FieldError[] {
  // The v2 form either version converts to (an autoscaling/v1 target CPU becomes a metric).
  const hpa = given.apiVersion === HUB_VERSION ? given : convertHorizontalPodAutoscaler(given, HUB_VERSION);
  const spec = obj(hpa.spec);
  const errs: FieldError[] = [];
  const min = spec.minReplicas;
  const max = typeof spec.maxReplicas === 'number' ? spec.maxReplicas : 0;
  if (typeof min === 'number' && min < 1) errs.push(invalidError('spec.minReplicas', String(min), 'must be greater than or equal to 1'));
  if (max < 1) errs.push(invalidError('spec.maxReplicas', String(max), 'must be greater than 0'));
  if (typeof min === 'number' && max < min) errs.push(invalidError('spec.maxReplicas', String(max), 'must be greater than or equal to `minReplicas`'));
  // The target first; the metrics only when it is valid, the behavior only when they are.
  const refErrs: FieldError[] = [];
  objectReferenceErrors(refErrs, obj(spec.scaleTargetRef), 'spec.scaleTargetRef');
  if (refErrs.length) return [...errs, ...refErrs];
  const metricErrs: FieldError[] = [];
  (Array.isArray(spec.metrics) ? spec.metrics : []).forEach((m: unknown, i: number) => metricErrors(metricErrs, obj(m), `spec.metrics[${i}]`));
  if (metricErrs.length) return [...errs, ...metricErrs];
  if (isPlainObject(spec.behavior)) {
    scalingRulesErrors(errs, spec.behavior.scaleUp, 'spec.behavior.scaleUp');
    scalingRulesErrors(errs, spec.behavior.scaleDown, 'spec.behavior.scaleDown');
  }
  return errs;
}

export const horizontalPodAutoscalerStrategy: Strategy = { validate: validateAutoscaler };
