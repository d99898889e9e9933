// --authorization-mode: kube-apiserver's ordered, comma-separated list of authorizers
// (pkg/kubeapiserver/authorizer/modes, options/authorization.go's Validate and its messages),
// and the chain built from it (pkg/kubeapiserver/authorizer/reload.go): system:masters first,
// always (the privileged groups authorizer), then each mode in the order given. hearth has
// Node, RBAC, AlwaysAllow, AlwaysDeny and Webhook (webhook.ts, built into the chain by
// reload.ts); ABAC is kube's mode it does not have, refused at start by name rather than quietly
// left out.
import type { Authorizer, AuthorizationResult, RulesResult } from './authorizer.ts';
import { systemMastersAuthorizer } from './authorizer.ts';
import { goQuote } from '../go/strconv.ts';

/** kube's AuthorizationModeChoices, in its order. */
export const AUTHORIZATION_MODES = ['AlwaysAllow', 'AlwaysDeny', 'ABAC', 'Webhook', 'RBAC', 'Node'] as const;
/** The modes hearth implements. */
export const SUPPORTED_AUTHORIZATION_MODES = ['AlwaysAllow', 'AlwaysDeny', 'RBAC', 'Node', 'Webhook'];
/** hearth's default: kubeadm's and k3s's `Node,RBAC` (kube-apiserver's own is AlwaysAllow). */
export const DEFAULT_AUTHORIZATION_MODES = ['Node', 'RBAC'];

/** Go's %q of a []string: `["RBAC" "RBAC"]`. */
const goQuoteList = (list: readonly string[]): string => `[${list.map(goQuote).join(' ')}]`;

/** What kube-apiserver says of a mode list (its messages, in its order), then the modes hearth lacks. */
export function authorizationModeErrors(modes: readonly string[]): string[] {
  const errors: string[] = [];
  if (modes.length === 0) errors.push('at least one authorization-mode must be passed');
  for (const mode of modes) {
    if (!(AUTHORIZATION_MODES as readonly string[]).includes(mode)) errors.push(`authorization-mode ${goQuote(mode)} is not a valid mode`);
    else if (!SUPPORTED_AUTHORIZATION_MODES.includes(mode)) errors.push(`authorization-mode ${goQuote(mode)} is not supported by hearth yet (supported: ${SUPPORTED_AUTHORIZATION_MODES.join(', ')})`);
  }
  if (new Set(modes).size !== modes.length) errors.push(`authorization-mode ${goQuoteList(modes)} has mode specified more than once`);
  return errors;
}

/** AlwaysAllow: everything, and a rule resolver saying so (kube's alwaysAllowAuthorizer). */
export const alwaysAllowAuthorizer: Authorizer = {
  name: 'AlwaysAllow',
  authorize: (): AuthorizationResult => ({ decision: 'allow', reason: '' }),
  rulesFor: (): RulesResult => ({
    resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], resourceNames: [] }],
    nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
    incomplete: false,
    evaluationError: '',
  }),
};

/** AlwaysDeny: no opinion with a reason, so a later authorizer may still allow (kube's alwaysDenyAuthorizer). */
export const alwaysDenyAuthorizer: Authorizer = {
  name: 'AlwaysDeny',
  authorize: (): AuthorizationResult => ({ decision: 'noopinion', reason: 'Everything is forbidden.' }),
  rulesFor: (): RulesResult => ({ resourceRules: [], nonResourceRules: [], incomplete: false, evaluationError: '' }),
};

/**
 * The chain for valid, supported modes: system:masters, then each mode (Node, kube's graph-based
 * authorizer of kubelets, when `node` is given). What everyone may do
 * (health, version, discovery, the self reviews) is RBAC's bootstrap policy
 * (system:public-info-viewer, system:discovery, system:basic-user), as in kube.
 */
export function authorizerChain(modes: readonly string[], rbac: Authorizer, node?: Authorizer): Authorizer[] {
  const chain: Authorizer[] = [systemMastersAuthorizer];
  for (const mode of modes) {
    if (mode === 'AlwaysAllow') chain.push(alwaysAllowAuthorizer);
    else if (mode === 'AlwaysDeny') chain.push(alwaysDenyAuthorizer);
    else if (mode === 'RBAC') chain.push(rbac);
    else if (mode === 'Node' && node) chain.push(node);
    else throw new Error(`authorization-mode ${goQuote(mode)} is not supported`);
  }
  return chain;
}
