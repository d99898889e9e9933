// The built-in kinds, one folder per API group (the core group as `core/`), and their registry.
// A kind's code lives together, as kube's pkg/registry/<group>/<kind> and pkg/apis/<group> have
// it: its strategy, validation, defaults, conversion between served versions and the fields it
// offers to field selectors; kinds with a few lines share their group's index.ts. Pod-spec
// validation that pod templates share (workloads, jobs, claims) lives in core/pods/ and is
// imported from there, as kube's apps validation imports core's ValidatePodTemplateSpec.
// This file is the one registry the generic store asks: the strategy of a qualified resource, the
// rule its names follow, the defaults of every definition and the conversions between served
// versions. Field sets are looked up in fields.ts, its other half (see there why apart). Groups
// with only defaults or field sets (admissionregistration, flowcontrol, certificates...) are a
// folder with an index.ts.
// May import: go/, util/, validation/, schema/, errors.ts and registry's generic pieces below the
// store (strategy.ts, defaulting.ts, now.ts, selectors.ts, apply/ helpers); never http/, storage/,
// store.ts (but pods' eviction REST, which the store never imports) or registry/crd/ (the
// CustomResourceDefinition kind's strategy is crd/strategy.ts, beside the CRD code it uses, and
// registers itself here). `npm run check:layers` holds these: kinds-not-crd, kinds-below-the-store.
import type { ResourceInfo } from '../../schema/types.ts';
import type { NameRule } from '../../validation/names.ts';
import type { Obj, Strategy } from '../strategy.ts';
import { horizontalPodAutoscalerStrategy } from './autoscaling/horizontalpodautoscalers/strategy.ts';
import { appsDefaults, daemonSetStrategy, deploymentStrategy, replicaSetStrategy, statefulSetStrategy } from './apps/index.ts';
import { coreDefaults, podTemplateStrategy } from './core/index.ts';
import { replicationControllerDefaults, replicationControllerStrategy } from './core/replicationcontrollers.ts';
import { batchDefaults, cronJobStrategy, jobStrategy } from './batch/index.ts';
import { configMapStrategy, secretDefaults, secretStrategy } from './core/config.ts';
import { namespaceDefaults, namespaceStrategy } from './core/namespaces.ts';
import { nodeDefaults, nodeStrategy } from './core/nodes.ts';
import { persistentVolumeClaimStrategy, persistentVolumeDefaults } from './core/persistentvolumes.ts';
import { storageClassStrategy, storageDefaults } from './storage/index.ts';
import { podStrategy } from './core/pods/strategy.ts';
import { eventStrategy } from './events/strategy.ts';
import { ingressClassDefaults, ingressStrategy } from './networking/ingresses.ts';
import { networkPolicyDefaults, networkPolicyStrategy } from './networking/networkpolicies.ts';
import { podDisruptionBudgetDefaults, podDisruptionBudgetStrategy } from './policy/index.ts';
import { clusterRoleBindingStrategy, rbacDefaults, roleBindingStrategy } from './rbac/index.ts';
import { TypeModel } from '../../schema/model.ts';
import { goJsonOrder } from '../../schema/go-order.ts';
import { definitionDefaulting } from '../defaulting.ts';
import { admissionRegistrationDefaults, mutatingWebhookConfigurationStrategy, validatingWebhookConfigurationStrategy } from './admissionregistration/index.ts';
import { customResourceDefinitionDefaults } from './apiextensions/index.ts';
import { horizontalPodAutoscalerDefaults } from './autoscaling/horizontalpodautoscalers/defaults.ts';
import { convertHorizontalPodAutoscaler } from './autoscaling/horizontalpodautoscalers/conversion.ts';
import { podDefaults } from './core/pods/defaults.ts';
import { serviceDefaults } from './core/services/defaults.ts';
import { endpointSliceDefaults } from './discovery/index.ts';
import { convertEvent, CORE_EVENT_VERSION, eventDefaults, EVENTS_V1_VERSION } from './events/conversion.ts';
import { flowControlDefaults, flowSchemaStrategy, priorityLevelConfigurationStrategy } from './flowcontrol/index.ts';
import { resourceDefaults } from './resource/index.ts';
import { priorityClassDefaults } from './scheduling/index.ts';
import { certificateSigningRequestStrategy } from './certificates/csr.ts';

/** The built-in kinds' strategies, by qualified resource ("resource.group"; the core group's by resource). */
const strategies = new Map<string, Strategy>(
  Object.entries({
    namespaces: namespaceStrategy,
    nodes: nodeStrategy,
    pods: podStrategy,
    podtemplates: podTemplateStrategy,
    replicationcontrollers: replicationControllerStrategy,
    configmaps: configMapStrategy,
    secrets: secretStrategy,
    persistentvolumeclaims: persistentVolumeClaimStrategy,
    events: eventStrategy,
    'events.events.k8s.io': eventStrategy,
    'deployments.apps': deploymentStrategy,
    'replicasets.apps': replicaSetStrategy,
    'statefulsets.apps': statefulSetStrategy,
    'daemonsets.apps': daemonSetStrategy,
    'jobs.batch': jobStrategy,
    'cronjobs.batch': cronJobStrategy,
    'horizontalpodautoscalers.autoscaling': horizontalPodAutoscalerStrategy,
    'poddisruptionbudgets.policy': podDisruptionBudgetStrategy,
    'ingresses.networking.k8s.io': ingressStrategy,
    'networkpolicies.networking.k8s.io': networkPolicyStrategy,
    'rolebindings.rbac.authorization.k8s.io': roleBindingStrategy,
    'clusterrolebindings.rbac.authorization.k8s.io': clusterRoleBindingStrategy,
    'storageclasses.storage.k8s.io': storageClassStrategy,
    'certificatesigningrequests.certificates.k8s.io': certificateSigningRequestStrategy,
    'mutatingwebhookconfigurations.admissionregistration.k8s.io': mutatingWebhookConfigurationStrategy,
    'validatingwebhookconfigurations.admissionregistration.k8s.io': validatingWebhookConfigurationStrategy,
    'flowschemas.flowcontrol.apiserver.k8s.io': flowSchemaStrategy,
    'prioritylevelconfigurations.flowcontrol.apiserver.k8s.io': priorityLevelConfigurationStrategy,
  }),
);
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

/** A strategy registered from outside the built-in kinds (the CRD kind's, crd/strategy.ts). */
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

// ---------------------------------------------------------------------------------------------
// Defaults

/** Every built-in kind's defaulters, by OpenAPI definition name. */
const defaulting = definitionDefaulting({
  ...podDefaults,
  ...serviceDefaults,
  ...persistentVolumeDefaults,
  ...secretDefaults,
  ...namespaceDefaults,
  ...replicationControllerDefaults,
  ...coreDefaults,
  ...nodeDefaults,
  ...appsDefaults,
  ...batchDefaults,
  ...horizontalPodAutoscalerDefaults,
  ...eventDefaults,
  ...podDisruptionBudgetDefaults,
  ...networkPolicyDefaults,
  ...ingressClassDefaults,
  ...endpointSliceDefaults,
  ...rbacDefaults,
  ...storageDefaults,
  ...resourceDefaults,
  ...priorityClassDefaults,
  ...admissionRegistrationDefaults,
  ...flowControlDefaults,
  ...customResourceDefinitionDefaults,
});

/** Fills, in place, every default kube-apiserver fills in an object of this definition. */
export const applyDefaults = defaulting.applyDefaults;

// Defaulting as a hook the generic store calls rather than part of a Strategy: one strategy per
// resource is allowed, and defaulting must compose with the ones that exist (namespaces). The
// store calls the returned function on create (after the status reset, before prepareForCreate)
// and on update (on the desired object, before prepareUpdate, so generation and no-op detection
// compare defaulted with defaulted), the way kube-apiserver defaults while decoding the request body.
const hooks = new Map<string, ((obj: Obj) => void) | undefined>();

/** The defaulting function for objects of this OpenAPI definition, or undefined when it has no defaults. */
export function defaultsFor(definition: string): ((obj: Obj) => void) | undefined {
  if (hooks.has(definition)) return hooks.get(definition);
  const hook = defaulting.hasDefaults(definition) ? (obj: Obj) => defaulting.applyDefaults(definition, obj) : undefined;
  hooks.set(definition, hook);
  return hook;
}

// ---------------------------------------------------------------------------------------------
// Conversions: built-in kinds served in more than one version, or by more than one group, are
// kept once: rows hold the storage version, and reads and writes in another version convert, as
// kube-apiserver's scheme converts through its internal version. Conversions are synchronous and
// never fail.

export interface KindConversion {
  /** The qualified resource the rows are kept under, whichever group serves them. */
  storageResource: string;
  storageApiVersion: string;
  kind: string;
  /** The definition of each served apiVersion (for the Go field order of converted objects). */
  definitions: Readonly<Record<string, string>>;
  /** A fresh object: obj (in whatever version its apiVersion names) as apiVersion. */
  convert(obj: Obj, apiVersion: string): Obj;
}

const HORIZONTAL_POD_AUTOSCALERS: KindConversion = {
  storageResource: 'horizontalpodautoscalers.autoscaling',
  storageApiVersion: 'autoscaling/v2',
  kind: 'HorizontalPodAutoscaler',
  definitions: {
    'autoscaling/v2': 'io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler',
    'autoscaling/v1': 'io.k8s.api.autoscaling.v1.HorizontalPodAutoscaler',
  },
  convert: convertHorizontalPodAutoscaler,
};

const EVENTS: KindConversion = {
  storageResource: 'events',
  storageApiVersion: CORE_EVENT_VERSION,
  kind: 'Event',
  definitions: { [CORE_EVENT_VERSION]: 'io.k8s.api.core.v1.Event', [EVENTS_V1_VERSION]: 'io.k8s.api.events.v1.Event' },
  convert: convertEvent,
};

/** Conversions by "group/resource". */
const CONVERSIONS = new Map<string, KindConversion>([
  ['autoscaling/horizontalpodautoscalers', HORIZONTAL_POD_AUTOSCALERS],
  ['/events', EVENTS],
  ['events.k8s.io/events', EVENTS],
]);

/** How a built-in resource's objects are kept, when they are kept in another form than served. */
export function conversionOf(group: string, resource: string): KindConversion | undefined {
  return CONVERSIONS.get(`${group}/${resource}`);
}

/** obj converted to apiVersion (and defaulted as that version, if asked), its fields in the order kube writes them: a fresh object. */
export function convertTo(conversion: KindConversion, obj: Obj, apiVersion: string, defaulted = false): Obj {
  const out = conversion.convert(obj, apiVersion);
  const definition = conversion.definitions[apiVersion];
  if (!definition) return out;
  if (defaulted) defaultsFor(definition)?.(out);
  return goJsonOrder(TypeModel.loadBuiltins().node(definition), out) as Obj; // an object in, an object out
}
