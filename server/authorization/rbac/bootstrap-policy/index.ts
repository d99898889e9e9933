// The RBAC objects hearth keeps in the store from its first start: kube-apiserver's bootstrap policy
// (kube's bootstrappolicy package, Kubernetes 1.36 at its default feature gates), which
// controllers/rbac-bootstrap.ts reconciles at every start as kube's rbac/bootstrap-roles post-start
// hook does, and, apart, what kubeadm would add to a cluster it makes (kubeadm.ts). Pure data: the
// authorizer does not read it (it reads the store).
import { clusterRoleBindings, clusterRoles } from './policy.ts';
import { controllerRoleBindings, controllerRoles } from './controller-policy.ts';
import { namespaceRoleBindings, namespaceRoles } from './namespace-policy.ts';
import type { RbacPolicy } from './builders.ts';

export * from './builders.ts';
export { CONTROLLER_ROLE_PREFIX } from './controller-policy.ts';
export { kubeadmPolicy } from './kubeadm.ts';

/** kube's bootstrappolicy.ClusterRoles() (the cluster-wide and the controllers' roles), its bindings, and the namespaced ones. */
export function bootstrapPolicy(): RbacPolicy {
  return {
    clusterRoles: [...clusterRoles(), ...controllerRoles()],
    clusterRoleBindings: [...clusterRoleBindings(), ...controllerRoleBindings()],
    roles: namespaceRoles(),
    roleBindings: namespaceRoleBindings(),
  };
}
