// Per-kind rules. A kind is data (its schema); a strategy exists only for kinds with special
// rules, registered by qualified resource. The generic store applies the defaults itself.
import type { ResourceInfo } from '../schema/types.ts';
import type { FieldError } from '../validation/field.ts';
import type { NameRule } from '../validation/names.ts';

export interface Strategy {
  /** metadata.generation starts at 1 and is bumped when anything outside metadata/status changes. */
  tracksGeneration?: boolean;
  /**
   * A create keeps the status it is given (kube's nodeStrategy: "Nodes allow *all* fields,
   * including status, to be set on create"); other kinds with a status subresource start with none.
   */
  statusOnCreate?: boolean;
  /** Fills defaults and server-set fields on create (after the generic status reset). */
  prepareForCreate?(obj: any): void;
  /** Adjusts an update of the main resource (after the generic status carry-over). */
  prepareForUpdate?(obj: any, old: any): void;
  /**
   * kube's AllowUnconditionalUpdate: an update without a resourceVersion (or with "0") is written
   * over whatever is stored. Where false, it is refused as Invalid. Absent: true, but for the kinds
   * in CONDITIONAL_UPDATES_ONLY.
   */
  allowUnconditionalUpdate?: boolean;
  /** The strategy reports missing fields itself, where and when kube does: the schema's `required` is not checked. */
  reportsRequired?: boolean;
  /**
   * Fields (with all below them) kube's validation of this kind never looks at: the schema's
   * `required` is not checked there (a StatefulSet's pod template spec).
   */
  unvalidated?: readonly string[];
  /** Create validation (and update validation when there is no validateUpdate). */
  validate?(obj: any): FieldError[];
  /** Update validation; replaces validate on updates. */
  validateUpdate?(obj: any, old: any, subresource: string): FieldError[];
  /** Finalizers beyond metadata.finalizers that hold deletion (namespaces: spec.finalizers). */
  pendingFinalizers?(obj: any): string[];
  /**
   * Graceful deletion (kube's CheckGracefulDelete): the seconds a delete gives an object of
   * this kind, from the period the request asked for (undefined: none). Kinds without it go at once.
   */
  gracePeriod?(obj: any, requested: number | undefined): number;
  /** Called when deletion starts on an object that must wait (namespaces turn Terminating). */
  prepareForDeletion?(obj: any): void;
  /** Subresources with their own update rules: given the stored object and the request body, the object to store. */
  subresourceUpdate?: Record<string, (body: any, old: any) => any>;
  /**
   * Subresources a POST writes through (pods/binding): the body's definition, `check` refusing a
   * malformed body before anything is read, and `apply` making the object to store from a copy
   * of the stored one. Written straight to storage, as kube's REST for them writes: no
   * managedFields entry and no generation bump.
   */
  subresourceCreate?: Record<string, SubresourceCreate>;
}

export interface SubresourceCreate {
  definition: string;
  check(body: any, name: string): void;
  apply(obj: any, body: any): any;
}

const strategies = new Map<string, Strategy>();
const resolved = new Map<string, Strategy>();

/** Kinds with spec and a status subresource track generation, except these (as in kube-apiserver). */
const NO_GENERATION = new Set(['namespaces', 'nodes', 'persistentvolumes', 'persistentvolumeclaims', 'services', 'resourcequotas', 'certificatesigningrequests']);

/**
 * The built-in kinds whose strategies' AllowUnconditionalUpdate() is false (pkg/registry/*, and
 * the apiextensions and aggregator strategies): an update must name the resourceVersion it read.
 */
const CONDITIONAL_UPDATES_ONLY = new Set([
  'apiservices.apiregistration.k8s.io',
  'customresourcedefinitions.apiextensions.k8s.io',
  'leases.coordination.k8s.io',
  'runtimeclasses.node.k8s.io',
  'csidrivers.storage.k8s.io',
  'csinodes.storage.k8s.io',
  'csistoragecapacities.storage.k8s.io',
  'volumeattachments.storage.k8s.io',
  'validatingwebhookconfigurations.admissionregistration.k8s.io',
  'mutatingwebhookconfigurations.admissionregistration.k8s.io',
  'validatingadmissionpolicies.admissionregistration.k8s.io',
  'validatingadmissionpolicybindings.admissionregistration.k8s.io',
  'mutatingadmissionpolicies.admissionregistration.k8s.io',
  'mutatingadmissionpolicybindings.admissionregistration.k8s.io',
]);

export function registerStrategy(group: string, resource: string, s: Strategy): void {
  strategies.set(group ? `${resource}.${group}` : resource, s);
}

/**
 * Custom objects always count generation (spec changes, or any change without a status
 * subresource), and are only updated at a resourceVersion (apiextensions' customResourceStrategy).
 */
const CUSTOM_RESOURCE_STRATEGY: Strategy = { tracksGeneration: true, allowUnconditionalUpdate: false };

export function strategyFor(info: ResourceInfo): Strategy {
  if (info.custom) return CUSTOM_RESOURCE_STRATEGY;
  const key = info.group ? `${info.resource}.${info.group}` : info.resource;
  let s = resolved.get(key);
  if (!s) {
    const own = strategies.get(key) ?? {};
    const defaultGeneration = !!info.subresources?.status && !(info.group === '' && NO_GENERATION.has(info.resource)) && !NO_GENERATION.has(info.resource);
    s = { tracksGeneration: defaultGeneration, allowUnconditionalUpdate: !CONDITIONAL_UPDATES_ONLY.has(key), ...own };
    resolved.set(key, s);
  }
  return s;
}

// The rule metadata.name follows, per kind (the name validation function each of kube's
// strategies passes to ValidateObjectMeta).
const NAME_RULES: Record<string, NameRule> = {
  namespaces: 'dns1123Label',
  services: 'dns1035Label',
  'roles.rbac.authorization.k8s.io': 'rbacPathSegment',
  'rolebindings.rbac.authorization.k8s.io': 'rbacPathSegment',
  'clusterroles.rbac.authorization.k8s.io': 'rbacPathSegment',
  'clusterrolebindings.rbac.authorization.k8s.io': 'rbacPathSegment',
  'certificatesigningrequests.certificates.k8s.io': 'none',
  // Events through core/v1 get only the generic check (kube's legacy event validation has no name
  // rule); through events.k8s.io/v1 the default one.
  events: 'pathSegment',
};

/** The name rule kube-apiserver applies to a group/resource; DNS-1123 subdomain unless listed. */
export function nameRuleFor(group: string, resource: string): NameRule {
  return NAME_RULES[group ? `${resource}.${group}` : resource] ?? 'dns1123Subdomain';
}
