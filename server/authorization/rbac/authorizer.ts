// The RBAC authorizer (kube's plugin/pkg/auth/authorizer/rbac/rbac.go): a request is allowed by
// the first rule of a role bound to its user that matches it, with the reason naming the binding
// (`RBAC: allowed by RoleBinding "x/ns" of ClusterRole "view" to User "alice"`); otherwise RBAC
// has no opinion, and its reason lists the errors met resolving the roles (a binding to a role
// that does not exist). Also the rule resolver SelfSubjectRulesReview asks (RulesFor).
import type { Authorizer, AuthorizationAttributes, AuthorizationResult, RulesResult } from '../authorizer.ts';
import { aggregateErrors } from '../../go/errors.ts';
import type { UserInfo } from '../../authentication/user.ts';
import { describeSource, type RbacPolicyIndex } from './policy-index.ts';
import { ruleAllows } from './rules.ts';

export function rbacAuthorizer(index: RbacPolicyIndex): Authorizer {
  return {
    name: 'RBAC',
    authorize(a: AuthorizationAttributes): AuthorizationResult {
      // kube's authorizingVisitor over the user's resolved bindings (policy-index.ts keeps them):
      // the first rule that allows decides; the reason naming its binding is made once per binding.
      let errors: string[] | undefined;
      for (const r of index.resolvedFor(a.user, a.namespace)) {
        if (r.error !== undefined) {
          (errors ??= []).push(r.error);
          continue;
        }
        for (const rule of r.rules) if (ruleAllows(a, rule)) return { decision: 'allow', reason: (r.described ??= `RBAC: allowed by ${describeSource(r.source)}`) };
      }
      return { decision: 'noopinion', reason: errors ? `RBAC: ${aggregateErrors(errors)}` : '' };
    },
    rulesFor(user: UserInfo, namespace: string): RulesResult {
      const { rules, errors } = index.rulesFor(user, namespace);
      const out: RulesResult = { resourceRules: [], nonResourceRules: [], incomplete: false, evaluationError: aggregateErrors(errors) };
      for (const r of rules) {
        if (r.resources.length) out.resourceRules.push({ verbs: [...r.verbs], apiGroups: [...r.apiGroups], resources: [...r.resources], resourceNames: [...r.resourceNames] });
        if (r.nonResourceURLs.length) out.nonResourceRules.push({ verbs: [...r.verbs], nonResourceURLs: [...r.nonResourceURLs] });
      }
      return out;
    },
  };
}
