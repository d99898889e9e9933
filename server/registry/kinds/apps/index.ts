// Validation of the pod controllers in apps/v1 (kube's ValidateDeploymentSpec,
// ValidateReplicaSetSpec, ValidateStatefulSetSpec, ValidateDaemonSetSpec), the rules users meet:
// counts that may not be negative, a selector that selects something and matches the pod
// template's labels, templates that restart Always, Deployment rolling-update bounds. Messages
// and bad values are rendered as kube renders them (Go's %#v where it prints one). The schema walk
// has already reported a missing selector or template. Pod templates get core/pods/validation.ts's
// checks, here, in replication controllers and pod templates (core/), and in jobs and cronjobs
// (batch/); pods get them on their own spec (core/pods/strategy.ts). A StatefulSet's
// template is the exception, as in kube: only its labels and annotations are checked.
// Also the workloads' defaults (SetDefaults_Deployment, _DaemonSet, _StatefulSet, _ReplicaSet).
import type { Obj, Strategy } from '../../strategy.ts';
import { deepEqual, isPlainObject } from '../../../util/json.ts';
import { labelSelectorFromObject } from '../../selectors.ts';
import { goQuote } from '../../../go/strconv.ts';
import { forbiddenError, goValue, invalidError, nonNegativeErrors, notSupportedError, type FieldError } from '../../../validation/field.ts';
import { validatePodTemplate, validatePodTemplateMetadata } from '../core/pods/validation.ts';
import { setPtr, setZero, statusCounters, statusStruct, struct, zero, type Defaulters } from '../../defaulting.ts';

/** A map[string]string as Go's %#v prints it (keys sorted; nil when absent). */
function goStringMap(m: unknown): string {
  if (!isPlainObject(m)) return 'map[string]string(nil)';
  const keys = Object.keys(m).sort();
  return `map[string]string{${keys.map((k) => `${goQuote(k)}:${goQuote(String(m[k]))}`).join(', ')}}`;
}

/** A []string as %#v prints it. */
function goStrings(v: unknown): string {
  return Array.isArray(v) ? `[]string{${v.map((x) => goQuote(String(x))).join(', ')}}` : '[]string(nil)';
}

/** A LabelSelector struct as %#v prints it (field.Invalid dereferences the *LabelSelector). */
function goLabelSelector(sel: Obj): string {
  const ml = sel.matchLabels === undefined || sel.matchLabels === null ? 'map[string]string(nil)' : goStringMap(sel.matchLabels);
  const requirement = (r: unknown): string => {
    const o: Obj = isPlainObject(r) ? r : {};
    return `v1.LabelSelectorRequirement{Key:${goQuote(String(o.key ?? ''))}, Operator:${goQuote(String(o.operator ?? ''))}, Values:${goStrings(o.values)}}`;
  };
  const me = Array.isArray(sel.matchExpressions) ? `[]v1.LabelSelectorRequirement{${sel.matchExpressions.map(requirement).join(', ')}}` : '[]v1.LabelSelectorRequirement(nil)';
  return `v1.LabelSelector{MatchLabels:${ml}, MatchExpressions:${me}}`;
}

/**
 * The selector and the pod template of a pod controller (the selector checks, then
 * ValidatePodTemplateSpecForReplicaSet), with the nouns each kind's validation words its
 * messages with. A StatefulSet's template (ValidatePodTemplateSpecForStatefulSet) has its labels
 * and annotations checked but not its pod spec (`podSpecChecked` false): kube leaves that out,
 * since a container may mount a volume that only a volumeClaimTemplate provides.
 */
function selectorAndTemplate(errs: FieldError[], spec: Obj, emptySelectorNoun: string, templateNoun: string, podSpecChecked = true): void {
  const sel = spec.selector;
  let selector: ReturnType<typeof labelSelectorFromObject> | undefined;
  if (isPlainObject(sel)) {
    const count = (isPlainObject(sel.matchLabels) ? Object.keys(sel.matchLabels).length : 0) + (Array.isArray(sel.matchExpressions) ? sel.matchExpressions.length : 0);
    if (count === 0) errs.push(invalidError('spec.selector', goLabelSelector(sel), `empty selector is invalid for ${emptySelectorNoun}`));
    try {
      selector = labelSelectorFromObject(sel);
    } catch {
      errs.push(invalidError('spec.selector', goLabelSelector(sel), 'invalid label selector'));
    }
  }
  const template = spec.template;
  if (!isPlainObject(template)) return;
  const labels = isPlainObject(template.metadata) ? template.metadata.labels : undefined;
  if (selector && !selector.empty && !selector.matches(isPlainObject(labels) ? labels : {})) {
    errs.push(invalidError('spec.template.metadata.labels', goStringMap(labels), '`selector` does not match template `labels`'));
  }
  errs.push(...(podSpecChecked ? validatePodTemplate(template, 'spec.template') : validatePodTemplateMetadata(template, 'spec.template')));
  const podSpec = isPlainObject(template.spec) ? template.spec : {};
  if (podSpec.restartPolicy !== undefined && podSpec.restartPolicy !== 'Always') {
    errs.push(notSupportedError('spec.template.spec.restartPolicy', goQuote(String(podSpec.restartPolicy)), ['Always']));
  }
  if (podSpec.activeDeadlineSeconds !== undefined && podSpec.activeDeadlineSeconds !== null) {
    errs.push(forbiddenError('spec.template.spec.activeDeadlineSeconds', `activeDeadlineSeconds in ${templateNoun} is not Supported`));
  }
}

/** An IntOrString value as %#v prints the struct (its String method has a pointer receiver). */
function goIntOrString(v: unknown): string {
  return typeof v === 'string' ? `intstr.IntOrString{Type:1, IntVal:0, StrVal:${goQuote(v)}}` : `intstr.IntOrString{Type:0, IntVal:${goValue(v ?? 0)}, StrVal:""}`;
}

const PERCENT = /^[0-9]+%$/;
const PERCENT_MESSAGE = "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')";

/** getIntOrPercentValue: the number, or a percentage's number; and whether it was a percentage. */
function intOrPercent(v: unknown): { value: number; percent: boolean } {
  if (typeof v === 'string') return { value: PERCENT.test(v) ? Number(v.slice(0, -1)) : 0, percent: true };
  return { value: typeof v === 'number' ? v : 0, percent: false };
}

/** ValidatePositiveIntOrPercent: a non-negative number, or a percentage. */
export function positiveIntOrPercentErrors(field: string, v: unknown): FieldError[] {
  if (typeof v === 'string' && !PERCENT.test(v)) return [invalidError(field, goIntOrString(v), PERCENT_MESSAGE)];
  return nonNegativeErrors(field, v);
}

/** IsNotMoreThan100Percent. */
export function notMoreThan100PercentErrors(field: string, v: unknown): FieldError[] {
  const p = intOrPercent(v);
  return p.percent && p.value > 100 ? [invalidError(field, goIntOrString(v), 'must not be greater than 100%')] : [];
}

/** ValidateRollingUpdateDeployment. */
function rollingUpdate(errs: FieldError[], ru: Obj): void {
  const base = 'spec.strategy.rollingUpdate';
  for (const k of ['maxUnavailable', 'maxSurge']) errs.push(...positiveIntOrPercentErrors(`${base}.${k}`, ru[k]));
  if (intOrPercent(ru.maxUnavailable).value === 0 && intOrPercent(ru.maxSurge).value === 0) {
    errs.push(invalidError(`${base}.maxUnavailable`, goIntOrString(ru.maxUnavailable), 'may not be 0 when `maxSurge` is 0'));
  }
  errs.push(...notMoreThan100PercentErrors(`${base}.maxUnavailable`, ru.maxUnavailable));
}

function validateDeployment(d: Obj): FieldError[] {
  const errs: FieldError[] = [];
  const spec: Obj = isPlainObject(d.spec) ? d.spec : {};
  errs.push(...nonNegativeErrors('spec.replicas', spec.replicas));
  selectorAndTemplate(errs, spec, 'deployment', 'ReplicaSet');
  const strategy = spec.strategy;
  if (isPlainObject(strategy)) {
    if (strategy.type === 'Recreate' && strategy.rollingUpdate !== undefined && strategy.rollingUpdate !== null) {
      errs.push(forbiddenError('spec.strategy.rollingUpdate', "may not be specified when strategy `type` is 'Recreate'"));
    } else if (strategy.type === 'RollingUpdate' && isPlainObject(strategy.rollingUpdate)) rollingUpdate(errs, strategy.rollingUpdate);
  }
  errs.push(...nonNegativeErrors('spec.minReadySeconds', spec.minReadySeconds));
  errs.push(...nonNegativeErrors('spec.revisionHistoryLimit', spec.revisionHistoryLimit));
  if (typeof spec.progressDeadlineSeconds === 'number') {
    errs.push(...nonNegativeErrors('spec.progressDeadlineSeconds', spec.progressDeadlineSeconds));
    if (spec.progressDeadlineSeconds <= (typeof spec.minReadySeconds === 'number' ? spec.minReadySeconds : 0)) {
      errs.push(invalidError('spec.progressDeadlineSeconds', goValue(spec.progressDeadlineSeconds), 'must be greater than minReadySeconds'));
    }
  }
  return errs;
}

function validateReplicaSet(rs: Obj): FieldError[] {
  const errs: FieldError[] = [];
  const spec: Obj = isPlainObject(rs.spec) ? rs.spec : {};
  errs.push(...nonNegativeErrors('spec.replicas', spec.replicas));
  errs.push(...nonNegativeErrors('spec.minReadySeconds', spec.minReadySeconds));
  // (kube's ReplicaSet validation words its empty selector as the Deployment one does)
  selectorAndTemplate(errs, spec, 'deployment', 'ReplicaSet');
  return errs;
}

/** What kube's StatefulSet validation never looks at: the schema's required fields are not enforced there either. */
const STATEFULSET_UNVALIDATED = ['spec.template.spec', 'spec.volumeClaimTemplates'];

function validateStatefulSet(ss: Obj): FieldError[] {
  const errs: FieldError[] = [];
  const spec: Obj = isPlainObject(ss.spec) ? ss.spec : {};
  errs.push(...nonNegativeErrors('spec.replicas', spec.replicas));
  errs.push(...nonNegativeErrors('spec.minReadySeconds', spec.minReadySeconds));
  selectorAndTemplate(errs, spec, 'statefulset', 'StatefulSet', false);
  return errs;
}

function validateDaemonSet(ds: Obj): FieldError[] {
  const errs: FieldError[] = [];
  const spec: Obj = isPlainObject(ds.spec) ? ds.spec : {};
  selectorAndTemplate(errs, spec, 'daemonset', 'DaemonSet');
  errs.push(...nonNegativeErrors('spec.minReadySeconds', spec.minReadySeconds));
  errs.push(...nonNegativeErrors('spec.revisionHistoryLimit', spec.revisionHistoryLimit));
  return errs;
}

/** A selector as apiequality.Semantic compares it: an empty map or list is the same as none. */
function semanticSelector(sel: unknown): unknown {
  if (!isPlainObject(sel)) return null;
  const ml = isPlainObject(sel.matchLabels) && Object.keys(sel.matchLabels).length ? sel.matchLabels : null;
  const me = Array.isArray(sel.matchExpressions) && sel.matchExpressions.length ? sel.matchExpressions : null;
  return { ml, me };
}

/** apps/v1 and Job selectors never change (the strategies' ValidateImmutableField, after the spec checks). */
export function selectorUpdate(obj: Obj, old: Obj): FieldError[] {
  const sel = obj.spec?.selector;
  if (deepEqual(semanticSelector(sel), semanticSelector(old.spec?.selector))) return [];
  return [invalidError('spec.selector', isPlainObject(sel) ? goLabelSelector(sel) : 'null', 'field is immutable')];
}

/** What a StatefulSet update may change in spec (ValidateStatefulSetUpdate). */
const STATEFULSET_MUTABLE = ['replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy', 'minReadySeconds'];

function statefulSetUpdate(ss: Obj, old: Obj): FieldError[] {
  const rest = (spec: unknown): Obj => {
    const copy: Obj = isPlainObject(spec) ? { ...spec } : {};
    for (const k of STATEFULSET_MUTABLE) delete copy[k];
    return copy;
  };
  const errs = validateStatefulSet(ss);
  if (!deepEqual(rest(ss.spec), rest(old.spec))) {
    errs.push(forbiddenError('spec', "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"));
  }
  return errs;
}

export const deploymentStrategy: Strategy = { validate: validateDeployment, validateUpdate: (d, old) => [...validateDeployment(d), ...selectorUpdate(d, old)] };
export const replicaSetStrategy: Strategy = { validate: validateReplicaSet, validateUpdate: (rs, old) => [...validateReplicaSet(rs), ...selectorUpdate(rs, old)] };
export const statefulSetStrategy: Strategy = { validate: validateStatefulSet, validateUpdate: statefulSetUpdate, unvalidated: STATEFULSET_UNVALIDATED };
export const daemonSetStrategy: Strategy = { validate: validateDaemonSet, validateUpdate: (ds, old) => [...validateDaemonSet(ds), ...selectorUpdate(ds, old)] };

function deployment(d: Obj): void {
  statusStruct(d);
  const spec = struct(d, 'spec');
  if (!spec) return;
  setPtr(spec, 'replicas', 1);
  const strategy = struct(spec, 'strategy');
  if (strategy) {
    setZero(strategy, 'type', 'RollingUpdate');
    if (strategy.type === 'RollingUpdate') {
      const ru = struct(strategy, 'rollingUpdate');
      if (ru) {
        setPtr(ru, 'maxUnavailable', '25%');
        setPtr(ru, 'maxSurge', '25%');
      }
    }
  }
  setPtr(spec, 'revisionHistoryLimit', 10);
  setPtr(spec, 'progressDeadlineSeconds', 600);
}

function daemonSet(ds: Obj): void {
  statusStruct(ds);
  const spec = struct(ds, 'spec');
  if (!spec) return;
  const us = struct(spec, 'updateStrategy');
  if (us) {
    setZero(us, 'type', 'RollingUpdate');
    if (us.type === 'RollingUpdate') {
      const ru = struct(us, 'rollingUpdate');
      if (ru) {
        setPtr(ru, 'maxUnavailable', 1);
        setPtr(ru, 'maxSurge', 0);
      }
    }
  }
  setPtr(spec, 'revisionHistoryLimit', 10);
}

function statefulSet(ss: Obj): void {
  statusStruct(ss);
  const spec = struct(ss, 'spec');
  if (!spec) return;
  setZero(spec, 'podManagementPolicy', 'OrderedReady');
  const us = struct(spec, 'updateStrategy');
  if (us) {
    if (zero(us.type)) {
      us.type = 'RollingUpdate';
      setPtr(us, 'rollingUpdate', {});
    }
    if (us.type === 'RollingUpdate' && isPlainObject(us.rollingUpdate)) {
      setPtr(us.rollingUpdate, 'partition', 0);
      // MaxUnavailableStatefulSet: beta, enabled by default.
      setPtr(us.rollingUpdate, 'maxUnavailable', 1);
    }
  }
  // StatefulSetAutoDeletePVC: GA.
  const retention = struct(spec, 'persistentVolumeClaimRetentionPolicy');
  if (retention) {
    setZero(retention, 'whenDeleted', 'Retain');
    setZero(retention, 'whenScaled', 'Retain');
  }
  setPtr(spec, 'replicas', 1);
  setPtr(spec, 'revisionHistoryLimit', 10);
  // Not defaults: Go fields without omitempty, written even when unset.
  setPtr(spec, 'serviceName', '');
  if (isPlainObject(spec.ordinals)) setPtr(spec.ordinals, 'start', 0);
}

/** apps/v1's workloads, by definition. */
export const appsDefaults: Defaulters = {
  'io.k8s.api.apps.v1.Deployment': deployment,
  'io.k8s.api.apps.v1.ReplicaSetStatus': statusCounters('replicas'),
  'io.k8s.api.apps.v1.StatefulSetStatus': statusCounters('replicas', 'availableReplicas'),
  'io.k8s.api.apps.v1.DaemonSetStatus': statusCounters('currentNumberScheduled', 'numberMisscheduled', 'desiredNumberScheduled', 'numberReady'),
  'io.k8s.api.apps.v1.DaemonSet': daemonSet,
  'io.k8s.api.apps.v1.StatefulSet': statefulSet,
  'io.k8s.api.apps.v1.ReplicaSet': (rs) => {
    statusStruct(rs);
    const spec = struct(rs, 'spec');
    if (spec) setPtr(spec, 'replicas', 1);
  },
};
