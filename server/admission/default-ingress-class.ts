// DefaultIngressClass (kube's plugin/pkg/admission/network/defaultingressclass, on by default):
// a new Ingress with neither spec.ingressClassName nor the kubernetes.io/ingress.class annotation
// is given the default IngressClass (annotated ingressclass.kubernetes.io/is-default-class
// "true"; the newest when several are, then the lowest name). IngressClasses are read from
// memory (registry/cluster-object-index.ts).
import type { AdmissionPlugin } from './types.ts';
import { rec, str } from './json-fields.ts';
import { newestDefault } from './default-storage-class.ts';

export const DEFAULT_INGRESS_CLASS = 'DefaultIngressClass';
/** networkingv1beta1.AnnotationIngressClass and networkingv1.AnnotationIsDefaultIngressClass. */
const INGRESS_CLASS_ANNOTATION = 'kubernetes.io/ingress.class';
const IS_DEFAULT_ANNOTATION = 'ingressclass.kubernetes.io/is-default-class';

export interface IngressClassView {
  name: string;
  isDefault: boolean;
  created: number;
}

export function ingressClassView(ic: Record<string, unknown>): IngressClassView {
  const meta = rec(ic.metadata);
  return { name: str(meta.name), isDefault: rec(meta.annotations)[IS_DEFAULT_ANNOTATION] === 'true', created: Date.parse(str(meta.creationTimestamp)) || 0 };
}

export function defaultIngressClass(ingressClasses: () => Iterable<IngressClassView>): AdmissionPlugin {
  return {
    name: DEFAULT_INGRESS_CLASS,
    admit(a) {
      if (a.info.resource !== 'ingresses' || a.info.group !== 'networking.k8s.io' || a.subresource || a.operation !== 'CREATE') return;
      const ingress = rec(a.object);
      if (rec(ingress.spec).ingressClassName != null || INGRESS_CLASS_ANNOTATION in rec(rec(ingress.metadata).annotations)) return;
      const found = newestDefault(ingressClasses());
      if (!found) return;
      // (spec is a struct in Go: an Ingress without one gets one)
      const s = (typeof ingress.spec === 'object' && ingress.spec !== null ? ingress.spec : (ingress.spec = {})) as Record<string, unknown>;
      s.ingressClassName = found.name;
    },
  };
}
