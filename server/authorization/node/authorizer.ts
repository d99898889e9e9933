// The Node authorizer (kube's plugin/pkg/auth/authorizer/node/node_authorizer.go, with
// AuthorizeNodeWithSelectors on, as in the kube version hearth reports): for a user that is a
// node (pkg/auth/nodeidentifier: `system:node:<name>` in `system:nodes`), reads of secrets,
// configmaps, PVCs, PVs, ResourceClaims and VolumeAttachments, and service-account tokens, only
// along the graph from the object to that node (graph.ts); its own Node, Lease and CSINode by
// name; pods listed only with its spec.nodeName selector; ResourceSlices through their nodeName;
// everything else by the static rules of kube's bootstrap NodeRules(). No opinion otherwise, with
// kube's reason; users that are not nodes get no opinion and no reason (RBAC decides).
import type { Authorizer, AuthorizationAttributes, AuthorizationResult, RulesResult } from '../authorizer.ts';
import type { UserInfo } from '../../authentication/user.ts';
import { goQuote } from '../../go/strconv.ts';
import { nodeRules } from '../rbac/bootstrap-policy/policy.ts';
import { policyRulesOf, ruleAllows, type PolicyRule } from '../rbac/rules.ts';
import type { NodeGraph, VertexType } from './graph.ts';

/** user.NodesGroup. */
export const NODES_GROUP = 'system:nodes';
const NODE_USER_PREFIX = 'system:node:';
/** api.NamespaceNodeLease. */
const NODE_LEASE_NAMESPACE = 'kube-node-lease';

/**
 * NodeIdentifier.NodeIdentity: the node's name when the user is a node (the name may be empty:
 * a node that cannot be identified), undefined when it is not.
 */
export function nodeIdentity(user: UserInfo): string | undefined {
  if (!user.name.startsWith(NODE_USER_PREFIX)) return undefined;
  if (!user.groups.includes(NODES_GROUP)) return undefined;
  return user.name.slice(NODE_USER_PREFIX.length);
}

const allow: AuthorizationResult = { decision: 'allow', reason: '' };
const noOpinion = (reason = ''): AuthorizationResult => ({ decision: 'noopinion', reason });

export function nodeAuthorizer(graph: NodeGraph, rules: readonly PolicyRule[] = policyRulesOf(nodeRules().map((r) => r.build()))): Authorizer {
  /** authorize: a name, and a path from that object to the node. */
  const related = (nodeName: string, type: VertexType, a: AuthorizationAttributes): AuthorizationResult => {
    if (!a.name) return noOpinion('No Object name found');
    return graph.hasPathFrom(nodeName, type, a.namespace, a.name).found ? allow : noOpinion(`no relationship found between node '${nodeName}' and this object`);
  };

  /** authorizeGet: a get of the object itself. */
  const get = (nodeName: string, type: VertexType, a: AuthorizationAttributes): AuthorizationResult => {
    if (a.verb !== 'get') return noOpinion('can only get individual resources of this type');
    if (a.subresource) return noOpinion('cannot get subresource');
    return related(nodeName, type, a);
  };

  /** authorizeReadNamespacedObject: get, list or watch of one named, namespaced object. */
  const readNamespaced = (nodeName: string, type: VertexType, a: AuthorizationAttributes): AuthorizationResult => {
    if (a.verb !== 'get' && a.verb !== 'list' && a.verb !== 'watch') return noOpinion('can only read resources of this type');
    if (a.subresource) return noOpinion('cannot read subresource');
    if (!a.namespace) return noOpinion('can only read namespaced object of this type');
    return related(nodeName, type, a);
  };

  /** authorizeStatusUpdate: a PVC's status, written by the node resizing its volume. */
  const statusUpdate = (nodeName: string, type: VertexType, a: AuthorizationAttributes): AuthorizationResult => {
    if (a.verb !== 'update' && a.verb !== 'patch') return noOpinion('can only get/update/patch this type');
    if (a.subresource !== 'status') return noOpinion('can only update status subresource');
    return related(nodeName, type, a);
  };

  /** authorizeCreateToken: a token for a service account one of its pods runs as. */
  const createToken = (nodeName: string, a: AuthorizationAttributes): AuthorizationResult => {
    if (a.verb !== 'create' || !a.name) return noOpinion('can only create tokens for individual service accounts');
    if (a.subresource !== 'token') return noOpinion('can only create token subresource of serviceaccount');
    return graph.hasPathFrom(nodeName, 'serviceAccount', a.namespace, a.name).found ? allow : noOpinion(`no relationship found between node '${nodeName}' and this object`);
  };

  /** authorizeLease: its own Lease in kube-node-lease (create is NodeRestriction's to check). */
  const lease = (nodeName: string, a: AuthorizationAttributes): AuthorizationResult => {
    if (!['get', 'create', 'update', 'patch', 'delete'].includes(a.verb)) return noOpinion('can only get, create, update, patch, or delete a node lease');
    if (a.namespace !== NODE_LEASE_NAMESPACE) return noOpinion(`can only access leases in the ${goQuote(NODE_LEASE_NAMESPACE)} system namespace`);
    if (a.verb !== 'create' && a.name !== nodeName) return noOpinion('can only access node lease with the same name as the requesting node');
    return allow;
  };

  /** authorizeCSINode: its own CSINode. */
  const csiNode = (nodeName: string, a: AuthorizationAttributes): AuthorizationResult => {
    if (!['get', 'create', 'update', 'patch', 'delete'].includes(a.verb)) return noOpinion('can only get, create, update, patch, or delete a CSINode');
    if (a.subresource) return noOpinion('cannot authorize CSINode subresources');
    if (a.verb !== 'create' && a.name !== nodeName) return noOpinion('can only access CSINode with the same name as the requesting node');
    return allow;
  };

  /** authorizeResourceSlice: its own slices, by the graph or by a nodeName field selector. */
  const resourceSlice = (nodeName: string, a: AuthorizationAttributes): AuthorizationResult => {
    if (a.subresource) return noOpinion('cannot authorize ResourceSlice subresources');
    switch (a.verb) {
      case 'create':
        // NodeRestriction checks the new slice's nodeName.
        return allow;
      case 'get':
      case 'update':
      case 'patch':
      case 'delete':
        return related(nodeName, 'resourceslice', a);
      case 'watch':
      case 'list':
      case 'deletecollection':
        // resource.ResourceSliceSelectorNodeName.
        if (selects(a, 'spec.nodeName', nodeName)) return allow;
        return noOpinion('can only list/watch/deletecollection resourceslices with nodeName field selector');
      default:
        return noOpinion('only the following verbs are allowed for a ResourceSlice: get, watch, list, create, update, patch, delete, deletecollection');
    }
  };

  /** authorizeNode: its own Node read by name (before it exists, too); writes are NodeRestriction's. */
  const node = (nodeName: string, a: AuthorizationAttributes): AuthorizationResult => {
    if (a.subresource === '') {
      if (a.verb === 'create' || a.verb === 'update' || a.verb === 'patch') return allow;
      if (a.verb === 'get' || a.verb === 'list' || a.verb === 'watch') {
        if (a.name === nodeName) return allow;
        if (a.name === '') return noOpinion(`node '${nodeName}' cannot read all nodes, only its own Node object`);
        return noOpinion(`node '${nodeName}' cannot read '${a.name}', only its own Node object`);
      }
    } else if (a.subresource === 'status' && (a.verb === 'update' || a.verb === 'patch')) return allow;
    return noOpinion();
  };

  /** authorizePod: its pods by the graph, lists with its spec.nodeName selector, mirror pods and status. */
  const pod = (nodeName: string, a: AuthorizationAttributes): AuthorizationResult => {
    switch (a.subresource) {
      case '':
        if (a.verb === 'get') return get(nodeName, 'pod', a);
        if (a.verb === 'list' || a.verb === 'watch') {
          if (selects(a, 'spec.nodeName', nodeName)) return allow;
          if (a.name) return related(nodeName, 'pod', a);
          return noOpinion('can only list/watch pods with spec.nodeName field selector');
        }
        if (a.verb === 'create' || a.verb === 'delete') return allow;
        break;
      case 'status':
        if (a.verb === 'update' || a.verb === 'patch') return allow;
        break;
      case 'eviction':
        if (a.verb === 'create') return allow;
        break;
    }
    return noOpinion();
  };

  return {
    name: 'Node',
    authorize(a: AuthorizationAttributes): AuthorizationResult {
      const nodeName = nodeIdentity(a.user);
      if (nodeName === undefined) return noOpinion();
      if (nodeName === '') return noOpinion(`unknown node for user ${goQuote(a.user.name)}`);
      if (a.isResourceRequest) {
        switch (`${a.resource}.${a.apiGroup}`) {
          case 'secrets.':
            return readNamespaced(nodeName, 'secret', a);
          case 'configmaps.':
            return readNamespaced(nodeName, 'configmap', a);
          case 'persistentvolumeclaims.':
            return a.subresource === 'status' ? statusUpdate(nodeName, 'pvc', a) : get(nodeName, 'pvc', a);
          case 'persistentvolumes.':
            return get(nodeName, 'pv', a);
          case 'resourceclaims.resource.k8s.io':
            return get(nodeName, 'resourceclaim', a);
          case 'volumeattachments.storage.k8s.io':
            return get(nodeName, 'volumeattachment', a);
          case 'serviceaccounts.':
            return createToken(nodeName, a);
          case 'leases.coordination.k8s.io':
            return lease(nodeName, a);
          case 'csinodes.storage.k8s.io':
            return csiNode(nodeName, a);
          case 'resourceslices.resource.k8s.io':
            return resourceSlice(nodeName, a);
          case 'nodes.':
            return node(nodeName, a);
          case 'pods.':
            return pod(nodeName, a);
        }
      }
      // What is not subdivided: the static rules every node has.
      return rules.some((r) => ruleAllows(a, r)) ? allow : noOpinion();
    },
    rulesFor(user: UserInfo): RulesResult {
      // A node's permissions depend on the graph: they cannot be listed (kube's RulesFor).
      if (nodeIdentity(user) !== undefined) return { resourceRules: [], nonResourceRules: [], incomplete: true, evaluationError: 'node authorizer does not support user rule resolution' };
      return { resourceRules: [], nonResourceRules: [], incomplete: false, evaluationError: '' };
    },
  };
}

/** A field selector requirement `<field>=<value>` among the request's (selection.Equals). */
function selects(a: AuthorizationAttributes, field: string, value: string): boolean {
  return a.fieldSelectorRequirements?.some((r) => r.field === field && r.op === '=' && r.value === value) ?? false;
}
