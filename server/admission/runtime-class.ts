// RuntimeClass (kube's plugin/pkg/admission/runtimeclass, on by default): a new pod naming a
// RuntimeClass that does not exist is refused; one whose class has an overhead gets it as
// spec.overhead (refused when it set a different one), and one whose class has scheduling gets
// the class's nodeSelector merged into its own (refused on a conflicting value) and its
// tolerations merged with the pod's (kube's MergeTolerations: a toleration another one covers is
// dropped). The validating phase refuses an overhead the class does not define. RuntimeClasses
// are read from memory (registry/cluster-object-index.ts).
import type { AdmissionAttributes, AdmissionPlugin } from './types.ts';
import { newForbidden } from './forbidden.ts';
import { list, rec, str, type Json } from './json-fields.ts';
import { cloneJSON } from '../util/json.ts';
import { compareRationals, parseQuantity } from '../util/quantity.ts';

export const RUNTIME_CLASS = 'RuntimeClass';

/** What the plugin reads of a RuntimeClass (overhead.podFixed, scheduling). */
export interface RuntimeClassView {
  podFixed?: Json;
  nodeSelector?: Record<string, string>;
  tolerations?: Json[];
  hasScheduling: boolean;
}

export function runtimeClassView(rc: Record<string, unknown>): RuntimeClassView {
  const overhead = rc.overhead == null ? undefined : rec(rc.overhead);
  const scheduling = rc.scheduling == null ? undefined : rec(rc.scheduling);
  return {
    ...(overhead?.podFixed != null ? { podFixed: cloneJSON(rec(overhead.podFixed)) } : {}),
    ...(scheduling?.nodeSelector != null ? { nodeSelector: cloneJSON(rec(scheduling.nodeSelector) as Record<string, string>) } : {}),
    ...(scheduling?.tolerations != null ? { tolerations: cloneJSON(list(scheduling.tolerations).map(rec)) } : {}),
    hasScheduling: scheduling !== undefined,
  };
}

const OVERHEAD_MISMATCH = "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead";

export function runtimeClass(lookup: (name: string) => RuntimeClassView | undefined): AdmissionPlugin {
  /** prepareObjects: the pod's class, undefined when it names none; refused when it is missing. */
  const classOf = (a: AdmissionAttributes): { spec: Json; rc?: RuntimeClassView } => {
    const spec = rec(rec(a.object).spec);
    if (spec.runtimeClassName == null) return { spec };
    const name = str(spec.runtimeClassName);
    const rc = lookup(name);
    if (!rc) throw newForbidden(a, `pod rejected: RuntimeClass ${JSON.stringify(name)} not found`);
    return { spec, rc };
  };
  const handles = (a: AdmissionAttributes) => a.info.resource === 'pods' && a.info.group === '' && !a.subresource && a.operation === 'CREATE';
  return {
    name: RUNTIME_CLASS,
    admit(a) {
      if (!handles(a)) return;
      const { spec, rc } = classOf(a);
      if (!rc) return;
      if (rc.podFixed) {
        if (Object.keys(rec(spec.overhead)).length > 0 && !resourceListsEqual(rc.podFixed, rec(spec.overhead))) throw newForbidden(a, OVERHEAD_MISMATCH);
        spec.overhead = cloneJSON(rc.podFixed);
      }
      if (rc.hasScheduling) setScheduling(a, spec, rc);
    },
    validate(a) {
      if (!handles(a)) return;
      const { spec, rc } = classOf(a);
      if (Object.keys(rec(spec.overhead)).length === 0) return;
      if (!rc?.podFixed) throw newForbidden(a, 'pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead');
      if (!resourceListsEqual(rc.podFixed, rec(spec.overhead))) throw newForbidden(a, OVERHEAD_MISMATCH);
    },
  };
}

function setScheduling(a: AdmissionAttributes, spec: Json, rc: RuntimeClassView): void {
  const runtimeSelector = rc.nodeSelector ?? {};
  if (spec.nodeSelector == null) {
    if (rc.nodeSelector) spec.nodeSelector = { ...runtimeSelector };
  } else {
    const selector = rec(spec.nodeSelector);
    for (const [key, value] of Object.entries(runtimeSelector)) {
      if (key in selector && selector[key] !== value) {
        throw newForbidden(a, `conflict: runtimeClass.scheduling.nodeSelector[${key}] = ${value}; pod.spec.nodeSelector[${key}] = ${str(selector[key])}`);
      }
      selector[key] = value;
    }
  }
  const merged = mergeTolerations(list(spec.tolerations).map(rec), rc.tolerations ?? []);
  if (merged.length) spec.tolerations = merged.map((t) => cloneJSON(t));
  else delete spec.tolerations;
}

/** Semantic equality of two ResourceLists: the same names, each the same quantity. */
function resourceListsEqual(a: Json, b: Json): boolean {
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((k) => {
    if (!(k in b)) return false;
    const [x, y] = [parseQuantity(str(a[k])), parseQuantity(str(b[k]))];
    return x && y ? compareRationals(x, y) === 0 : a[k] === b[k];
  });
}

// ---- kube's pkg/util/tolerations ----

interface Toleration {
  key: string;
  operator: string;
  value: string;
  effect: string;
  seconds: number | undefined;
}
const view = (t: Json): Toleration => ({
  key: str(t.key),
  operator: str(t.operator),
  value: str(t.value),
  effect: str(t.effect),
  seconds: typeof t.tolerationSeconds === 'number' ? t.tolerationSeconds : undefined,
});
const same = (a: Toleration, b: Toleration) => a.key === b.key && a.operator === b.operator && a.value === b.value && a.effect === b.effect && a.seconds === b.seconds;

/** isSuperset: whether ss tolerates everything t does. */
function isSuperset(ss: Toleration, t: Toleration): boolean {
  if (same(ss, t)) return true;
  // An empty key with Exists matches every key.
  if (t.key !== ss.key && (ss.key !== '' || ss.operator !== 'Exists')) return false;
  // An empty effect matches every effect.
  if (t.effect !== ss.effect && ss.effect !== '') return false;
  if (ss.effect === 'NoExecute' && ss.seconds !== undefined && (t.seconds === undefined || t.seconds > ss.seconds)) return false;
  switch (ss.operator) {
    case 'Equal':
    case '':
      return t.operator === 'Equal' && t.value === ss.value;
    case 'Exists':
      return true;
    default:
      return false;
  }
}

/** MergeTolerations: both lists, less each toleration another one covers (of equal ones, the first). */
export function mergeTolerations(first: Json[], second: Json[]): Json[] {
  const all = [...first, ...second];
  const views = all.map(view);
  const merged: number[] = [];
  for (let i = 0; i < all.length; i++) {
    const t = views[i];
    if (merged.some((j) => isSuperset(views[j], t))) continue;
    if (views.slice(i + 1).some((t2) => !same(t, t2) && isSuperset(t2, t))) continue;
    merged.push(i);
  }
  return merged.map((i) => all[i]);
}
