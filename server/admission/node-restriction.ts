// NodeRestriction (kube's plugin/pkg/admission/noderestriction/admission.go, 1.36, with
// pkg/auth/nodeidentifier): what a kubelet, a user `system:node:<name>` in `system:nodes`, may
// write is narrowed to what concerns its own node. It may create only mirror pods bound to itself
// and owned by its Node, referencing no other API object; delete and evict only pods bound to
// itself; update only the status of those pods (not their labels or resource claim statuses);
// create, update and delete only its own Node (no configSource, no change to taints or owners, no
// `node-restriction.kubernetes.io/` labels, only the kubelet's own `kubernetes.io`/`k8s.io`
// labels); only the status capacity and conditions of PVCs; tokens only for a pod bound to itself,
// with an audience the pod uses or that it is authorized to ask for; only its own Lease in
// kube-node-lease, its own CSINode, ResourceSlices naming itself, and kubelet CSRs naming itself.
// Anyone else is never looked at. kube's plugin is a mutating one (it implements Admit, not
// Validate) and sits right after ServiceAccount in kube's order; so it is here. Every refusal is
// admission.NewForbidden's 403; an object the plugin looks up and does not find is the 404 a
// lister answers (`pod "x" not found`).
import { newForbidden } from './forbidden.ts';
import type { AdmissionAttributes, AdmissionPlugin } from './types.ts';
import type { UserInfo } from '../authentication/user.ts';
import { notFound } from '../errors.ts';
import { deepEqual, semanticEqual } from '../util/json.ts';
import { parseCsr } from '../util/pkcs10.ts';
import { visitPodConfigMapNames, visitPodSecretNames } from '../util/pod-references.ts';

export const NODE_RESTRICTION = 'NodeRestriction';
/** user.NodesGroup and nodeidentifier's prefix. */
const NODES_GROUP = 'system:nodes';
const NODE_USER_PREFIX = 'system:node:';
/** api.MirrorPodAnnotationKey. */
const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';
/** api.NamespaceNodeLease. */
const NODE_LEASE_NAMESPACE = 'kube-node-lease';
const KUBELET_SERVING_SIGNER = 'kubernetes.io/kubelet-serving';
const KUBE_APISERVER_CLIENT_KUBELET_SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';
/** v1.LabelNamespaceNodeRestriction. */
const NODE_RESTRICTION_LABEL_NAMESPACE = 'node-restriction.kubernetes.io';
/** k8s.io/kubelet's kubeletLabels: the kubernetes.io labels a kubelet may set on its Node. */
const KUBELET_LABELS = new Set([
  'kubernetes.io/hostname',
  'topology.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/region',
  'beta.kubernetes.io/instance-type',
  'node.kubernetes.io/instance-type',
  'kubernetes.io/os',
  'kubernetes.io/arch',
  'beta.kubernetes.io/os',
  'beta.kubernetes.io/arch',
]);
/** k8s.io/kubelet's kubeletLabelNamespaces (each with its subdomains). */
const KUBELET_LABEL_NAMESPACES = ['kubelet.kubernetes.io', 'node.kubernetes.io'];
/** The verb an authorizer is asked for an audience no volume of the pod uses (ServiceAccountNodeAudienceRestriction, on in 1.36). */
export const REQUEST_TOKEN_AUDIENCE_VERB = 'request-serviceaccounts-token-audience';

/** The kinds the plugin reads (kube's listers), by resource. */
export type NodeRestrictionKind = 'pods' | 'nodes' | 'persistentvolumeclaims' | 'persistentvolumes' | 'csidrivers';

export interface NodeRestrictionLookups {
  /** The current object, or undefined (a read of the store, no request). */
  get(kind: NodeRestrictionKind, namespace: string, name: string): unknown;
  /**
   * Whether the authorizer chain allows `user` the verb `request-serviceaccounts-token-audience`
   * on resource `audience` (group ""), named `serviceAccount` in `namespace`.
   */
  mayRequestAudience(user: UserInfo, namespace: string, serviceAccount: string, audience: string): boolean | Promise<boolean>;
  /** The API server's own audiences (--api-audiences), which any pod's token may have. */
  apiAudiences(): readonly string[];
}

/** nodeidentifier.NodeIdentity: the node's name, when the user is one (name prefix and group both). */
export function nodeIdentity(user: UserInfo): { isNode: boolean; nodeName: string } {
  if (!user.name.startsWith(NODE_USER_PREFIX) || !user.groups.includes(NODES_GROUP)) return { isNode: false, nodeName: '' };
  return { isNode: true, nodeName: user.name.slice(NODE_USER_PREFIX.length) };
}

type Json = Record<string, unknown>;
const rec = (v: unknown): Json => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {});
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
/** A Go %q of a string (the names here are plain). */
const q = (s: string): string => JSON.stringify(s);

/** A lister's NotFound names the singular, lower-case resource (`pod "x" not found`). */
const listerNotFound = notFound;

export function nodeRestriction(lookups: NodeRestrictionLookups): AdmissionPlugin {
  return {
    name: NODE_RESTRICTION,
    admit(a) {
      if (a.operation === 'CONNECT') return;
      const { isNode, nodeName } = nodeIdentity(a.user);
      // Only nodes are restricted.
      if (!isNode) return;
      if (!nodeName) throw newForbidden(a, `could not determine node from user ${q(a.user.name)}`);
      const { group, resource } = a.info;
      switch (`${resource}.${group}`) {
        case 'pods.':
          switch (a.subresource) {
            case '':
              return admitPod(lookups, nodeName, a);
            case 'status':
              return admitPodStatus(nodeName, a);
            case 'eviction':
              return admitPodEviction(lookups, nodeName, a);
            default:
              throw newForbidden(a, `unexpected pod subresource ${q(a.subresource)}, only 'status' and 'eviction' are allowed`);
          }
        case 'nodes.':
          return admitNode(nodeName, a);
        case 'persistentvolumeclaims.':
          if (a.subresource === 'status') return admitPvcStatus(nodeName, a);
          throw newForbidden(a, 'may only update PVC status');
        case 'serviceaccounts.':
          return admitServiceAccount(lookups, nodeName, a);
        case 'leases.coordination.k8s.io':
          return admitLease(nodeName, a);
        case 'csinodes.storage.k8s.io':
          return admitCsiNode(nodeName, a);
        case 'resourceslices.resource.k8s.io':
          return admitResourceSlice(nodeName, a);
        case 'certificatesigningrequests.certificates.k8s.io':
          return admitCsr(nodeName, a);
        default:
          return;
      }
    },
  };
}

// ---- pods ----

function admitPod(lookups: NodeRestrictionLookups, nodeName: string, a: AdmissionAttributes): void {
  switch (a.operation) {
    case 'CREATE':
      return admitPodCreate(lookups, nodeName, a);
    case 'DELETE': {
      // Only a pod bound to itself (the stored pod decides).
      const existing = a.oldObject ?? lookups.get('pods', a.namespace, a.name);
      if (existing === undefined) throw listerNotFound('', 'pod', a.name);
      if (str(rec(rec(existing).spec).nodeName) !== nodeName) throw newForbidden(a, `node ${q(nodeName)} can only delete pods with spec.nodeName set to itself`);
      return;
    }
    default:
      throw newForbidden(a, `unexpected operation ${q(a.operation)}, node ${q(nodeName)} can only create and delete mirror pods`);
  }
}

function admitPodCreate(lookups: NodeRestrictionLookups, nodeName: string, a: AdmissionAttributes): void {
  const pod = rec(a.object);
  const meta = rec(pod.metadata);
  if (!(MIRROR_POD_ANNOTATION in rec(meta.annotations))) {
    throw newForbidden(a, `pod does not have ${q(MIRROR_POD_ANNOTATION)} annotation, node ${q(nodeName)} can only create mirror pods`);
  }
  if (str(rec(pod.spec).nodeName) !== nodeName) throw newForbidden(a, `node ${q(nodeName)} can only create pods with spec.nodeName set to itself`);
  const owners = list(meta.ownerReferences);
  if (owners.length > 1) throw newForbidden(a, `node ${q(nodeName)} can only create pods with a single owner reference set to itself`);
  if (owners.length === 0) throw newForbidden(a, `node ${q(nodeName)} can only create pods with an owner reference set to itself`);
  const owner = rec(owners[0]);
  if (owner.apiVersion !== 'v1' || owner.kind !== 'Node' || owner.name !== nodeName) {
    throw newForbidden(a, `node ${q(nodeName)} can only create pods with an owner reference set to itself`);
  }
  if (owner.controller !== true) throw newForbidden(a, `node ${q(nodeName)} can only create pods with a controller owner reference set to itself`);
  if (owner.blockOwnerDeletion === true) throw newForbidden(a, `node ${q(nodeName)} must not set blockOwnerDeletion on an owner reference`);
  // The owner is this node as it is now, not one of the same name deleted since.
  const node = lookups.get('nodes', '', nodeName);
  if (node === undefined) throw listerNotFound('', 'node', nodeName);
  const nodeUid = str(rec(rec(node).metadata).uid);
  if (str(owner.uid) !== nodeUid) throw newForbidden(a, `node ${nodeName} UID mismatch: expected ${str(owner.uid)} got ${nodeUid}`);
  // A mirror pod references no other API object: the kubelet could read it through the pod.
  const reference = apiObjectReference(pod);
  if (reference?.error) throw newForbidden(a, reference.error);
  if (reference) throw newForbidden(a, `node ${q(nodeName)} can not create pods that reference ${reference.resource}`);
}

/** Volume sources that need nothing from the API (podutil.HasAPIObjectReference lets them by). */
const LOCAL_VOLUME_SOURCES = [
  'awsElasticBlockStore', 'azureDisk', 'cephfs', 'cinder', 'downwardAPI', 'emptyDir', 'fc', 'flexVolume', 'flocker', 'gcePersistentDisk',
  'gitRepo', 'hostPath', 'image', 'iscsi', 'nfs', 'photonPersistentDisk', 'portworxVolume', 'quobyte', 'rbd', 'scaleIO', 'storageos', 'vsphereVolume',
];
/** The volume sources that do, and what podutil.HasAPIObjectReference names for each. */
const API_VOLUME_SOURCES: [string, string][] = [
  ['configMap', 'configmaps (via configmap volumes)'],
  ['secret', 'secrets (via secret volumes)'],
  ['csi', 'csidrivers (via CSI volumes)'],
  ['glusterfs', 'endpoints (via glusterFS volumes)'],
  ['persistentVolumeClaim', 'persistentvolumeclaims'],
  ['ephemeral', 'persistentvolumeclaims (via ephemeral volumes)'],
  ['azureFile', 'secrets (via azureFile volumes)'],
];
const API_PROJECTIONS: [string, string][] = [
  ['configMap', 'configmaps (via projected volumes)'],
  ['secret', 'secrets (via projected volumes)'],
  ['serviceAccountToken', 'serviceaccounts (via projected volumes)'],
  ['clusterTrustBundle', 'clustertrustbundles'],
  ['podCertificate', 'podcertificates'],
];

/**
 * podutil.HasAPIObjectReference: the plural resource (and how) of the first API object the pod
 * references, its error for a volume it does not know, or undefined when there is none.
 */
export function apiObjectReference(pod: Json): { resource: string; error?: undefined } | { resource?: undefined; error: string } | undefined {
  const spec = rec(pod.spec);
  if (str(spec.serviceAccountName)) return { resource: 'serviceaccounts' };
  // (podutil's visitors stop at the first name they find)
  if (!visitPodSecretNames({ spec }, () => false)) return { resource: 'secrets' };
  if (!visitPodConfigMapNames({ spec }, () => false)) return { resource: 'configmaps' };
  if (list(spec.resourceClaims).length) return { resource: 'resourceclaims' };
  for (const v of list(spec.volumes).map(rec)) {
    if (LOCAL_VOLUME_SOURCES.some((s) => v[s] != null)) continue;
    const api = API_VOLUME_SOURCES.find(([s]) => v[s] != null);
    if (api) return { resource: api[1] };
    // (two spaces, as kube's message has them)
    if (v.projected == null) return { error: `unknown volume type for volume  ${q(str(v.name))}` };
    for (const source of list(rec(v.projected).sources).map(rec)) {
      const projection = API_PROJECTIONS.find(([s]) => source[s] != null);
      if (projection) return { resource: projection[1] };
      if (source.downwardAPI == null) return { error: `unknown source for projected volume ${q(str(v.name))}` };
    }
  }
  return undefined;
}

function admitPodStatus(nodeName: string, a: AdmissionAttributes): void {
  if (a.operation !== 'UPDATE') throw newForbidden(a, `unexpected operation ${q(a.operation)}`);
  const oldPod = rec(a.oldObject);
  const newPod = rec(a.object);
  if (str(rec(oldPod.spec).nodeName) !== nodeName) throw newForbidden(a, `node ${q(nodeName)} can only update pod status for pods with spec.nodeName set to itself`);
  // labels.Equals: an absent map and an empty one are the same.
  if (!deepEqual(rec(rec(oldPod.metadata).labels), rec(rec(newPod.metadata).labels))) throw newForbidden(a, `node ${q(nodeName)} cannot update labels through pod status`);
  if (!resourceClaimStatusesEqual(list(rec(oldPod.status).resourceClaimStatuses), list(rec(newPod.status).resourceClaimStatuses))) {
    throw newForbidden(a, `node ${q(nodeName)} cannot update resource claim statues`);
  }
}

/** Entries compared by name and claim name, in order. */
function resourceClaimStatusesEqual(a: unknown[], b: unknown[]): boolean {
  if (a.length !== b.length) return false;
  return a.every((x, i) => {
    const [ea, eb] = [rec(x), rec(b[i])];
    return ea.name === eb.name && (ea.resourceClaimName ?? null) === (eb.resourceClaimName ?? null);
  });
}

function admitPodEviction(lookups: NodeRestrictionLookups, nodeName: string, a: AdmissionAttributes): void {
  if (a.operation !== 'CREATE') throw newForbidden(a, `unexpected operation ${a.operation}`);
  // The name on the URL, else the Eviction's.
  const podName = a.name || str(rec(rec(a.object).metadata).name);
  if (!podName) throw newForbidden(a, 'could not determine pod from request data');
  const existing = lookups.get('pods', a.namespace, podName);
  if (existing === undefined) throw listerNotFound('', 'pod', podName);
  if (str(rec(rec(existing).spec).nodeName) !== nodeName) throw newForbidden(a, `node ${nodeName} can only evict pods with spec.nodeName set to itself`);
}

// ---- nodes ----

function admitNode(nodeName: string, a: AdmissionAttributes): void {
  if (a.name !== nodeName) throw newForbidden(a, `node ${q(nodeName)} is not allowed to modify node ${q(a.name)}`);
  if (a.operation === 'CREATE') {
    const node = rec(a.object);
    // Access is scoped by what the Node's spec names: a config source would widen it.
    if (rec(node.spec).configSource != null) throw newForbidden(a, `node ${q(nodeName)} is not allowed to create pods with a non-nil configSource`);
    const forbiddenLabels = forbiddenLabelsOf(modifiedLabels(rec(rec(node.metadata).labels), {}));
    if (forbiddenLabels.length) throw newForbidden(a, `node ${q(nodeName)} is not allowed to set the following labels: ${forbiddenLabels.join(', ')}`);
  }
  if (a.operation === 'UPDATE') {
    const node = rec(a.object);
    const oldNode = rec(a.oldObject);
    const [spec, oldSpec] = [rec(node.spec), rec(oldNode.spec)];
    // Only a new non-nil one: old kubelets drop the field on a status update.
    if (spec.configSource != null && !semanticEqual(spec.configSource, oldSpec.configSource)) {
      throw newForbidden(a, `node ${q(nodeName)} is not allowed to update configSource to a new non-nil configSource`);
    }
    // Taints keep workloads off a node: it may not lift or change its own.
    if (!semanticEqual(spec.taints, oldSpec.taints)) throw newForbidden(a, `node ${q(nodeName)} is not allowed to modify taints`);
    // Nor its owners: a garbage collector would act on them.
    if (!semanticEqual(rec(node.metadata).ownerReferences, rec(oldNode.metadata).ownerReferences)) {
      throw newForbidden(a, `node ${q(nodeName)} is not allowed to modify ownerReferences`);
    }
    const forbiddenLabels = forbiddenLabelsOf(modifiedLabels(rec(rec(node.metadata).labels), rec(rec(oldNode.metadata).labels)));
    if (forbiddenLabels.length) throw newForbidden(a, `is not allowed to modify labels: ${forbiddenLabels.join(', ')}`);
  }
}

/** getModifiedLabels: the keys added, removed or changed. */
function modifiedLabels(a: Json, b: Json): Set<string> {
  const out = new Set<string>();
  for (const k of Object.keys(a)) if (!(k in b) || a[k] !== b[k]) out.add(k);
  for (const k of Object.keys(b)) if (!(k in a) || a[k] !== b[k]) out.add(k);
  return out;
}

const labelNamespace = (key: string): string => (key.includes('/') ? key.slice(0, key.indexOf('/')) : '');
const inNamespace = (ns: string, domain: string): boolean => ns === domain || ns.endsWith('.' + domain);

/** getForbiddenLabels, sorted (sets.String.List). */
export function forbiddenLabelsOf(modified: Set<string>): string[] {
  const out: string[] = [];
  for (const label of modified) {
    const ns = labelNamespace(label);
    const kubernetesLabel = inNamespace(ns, 'kubernetes.io') || inNamespace(ns, 'k8s.io');
    const kubeletLabel = KUBELET_LABELS.has(label) || KUBELET_LABEL_NAMESPACES.some((d) => inNamespace(ns, d));
    if (inNamespace(ns, NODE_RESTRICTION_LABEL_NAMESPACE) || (kubernetesLabel && !kubeletLabel)) out.push(label);
  }
  return out.sort();
}

// ---- persistentvolumeclaims/status ----

function admitPvcStatus(nodeName: string, a: AdmissionAttributes): void {
  if (a.operation !== 'UPDATE') throw newForbidden(a, `unexpected operation ${q(a.operation)}`);
  // What a node may change: capacity, conditions, and (RecoverVolumeExpansionFailure, GA) the
  // allocated resources and their statuses; managedFields are not compared (kube's TODO).
  const strip = (o: unknown): Json => {
    const obj = rec(o);
    const meta = { ...rec(obj.metadata) };
    delete meta.resourceVersion;
    delete meta.managedFields;
    const status = { ...rec(obj.status) };
    for (const k of ['capacity', 'conditions', 'allocatedResources', 'allocatedResourceStatuses']) delete status[k];
    return { ...obj, metadata: meta, status };
  };
  const [before, after] = [strip(a.oldObject), strip(a.object)];
  if (!semanticEqual(before, after)) {
    throw newForbidden(a, `node ${q(nodeName)} is not allowed to update fields other than status.quantity and status.conditions: ${jsonDiff(before, after).join(', ')}`);
  }
}

/** The paths where two JSON values differ (kube prints go-cmp's diff here; hearth names the fields). */
function jsonDiff(a: unknown, b: unknown, path = ''): string[] {
  if (semanticEqual(a, b)) return [];
  const [ra, rb] = [typeof a === 'object' && a !== null && !Array.isArray(a), typeof b === 'object' && b !== null && !Array.isArray(b)];
  if (!ra || !rb) return [`${path || '.'}: ${JSON.stringify(a ?? null)} -> ${JSON.stringify(b ?? null)}`];
  const keys = [...new Set([...Object.keys(a as Json), ...Object.keys(b as Json)])].sort();
  return keys.flatMap((k) => jsonDiff((a as Json)[k], (b as Json)[k], `${path}.${k}`));
}

// ---- serviceaccounts/token ----

function admitServiceAccount(lookups: NodeRestrictionLookups, nodeName: string, a: AdmissionAttributes): void | Promise<void> {
  if (a.operation !== 'CREATE' || a.subresource !== 'token') return;
  const spec = rec(rec(a.object).spec);
  // A node's token must be bound to a pod scheduled on it (the Node binding is added from the pod's).
  const ref = spec.boundObjectRef == null ? undefined : rec(spec.boundObjectRef);
  if (!ref || ref.apiVersion !== 'v1' || ref.kind !== 'Pod' || !str(ref.name)) throw newForbidden(a, 'node requested token not bound to a pod');
  if (!str(ref.uid)) throw newForbidden(a, 'node requested token with a pod binding without a uid');
  const pod = lookups.get('pods', a.namespace, str(ref.name));
  if (pod === undefined) throw listerNotFound('', 'pod', str(ref.name));
  const podUid = str(rec(rec(pod).metadata).uid);
  if (str(ref.uid) !== podUid) {
    throw newForbidden(a, `the UID in the bound object reference (${str(ref.uid)}) does not match the UID in record. The object might have been deleted and then recreated`);
  }
  if (str(rec(rec(pod).spec).nodeName) !== nodeName) throw newForbidden(a, 'node requested token bound to a pod scheduled on a different node');
  return validateAudience(lookups, a, rec(pod), list(spec.audiences).map(str));
}

/**
 * ServiceAccountNodeAudienceRestriction: one audience at most, and the API server's (none named,
 * or one of --api-audiences), one the pod uses (a projected token volume, or the token requests
 * of a CSI driver one of its volumes mounts), or one the node is authorized to ask for.
 */
/** Synchronous unless the authorizer chain answers with a promise (a webhook). */
function validateAudience(lookups: NodeRestrictionLookups, a: AdmissionAttributes, pod: Json, audiences: string[]): void | Promise<void> {
  if (audiences.length > 1) throw newForbidden(a, 'node may only request 0 or 1 audiences');
  const audience = audiences[0] ?? '';
  if (audience === '' || lookups.apiAudiences().includes(audience)) return;
  const found = podReferencesAudience(lookups, pod, audience);
  if (typeof found === 'string') throw newForbidden(a, `error validating audience ${q(audience)}: ${found}`);
  if (found) return;
  const decide = (allowed: boolean): void => {
    if (!allowed) throw newForbidden(a, `audience ${q(audience)} not found in pod spec volume, ${a.user.name} is not authorized to request tokens for this audience`);
  };
  const allowed = lookups.mayRequestAudience(a.user, a.namespace, a.name, audience);
  return allowed instanceof Promise ? allowed.then(decide) : decide(allowed);
}

/** Whether a volume of the pod uses the audience; the first lookup that failed, when none does. */
function podReferencesAudience(lookups: NodeRestrictionLookups, pod: Json, audience: string): boolean | string {
  const namespace = str(rec(pod.metadata).namespace);
  let failure: string | undefined;
  const driverHas = (driverName: string): boolean => {
    const driver = lookups.get('csidrivers', '', driverName);
    if (driver === undefined) {
      failure ??= `csidriver.storage.k8s.io ${q(driverName)} not found`;
      return false;
    }
    return list(rec(rec(driver).spec).tokenRequests).some((t) => str(rec(t).audience) === audience);
  };
  const claimDriverHas = (claimName: string): boolean => {
    const claim = lookups.get('persistentvolumeclaims', namespace, claimName);
    if (claim === undefined) {
      failure ??= `persistentvolumeclaim ${q(claimName)} not found`;
      return false;
    }
    const volumeName = str(rec(rec(claim).spec).volumeName);
    if (!volumeName) return false;
    const volume = lookups.get('persistentvolumes', '', volumeName);
    if (volume === undefined) {
      failure ??= `persistentvolume ${q(volumeName)} not found`;
      return false;
    }
    const driverName = str(rec(rec(rec(volume).spec).csi).driver);
    return driverName !== '' && driverHas(driverName);
  };
  for (const v of list(rec(pod.spec).volumes).map(rec)) {
    if (list(rec(v.projected).sources).some((s) => rec(s).serviceAccountToken != null && str(rec(rec(s).serviceAccountToken).audience) === audience)) return true;
    if (v.csi != null && driverHas(str(rec(v.csi).driver))) return true;
    if (v.persistentVolumeClaim != null && claimDriverHas(str(rec(v.persistentVolumeClaim).claimName))) return true;
    // An ephemeral volume's claim is named after the pod and the volume.
    if (v.ephemeral != null && claimDriverHas(`${str(rec(pod.metadata).name)}-${str(v.name)}`)) return true;
  }
  return failure ?? false;
}

// ---- leases, csinodes, resourceslices, certificatesigningrequests ----

/** The object's own name: on a create the request names none (kube drills down to the object). */
const objectName = (a: AdmissionAttributes): string => (a.operation === 'CREATE' ? str(rec(rec(a.object).metadata).name) : a.name);

function admitLease(nodeName: string, a: AdmissionAttributes): void {
  if (a.namespace !== NODE_LEASE_NAMESPACE) throw newForbidden(a, `can only access leases in the ${q(NODE_LEASE_NAMESPACE)} system namespace`);
  if (objectName(a) !== nodeName) throw newForbidden(a, 'can only access node lease with the same name as the requesting node');
}

function admitCsiNode(nodeName: string, a: AdmissionAttributes): void {
  if (objectName(a) !== nodeName) throw newForbidden(a, 'can only access CSINode with the same name as the requesting node');
}

function admitResourceSlice(nodeName: string, a: AdmissionAttributes): void {
  // Other writes are the Node authorizer's: it cannot see a create's body or each object of a deletecollection.
  if (a.operation === 'CREATE' && str(rec(rec(a.object).spec).nodeName) !== nodeName) {
    throw newForbidden(a, 'can only create ResourceSlice with the same NodeName as the requesting node');
  }
  if (a.operation === 'DELETE' && str(rec(rec(a.oldObject).spec).nodeName) !== nodeName) {
    throw newForbidden(a, 'can only delete ResourceSlice with the same NodeName as the requesting node');
  }
}

function admitCsr(nodeName: string, a: AdmissionAttributes): void {
  // A kubelet serving or client CSR must name this node (AllowInsecureKubeletCertificateSigningRequests is off).
  if (a.operation !== 'CREATE' || a.subresource) return;
  const spec = rec(rec(a.object).spec);
  if (spec.signerName !== KUBELET_SERVING_SIGNER && spec.signerName !== KUBE_APISERVER_CLIENT_KUBELET_SIGNER) return;
  const parsed = parseCsr(Buffer.from(str(spec.request), 'base64'));
  if (typeof parsed === 'string') throw newForbidden(a, `unable to parse csr: ${parsed}`);
  if (parsed.commonName !== NODE_USER_PREFIX + nodeName) throw newForbidden(a, `can only create a node CSR with CN=system:node:${nodeName}`);
}
