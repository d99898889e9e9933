// Registers the admission policy kinds' strategies (registry/kinds/admissionregistration/policies.ts)
// with the compiler of this folder, so that a policy whose expressions do not compile is refused
// when it is written, with kube's messages. The kinds may not import CEL; this file joins them.
import { registerStrategy } from '../../registry/kinds/index.ts';
import { mutatingAdmissionPolicyStrategies, validatingAdmissionPolicyStrategies, type PolicyExpressionCheck } from '../../registry/kinds/admissionregistration/policies.ts';
import { compilePolicyExpression } from '../cel.ts';

const GROUP = 'admissionregistration.k8s.io';

export const checkPolicyExpression: PolicyExpressionCheck = (expression, opts) => {
  const scope = { hasParams: opts.hasParams, variableNames: opts.variableNames, withoutAuthorizer: opts.withoutAuthorizer };
  if (!opts.mutation) return compilePolicyExpression(expression, scope, opts.returns, opts.nullable).error;
  const r = compilePolicyExpression(expression, scope, 'any', false, true);
  if (r.error !== undefined) return r.error;
  return mutationResultError(r.compiled.resultType, opts.mutation);
};

/** kube's return types of mutations: Object for an apply configuration, list(JSONPatch) for a JSON patch (dyn passes). */
function mutationResultError(t: string, patchType: 'ApplyConfiguration' | 'JSONPatch'): string | undefined {
  if (t === 'dyn') return undefined;
  if (patchType === 'JSONPatch') return t === 'list(object)' || t === 'list(dyn)' ? undefined : `must evaluate to list(JSONPatch) but got ${t}`;
  return `must evaluate to Object but got ${t}`;
}

const validating = validatingAdmissionPolicyStrategies(checkPolicyExpression);
registerStrategy(GROUP, 'validatingadmissionpolicies', validating.policy);
registerStrategy(GROUP, 'validatingadmissionpolicybindings', validating.binding);
const mutating = mutatingAdmissionPolicyStrategies(checkPolicyExpression);
registerStrategy(GROUP, 'mutatingadmissionpolicies', mutating.policy);
registerStrategy(GROUP, 'mutatingadmissionpolicybindings', mutating.binding);
