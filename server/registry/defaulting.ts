// Defaults kube-apiserver fills in built-in objects on every create and update (it decodes the
// body through the versioned Go types, whose SetDefaults_* functions and +default markers run).
// One table, keyed by OpenAPI definition name; applyDefaults walks the object alongside its
// TypeNodes and calls the defaulter of every definition it meets, parents before children, so a
// Deployment's pod template gets exactly the PodSpec and Container defaults a Pod gets.
//
// Go semantics carried over: a non-pointer field is "unset" when it holds its zero value ("" or
// 0), a pointer field only when absent; `zero()` and `absent()` below say which rule a field uses.
//
// Not done (need resource.Quantity arithmetic): ResourceList rounding to milli-units, and the
// pod-level resources defaults of the PodLevelResources feature.
import type { TypeNode } from '../schema/types.ts';
import { TypeModel } from '../schema/model.ts';
import { isPlainObject } from '../util/json.ts';
import { fillEventZeros, CORE_EVENT_VERSION, EVENTS_V1_VERSION } from './kinds/events/conversion.ts';

type Obj = Record<string, any>;
type Defaulter = (obj: Obj) => void;

/** A pointer (or slice/map) field: unset only when absent or null. */
const absent = (v: unknown): boolean => v === undefined || v === null;
/** A non-pointer scalar field: unset when it holds the Go zero value. */
const zero = (v: unknown): boolean => v === undefined || v === null || v === '' || v === 0;

function setPtr(o: Obj, key: string, value: unknown): void {
  if (absent(o[key])) o[key] = value;
}
function setZero(o: Obj, key: string, value: unknown): void {
  if (zero(o[key])) o[key] = value;
}
/** The object at o[key], created when absent (a non-pointer struct in Go); undefined when o[key] is not an object. */
function struct(o: Obj, key: string): Obj | undefined {
  if (absent(o[key])) o[key] = {};
  return isPlainObject(o[key]) ? o[key] : undefined;
}
/**
 * A kind's status as its create strategy leaves it: the zero struct, which Go writes as `status: {}`
 * plus its counters without omitempty (statusCounters).
 */
function statusStruct(o: Obj): void {
  struct(o, 'status');
}
/** A template's ObjectMeta: a non-pointer struct, written as `metadata: {}` when empty (creationTimestamp is omitzero). */
function templateMetadata(t: Obj): void {
  struct(t, 'metadata');
}
/** Status counters whose Go field has no omitempty: written as 0 while unset. */
const statusCounters =
  (...keys: string[]): Defaulter =>
  (s) => {
    for (const k of keys) setPtr(s, k, 0);
  };
const list = (v: unknown): any[] => (Array.isArray(v) ? v : []);
const objects = (v: unknown): Obj[] => list(v).filter(isPlainObject);
const emptyMap = (v: unknown): boolean => !isPlainObject(v) || Object.keys(v).length === 0;

// ---------------------------------------------------------------------------------------------
// core/v1

/** parsers.ParseImageName's tag: "latest" when neither tag nor digest is given, "" when the reference does not parse. */
export function imageTag(image: string): string {
  const m = IMAGE_REF.exec(image);
  if (!m || /^[a-f0-9]{64}$/.test(image)) return '';
  const [, , tag, digest] = m;
  if (tag) return tag;
  return digest ? '' : 'latest';
}
// distribution/reference grammar: [domain/]path[:tag][@digest]; path components are lowercase.
const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const DOMAIN = `(?:${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*|\\[[a-fA-F0-9:]+\\])(?::[0-9]+)?`;
const PATH_COMPONENT = '[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*';
const NAME = `(?:${DOMAIN}/)?${PATH_COMPONENT}(?:/${PATH_COMPONENT})*`;
const IMAGE_REF = new RegExp(`^(${NAME})(?::([\\w][\\w.-]{0,127}))?(?:@([A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}))?$`);

/** Pull policies by image: the same few images are defaulted on every write (the reference regex is costly). */
const PULL_POLICY = new Map<string, string>();

function pullPolicyFor(image: unknown): string {
  const ref = typeof image === 'string' ? image : '';
  let policy = PULL_POLICY.get(ref);
  if (policy === undefined) {
    policy = imageTag(ref) === 'latest' ? 'Always' : 'IfNotPresent';
    if (PULL_POLICY.size >= 4096) PULL_POLICY.clear();
    PULL_POLICY.set(ref, policy);
  }
  return policy;
}

function container(c: Obj): void {
  // Not a default: Resources is a non-pointer struct, so kube always writes it (`resources: {}`).
  struct(c, 'resources');
  setZero(c, 'imagePullPolicy', pullPolicyFor(c.image));
  setZero(c, 'terminationMessagePath', '/dev/termination-log');
  setZero(c, 'terminationMessagePolicy', 'File');
}

/** SetDefaults_Pod: only on Pods, never on templates. */
function pod(p: Obj): void {
  const spec = struct(p, 'spec');
  if (!spec) return;
  // Requests default to limits, for regular and init containers.
  for (const c of [...objects(spec.containers), ...objects(spec.initContainers)]) {
    const res = c.resources;
    if (!isPlainObject(res) || !isPlainObject(res.limits)) continue;
    const missing = Object.keys(res.limits).filter((k) => !isPlainObject(res.requests) || !(k in res.requests));
    if (!missing.length) continue;
    if (!isPlainObject(res.requests)) res.requests = {};
    for (const k of missing) res.requests[k] = res.limits[k];
  }
  setPtr(spec, 'enableServiceLinks', true);
  if (spec.hostNetwork === true) {
    for (const c of [...objects(spec.containers), ...objects(spec.initContainers)]) {
      for (const port of objects(c.ports)) if (zero(port.hostPort)) port.hostPort = port.containerPort;
    }
  }
}

function podSpec(s: Obj): void {
  setZero(s, 'dnsPolicy', 'ClusterFirst');
  setZero(s, 'restartPolicy', 'Always');
  setPtr(s, 'securityContext', {});
  setPtr(s, 'terminationGracePeriodSeconds', 30);
  setZero(s, 'schedulerName', 'default-scheduler');
}

const VOLUME_SOURCES_IGNORED = new Set(['name']);
function volume(v: Obj): void {
  const hasSource = Object.keys(v).some((k) => !VOLUME_SOURCES_IGNORED.has(k) && !absent(v[k]));
  if (!hasSource) v.emptyDir = {};
  if (isPlainObject(v.image) && zero(v.image.pullPolicy)) v.image.pullPolicy = pullPolicyFor(v.image.reference);
}

/**
 * Not a default but the v1 → internal conversion, which kube runs while decoding every write:
 * stringData is write-only, each entry replacing the data key of its name (as base64).
 */
function secret(s: Obj): void {
  if (isPlainObject(s.stringData)) {
    const data = isPlainObject(s.data) ? s.data : (s.data = {});
    for (const [k, v] of Object.entries(s.stringData)) data[k] = Buffer.from(String(v), 'utf8').toString('base64');
  }
  delete s.stringData;
  setZero(s, 'type', 'Opaque');
}

function service(svc: Obj): void {
  const spec = struct(svc, 'spec');
  if (!spec) return;
  setZero(spec, 'sessionAffinity', 'None');
  if (spec.sessionAffinity === 'None') delete spec.sessionAffinityConfig;
  if (spec.sessionAffinity === 'ClientIP') {
    const cfg = spec.sessionAffinityConfig;
    if (!isPlainObject(cfg) || !isPlainObject(cfg.clientIP) || absent(cfg.clientIP.timeoutSeconds)) {
      spec.sessionAffinityConfig = { clientIP: { timeoutSeconds: 10800 } };
    }
  }
  setZero(spec, 'type', 'ClusterIP');
  for (const p of objects(spec.ports)) {
    setZero(p, 'protocol', 'TCP');
    if (zero(p.targetPort)) p.targetPort = p.port;
  }
  const type = spec.type;
  const externallyAccessible = type === 'LoadBalancer' || type === 'NodePort' || (type === 'ClusterIP' && list(spec.externalIPs).length > 0);
  if (externallyAccessible) setZero(spec, 'externalTrafficPolicy', 'Cluster');
  if (type === 'NodePort' || type === 'LoadBalancer' || type === 'ClusterIP') setPtr(spec, 'internalTrafficPolicy', 'Cluster');
  if (type === 'LoadBalancer') {
    setPtr(spec, 'allocateLoadBalancerNodePorts', true);
    const ingress = isPlainObject(svc.status) && isPlainObject(svc.status.loadBalancer) ? objects(svc.status.loadBalancer.ingress) : [];
    for (const ing of ingress) if (!zero(ing.ip)) setPtr(ing, 'ipMode', 'VIP');
  }
}

function persistentVolume(pv: Obj): void {
  const status = struct(pv, 'status');
  if (status) setZero(status, 'phase', 'Pending');
  const spec = struct(pv, 'spec');
  if (!spec) return;
  setZero(spec, 'persistentVolumeReclaimPolicy', 'Retain');
  setPtr(spec, 'volumeMode', 'Filesystem');
}

function replicationController(rc: Obj): void {
  statusStruct(rc);
  const spec = struct(rc, 'spec');
  if (!spec) return;
  const labels = isPlainObject(spec.template) && isPlainObject(spec.template.metadata) ? spec.template.metadata.labels : undefined;
  if (isPlainObject(labels)) {
    if (emptyMap(spec.selector)) spec.selector = { ...labels };
    const meta = struct(rc, 'metadata');
    if (meta && emptyMap(meta.labels)) meta.labels = { ...labels };
  }
  setPtr(spec, 'replicas', 1);
}

function limitRangeItem(item: Obj): void {
  if (item.type !== 'Container') return;
  if (absent(item.default)) item.default = {};
  if (absent(item.defaultRequest)) item.defaultRequest = {};
  const def = item.default;
  const req = item.defaultRequest;
  if (!isPlainObject(def) || !isPlainObject(req)) return;
  if (isPlainObject(item.max)) for (const [k, v] of Object.entries(item.max)) if (!(k in def)) def[k] = v;
  for (const [k, v] of Object.entries(def)) if (!(k in req)) req[k] = v;
  if (isPlainObject(item.min)) for (const [k, v] of Object.entries(item.min)) if (!(k in req)) req[k] = v;
}

function rbd(s: Obj): void {
  setZero(s, 'pool', 'rbd');
  setZero(s, 'user', 'admin');
  setZero(s, 'keyring', '/etc/ceph/keyring');
}
function scaleIO(s: Obj): void {
  setZero(s, 'storageMode', 'ThinProvisioned');
  setZero(s, 'fsType', 'xfs');
}
const defaultMode = (s: Obj): void => setPtr(s, 'defaultMode', 420);
const protocolTCP = (p: Obj): void => setZero(p, 'protocol', 'TCP');

// ---------------------------------------------------------------------------------------------
// apps/v1, batch/v1

function deployment(d: Obj): void {
  statusStruct(d);
  const spec = struct(d, 'spec');
  if (!spec) return;
  setPtr(spec, 'replicas', 1);
  const strategy = struct(spec, 'strategy');
  if (strategy) {
    setZero(strategy, 'type', 'RollingUpdate');
    if (strategy.type === 'RollingUpdate') {
      const ru = struct(strategy, 'rollingUpdate');
      if (ru) {
        setPtr(ru, 'maxUnavailable', '25%');
        setPtr(ru, 'maxSurge', '25%');
      }
    }
  }
  setPtr(spec, 'revisionHistoryLimit', 10);
  setPtr(spec, 'progressDeadlineSeconds', 600);
}

function daemonSet(ds: Obj): void {
  statusStruct(ds);
  const spec = struct(ds, 'spec');
  if (!spec) return;
  const us = struct(spec, 'updateStrategy');
  if (us) {
    setZero(us, 'type', 'RollingUpdate');
    if (us.type === 'RollingUpdate') {
      const ru = struct(us, 'rollingUpdate');
      if (ru) {
        setPtr(ru, 'maxUnavailable', 1);
        setPtr(ru, 'maxSurge', 0);
      }
    }
  }
  setPtr(spec, 'revisionHistoryLimit', 10);
}

function statefulSet(ss: Obj): void {
  statusStruct(ss);
  const spec = struct(ss, 'spec');
  if (!spec) return;
  setZero(spec, 'podManagementPolicy', 'OrderedReady');
  const us = struct(spec, 'updateStrategy');
  if (us) {
    if (zero(us.type)) {
      us.type = 'RollingUpdate';
      setPtr(us, 'rollingUpdate', {});
    }
    if (us.type === 'RollingUpdate' && isPlainObject(us.rollingUpdate)) {
      setPtr(us.rollingUpdate, 'partition', 0);
      // MaxUnavailableStatefulSet: beta, enabled by default.
      setPtr(us.rollingUpdate, 'maxUnavailable', 1);
    }
  }
  // StatefulSetAutoDeletePVC: GA.
  const retention = struct(spec, 'persistentVolumeClaimRetentionPolicy');
  if (retention) {
    setZero(retention, 'whenDeleted', 'Retain');
    setZero(retention, 'whenScaled', 'Retain');
  }
  setPtr(spec, 'replicas', 1);
  setPtr(spec, 'revisionHistoryLimit', 10);
  // Not defaults: Go fields without omitempty, written even when unset.
  setPtr(spec, 'serviceName', '');
  if (isPlainObject(spec.ordinals)) setPtr(spec.ordinals, 'start', 0);
}

function job(j: Obj): void {
  statusStruct(j);
  const spec = struct(j, 'spec');
  if (!spec) return;
  if (absent(spec.completions) && absent(spec.parallelism)) {
    spec.completions = 1;
    spec.parallelism = 1;
  }
  setPtr(spec, 'parallelism', 1);
  if (absent(spec.backoffLimit)) spec.backoffLimit = absent(spec.backoffLimitPerIndex) ? 6 : 2147483647;
  const labels = isPlainObject(spec.template) && isPlainObject(spec.template.metadata) ? spec.template.metadata.labels : undefined;
  if (isPlainObject(labels)) {
    const meta = struct(j, 'metadata');
    if (meta && emptyMap(meta.labels)) meta.labels = { ...labels };
  }
  setPtr(spec, 'completionMode', 'NonIndexed');
  setPtr(spec, 'suspend', false);
  // JobPodReplacementPolicy: GA.
  setPtr(spec, 'podReplacementPolicy', absent(spec.podFailurePolicy) ? 'TerminatingOrFailed' : 'Failed');
  setPtr(spec, 'manualSelector', false);
}

function cronJob(cj: Obj): void {
  statusStruct(cj);
  const spec = struct(cj, 'spec');
  if (!spec) return;
  setZero(spec, 'concurrencyPolicy', 'Allow');
  setPtr(spec, 'suspend', false);
  setPtr(spec, 'successfulJobsHistoryLimit', 3);
  setPtr(spec, 'failedJobsHistoryLimit', 1);
}

// ---------------------------------------------------------------------------------------------
// autoscaling

const HPA_SCALE_UP = () => ({
  stabilizationWindowSeconds: 0,
  selectPolicy: 'Max',
  policies: [
    { type: 'Pods', value: 4, periodSeconds: 15 },
    { type: 'Percent', value: 100, periodSeconds: 15 },
  ],
});
const HPA_SCALE_DOWN = () => ({ selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] });

/** Unset fields of the user's rules come from the defaults (copyHPAScalingRules). */
function scalingRules(given: unknown, defaults: Obj): Obj {
  if (!isPlainObject(given)) return defaults;
  for (const k of ['selectPolicy', 'stabilizationWindowSeconds', 'policies', 'tolerance']) {
    if (!absent(given[k])) defaults[k] = given[k];
  }
  return defaults;
}

function hpaV2(h: Obj): void {
  statusStruct(h);
  const spec = struct(h, 'spec');
  if (!spec) return;
  setPtr(spec, 'minReplicas', 1);
  if (list(spec.metrics).length === 0) {
    spec.metrics = [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }];
  }
  if (isPlainObject(spec.behavior)) {
    spec.behavior.scaleUp = scalingRules(spec.behavior.scaleUp, HPA_SCALE_UP());
    spec.behavior.scaleDown = scalingRules(spec.behavior.scaleDown, HPA_SCALE_DOWN());
  }
}

// ---------------------------------------------------------------------------------------------
// admissionregistration/v1

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

// ---------------------------------------------------------------------------------------------
// resource.k8s.io/v1

/** SetDefaults_ExactDeviceRequest, SetDefaults_DeviceSubRequest: one device unless said otherwise. */
function deviceCount(r: Obj): void {
  setZero(r, 'allocationMode', 'ExactCount');
  if (r.allocationMode === 'ExactCount') setZero(r, 'count', 1);
}
const servicePort443 = (s: Obj): void => setPtr(s, 'port', 443);

// ---------------------------------------------------------------------------------------------
// The table

const CORE = 'io.k8s.api.core.v1.';
const TABLE: Record<string, Defaulter> = {
  // core/v1
  [`${CORE}Pod`]: pod,
  [`${CORE}PodSpec`]: podSpec,
  [`${CORE}PodTemplateSpec`]: templateMetadata,
  [`${CORE}Container`]: container,
  [`${CORE}EphemeralContainer`]: container,
  [`${CORE}ContainerPort`]: protocolTCP,
  [`${CORE}Probe`]: (p) => {
    setZero(p, 'timeoutSeconds', 1);
    setZero(p, 'periodSeconds', 10);
    setZero(p, 'successThreshold', 1);
    setZero(p, 'failureThreshold', 3);
  },
  [`${CORE}HTTPGetAction`]: (a) => {
    setZero(a, 'path', '/');
    setZero(a, 'scheme', 'HTTP');
  },
  [`${CORE}GRPCAction`]: (a) => setPtr(a, 'service', ''),
  [`${CORE}ObjectFieldSelector`]: (s) => setZero(s, 'apiVersion', 'v1'),
  [`${CORE}Volume`]: volume,
  [`${CORE}HostPathVolumeSource`]: (s) => setPtr(s, 'type', ''),
  [`${CORE}SecretVolumeSource`]: defaultMode,
  [`${CORE}ConfigMapVolumeSource`]: defaultMode,
  [`${CORE}DownwardAPIVolumeSource`]: defaultMode,
  [`${CORE}ProjectedVolumeSource`]: defaultMode,
  [`${CORE}ServiceAccountTokenProjection`]: (s) => setPtr(s, 'expirationSeconds', 3600),
  [`${CORE}ISCSIVolumeSource`]: (s) => setZero(s, 'iscsiInterface', 'default'),
  [`${CORE}ISCSIPersistentVolumeSource`]: (s) => setZero(s, 'iscsiInterface', 'default'),
  [`${CORE}RBDVolumeSource`]: rbd,
  [`${CORE}RBDPersistentVolumeSource`]: rbd,
  [`${CORE}AzureDiskVolumeSource`]: (s) => {
    setPtr(s, 'cachingMode', 'ReadWrite');
    setPtr(s, 'fsType', 'ext4');
    setPtr(s, 'readOnly', false);
    setPtr(s, 'kind', 'Shared');
  },
  [`${CORE}ScaleIOVolumeSource`]: scaleIO,
  [`${CORE}ScaleIOPersistentVolumeSource`]: scaleIO,
  [`${CORE}PersistentVolumeClaimSpec`]: (s) => setPtr(s, 'volumeMode', 'Filesystem'),
  [`${CORE}PersistentVolumeClaim`]: (pvc) => {
    const status = struct(pvc, 'status');
    if (status) setZero(status, 'phase', 'Pending');
  },
  [`${CORE}PersistentVolume`]: persistentVolume,
  [`${CORE}Service`]: service,
  [`${CORE}ServicePort`]: protocolTCP,
  [`${CORE}EndpointPort`]: protocolTCP,
  [`${CORE}Secret`]: secret,
  // SetDefaults_Namespace: the name label, when the name is known (the strategy sets it too).
  [`${CORE}Namespace`]: (n) => {
    const meta = struct(n, 'metadata');
    if (meta && typeof meta.name === 'string' && meta.name !== '') meta.labels = { ...(isPlainObject(meta.labels) ? meta.labels : {}), 'kubernetes.io/metadata.name': meta.name };
  },
  [`${CORE}ReplicationController`]: replicationController,
  [`${CORE}ReplicationControllerStatus`]: statusCounters('replicas'),
  [`${CORE}LimitRangeItem`]: limitRangeItem,
  // Not a default: NodeSpec is a non-pointer struct, written as `spec: {}` however empty.
  [`${CORE}Node`]: (n) => struct(n, 'spec'),
  [`${CORE}NodeStatus`]: (s) => {
    if (absent(s.allocatable) && isPlainObject(s.capacity)) s.allocatable = { ...s.capacity };
  },

  // apps/v1
  'io.k8s.api.apps.v1.Deployment': deployment,
  'io.k8s.api.apps.v1.ReplicaSetStatus': statusCounters('replicas'),
  'io.k8s.api.apps.v1.StatefulSetStatus': statusCounters('replicas', 'availableReplicas'),
  'io.k8s.api.apps.v1.DaemonSetStatus': statusCounters('currentNumberScheduled', 'numberMisscheduled', 'desiredNumberScheduled', 'numberReady'),
  'io.k8s.api.apps.v1.DaemonSet': daemonSet,
  'io.k8s.api.apps.v1.StatefulSet': statefulSet,
  'io.k8s.api.apps.v1.ReplicaSet': (rs) => {
    statusStruct(rs);
    const spec = struct(rs, 'spec');
    if (spec) setPtr(spec, 'replicas', 1);
  },

  // batch/v1
  'io.k8s.api.batch.v1.Job': job,
  'io.k8s.api.batch.v1.CronJob': cronJob,
  'io.k8s.api.batch.v1.JobTemplateSpec': templateMetadata,
  'io.k8s.api.batch.v1.PodFailurePolicyOnPodConditionsPattern': (p) => setZero(p, 'status', 'True'),

  // autoscaling
  'io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerStatus': statusCounters('desiredReplicas'),
  'io.k8s.api.autoscaling.v1.HorizontalPodAutoscalerStatus': statusCounters('currentReplicas', 'desiredReplicas'),
  'io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler': hpaV2,
  'io.k8s.api.autoscaling.v1.HorizontalPodAutoscaler': (h) => {
    statusStruct(h);
    const spec = struct(h, 'spec');
    if (spec) setPtr(spec, 'minReplicas', 1);
  },

  // Events: not defaults but what encoding/json writes for their unset fields (see fillEventZeros)
  'io.k8s.api.core.v1.Event': (e) => fillEventZeros(e, CORE_EVENT_VERSION),
  'io.k8s.api.events.v1.Event': (e) => fillEventZeros(e, EVENTS_V1_VERSION),

  // policy/v1
  'io.k8s.api.policy.v1.PodDisruptionBudget': statusStruct,
  'io.k8s.api.policy.v1.PodDisruptionBudgetStatus': statusCounters('disruptionsAllowed', 'currentHealthy', 'desiredHealthy', 'expectedPods'),

  // networking/v1
  'io.k8s.api.networking.v1.NetworkPolicy': (np) => {
    const spec = struct(np, 'spec');
    if (!spec || list(spec.policyTypes).length) return;
    spec.policyTypes = list(spec.egress).length ? ['Ingress', 'Egress'] : ['Ingress'];
  },
  'io.k8s.api.networking.v1.NetworkPolicyPort': (p) => setPtr(p, 'protocol', 'TCP'),
  'io.k8s.api.networking.v1.IngressClass': (ic) => {
    if (isPlainObject(ic.spec) && isPlainObject(ic.spec.parameters)) setPtr(ic.spec.parameters, 'scope', 'Cluster');
  },

  // discovery/v1
  'io.k8s.api.discovery.v1.EndpointPort': (p) => {
    setPtr(p, 'name', '');
    setPtr(p, 'protocol', 'TCP');
  },

  // rbac/v1
  'io.k8s.api.rbac.v1.RoleBinding': (b) => {
    if (isPlainObject(b.roleRef)) setZero(b.roleRef, 'apiGroup', 'rbac.authorization.k8s.io');
  },
  'io.k8s.api.rbac.v1.ClusterRoleBinding': (b) => {
    if (isPlainObject(b.roleRef)) setZero(b.roleRef, 'apiGroup', 'rbac.authorization.k8s.io');
  },
  // (a ServiceAccount's is "", which its omitempty tag leaves out)
  'io.k8s.api.rbac.v1.Subject': (s) => {
    if (zero(s.apiGroup) && (s.kind === 'User' || s.kind === 'Group')) s.apiGroup = 'rbac.authorization.k8s.io';
  },

  // storage/v1
  'io.k8s.api.storage.v1.StorageClass': (sc) => {
    setPtr(sc, 'reclaimPolicy', 'Delete');
    setPtr(sc, 'volumeBindingMode', 'Immediate');
  },
  'io.k8s.api.storage.v1.CSIDriver': (d) => {
    const spec = struct(d, 'spec');
    if (!spec) return;
    setPtr(spec, 'attachRequired', true);
    setPtr(spec, 'podInfoOnMount', false);
    setPtr(spec, 'storageCapacity', false);
    setPtr(spec, 'fsGroupPolicy', 'ReadWriteOnceWithFSType');
    if (list(spec.volumeLifecycleModes).length === 0) spec.volumeLifecycleModes = ['Persistent'];
    setPtr(spec, 'requiresRepublish', false);
    setPtr(spec, 'seLinuxMount', false);
  },

  // resource.k8s.io/v1
  'io.k8s.api.resource.v1.ExactDeviceRequest': deviceCount,
  'io.k8s.api.resource.v1.DeviceSubRequest': deviceCount,

  // scheduling/v1
  'io.k8s.api.scheduling.v1.PriorityClass': (pc) => setPtr(pc, 'preemptionPolicy', 'PreemptLowerPriority'),

  // admissionregistration/v1 (Rule is embedded in the *RuleWithOperations definitions)
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

  // flowcontrol/v1
  'io.k8s.api.flowcontrol.v1.FlowSchemaSpec': (s) => setZero(s, 'matchingPrecedence', 1000),
  'io.k8s.api.flowcontrol.v1.ExemptPriorityLevelConfiguration': (e) => {
    setPtr(e, 'nominalConcurrencyShares', 0);
    setPtr(e, 'lendablePercent', 0);
  },
  'io.k8s.api.flowcontrol.v1.LimitedPriorityLevelConfiguration': (l) => {
    setPtr(l, 'nominalConcurrencyShares', 30);
    setPtr(l, 'lendablePercent', 0);
  },
  'io.k8s.api.flowcontrol.v1.QueuingConfiguration': (q) => {
    setZero(q, 'handSize', 8);
    setZero(q, 'queues', 64);
    setZero(q, 'queueLengthLimit', 50);
  },

  // apiextensions.k8s.io/v1
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionSpec': (s) => {
    if (isPlainObject(s.names)) {
      if (zero(s.names.singular) && typeof s.names.kind === 'string') s.names.singular = s.names.kind.toLowerCase();
      if (zero(s.names.listKind) && typeof s.names.kind === 'string' && s.names.kind) s.names.listKind = `${s.names.kind}List`;
    }
    setPtr(s, 'conversion', { strategy: 'None' });
  },
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.ServiceReference': servicePort443,
};

/** Definition names that have a defaulter (for tests and introspection). */
export function defaultedDefinitions(): string[] {
  return Object.keys(TABLE);
}

// ---------------------------------------------------------------------------------------------
// The walk

/** Whether any node reachable from this one has a defaulter; memoised per node. */
const reachCache = new WeakMap<TypeNode, boolean>();

function children(n: TypeNode): TypeNode[] {
  const out: TypeNode[] = [];
  if (n.properties) out.push(...Object.values(n.properties));
  if (n.items) out.push(n.items);
  if (n.values) out.push(n.values);
  return out;
}

function reachesDefaulter(root: TypeNode): boolean {
  const cached = reachCache.get(root);
  if (cached !== undefined) return cached;
  const seen = new Set<TypeNode>();
  const stack = [root];
  let found = false;
  while (stack.length) {
    const n = stack.pop()!;
    if (seen.has(n)) continue;
    seen.add(n);
    if ((n.definition && TABLE[n.definition]) || reachCache.get(n) === true) {
      found = true;
      break;
    }
    stack.push(...children(n));
  }
  reachCache.set(root, found);
  return found;
}

/**
 * What the walk does at a node that reaches a defaulter: its own defaulter, and only the
 * properties (in schema order) that lead to one. Built once per node, lazily (schemas recurse).
 */
interface Plan {
  node: TypeNode;
  defaulter: Defaulter | undefined;
  /** Properties that reach a defaulter; their plans resolved on first use. */
  fields: { key: string; node: TypeNode; plan?: Plan | null }[] | undefined;
  items: Plan | null | undefined;
  values: Plan | null | undefined;
}

const plans = new WeakMap<TypeNode, Plan | null>();

function planOf(node: TypeNode): Plan | null {
  let p = plans.get(node);
  if (p !== undefined) return p;
  if (!reachesDefaulter(node)) {
    plans.set(node, null);
    return null;
  }
  const plan: Plan = { node, defaulter: node.definition ? TABLE[node.definition] : undefined, fields: undefined, items: undefined, values: undefined };
  plans.set(node, plan);
  if (node.properties) {
    const fields: Plan['fields'] = [];
    for (const [key, child] of Object.entries(node.properties)) if (reachesDefaulter(child)) fields.push({ key, node: child });
    plan.fields = fields.length ? fields : undefined;
  }
  return plan;
}

function walk(plan: Plan, value: unknown): void {
  const node = plan.node;
  if (Array.isArray(value)) {
    if (node.type === 'array' && node.items) {
      const items = plan.items === undefined ? (plan.items = planOf(node.items)) : plan.items;
      if (items) for (let i = 0; i < value.length; i++) walk(items, value[i]);
    }
    return;
  }
  if (!isPlainObject(value)) return;
  if (node.type === 'map' && node.values) {
    const values = plan.values === undefined ? (plan.values = planOf(node.values)) : plan.values;
    if (values) for (const k in value) walk(values, value[k]);
    return;
  }
  if (node.type !== 'object') return;
  if (plan.defaulter) plan.defaulter(value);
  const fields = plan.fields;
  if (!fields) return;
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i];
    const v = value[f.key];
    if (v === undefined || v === null) continue;
    const child = f.plan === undefined ? (f.plan = planOf(f.node)) : f.plan;
    if (child) walk(child, v);
  }
}

let model: TypeModel | undefined;
function builtins(): TypeModel {
  return (model ??= TypeModel.loadBuiltins());
}

/** Whether objects of this definition get any defaults at all. */
export function hasDefaults(definitionName: string): boolean {
  const m = builtins();
  return m.has(definitionName) && reachesDefaulter(m.node(definitionName));
}

/** Fills, in place, every default kube-apiserver fills in an object of this definition. */
export function applyDefaults(definitionName: string, obj: any): void {
  const m = builtins();
  if (!m.has(definitionName)) return;
  const plan = planOf(m.node(definitionName));
  if (plan) walk(plan, obj);
}
