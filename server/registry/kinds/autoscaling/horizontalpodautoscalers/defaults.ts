// Defaults of HorizontalPodAutoscalers in autoscaling/v2 and v1 (SetDefaults_HorizontalPodAutoscaler,
// SetDefaults_HorizontalPodAutoscalerBehavior).
import { absent, list, setPtr, statusCounters, statusStruct, struct, type Defaulters } from '../../../defaulting.ts';
import { isPlainObject } from '../../../../util/json.ts';
import type { Obj } from '../../../strategy.ts';

const HPA_SCALE_UP = () => ({
  stabilizationWindowSeconds: 0,
  selectPolicy: 'Max',
  policies: [
    { type: 'Pods', value: 4, periodSeconds: 15 },
    { type: 'Percent', value: 100, periodSeconds: 15 },
  ],
});
const HPA_SCALE_DOWN = () => ({ selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] });

/** Unset fields of the user's rules come from the defaults (copyHPAScalingRules). */
function scalingRules(given: unknown, defaults: Obj): Obj {
  if (!isPlainObject(given)) return defaults;
  for (const k of ['selectPolicy', 'stabilizationWindowSeconds', 'policies', 'tolerance']) {
    if (!absent(given[k])) defaults[k] = given[k];
  }
  return defaults;
}

function hpaV2(h: Obj): void {
  statusStruct(h);
  const spec = struct(h, 'spec');
  if (!spec) return;
  setPtr(spec, 'minReplicas', 1);
  if (list(spec.metrics).length === 0) {
    spec.metrics = [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }];
  }
  if (isPlainObject(spec.behavior)) {
    spec.behavior.scaleUp = scalingRules(spec.behavior.scaleUp, HPA_SCALE_UP());
    spec.behavior.scaleDown = scalingRules(spec.behavior.scaleDown, HPA_SCALE_DOWN());
  }
}

/** HorizontalPodAutoscalers in both versions, by definition. */
export const horizontalPodAutoscalerDefaults: Defaulters = {
  'io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerStatus': statusCounters('desiredReplicas'),
  'io.k8s.api.autoscaling.v1.HorizontalPodAutoscalerStatus': statusCounters('currentReplicas', 'desiredReplicas'),
  'io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler': hpaV2,
  'io.k8s.api.autoscaling.v1.HorizontalPodAutoscaler': (h) => {
    statusStruct(h);
    const spec = struct(h, 'spec');
    if (spec) setPtr(spec, 'minReplicas', 1);
  },
};
