// --authorization-mode as kube-apiserver checks it (pkg/kubeapiserver/options/authorization.go's
// messages) and the chain it builds: system:masters first, the modes in order, the union's
// reasons (apiserver/pkg/authorization/union) and the 403 that carries them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { authorizationModeErrors, authorizerChain, alwaysAllowAuthorizer, alwaysDenyAuthorizer, DEFAULT_AUTHORIZATION_MODES } from '../../../server/authorization/modes.ts';
import { authorize, forbiddenError, rulesFor, type AuthorizationAttributes, type Authorizer } from '../../../server/authorization/authorizer.ts';
import { aggregateErrors } from '../../../server/go/errors.ts';

const request = (groups: string[], path = '/api/v1/pods'): AuthorizationAttributes => ({ user: { name: 'u', groups }, verb: 'list', isResourceRequest: true, path, apiGroup: '', apiVersion: 'v1', resource: 'pods', subresource: '', namespace: 'dev', name: '' });
const noRbac: Authorizer = { name: 'RBAC', authorize: () => ({ decision: 'noopinion', reason: 'RBAC: role.rbac.authorization.k8s.io "x" not found' }) };

test('mode lists are checked with kube-apiserver\'s messages', () => {
  assert.deepEqual(authorizationModeErrors(['RBAC']), []);
  assert.deepEqual(authorizationModeErrors(['AlwaysAllow', 'RBAC', 'AlwaysDeny']), []);
  assert.deepEqual(authorizationModeErrors([]), ['at least one authorization-mode must be passed']);
  assert.deepEqual(authorizationModeErrors(['rbac']), ['authorization-mode "rbac" is not a valid mode']);
  assert.deepEqual(authorizationModeErrors(['RBAC', 'RBAC']), ['authorization-mode ["RBAC" "RBAC"] has mode specified more than once']);
  assert.deepEqual(authorizationModeErrors(['Node', 'RBAC']), []);
  assert.deepEqual(authorizationModeErrors(['Webhook', 'RBAC']), []);
  assert.deepEqual(authorizationModeErrors(['ABAC']), ['authorization-mode "ABAC" is not supported by hearth yet (supported: AlwaysAllow, AlwaysDeny, RBAC, Node, Webhook)']);
  assert.equal(aggregateErrors(authorizationModeErrors(['X', 'X'])), '[authorization-mode "X" is not a valid mode, authorization-mode ["X" "X"] has mode specified more than once]');
});

test("the default chain is kubeadm's Node,RBAC, in the order given", () => {
  const node: Authorizer = { name: 'Node', authorize: () => 'noopinion' };
  assert.deepEqual(DEFAULT_AUTHORIZATION_MODES, ['Node', 'RBAC']);
  assert.deepEqual(authorizerChain(DEFAULT_AUTHORIZATION_MODES, noRbac, node).map((z) => z.name), ['system:masters', 'Node', 'RBAC']);
  assert.deepEqual(authorizerChain(['RBAC', 'Node'], noRbac, node).map((z) => z.name), ['system:masters', 'RBAC', 'Node']);
});

test('system:masters is allowed before every mode, AlwaysDeny included', () => {
  const chain = authorizerChain(['AlwaysDeny'], noRbac);
  assert.deepEqual(authorize(chain, request(['system:masters'])), { decision: 'allow', reason: '' });
  assert.deepEqual(authorize(chain, request(['system:authenticated'])), { decision: 'noopinion', reason: 'Everything is forbidden.' });
});

test('the union joins the reasons of the authorizers without an opinion, and the 403 appends them', () => {
  const chain = authorizerChain(['RBAC', 'AlwaysDeny'], noRbac);
  const r = authorize(chain, request(['system:authenticated']));
  assert.deepEqual(r, { decision: 'noopinion', reason: 'RBAC: role.rbac.authorization.k8s.io "x" not found\nEverything is forbidden.' });
  assert.equal(forbiddenError(request(['g']), r.reason).message, 'pods is forbidden: User "u" cannot list resource "pods" in API group "" in the namespace "dev": RBAC: role.rbac.authorization.k8s.io "x" not found\nEverything is forbidden.');
  // AlwaysAllow after RBAC allows what RBAC does not, and says nothing.
  assert.deepEqual(authorize(authorizerChain(['RBAC', 'AlwaysAllow'], noRbac), request([])), { decision: 'allow', reason: '' });
});

test('rule resolvers: AlwaysAllow lists everything, AlwaysDeny nothing, system:masters is none', () => {
  const user = { name: 'u', groups: ['system:masters'] };
  assert.deepEqual(rulesFor(authorizerChain(['AlwaysDeny'], noRbac), user, 'dev'), { resourceRules: [], nonResourceRules: [], incomplete: false, evaluationError: '' });
  assert.deepEqual(rulesFor([alwaysAllowAuthorizer, alwaysDenyAuthorizer], user, 'dev'), {
    resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], resourceNames: [] }],
    nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
    incomplete: false,
    evaluationError: '',
  });
});
