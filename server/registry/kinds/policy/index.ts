// PodDisruptionBudgets as kube validates their spec (ValidatePodDisruptionBudgetSpec): minAvailable
// or maxUnavailable, not both, each a non-negative number or a percentage of at most 100%; the
// selector; the unhealthy-pod eviction policy. Their spec may change (it may since kube 1.15).
// Also their status defaults. (Evictions, which consult them, are pods': core/pods/eviction.ts.)
import type { Obj, Strategy } from '../../strategy.ts';
import { isPlainObject } from '../../../util/json.ts';
import { validateLabelSelector } from '../../../validation/object-meta.ts';
import { goQuote } from '../../../go/strconv.ts';
import { invalidError, notSupportedError, type FieldError } from '../../../validation/field.ts';
import { notMoreThan100PercentErrors, positiveIntOrPercentErrors } from '../apps/index.ts';
import { statusCounters, statusStruct, type Defaulters } from '../../defaulting.ts';

const EVICTION_POLICIES = ['AlwaysAllow', 'IfHealthyBudget'];

function validateDisruptionBudget(pdb: Obj): FieldError[] {
  const spec: Obj = isPlainObject(pdb.spec) ? pdb.spec : {};
  const errs: FieldError[] = [];
  const set = (v: unknown) => v !== undefined && v !== null;
  // (kube prints the whole spec as Go's %#v, pointer addresses and all)
  if (set(spec.minAvailable) && set(spec.maxUnavailable)) errs.push(invalidError('spec', 'policy.PodDisruptionBudgetSpec{...}', 'minAvailable and maxUnavailable cannot be both set'));
  for (const k of ['minAvailable', 'maxUnavailable']) {
    if (!set(spec[k])) continue;
    errs.push(...positiveIntOrPercentErrors(`spec.${k}`, spec[k]), ...notMoreThan100PercentErrors(`spec.${k}`, spec[k]));
  }
  errs.push(...validateLabelSelector(spec.selector, 'spec.selector'));
  const policy = spec.unhealthyPodEvictionPolicy;
  if (set(policy) && !EVICTION_POLICIES.includes(String(policy))) errs.push(notSupportedError('spec.unhealthyPodEvictionPolicy', goQuote(String(policy)), EVICTION_POLICIES));
  return errs;
}

export const podDisruptionBudgetStrategy: Strategy = { validate: validateDisruptionBudget };

/** PodDisruptionBudgets, by definition. */
export const podDisruptionBudgetDefaults: Defaulters = {
  'io.k8s.api.policy.v1.PodDisruptionBudget': statusStruct,
  'io.k8s.api.policy.v1.PodDisruptionBudgetStatus': statusCounters('disruptionsAllowed', 'currentHealthy', 'desiredHealthy', 'expectedPods'),
};
