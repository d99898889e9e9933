// hearth runs what kubeadm would: the bindings `kubeadm init` adds so that a kubelet can join with a
// bootstrap token (kube-apiserver itself does not make them). kubeadm's
// cmd/kubeadm/app/phases/bootstraptoken/node (tlsbootstrap.go: kubeadm:kubelet-bootstrap,
// kubeadm:node-autoapprove-bootstrap, kubeadm:node-autoapprove-certificate-rotation) and
// bootstraptoken/clusterinfo (kubeadm:bootstrap-signer-clusterinfo, anonymous reads of kube-public's
// cluster-info). Like kubeadm's, they carry no bootstrapping label or autoupdate annotation, and
// are kept apart from kube's policy (its comparison with kube's testdata leaves them out).
//
// One difference: kubeadm binds the bootstrap roles to its default token's group
// (system:bootstrappers:kubeadm:default-node-token, the auth-extra-groups of the tokens
// `kubeadm token create` makes); hearth makes no tokens, so it binds them to every bootstrap
// token's group, system:bootstrappers.
import { RBAC_API_VERSION, RBAC_GROUP, groups, rule, users, type ClusterRoleBinding, type RbacPolicy, type Role, type RoleBinding, type Subject } from './builders.ts';

export const BOOTSTRAPPERS_GROUP = 'system:bootstrappers';
const NODES_GROUP = 'system:nodes';
const ANONYMOUS_USER = 'system:anonymous';
const CLUSTER_INFO_ROLE = 'kubeadm:bootstrap-signer-clusterinfo';

const binding = (name: string, roleName: string, subjects: Subject[]): ClusterRoleBinding => ({
  apiVersion: RBAC_API_VERSION,
  kind: 'ClusterRoleBinding',
  metadata: { name },
  roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: roleName },
  subjects,
});

export function kubeadmPolicy(): RbacPolicy {
  const clusterInfoRole: Role = {
    apiVersion: RBAC_API_VERSION,
    kind: 'Role',
    metadata: { name: CLUSTER_INFO_ROLE, namespace: 'kube-public' },
    rules: [rule('get').groups('').resources('configmaps').names('cluster-info').build()],
  };
  const clusterInfoBinding: RoleBinding = {
    apiVersion: RBAC_API_VERSION,
    kind: 'RoleBinding',
    metadata: { name: CLUSTER_INFO_ROLE, namespace: 'kube-public' },
    roleRef: { apiGroup: RBAC_GROUP, kind: 'Role', name: CLUSTER_INFO_ROLE },
    subjects: users(ANONYMOUS_USER),
  };
  return {
    clusterRoles: [],
    clusterRoleBindings: [
      // a bootstrap token may create CSRs ...
      binding('kubeadm:kubelet-bootstrap', 'system:node-bootstrapper', groups(BOOTSTRAPPERS_GROUP)),
      // ... which the csrapprover approves: a node's first client certificate
      binding('kubeadm:node-autoapprove-bootstrap', 'system:certificates.k8s.io:certificatesigningrequests:nodeclient', groups(BOOTSTRAPPERS_GROUP)),
      // and a node's renewal of its own
      binding('kubeadm:node-autoapprove-certificate-rotation', 'system:certificates.k8s.io:certificatesigningrequests:selfnodeclient', groups(NODES_GROUP)),
    ],
    roles: [clusterInfoRole],
    roleBindings: [clusterInfoBinding],
  };
}
