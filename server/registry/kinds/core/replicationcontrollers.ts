// ReplicationControllers: validated as kube's ValidateReplicationController checks their pod
// template (core/pods/), defaulted as SetDefaults_ReplicationController (selector and labels from
// the template).
import { intField as n, type KindFields, type Strategy, type Obj } from '../../strategy.ts';
import { validatePodTemplate } from './pods/validation.ts';
import { CORE, emptyMap, setPtr, statusCounters, statusStruct, struct, type Defaulters } from '../../defaulting.ts';
import { isPlainObject } from '../../../util/json.ts';

export const replicationControllerStrategy: Strategy = { validate: (rc) => validatePodTemplate(rc.spec?.template, 'spec.template') };

function replicationController(rc: Obj): void {
  statusStruct(rc);
  const spec = struct(rc, 'spec');
  if (!spec) return;
  const labels = isPlainObject(spec.template) && isPlainObject(spec.template.metadata) ? spec.template.metadata.labels : undefined;
  if (isPlainObject(labels)) {
    if (emptyMap(spec.selector)) spec.selector = { ...labels };
    const meta = struct(rc, 'metadata');
    if (meta && emptyMap(meta.labels)) meta.labels = { ...labels };
  }
  setPtr(spec, 'replicas', 1);
}

/** ReplicationControllers, by definition. */
export const replicationControllerDefaults: Defaulters = {
  [`${CORE}ReplicationController`]: replicationController,
  [`${CORE}ReplicationControllerStatus`]: statusCounters('replicas'),
};

/** ReplicationControllers' fields for field selectors. */
export const replicationControllerFieldSet: KindFields = {
  accepted: ['metadata.name', 'metadata.namespace', 'status.replicas'],
  fields: (o) => ({ 'status.replicas': n(o?.status?.replicas) }),
};
