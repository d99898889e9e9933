// Jobs: unless spec.manualSelector, the selector is the server's (kube's jobStrategy
// PrepareForCreate, generateSelector): the template is labelled with the job's name and uid (each
// label under its legacy name too), and spec.selector matches the uid. A job without labels of its
// own carries its template's, as kube's defaulting gives it when the stored job is read back.
import { registerStrategy } from '../strategy.ts';
import { isPlainObject } from '../../util/json.ts';
import { validatePodTemplate } from '../pod-validation.ts';

const JOB_NAME_LABELS = ['job-name', 'batch.kubernetes.io/job-name'];
const CONTROLLER_UID_LABELS = ['controller-uid', 'batch.kubernetes.io/controller-uid'];
const SELECTED_LABEL = 'batch.kubernetes.io/controller-uid';

registerStrategy('batch', 'jobs', {
  validate: (job) => validatePodTemplate(job.spec?.template, 'spec.template'),
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
