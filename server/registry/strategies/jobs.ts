// Jobs: unless spec.manualSelector, the selector is the server's (kube's jobStrategy
// PrepareForCreate, generateSelector): the template is labelled with the job's name and uid (each
// label under its legacy name too), and spec.selector matches the uid. A job without labels of its
// own carries its template's, as kube's defaulting gives it when the stored job is read back.
// Their spec gets ValidateJobSpec's common checks (validateJobSpec, which CronJobs share).
import { registerStrategy } from '../strategy.ts';
import { isPlainObject } from '../../util/json.ts';
import { validatePodTemplate } from '../pod-validation.ts';
import type { FieldError } from '../../schema/types.ts';
import { nonNegativeErrors, notSupportedError } from '../crd/schema-validator.ts';
import { goQuote } from '../metadata-validation.ts';

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

registerStrategy('batch', 'jobs', {
  validate: (job) => validateJobSpec(job.spec, 'spec'),
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
});

registerStrategy('batch', 'cronjobs', { validate: (cj) => validateJobSpec(cj.spec?.jobTemplate?.spec, 'spec.jobTemplate.spec') });
