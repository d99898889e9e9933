// Priority (kube's plugin/pkg/admission/priority, on by default): a new pod's spec.priority and
// preemptionPolicy come from its PriorityClass (the global default one when it names none, and
// it is given that one's name; priority 0 and PreemptLowerPriority when there is none); a pod
// naming a class that does not exist, or giving a priority or policy other than its class's, is
// refused. An update keeps what the create resolved (a PUT that leaves them out gets them back;
// pod validation refuses any other change). A PriorityClass may be globalDefault only while no
// other is. (The two system classes kube's scheduling storage creates at start are created by
// controllers/system-priority-classes.ts.) PriorityClasses
// are read from memory (registry/cluster-object-index.ts), as kube reads its lister.
// (kube 1.36 also resolves scheduling.k8s.io Workloads' priority behind an alpha gate; hearth
// does not serve Workloads.)
import type { AdmissionAttributes, AdmissionPlugin } from './types.ts';
import { newForbidden } from './forbidden.ts';
import { rec, str } from './json-fields.ts';

export const PRIORITY = 'Priority';

/** What the plugin reads of a PriorityClass. */
export interface PriorityClassView {
  name: string;
  value: number;
  globalDefault: boolean;
  preemptionPolicy?: string;
}

export function priorityClassView(pc: Record<string, unknown>): PriorityClassView {
  const policy = pc.preemptionPolicy;
  return {
    name: str(rec(pc.metadata).name),
    value: typeof pc.value === 'number' ? pc.value : 0,
    globalDefault: pc.globalDefault === true,
    ...(typeof policy === 'string' ? { preemptionPolicy: policy } : {}),
  };
}

export interface PriorityLookups {
  priorityClass(name: string): PriorityClassView | undefined;
  priorityClasses(): Iterable<PriorityClassView>;
}

/** scheduling.DefaultPriorityWhenNoDefaultClassExists. */
const DEFAULT_PRIORITY = 0;
const PREEMPT_LOWER_PRIORITY = 'PreemptLowerPriority';

/** getDefaultPriorityClass: the globalDefault class with the lowest value, should a race have made two. */
function defaultPriorityClass(lookups: PriorityLookups): PriorityClassView | undefined {
  let found: PriorityClassView | undefined;
  for (const pc of lookups.priorityClasses()) if (pc.globalDefault && (!found || found.value > pc.value)) found = pc;
  return found;
}

export function priority(lookups: PriorityLookups): AdmissionPlugin {
  return {
    name: PRIORITY,
    admit(a) {
      if (a.info.resource !== 'pods' || a.info.group !== '' || a.subresource) return;
      if (a.operation === 'CREATE') admitPodCreate(lookups, a);
      else if (a.operation === 'UPDATE') keepResolvedPriority(a);
    },
    validate(a) {
      if (a.info.resource !== 'priorityclasses' || a.info.group !== 'scheduling.k8s.io' || a.subresource) return;
      if (a.operation !== 'CREATE' && a.operation !== 'UPDATE') return;
      const pc = rec(a.object);
      if (pc.globalDefault !== true) return;
      // A second default, or another class marked default while one is.
      const current = defaultPriorityClass(lookups);
      if (current && (a.operation === 'CREATE' || current.name !== str(rec(pc.metadata).name))) {
        throw newForbidden(a, `PriorityClass ${current.name} is already marked as default. Only one default can exist`);
      }
    },
  };
}

function admitPodCreate(lookups: PriorityLookups, a: AdmissionAttributes): void {
  const spec = rec(rec(a.object).spec);
  let priority: number;
  let preemptionPolicy: string | undefined;
  const className = str(spec.priorityClassName);
  if (!className) {
    const pc = defaultPriorityClass(lookups);
    priority = pc?.value ?? DEFAULT_PRIORITY;
    preemptionPolicy = pc ? pc.preemptionPolicy : PREEMPT_LOWER_PRIORITY;
    // (kube assigns the name, "" when there is no default: the field stays empty then)
    if (pc) spec.priorityClassName = pc.name;
  } else {
    const pc = lookups.priorityClass(className);
    if (!pc) throw newForbidden(a, `no PriorityClass with name ${className} was found`);
    priority = pc.value;
    preemptionPolicy = pc.preemptionPolicy;
  }
  if (spec.priority != null && spec.priority !== priority) {
    throw newForbidden(a, `the integer value of priority (${String(spec.priority)}) must not be provided in pod spec; priority admission controller computed ${priority} from the given PriorityClass name`);
  }
  spec.priority = priority;
  if (preemptionPolicy !== undefined) {
    if (spec.preemptionPolicy != null && spec.preemptionPolicy !== preemptionPolicy) {
      throw newForbidden(a, `the string value of PreemptionPolicy (${String(spec.preemptionPolicy)}) must not be provided in pod spec; priority admission controller computed ${preemptionPolicy} from the given PriorityClass name`);
    }
    spec.preemptionPolicy = preemptionPolicy;
  }
}

/** An update that leaves priority or preemptionPolicy out gets the stored ones back. */
function keepResolvedPriority(a: AdmissionAttributes): void {
  const spec = rec(a.object).spec;
  if (typeof spec !== 'object' || spec === null) return;
  const s = spec as Record<string, unknown>;
  const old = rec(rec(a.oldObject).spec);
  if (s.priority == null && old.priority != null) s.priority = old.priority;
  if (s.preemptionPolicy == null && old.preemptionPolicy != null) s.preemptionPolicy = old.preemptionPolicy;
}
