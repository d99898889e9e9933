// ValidatingAdmissionPolicy (kube's admission/plugin/policy/validating: plugin.go and
// dispatcher.go): for each policy whose matchConstraints match the request, each of its bindings
// whose matchResources match, and each param the binding selects, the policy is evaluated
// (validator.ts) and each failed validation acted on as the binding's validationActions say —
// Deny refuses the request (the first denial, with its reason and the HTTP code kube maps it to),
// Warn adds a warning, Audit records the validation_failure audit annotation. Synchronous: the
// policies are in memory (source.ts) and params and namespaces are read from memory-backed lookups,
// so a request that no binding matches costs a scan of the hooks and no promise.
import type { GroupVersionKind, GroupVersionResource } from '../matching.ts';
import { ApiError, qualifiedResource } from '../../errors.ts';
import type { AdmissionAttributes, AdmissionPlugin } from '../types.ts';
import { admissionRequestOf, namespaceObjectOf, PolicyActivation, requestAuthorizer } from '../cel.ts';
import { registerAuthzCheck, type AuthzCheck } from '../../registry/crd/cel/index.ts';
import { collectParams, ParamsError, type ParamKindResolver } from './params.ts';
import type { PolicySource } from './source.ts';
import { validate, type CompiledValidatingPolicy, type PolicyDecision } from './validator.ts';

type Obj = Record<string, unknown>;

export const VALIDATING_ADMISSION_POLICY = 'ValidatingAdmissionPolicy';
/** kube's key of the audit annotation Audit records. */
export const VALIDATION_FAILURE_ANNOTATION = 'validation.policy.admission.k8s.io/validation_failure';
/** kube's maxAuditAnnotationValueLength. */
const MAX_AUDIT_ANNOTATION_VALUE_LENGTH = 10 * 1024;

/** kube's generic.PolicyMatcher over the shared matching (matcher.ts). */
export interface PolicyMatcher {
  /** The resource and kind the request matches the policy's matchConstraints as, or undefined; throws an Error for a configuration error. */
  definitionMatches(matchConstraints: unknown, a: AdmissionAttributes): { resource: GroupVersionResource; kind: GroupVersionKind } | undefined;
  /** Whether the binding's matchResources (none: everything) match; throws an Error for a configuration error. */
  bindingMatches(matchResources: unknown, a: AdmissionAttributes): boolean;
}

/** What the plugin reads besides its policies. */
export interface PolicyLookups {
  /** The namespace object, for namespaceObject. */
  namespace(name: string): Obj | undefined;
  params: ParamKindResolver;
  /** One authorization check (the server's authorizer chain), for the `authorizer` variable. */
  authorize: AuthzCheck;
}

/** admissionregistration.k8s.io's configuration kinds: no policy applies to them (kube's IsExemptAdmissionConfigurationResource). */
const EXEMPT_RESOURCES = new Set([
  'validatingwebhookconfigurations',
  'mutatingwebhookconfigurations',
  'validatingadmissionpolicies',
  'validatingadmissionpolicybindings',
  'mutatingadmissionpolicies',
  'mutatingadmissionpolicybindings',
]);

export function isExemptResource(a: AdmissionAttributes): boolean {
  return a.info.group === 'admissionregistration.k8s.io' && EXEMPT_RESOURCES.has(a.info.resource);
}

interface Denial {
  policy: string;
  binding?: string;
  message: string;
  reason: string;
}

export function validatingAdmissionPolicy(source: PolicySource<CompiledValidatingPolicy>, matcher: PolicyMatcher, policyLookups: PolicyLookups): AdmissionPlugin {
  const lookups = withAuthorizeId(policyLookups);
  return {
    name: VALIDATING_ADMISSION_POLICY,
    validate(attrs) {
      const hooks = source.hooks();
      if (!hooks.length || isExemptResource(attrs)) return;
      dispatch(hooks, attrs, matcher, lookups);
    },
  };
}

/** The lookups with their check registered for the CEL authorizer (once per plugin). */
export function withAuthorizeId<L extends PolicyLookups>(lookups: L): L & { authorizeId: string } {
  return { ...lookups, authorizeId: registerAuthzCheck(lookups.authorize) };
}

function dispatch(hooks: ReturnType<PolicySource<CompiledValidatingPolicy>['hooks']>, a: AdmissionAttributes, matcher: PolicyMatcher, lookups: PolicyLookups & { authorizeId: string }): void {
  const denials: Denial[] = [];
  const configError = (policy: CompiledValidatingPolicy, policyName: string, bindingName: string | undefined, err: unknown) => {
    if (policy.failurePolicy === 'Ignore') return;
    const text = err instanceof Error ? err.message : String(err);
    denials.push({ policy: policyName, binding: bindingName, message: bindingName === undefined ? `failed to configure policy: ${text}` : `failed to configure binding: ${text}`, reason: '' });
  };
  let namespaceObject: Obj | null | undefined;
  let authorizer: unknown;
  for (const hook of hooks) {
    const spec = (hook.policy.spec ?? {}) as Obj;
    let matched: ReturnType<PolicyMatcher['definitionMatches']>;
    try {
      matched = matcher.definitionMatches(spec.matchConstraints, a);
    } catch (e) {
      configError(hook.compiled, hook.name, undefined, e);
      continue;
    }
    if (!matched) continue;
    const annotations = new Map<string, string[]>();
    for (const binding of hook.bindings) {
      const bindingName = String((binding.metadata as Obj | undefined)?.name ?? '');
      const bspec = (binding.spec ?? {}) as Obj;
      let params: (Obj | null)[];
      try {
        if (!matcher.bindingMatches(bspec.matchResources, a)) continue;
        params = collectParams(spec.paramKind as Obj | undefined, bspec.paramRef as Obj | undefined, a.namespace, lookups.params);
      } catch (e) {
        if (!(e instanceof ParamsError) && !(e instanceof Error)) throw e;
        configError(hook.compiled, hook.name, bindingName, e);
        continue;
      }
      if (!params.length) continue;
      // The namespace object itself has no namespace (kube's special case for Namespace requests).
      const nsName = a.info.group === '' && a.info.resource === 'namespaces' ? '' : a.namespace;
      if (namespaceObject === undefined) namespaceObject = nsName ? namespaceObjectOf(lookups.namespace(nsName)) : null;
      const request = admissionRequestOf(a, matched.resource, matched.kind);
      authorizer ??= requestAuthorizer(a, lookups.authorizeId);
      const actions = Array.isArray(bspec.validationActions) ? (bspec.validationActions as string[]) : [];
      for (const param of params) {
        const activation = new PolicyActivation({ object: a.operation === 'DELETE' ? null : a.object, oldObject: a.oldObject, request, namespaceObject, params: param, hasParams: hook.compiled.hasParams, authorizer }, hook.compiled.variables);
        const result = validate(hook.compiled, activation);
        result.decisions.forEach((d, i) => {
          if (d.action !== 'deny') return;
          for (const action of actions) {
            if (action === 'Deny') denials.push({ policy: hook.name, binding: bindingName, message: d.message, reason: d.reason });
            else if (action === 'Audit') publishValidationFailure(a, hook.name, bindingName, actions, i, d);
            else if (action === 'Warn') a.warn(`Validation failed for ValidatingAdmissionPolicy '${hook.name}' with binding '${bindingName}': ${d.message}`);
          }
        });
        for (const r of result.auditAnnotations) {
          if (r.action === 'publish') {
            const value = r.value.length > MAX_AUDIT_ANNOTATION_VALUE_LENGTH ? r.value.slice(0, MAX_AUDIT_ANNOTATION_VALUE_LENGTH) : r.value;
            const values = annotations.get(r.key) ?? [];
            if (!values.includes(value)) values.push(value);
            annotations.set(r.key, values);
          } else if (r.action === 'error') {
            denials.push({ policy: hook.name, binding: bindingName, message: r.error, reason: '' });
          }
        }
      }
    }
    for (const [key, values] of annotations) a.addAuditAnnotation(`${hook.name}/${key}`, values.join(', '));
  }
  if (denials.length) throw denialError(a, denials[0]);
}

function publishValidationFailure(a: AdmissionAttributes, policy: string, binding: string, actions: string[], expressionIndex: number, d: PolicyDecision): void {
  a.addAuditAnnotation(VALIDATION_FAILURE_ANNOTATION, JSON.stringify([{ message: d.message, policy, binding, expressionIndex, validationActions: actions }]));
}

/** kube's HTTP code of a validation's reason (reasonToCode). */
function reasonToCode(reason: string): number {
  switch (reason) {
    case 'Forbidden':
      return 403;
    case 'Unauthorized':
      return 401;
    case 'RequestEntityTooLarge':
      return 413;
    default:
      return 422;
  }
}

/**
 * admission.NewForbidden with the first denial's reason and code, and its message as the one
 * cause: `<resource> "<name>" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: <message>`.
 */
function denialError(a: AdmissionAttributes, d: Denial): ApiError {
  const message = d.binding !== undefined ? `ValidatingAdmissionPolicy '${d.policy}' with binding '${d.binding}' denied request: ${d.message}` : `ValidatingAdmissionPolicy '${d.policy}' denied request: ${d.message}`;
  const name = requestName(a);
  const reason = d.reason || 'Invalid';
  return new ApiError(reasonToCode(reason), reason, `${qualifiedResource(a.info.group, a.info.resource)} "${name}" is forbidden: ${message}`, {
    name,
    group: a.info.group || undefined,
    kind: a.info.resource,
    causes: [{ message }],
  });
}

/**
 * The name admission.NewForbidden gives: the request's, else the object's generateName (kube's
 * admission runs before the name is generated; hearth has generated it already, so a name that
 * is the prefix and five more characters is taken for a generated one), else "Unknown".
 */
export function requestName(a: AdmissionAttributes): string {
  const meta = ((a.object as Obj | undefined)?.metadata ?? {}) as Obj;
  const generateName = typeof meta.generateName === 'string' ? meta.generateName : '';
  if (a.operation === 'CREATE' && generateName && a.name.startsWith(generateName) && a.name.length === generateName.length + 5) return generateName;
  return a.name || (typeof meta.name === 'string' && meta.name) || generateName || 'Unknown';
}
