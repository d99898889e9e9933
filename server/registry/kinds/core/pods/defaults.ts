// Defaults of pods and of the pod specs pod templates carry (SetDefaults_Pod, SetDefaults_PodSpec,
// SetDefaults_Container, probes, volumes and their sources): pods/v1 of kube's pkg/apis/core/v1/defaults.go.
import { absent, CORE, objects, protocolTCP, setPtr, setZero, struct, templateMetadata, zero, type Defaulters } from '../../../defaulting.ts';
import { isPlainObject } from '../../../../util/json.ts';
import type { Obj } from '../../../strategy.ts';

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

export function rbd(s: Obj): void {
  setZero(s, 'pool', 'rbd');
  setZero(s, 'user', 'admin');
  setZero(s, 'keyring', '/etc/ceph/keyring');
}
export function scaleIO(s: Obj): void {
  setZero(s, 'storageMode', 'ThinProvisioned');
  setZero(s, 'fsType', 'xfs');
}
const defaultMode = (s: Obj): void => setPtr(s, 'defaultMode', 420);

/** Pods, pod specs and the volume sources a pod may use, by definition. */
export const podDefaults: Defaulters = {
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
  [`${CORE}RBDVolumeSource`]: rbd,
  [`${CORE}AzureDiskVolumeSource`]: (s) => {
    setPtr(s, 'cachingMode', 'ReadWrite');
    setPtr(s, 'fsType', 'ext4');
    setPtr(s, 'readOnly', false);
    setPtr(s, 'kind', 'Shared');
  },
  [`${CORE}ScaleIOVolumeSource`]: scaleIO,
};
