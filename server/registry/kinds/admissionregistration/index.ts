// admissionregistration.k8s.io: webhook configurations and admission policies have defaults only
// (failure and match policies, selectors, timeouts, rule scope).
import { servicePort443, setPtr, type Defaulters } from '../../defaulting.ts';
import type { Obj } from '../../strategy.ts';

function webhook(w: Obj): void {
  setPtr(w, 'failurePolicy', 'Fail');
  setPtr(w, 'matchPolicy', 'Equivalent');
  setPtr(w, 'namespaceSelector', {});
  setPtr(w, 'objectSelector', {});
  setPtr(w, 'timeoutSeconds', 10);
}

function matchResources(m: Obj): void {
  setPtr(m, 'matchPolicy', 'Equivalent');
  setPtr(m, 'namespaceSelector', {});
  setPtr(m, 'objectSelector', {});
}

const ruleScope = (r: Obj): void => setPtr(r, 'scope', '*');

/** Webhooks and admission policies, by definition (Rule is embedded in the *RuleWithOperations definitions). */
export const admissionRegistrationDefaults: Defaulters = {
  'io.k8s.api.admissionregistration.v1.ValidatingWebhook': webhook,
  'io.k8s.api.admissionregistration.v1.MutatingWebhook': (w) => {
    webhook(w);
    setPtr(w, 'reinvocationPolicy', 'Never');
  },
  'io.k8s.api.admissionregistration.v1.RuleWithOperations': ruleScope,
  'io.k8s.api.admissionregistration.v1.NamedRuleWithOperations': ruleScope,
  'io.k8s.api.admissionregistration.v1.ServiceReference': servicePort443,
  'io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicySpec': (s) => setPtr(s, 'failurePolicy', 'Fail'),
  'io.k8s.api.admissionregistration.v1.MatchResources': matchResources,
};

export { mutatingWebhookConfigurationStrategy, useMatchConditionCompiler, validatingWebhookConfigurationStrategy } from './webhooks.ts';
