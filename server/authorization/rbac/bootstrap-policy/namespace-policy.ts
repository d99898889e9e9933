// kube's kube-system and kube-public Roles and RoleBindings (plugin/pkg/auth/authorizer/rbac/bootstrappolicy/namespace_policy.go):
// delegated authentication's ConfigMap reader, leader locking of the scheduler and the controller
// manager, the bootstrap signer, the token cleaner and the (deprecated) cloud provider. As Kubernetes
// 1.36 renders them (testdata namespace-roles.yaml, namespace-role-bindings.yaml).
import { role, roleBinding, rule, serviceAccounts, users, type Role, type RoleBinding } from './builders.ts';
import { CONTROLLER_ROLE_PREFIX } from './controller-policy.ts';
import { KubeControllerManager, KubeScheduler, coordinationGroup, eventsRule, legacyGroup } from './policy.ts';

const NamespaceSystem = 'kube-system';
const NamespacePublic = 'kube-public';

/** Leader election by a ConfigMap (the old lock) or a Lease, and coordinated leader election's candidates. */
const leaderLocking = (component: string) =>
  role(NamespaceSystem, {
    name: `system::leader-locking-${component}`,
    rules: [
      rule('watch').groups(legacyGroup).resources('configmaps'),
      rule('get', 'update').groups(legacyGroup).resources('configmaps').names(component),
      rule('get', 'watch', 'list', 'create', 'update').groups(coordinationGroup).resources('leases'),
      rule('get', 'watch', 'list', 'create', 'update').groups(coordinationGroup).resources('leasecandidates'),
    ],
  });

export function namespaceRoles(): Role[] {
  return [
    // kube-public's cluster-info ConfigMap, which the bootstrap signer signs
    role(NamespacePublic, {
      name: `${CONTROLLER_ROLE_PREFIX}bootstrap-signer`,
      rules: [rule('get', 'list', 'watch').groups(legacyGroup).resources('configmaps'), rule('update').groups(legacyGroup).resources('configmaps').names('cluster-info'), eventsRule()],
    }),
    // the ConfigMap an extension API server reads its delegated authentication configuration from
    role(NamespaceSystem, { name: 'extension-apiserver-authentication-reader', rules: [rule('get', 'list', 'watch').groups(legacyGroup).resources('configmaps').names('extension-apiserver-authentication')] }),
    leaderLocking('kube-controller-manager'),
    leaderLocking('kube-scheduler'),
    // the bootstrap signer reads the bootstrap token Secrets
    role(NamespaceSystem, { name: `${CONTROLLER_ROLE_PREFIX}bootstrap-signer`, rules: [rule('get', 'list', 'watch').groups(legacyGroup).resources('secrets')] }),
    // deprecated since 1.10
    role(NamespaceSystem, { name: `${CONTROLLER_ROLE_PREFIX}cloud-provider`, rules: [rule('create', 'get', 'list', 'watch').groups(legacyGroup).resources('configmaps')] }),
    // the token cleaner deletes expired bootstrap tokens, only in kube-system
    role(NamespaceSystem, { name: `${CONTROLLER_ROLE_PREFIX}token-cleaner`, rules: [rule('get', 'list', 'watch', 'delete').groups(legacyGroup).resources('secrets'), eventsRule()] }),
  ];
}

export function namespaceRoleBindings(): RoleBinding[] {
  return [
    roleBinding(NamespacePublic, `${CONTROLLER_ROLE_PREFIX}bootstrap-signer`, serviceAccounts(NamespaceSystem, 'bootstrap-signer')),
    roleBinding(NamespaceSystem, 'extension-apiserver-authentication-reader', users(KubeControllerManager, KubeScheduler), 'system::extension-apiserver-authentication-reader'),
    roleBinding(NamespaceSystem, 'system::leader-locking-kube-controller-manager', [...users(KubeControllerManager), ...serviceAccounts(NamespaceSystem, 'kube-controller-manager')]),
    roleBinding(NamespaceSystem, 'system::leader-locking-kube-scheduler', [...users(KubeScheduler), ...serviceAccounts(NamespaceSystem, 'kube-scheduler')]),
    roleBinding(NamespaceSystem, `${CONTROLLER_ROLE_PREFIX}bootstrap-signer`, serviceAccounts(NamespaceSystem, 'bootstrap-signer')),
    roleBinding(NamespaceSystem, `${CONTROLLER_ROLE_PREFIX}cloud-provider`, serviceAccounts(NamespaceSystem, 'cloud-provider')),
    roleBinding(NamespaceSystem, `${CONTROLLER_ROLE_PREFIX}token-cleaner`, serviceAccounts(NamespaceSystem, 'token-cleaner')),
  ];
}
