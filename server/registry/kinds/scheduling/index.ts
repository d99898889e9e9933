// scheduling.k8s.io: PriorityClasses' preemption policy default.
import { setPtr, type Defaulters } from '../../defaulting.ts';

/** PriorityClasses, by definition. */
export const priorityClassDefaults: Defaulters = {
  'io.k8s.api.scheduling.v1.PriorityClass': (pc) => setPtr(pc, 'preemptionPolicy', 'PreemptLowerPriority'),
};
