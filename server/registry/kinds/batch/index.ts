// Jobs: unless spec.manualSelector, the selector is the server's (kube's jobStrategy
// PrepareForCreate, generateSelector): the template is labelled with the job's name and uid (each
// label under its legacy name too), and spec.selector matches the uid. A job without labels of its
// own carries its template's, as kube's defaulting gives it when the stored job is read back.
// Their spec gets ValidateJobSpec's common checks (validateJobSpec, which CronJobs share); a Job's
// update ValidateJobSpecUpdate's: selector, template (but for a suspended job's scheduling
// directives), completions and completion mode never change. Also the defaults of Jobs and
// CronJobs (SetDefaults_Job, SetDefaults_CronJob); their field set is fields.ts.
import type { Obj, Strategy } from '../../strategy.ts';
import { isPlainObject, semanticEqual } from '../../../util/json.ts';
import { validatePodTemplate } from '../core/pods/validation.ts';
import { withCanonicalQuantities } from '../../../schema/quantities.ts';
import { selectorUpdate } from '../apps/index.ts';
import { invalidError, nonNegativeErrors, notSupportedError, type FieldError } from '../../../validation/field.ts';
import { goQuote } from '../../../go/strconv.ts';
import { absent, emptyMap, setPtr, setZero, statusStruct, struct, templateMetadata, type Defaulters } from '../../defaulting.ts';

const JOB_NAME_LABELS = ['job-name', 'batch.kubernetes.io/job-name'];
const CONTROLLER_UID_LABELS = ['controller-uid', 'batch.kubernetes.io/controller-uid'];
const SELECTED_LABEL = 'batch.kubernetes.io/controller-uid';

/**
 * ValidateJobSpec's common checks at `path` (a Job's "spec", a CronJob's "spec.jobTemplate.spec"):
 * non-negative counts and deadline, the pod template, and a restart policy of OnFailure or Never
 * (a template without one is defaulted to Always and refused).
 */
function validateJobSpec(spec: unknown, path: string): FieldError[] {
  if (!isPlainObject(spec)) return [];
  const errs: FieldError[] = [];
  for (const k of ['parallelism', 'completions', 'activeDeadlineSeconds', 'backoffLimit']) errs.push(...nonNegativeErrors(`${path}.${k}`, spec[k]));
  errs.push(...validatePodTemplate(spec.template, `${path}.template`));
  const restartPolicy = isPlainObject(spec.template) && isPlainObject(spec.template.spec) ? spec.template.spec.restartPolicy : undefined;
  if (restartPolicy !== undefined && restartPolicy !== 'OnFailure' && restartPolicy !== 'Never') {
    errs.push(notSupportedError(`${path}.template.spec.restartPolicy`, goQuote(String(restartPolicy)), ['OnFailure', 'Never']));
  }
  return errs;
}

const IMMUTABLE = 'field is immutable';

/**
 * ValidateJobSpecUpdate: completions (but an Indexed job's, changed with parallelism), the
 * selector, the template and the completion mode are immutable. A suspended job that never ran
 * may change its template's scheduling directives, labels and annotations. kube prints the whole
 * PodTemplateSpec as Go's %#v (with pointer addresses); hearth prints `core.PodTemplateSpec{...}`.
 */
function jobUpdateErrors(job: Obj, old: Obj): FieldError[] {
  const spec: Obj = isPlainObject(job.spec) ? job.spec : {};
  const was: Obj = isPlainObject(old.spec) ? old.spec : {};
  const errs: FieldError[] = [];
  if (!semanticEqual(spec.completions, was.completions)) {
    if (spec.completionMode !== 'Indexed') errs.push(invalidError('spec.completions', spec.completions == null ? '"null"' : String(spec.completions), IMMUTABLE));
    else if (spec.completions != null && spec.completions !== spec.parallelism) errs.push(invalidError('spec.completions', String(spec.completions), 'can only be modified in tandem with spec.parallelism'));
  }
  errs.push(...selectorUpdate(job, old));
  const template = spec.template;
  const oldTemplate: Obj = isPlainObject(was.template) ? withCanonicalQuantities('io.k8s.api.core.v1.PodTemplateSpec', was.template) : {};
  if (spec.suspend === true && old.status?.startTime == null && isPlainObject(template)) {
    const meta: Obj = isPlainObject(template.metadata) ? template.metadata : {};
    const podSpec: Obj = isPlainObject(template.spec) ? template.spec : {};
    oldTemplate.metadata = { ...oldTemplate.metadata, labels: meta.labels, annotations: meta.annotations };
    oldTemplate.spec = { ...oldTemplate.spec, nodeSelector: podSpec.nodeSelector, tolerations: podSpec.tolerations, affinity: podSpec.affinity, schedulingGates: podSpec.schedulingGates };
  }
  if (!semanticEqual(template, oldTemplate)) errs.push(invalidError('spec.template', 'core.PodTemplateSpec{...}', IMMUTABLE));
  if ((spec.completionMode ?? null) !== (was.completionMode ?? null)) errs.push(invalidError('spec.completionMode', spec.completionMode == null ? '"null"' : goQuote(String(spec.completionMode)), IMMUTABLE));
  return errs;
}

export const jobStrategy: Strategy = {
  validate: (job) => validateJobSpec(job.spec, 'spec'),
  // (a status write carries the spec over)
  validateUpdate: (job, old, subresource) => [...validateJobSpec(job.spec, 'spec'), ...(subresource === '' ? jobUpdateErrors(job, old) : [])],
  prepareForCreate(job) {
    const spec = isPlainObject(job.spec) ? job.spec : (job.spec = {});
    if (spec.manualSelector !== true) {
      const template = isPlainObject(spec.template) ? spec.template : (spec.template = {});
      const meta = isPlainObject(template.metadata) ? template.metadata : (template.metadata = {});
      const labels = isPlainObject(meta.labels) ? meta.labels : (meta.labels = {});
      // Labels the user set are kept (a conflicting one fails validation in kube).
      for (const k of JOB_NAME_LABELS) if (!(k in labels)) labels[k] = job.metadata.name;
      for (const k of CONTROLLER_UID_LABELS) if (!(k in labels)) labels[k] = job.metadata.uid;
      const selector = isPlainObject(spec.selector) ? spec.selector : (spec.selector = {});
      const matchLabels = isPlainObject(selector.matchLabels) ? selector.matchLabels : (selector.matchLabels = {});
      if (!(SELECTED_LABEL in matchLabels)) matchLabels[SELECTED_LABEL] = job.metadata.uid;
    }
    const own = job.metadata.labels;
    const templateLabels = spec.template?.metadata?.labels;
    if ((!isPlainObject(own) || Object.keys(own).length === 0) && isPlainObject(templateLabels) && Object.keys(templateLabels).length > 0) job.metadata.labels = { ...templateLabels };
  },
};

export const cronJobStrategy: Strategy = { validate: (cj) => validateJobSpec(cj.spec?.jobTemplate?.spec, 'spec.jobTemplate.spec') };

function job(j: Obj): void {
  statusStruct(j);
  const spec = struct(j, 'spec');
  if (!spec) return;
  if (absent(spec.completions) && absent(spec.parallelism)) {
    spec.completions = 1;
    spec.parallelism = 1;
  }
  setPtr(spec, 'parallelism', 1);
  if (absent(spec.backoffLimit)) spec.backoffLimit = absent(spec.backoffLimitPerIndex) ? 6 : 2147483647;
  const labels = isPlainObject(spec.template) && isPlainObject(spec.template.metadata) ? spec.template.metadata.labels : undefined;
  if (isPlainObject(labels)) {
    const meta = struct(j, 'metadata');
    if (meta && emptyMap(meta.labels)) meta.labels = { ...labels };
  }
  setPtr(spec, 'completionMode', 'NonIndexed');
  setPtr(spec, 'suspend', false);
  // JobPodReplacementPolicy: GA.
  setPtr(spec, 'podReplacementPolicy', absent(spec.podFailurePolicy) ? 'TerminatingOrFailed' : 'Failed');
  setPtr(spec, 'manualSelector', false);
}

function cronJob(cj: Obj): void {
  statusStruct(cj);
  const spec = struct(cj, 'spec');
  if (!spec) return;
  setZero(spec, 'concurrencyPolicy', 'Allow');
  setPtr(spec, 'suspend', false);
  setPtr(spec, 'successfulJobsHistoryLimit', 3);
  setPtr(spec, 'failedJobsHistoryLimit', 1);
}

/** Jobs and CronJobs, by definition. */
export const batchDefaults: Defaulters = {
  'io.k8s.api.batch.v1.Job': job,
  'io.k8s.api.batch.v1.CronJob': cronJob,
  'io.k8s.api.batch.v1.JobTemplateSpec': templateMetadata,
  'io.k8s.api.batch.v1.PodFailurePolicyOnPodConditionsPattern': (p) => setZero(p, 'status', 'True'),
};
