// The Node authorizer's graph (kube's plugin/pkg/auth/authorizer/node/graph.go): which objects
// each node may read, as edges that all point toward node vertices. A pod bound to a node gives
// node <- pod <- secret, configmap, serviceaccount, pvc, resourceclaim; a bound PV gives
// pvc <- pv <- secret; a VolumeAttachment or ResourceSlice names its node directly. A node may
// read an object when a path leads from the object's vertex to the node's. Edges that end in a
// pod or at a node carry that node as their destination ("destination edges"), and a walk never
// follows an edge bound for another node. Vertices no edge holds any more are dropped, as kube's
// deleteVertexLocked drops neighbours left without edges. hearth serves no PodCertificateRequest,
// so the graph has no vertex type for it. Single-threaded: no locks.
//
// What a pod references is kube's pkg/api/v1/pod VisitPodSecretNames and VisitPodConfigmapNames
// (every container, init and ephemeral ones included), its PVCs (persistentVolumeClaim and
// ephemeral volumes, ephemeral.VolumeClaimName) and ResourceClaims (resourceclaim.Name); a PV's
// secrets are pkg/api/v1/persistentvolume VisitPVSecretNames (only those the kubelet sees).
import { visitPodConfigMapNames, visitPodSecretNames } from '../../util/pod-references.ts';

export type VertexType = 'configmap' | 'resourceslice' | 'node' | 'pod' | 'pvc' | 'pv' | 'resourceclaim' | 'secret' | 'volumeattachment' | 'serviceAccount';

interface Vertex {
  readonly type: VertexType;
  readonly namespace: string;
  readonly name: string;
  /** Edges from this vertex, by the vertex they lead to (a simple graph: one edge per pair). */
  readonly out: Map<Vertex, Edge>;
  /** Edges into this vertex, by the vertex they come from. */
  readonly in: Map<Vertex, Edge>;
  /** How many of this vertex's out-edges are bound for each node vertex (kube's destination edge index). */
  readonly destinations: Map<Vertex, number>;
}

interface Edge {
  readonly from: Vertex;
  readonly to: Vertex;
  /** The node an edge toward a pod or a node is bound for; none on pv -> pvc and secret -> pv. */
  readonly destination?: Vertex;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const obj = (v: unknown): Obj => (isObj(v) ? v : {});
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.map(obj) : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** corev1.MirrorPodAnnotationKey: a static pod's API copy, which a node creates itself. */
export const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

/** Why a node may not read an object, or nothing when it may. */
export type PathResult = { found: true } | { found: false; error: string };

export class NodeGraph {
  private readonly vertices = new Map<string, Vertex>();

  private static key(type: VertexType, namespace: string, name: string): string {
    return `${type}\u0000${namespace}\u0000${name}`;
  }

  private get(type: VertexType, namespace: string, name: string): Vertex | undefined {
    return this.vertices.get(NodeGraph.key(type, namespace, name));
  }

  private getOrCreate(type: VertexType, namespace: string, name: string): Vertex {
    const k = NodeGraph.key(type, namespace, name);
    let v = this.vertices.get(k);
    if (!v) this.vertices.set(k, (v = { type, namespace, name, out: new Map(), in: new Map(), destinations: new Map() }));
    return v;
  }

  private static degree(v: Vertex): number {
    return v.out.size + v.in.size;
  }

  /** SetEdge through addEdgeLocked: a second edge between the same pair replaces the first. */
  private addEdge(from: Vertex, to: Vertex, destination?: Vertex): void {
    const existing = from.out.get(to);
    if (existing) this.unlink(existing);
    const e: Edge = destination ? { from, to, destination } : { from, to };
    from.out.set(to, e);
    to.in.set(from, e);
    if (destination) from.destinations.set(destination, (from.destinations.get(destination) ?? 0) + 1);
  }

  /** Takes an edge out of both ends and out of its source's destination counts. */
  private unlink(e: Edge): void {
    e.from.out.delete(e.to);
    e.to.in.delete(e.from);
    if (e.destination) {
      const n = (e.from.destinations.get(e.destination) ?? 0) - 1;
      if (n > 0) e.from.destinations.set(e.destination, n);
      else e.from.destinations.delete(e.destination);
    }
  }

  private removeVertex(v: Vertex): void {
    for (const e of [...v.out.values(), ...v.in.values()]) this.unlink(e);
    this.vertices.delete(NodeGraph.key(v.type, v.namespace, v.name));
  }

  /** deleteVertexLocked: the vertex, and every neighbour whose only edge was to or from it. */
  private deleteVertex(type: VertexType, namespace: string, name: string): void {
    const v = this.get(type, namespace, name);
    if (!v) return;
    const orphans = [...v.out.keys(), ...v.in.keys()].filter((n) => NodeGraph.degree(n) === 1);
    this.removeVertex(v);
    for (const n of orphans) this.removeVertex(n);
  }

  /**
   * AddPod (for a pod with spec.nodeName): its edges replace whatever it had. A mirror pod
   * reaches its node and nothing else, so that a node can never grant itself other objects.
   */
  addPod(pod: Obj): void {
    const meta = obj(pod.metadata);
    const spec = obj(pod.spec);
    const namespace = str(meta.namespace);
    const name = str(meta.name);
    this.deleteVertex('pod', namespace, name);
    const podVertex = this.getOrCreate('pod', namespace, name);
    const nodeVertex = this.getOrCreate('node', '', str(spec.nodeName));
    this.addEdge(podVertex, nodeVertex, nodeVertex);
    if (Object.hasOwn(obj(meta.annotations), MIRROR_POD_ANNOTATION)) return;

    // The pod's service account, whether or not it mounts a token.
    const serviceAccount = str(spec.serviceAccountName);
    if (serviceAccount) this.addEdge(this.getOrCreate('serviceAccount', namespace, serviceAccount), podVertex, nodeVertex);
    visitPodSecretNames(pod, (secret) => this.addEdge(this.getOrCreate('secret', namespace, secret), podVertex, nodeVertex));
    visitPodConfigMapNames(pod, (configMap) => this.addEdge(this.getOrCreate('configmap', namespace, configMap), podVertex, nodeVertex));
    for (const volume of list(spec.volumes)) {
      let claim = '';
      if (isObj(volume.persistentVolumeClaim)) claim = str(volume.persistentVolumeClaim.claimName);
      else if (isObj(volume.ephemeral)) claim = `${name}-${str(volume.name)}`;
      if (claim) this.addEdge(this.getOrCreate('pvc', namespace, claim), podVertex, nodeVertex);
    }
    for (const claim of podResourceClaimNames(pod)) this.addEdge(this.getOrCreate('resourceclaim', namespace, claim), podVertex, nodeVertex);
  }

  deletePod(name: string, namespace: string): void {
    this.deleteVertex('pod', namespace, name);
  }

  /** AddPV: pvc <- pv (when bound) <- the secrets the kubelet uses to mount it. */
  addPV(pv: Obj): void {
    const name = str(obj(pv.metadata).name);
    this.deleteVertex('pv', '', name);
    const claimRef = obj(pv.spec).claimRef;
    if (!isObj(claimRef)) return;
    const pvVertex = this.getOrCreate('pv', '', name);
    // The pvc's node is not known here (it may have no pod yet): no destination.
    this.addEdge(pvVertex, this.getOrCreate('pvc', str(claimRef.namespace), str(claimRef.name)));
    for (const [namespace, secret] of pvKubeletSecretNames(pv)) this.addEdge(this.getOrCreate('secret', namespace, secret), pvVertex);
  }

  deletePV(name: string): void {
    this.deleteVertex('pv', '', name);
  }

  /** AddVolumeAttachment: volumeattachment -> node, when it names one. */
  addVolumeAttachment(name: string, nodeName: string): void {
    this.addToNode('volumeattachment', name, nodeName);
  }

  deleteVolumeAttachment(name: string): void {
    this.deleteVertex('volumeattachment', '', name);
  }

  /** AddResourceSlice: resourceslice -> node, when it names one. */
  addResourceSlice(name: string, nodeName: string): void {
    this.addToNode('resourceslice', name, nodeName);
  }

  deleteResourceSlice(name: string): void {
    this.deleteVertex('resourceslice', '', name);
  }

  private addToNode(type: VertexType, name: string, nodeName: string): void {
    this.deleteVertex(type, '', name);
    if (!nodeName) return;
    const nodeVertex = this.getOrCreate('node', '', nodeName);
    this.addEdge(this.getOrCreate(type, '', name), nodeVertex, nodeVertex);
  }

  /**
   * hasPathFrom: whether a path leads from the object to the node, never along an edge bound for
   * another node. The errors are kube's (logged by kube; the client hears only "no relationship").
   */
  hasPathFrom(nodeName: string, type: VertexType, namespace: string, name: string): PathResult {
    const node = this.get('node', '', nodeName);
    if (!node) return { found: false, error: `unknown node '${nodeName}' cannot get ${type} ${namespace}/${name}` };
    const start = this.get(type, namespace, name);
    if (!start) return { found: false, error: `node '${nodeName}' cannot get unknown ${type} ${namespace}/${name}` };
    if (start.destinations.has(node)) return { found: true };
    const seen = new Set<Vertex>([start]);
    const stack = [start];
    while (stack.length) {
      const v = stack.pop()!;
      for (const e of v.out.values()) {
        if (e.destination && e.destination !== node) continue;
        if (e.destination === node || e.to === node) return { found: true };
        if (!seen.has(e.to)) {
          seen.add(e.to);
          stack.push(e.to);
        }
      }
    }
    return { found: false, error: `node '${nodeName}' cannot get ${type} ${namespace}/${name}, no relationship to this object was found in the node authorizer graph` };
  }

  /** Whether the graph holds a vertex (for tests and diagnostics). */
  hasVertex(type: VertexType, namespace: string, name: string): boolean {
    return this.get(type, namespace, name) !== undefined;
  }

  /** How many vertices the graph holds. */
  get size(): number {
    return this.vertices.size;
  }
}

/**
 * The ResourceClaims a pod uses: resourceclaim.Name of each spec.resourceClaims entry (its
 * resourceClaimName, or the claim generated from its template once status names it; a claim yet
 * to be generated gives none) and status.extendedResourceClaimStatus's claim.
 */
export function podResourceClaimNames(pod: Obj): string[] {
  const spec = obj(pod.spec);
  const status = obj(pod.status);
  const names: string[] = [];
  for (const claim of list(spec.resourceClaims)) {
    if (typeof claim.resourceClaimName === 'string') names.push(claim.resourceClaimName);
    else if (typeof claim.resourceClaimTemplateName === 'string') {
      const generated = list(status.resourceClaimStatuses).find((s) => s.name === claim.name);
      if (generated && typeof generated.resourceClaimName === 'string') names.push(generated.resourceClaimName);
    }
  }
  const extended = str(obj(status.extendedResourceClaimStatus).resourceClaimName);
  if (extended) names.push(extended);
  return names;
}

/**
 * VisitPVSecretNames' kubelet-visible secrets, as [namespace, name]: a reference without a
 * namespace (the older volume sources) is in the bound claim's namespace; CSI's controller
 * secrets are not the kubelet's.
 */
export function pvKubeletSecretNames(pv: Obj): [string, string][] {
  const spec = obj(pv.spec);
  const claimNamespace = str(obj(spec.claimRef).namespace);
  const out: [string, string][] = [];
  const add = (namespace: string, name: string): void => {
    if (name) out.push([namespace, name]);
  };
  /** A SecretReference whose namespace, when empty, is the claim's. */
  const defaulted = (ref: unknown): void => {
    if (isObj(ref)) add(str(ref.namespace) || claimNamespace, str(ref.name));
  };
  if (isObj(spec.azureFile)) add(str(spec.azureFile.secretNamespace) || claimNamespace, str(spec.azureFile.secretName));
  else if (isObj(spec.cephfs)) defaulted(spec.cephfs.secretRef);
  else if (isObj(spec.cinder)) {
    if (isObj(spec.cinder.secretRef)) add(str(spec.cinder.secretRef.namespace), str(spec.cinder.secretRef.name));
  } else if (isObj(spec.flexVolume)) defaulted(spec.flexVolume.secretRef);
  else if (isObj(spec.rbd)) defaulted(spec.rbd.secretRef);
  else if (isObj(spec.scaleIO)) defaulted(spec.scaleIO.secretRef);
  else if (isObj(spec.iscsi)) defaulted(spec.iscsi.secretRef);
  else if (isObj(spec.storageos)) {
    if (isObj(spec.storageos.secretRef)) add(str(spec.storageos.secretRef.namespace), str(spec.storageos.secretRef.name));
  } else if (isObj(spec.csi)) {
    for (const field of ['nodePublishSecretRef', 'nodeStageSecretRef', 'nodeExpandSecretRef']) {
      const ref = spec.csi[field];
      if (isObj(ref)) add(str(ref.namespace), str(ref.name));
    }
  }
  return out;
}
