// Registers the admission policy kinds' strategies (registry/kinds/admissionregistration/policies.ts)
// with the compiler of this folder, so that a policy whose expressions do not compile is refused
// when it is written, with kube's messages. The kinds may not import CEL; this file joins them.
import { registerStrategy } from '../../registry/kinds/index.ts';
import { validatingAdmissionPolicyStrategies, type PolicyExpressionCheck } from '../../registry/kinds/admissionregistration/policies.ts';
import { compilePolicyExpression } from './cel.ts';

const GROUP = 'admissionregistration.k8s.io';

export const checkPolicyExpression: PolicyExpressionCheck = (expression, opts) => compilePolicyExpression(expression, { hasParams: opts.hasParams, variableNames: opts.variableNames }, opts.returns, opts.nullable).error;

const validating = validatingAdmissionPolicyStrategies(checkPolicyExpression);
registerStrategy(GROUP, 'validatingadmissionpolicies', validating.policy);
registerStrategy(GROUP, 'validatingadmissionpolicybindings', validating.binding);
