// The Pod Security Standards' checks and the evaluator that picks them by level and version:
// kube's staging/src/k8s.io/pod-security-admission/policy (check_*.go, registry.go, checks.go).
// Each check keeps kube's versions (a version applies from its minimum policy version until the
// next one), kube's forbidden reason and detail word for word, and kube's order: baseline checks
// by ID, then restricted checks by ID; at restricted, a restricted check replaces the baseline
// checks it overrides. A check reads the pod's JSON (v1 shape) as stored, never changing it.
import type { LevelVersion, Version } from './api.ts';

/* ---- the little of a v1 Pod the checks read ---- */

interface Capabilities {
  add?: string[];
  drop?: string[];
}
interface SecurityContext {
  privileged?: boolean;
  allowPrivilegeEscalation?: boolean;
  capabilities?: Capabilities;
  procMount?: string;
  runAsNonRoot?: boolean;
  runAsUser?: number;
  seLinuxOptions?: { type?: string; user?: string; role?: string };
  seccompProfile?: { type?: string };
  appArmorProfile?: { type?: string };
  windowsOptions?: { hostProcess?: boolean };
}
interface Handler {
  httpGet?: { host?: string };
  tcpSocket?: { host?: string };
}
export interface Container {
  name?: string;
  image?: string;
  ports?: { hostPort?: number }[];
  securityContext?: SecurityContext;
  livenessProbe?: Handler;
  readinessProbe?: Handler;
  startupProbe?: Handler;
  lifecycle?: { postStart?: Handler; preStop?: Handler };
}
export interface PodSpec {
  containers?: Container[];
  initContainers?: Container[];
  ephemeralContainers?: Container[];
  volumes?: Record<string, unknown>[];
  hostNetwork?: boolean;
  hostPID?: boolean;
  hostIPC?: boolean;
  hostUsers?: boolean;
  os?: { name?: string };
  runtimeClassName?: string;
  securityContext?: SecurityContext & { sysctls?: { name?: string }[] };
}
export interface PodMeta {
  name?: string;
  annotations?: Record<string, string>;
}

export interface CheckResult {
  allowed: boolean;
  forbiddenReason?: string;
  forbiddenDetail?: string;
}

type CheckFn = (meta: PodMeta, spec: PodSpec) => CheckResult;

interface VersionedCheck {
  minimumVersion: number;
  check: CheckFn;
  /** Baseline check IDs this restricted check replaces at restricted (kube's OverrideCheckIDs). */
  overrides?: string[];
}

interface Check {
  id: string;
  level: 'baseline' | 'restricted';
  versions: VersionedCheck[];
}

const ALLOWED: CheckResult = { allowed: true };

/* ---- kube's helpers.go and visitor.go ---- */

function joinQuote(items: string[]): string {
  return items.length ? `"${items.join('", "')}"` : '';
}
function pluralize(singular: string, plural: string, count: number): string {
  return count === 1 ? singular : plural;
}
/** Go's sets.String List(): unique, sorted bytewise. */
function sortedSet(items: Iterable<string>): string[] {
  return [...new Set(items)].sort(bytewise);
}
function bytewise(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
/** Go's %q of a string. */
function quote(s: string): string {
  return JSON.stringify(s);
}
/** init containers, then containers, then ephemeral containers (kube's visitContainers). */
function visitContainers(spec: PodSpec, visit: (c: Container) => void): void {
  for (const c of spec.initContainers ?? []) visit(c);
  for (const c of spec.containers ?? []) visit(c);
  for (const c of spec.ephemeralContainers ?? []) visit(c);
}
const nameOf = (c: Container): string => c.name ?? '';
const isWindows = (spec: PodSpec): boolean => spec.os?.name === 'windows';
/** User-namespaced pods (hostUsers: false) relax some checks from policy 1.35 on. */
const inUserNamespace = (spec: PodSpec): boolean => spec.hostUsers === false;
/** "pod and containers "a", "b"": the setters kube names in its details. */
function setters(pod: boolean, containers: string[]): string[] {
  const out = pod ? ['pod'] : [];
  if (containers.length) out.push(`${pluralize('container', 'containers', containers.length)} ${joinQuote(containers)}`);
  return out;
}

/* ---- baseline ---- */

function privileged_1_0(_m: PodMeta, spec: PodSpec): CheckResult {
  const bad: string[] = [];
  visitContainers(spec, (c) => {
    if (c.securityContext?.privileged === true) bad.push(nameOf(c));
  });
  if (!bad.length) return ALLOWED;
  return { allowed: false, forbiddenReason: 'privileged', forbiddenDetail: `${pluralize('container', 'containers', bad.length)} ${joinQuote(bad)} must not set securityContext.privileged=true` };
}

const CAPABILITIES_ALLOWED_1_0 = new Set(['AUDIT_WRITE', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'MKNOD', 'NET_BIND_SERVICE', 'SETFCAP', 'SETGID', 'SETPCAP', 'SETUID', 'SYS_CHROOT']);

function capabilitiesBaseline_1_0(_m: PodMeta, spec: PodSpec): CheckResult {
  const bad: string[] = [];
  const caps: string[] = [];
  visitContainers(spec, (c) => {
    let valid = true;
    for (const cap of c.securityContext?.capabilities?.add ?? []) {
      if (!CAPABILITIES_ALLOWED_1_0.has(cap)) {
        valid = false;
        caps.push(cap);
      }
    }
    if (!valid) bad.push(nameOf(c));
  });
  if (!bad.length) return ALLOWED;
  return {
    allowed: false,
    forbiddenReason: 'non-default capabilities',
    forbiddenDetail: `${pluralize('container', 'containers', bad.length)} ${joinQuote(bad)} must not include ${joinQuote(sortedSet(caps))} in securityContext.capabilities.add`,
  };
}

function hostNamespaces_1_0(_m: PodMeta, spec: PodSpec): CheckResult {
  const set: string[] = [];
  if (spec.hostNetwork) set.push('hostNetwork=true');
  if (spec.hostPID) set.push('hostPID=true');
  if (spec.hostIPC) set.push('hostIPC=true');
  if (!set.length) return ALLOWED;
  return { allowed: false, forbiddenReason: 'host namespaces', forbiddenDetail: set.join(', ') };
}

function hostPathVolumes_1_0(_m: PodMeta, spec: PodSpec): CheckResult {
  const bad = (spec.volumes ?? []).filter((v) => v.hostPath != null).map((v) => String(v.name ?? ''));
  if (!bad.length) return ALLOWED;
  return { allowed: false, forbiddenReason: 'hostPath volumes', forbiddenDetail: `${pluralize('volume', 'volumes', bad.length)} ${joinQuote(bad)}` };
}

function hostPorts_1_0(_m: PodMeta, spec: PodSpec): CheckResult {
  const bad: string[] = [];
  const ports: string[] = [];
  visitContainers(spec, (c) => {
    let valid = true;
    for (const p of c.ports ?? []) {
      if (p.hostPort) {
        valid = false;
        ports.push(String(p.hostPort));
      }
    }
    if (!valid) bad.push(nameOf(c));
  });
  if (!bad.length) return ALLOWED;
  const list = sortedSet(ports);
  return {
    allowed: false,
    forbiddenReason: 'hostPort',
    forbiddenDetail: `${pluralize('container', 'containers', bad.length)} ${joinQuote(bad)} ${pluralize('uses', 'use', bad.length)} ${pluralize('hostPort', 'hostPorts', list.length)} ${list.join(', ')}`,
  };
}

function hostProbesAndHostLifecycle_1_34(_m: PodMeta, spec: PodSpec): CheckResult {
  const bad = new Set<string>();
  const hosts = new Set<string>();
  const look = (c: Container, h: Handler | undefined): void => {
    if (!h) return;
    for (const host of [h.httpGet?.host, h.tcpSocket?.host]) {
      if (host) {
        bad.add(nameOf(c));
        hosts.add(host);
      }
    }
  };
  visitContainers(spec, (c) => {
    look(c, c.livenessProbe);
    look(c, c.readinessProbe);
    look(c, c.startupProbe);
    look(c, c.lifecycle?.postStart);
    look(c, c.lifecycle?.preStop);
  });
  if (!bad.size) return ALLOWED;
  return {
    allowed: false,
    forbiddenReason: 'probe or lifecycle host',
    forbiddenDetail: `${pluralize('container', 'containers', bad.size)} ${joinQuote(sortedSet(bad))} ${pluralize('uses', 'use', bad.size)} ${pluralize('probe or lifecycle host', 'probe or lifecycle hosts', hosts.size)} ${joinQuote(sortedSet(hosts))}`,
  };
}

function procMount_1_0(_m: PodMeta, spec: PodSpec): CheckResult {
  const bad: string[] = [];
  const types: string[] = [];
  visitContainers(spec, (c) => {
    const pm = c.securityContext?.procMount;
    if (pm != null && pm !== 'Default') {
      bad.push(nameOf(c));
      types.push(pm);
    }
  });
  if (!bad.length) return ALLOWED;
  return {
    allowed: false,
    forbiddenReason: 'procMount',
    forbiddenDetail: `${pluralize('container', 'containers', bad.length)} ${joinQuote(bad)} must not set securityContext.procMount to ${joinQuote(sortedSet(types))}`,
  };
}

function procMount_1_35_baseline(m: PodMeta, spec: PodSpec): CheckResult {
  return inUserNamespace(spec) ? ALLOWED : procMount_1_0(m, spec);
}

const SELINUX_TYPES_1_0 = new Set(['', 'container_t', 'container_init_t', 'container_kvm_t']);
const SELINUX_TYPES_1_31 = new Set([...SELINUX_TYPES_1_0, 'container_engine_t']);

function seLinuxOptions(allowedTypes: Set<string>): CheckFn {
  return (_m, spec) => {
    const badTypes: string[] = [];
    let setUser = false;
    let setRole = false;
    const valid = (o: NonNullable<SecurityContext['seLinuxOptions']>): boolean => {
      let ok = true;
      if (!allowedTypes.has(o.type ?? '')) {
        ok = false;
        badTypes.push(o.type ?? '');
      }
      if (o.user) {
        ok = false;
        setUser = true;
      }
      if (o.role) {
        ok = false;
        setRole = true;
      }
      return ok;
    };
    const podBad = spec.securityContext?.seLinuxOptions ? !valid(spec.securityContext.seLinuxOptions) : false;
    const badContainers: string[] = [];
    visitContainers(spec, (c) => {
      if (c.securityContext?.seLinuxOptions && !valid(c.securityContext.seLinuxOptions)) badContainers.push(nameOf(c));
    });
    const who = setters(podBad, badContainers);
    if (!who.length) return ALLOWED;
    // kube names user and role only alongside a bad type (check_seLinuxOptions.go).
    const data: string[] = [];
    if (badTypes.length) {
      const types = sortedSet(badTypes);
      data.push(`${pluralize('type', 'types', types.length)} ${joinQuote(types)}`);
      if (setUser) data.push('user may not be set');
      if (setRole) data.push('role may not be set');
    }
    return { allowed: false, forbiddenReason: 'seLinuxOptions', forbiddenDetail: `${who.join(' and ')} set forbidden securityContext.seLinuxOptions: ${data.join('; ')}` };
  };
}

const SECCOMP_POD_ANNOTATION = 'seccomp.security.alpha.kubernetes.io/pod';
const SECCOMP_CONTAINER_ANNOTATION_PREFIX = 'container.seccomp.security.alpha.kubernetes.io/';
const validSeccomp = (t: string | undefined): boolean => t === 'Localhost' || t === 'RuntimeDefault';
const validSeccompAnnotation = (v: string): boolean => v === 'runtime/default' || v === 'docker/default' || v.startsWith('localhost/');

function seccompProfileBaseline_1_0(m: PodMeta, spec: PodSpec): CheckResult {
  const forbidden: string[] = [];
  const annotations = m.annotations ?? {};
  const podValue = annotations[SECCOMP_POD_ANNOTATION];
  if (podValue !== undefined && !validSeccompAnnotation(podValue)) forbidden.push(`${SECCOMP_POD_ANNOTATION}=${quote(podValue)}`);
  visitContainers(spec, (c) => {
    const key = SECCOMP_CONTAINER_ANNOTATION_PREFIX + nameOf(c);
    const v = annotations[key];
    if (v !== undefined && !validSeccompAnnotation(v)) forbidden.push(`${key}=${quote(v)}`);
  });
  if (!forbidden.length) return ALLOWED;
  const list = sortedSet(forbidden);
  return { allowed: false, forbiddenReason: 'seccompProfile', forbiddenDetail: `forbidden ${pluralize('annotation', 'annotations', list.length)} ${list.join(', ')}` };
}

function seccompProfileBaseline_1_19(_m: PodMeta, spec: PodSpec): CheckResult {
  const badValues: string[] = [];
  const podProfile = spec.securityContext?.seccompProfile;
  const podBad = podProfile ? !validSeccomp(podProfile.type) : false;
  if (podBad) badValues.push(podProfile?.type ?? '');
  const bad: string[] = [];
  visitContainers(spec, (c) => {
    const p = c.securityContext?.seccompProfile;
    if (p && !validSeccomp(p.type)) {
      bad.push(nameOf(c));
      badValues.push(p.type ?? '');
    }
  });
  const who = setters(podBad, bad);
  if (!who.length) return ALLOWED;
  return { allowed: false, forbiddenReason: 'seccompProfile', forbiddenDetail: `${who.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote(sortedSet(badValues))}` };
}

function appArmorProfile_1_0(m: PodMeta, spec: PodSpec): CheckResult {
  const allowedType = (t: string | undefined): boolean => t === 'RuntimeDefault' || t === 'Localhost';
  const badValues: string[] = [];
  const podProfile = spec.securityContext?.appArmorProfile;
  const podBad = podProfile ? !allowedType(podProfile.type) : false;
  if (podBad) badValues.push(podProfile?.type ?? '');
  const bad: string[] = [];
  visitContainers(spec, (c) => {
    const p = c.securityContext?.appArmorProfile;
    if (p && !allowedType(p.type)) {
      bad.push(nameOf(c));
      badValues.push(p.type ?? '');
    }
  });
  const who = setters(podBad, bad);
  const annotations: string[] = [];
  for (const [k, v] of Object.entries(m.annotations ?? {})) {
    if (k.startsWith('container.apparmor.security.beta.kubernetes.io/') && !(v === '' || v === 'runtime/default' || v.startsWith('localhost/'))) annotations.push(`${k}=${quote(v)}`);
  }
  const values = sortedSet(badValues);
  if (annotations.length) {
    values.push(...annotations.sort(bytewise));
    who.push(pluralize('annotation', 'annotations', annotations.length));
  }
  if (!who.length) return ALLOWED;
  return {
    allowed: false,
    forbiddenReason: pluralize('forbidden AppArmor profile', 'forbidden AppArmor profiles', values.length),
    forbiddenDetail: `${who.join(' and ')} must not set AppArmor profile type to ${joinQuote(values)}`,
  };
}

const SYSCTLS_1_0 = new Set(['kernel.shm_rmid_forced', 'net.ipv4.ip_local_port_range', 'net.ipv4.tcp_syncookies', 'net.ipv4.ping_group_range', 'net.ipv4.ip_unprivileged_port_start']);
const SYSCTLS_1_27 = new Set([...SYSCTLS_1_0, 'net.ipv4.ip_local_reserved_ports']);
const SYSCTLS_1_29 = new Set([...SYSCTLS_1_27, 'net.ipv4.tcp_keepalive_time', 'net.ipv4.tcp_fin_timeout', 'net.ipv4.tcp_keepalive_intvl', 'net.ipv4.tcp_keepalive_probes']);
const SYSCTLS_1_32 = new Set([...SYSCTLS_1_29, 'net.ipv4.tcp_rmem', 'net.ipv4.tcp_wmem']);

function sysctls(allowed: Set<string>): CheckFn {
  return (_m, spec) => {
    const bad = (spec.securityContext?.sysctls ?? []).map((s) => s.name ?? '').filter((n) => !allowed.has(n));
    if (!bad.length) return ALLOWED;
    return { allowed: false, forbiddenReason: 'forbidden sysctls', forbiddenDetail: bad.join(', ') };
  };
}

function windowsHostProcess_1_0(_m: PodMeta, spec: PodSpec): CheckResult {
  const bad: string[] = [];
  visitContainers(spec, (c) => {
    if (c.securityContext?.windowsOptions?.hostProcess === true) bad.push(nameOf(c));
  });
  const who = setters(spec.securityContext?.windowsOptions?.hostProcess === true, bad);
  if (!who.length) return ALLOWED;
  return { allowed: false, forbiddenReason: 'hostProcess', forbiddenDetail: `${who.join(' and ')} must not set securityContext.windowsOptions.hostProcess=true` };
}

/* ---- restricted ---- */

function allowPrivilegeEscalation_1_8(_m: PodMeta, spec: PodSpec): CheckResult {
  const bad: string[] = [];
  visitContainers(spec, (c) => {
    if (c.securityContext?.allowPrivilegeEscalation !== false) bad.push(nameOf(c));
  });
  if (!bad.length) return ALLOWED;
  return {
    allowed: false,
    forbiddenReason: 'allowPrivilegeEscalation != false',
    forbiddenDetail: `${pluralize('container', 'containers', bad.length)} ${joinQuote(bad)} must set securityContext.allowPrivilegeEscalation=false`,
  };
}

/** From policy 1.25 the Windows pods (spec.os.name: windows) are exempt: the API refuses those fields on them. */
function exceptWindows(check: CheckFn): CheckFn {
  return (m, spec) => (isWindows(spec) ? ALLOWED : check(m, spec));
}
/** From policy 1.35 user-namespaced pods are exempt (kube's relaxPolicyForUserNamespacePod, now GA). */
function exceptUserNamespace(check: CheckFn): CheckFn {
  return (m, spec) => (inUserNamespace(spec) ? ALLOWED : check(m, spec));
}

function capabilitiesRestricted_1_22(_m: PodMeta, spec: PodSpec): CheckResult {
  const missingDropAll: string[] = [];
  const addingForbidden: string[] = [];
  const forbiddenCaps: string[] = [];
  visitContainers(spec, (c) => {
    const caps = c.securityContext?.capabilities;
    if (!caps) {
      missingDropAll.push(nameOf(c));
      return;
    }
    if (!(caps.drop ?? []).includes('ALL')) missingDropAll.push(nameOf(c));
    let added = false;
    for (const cap of caps.add ?? []) {
      if (cap !== 'NET_BIND_SERVICE') {
        added = true;
        forbiddenCaps.push(cap);
      }
    }
    if (added) addingForbidden.push(nameOf(c));
  });
  const details: string[] = [];
  if (missingDropAll.length) details.push(`${pluralize('container', 'containers', missingDropAll.length)} ${joinQuote(missingDropAll)} must set securityContext.capabilities.drop=["ALL"]`);
  if (addingForbidden.length) {
    details.push(`${pluralize('container', 'containers', addingForbidden.length)} ${joinQuote(addingForbidden)} must not include ${joinQuote(sortedSet(forbiddenCaps))} in securityContext.capabilities.add`);
  }
  if (!details.length) return ALLOWED;
  return { allowed: false, forbiddenReason: 'unrestricted capabilities', forbiddenDetail: details.join('; ') };
}

/** The volume sources restricted allows; every other source is named (or "unknown"). */
const RESTRICTED_ALLOWED_VOLUMES = ['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'image', 'persistentVolumeClaim', 'projected', 'secret'];
const RESTRICTED_NAMED_VOLUMES = ['hostPath', 'gcePersistentDisk', 'awsElasticBlockStore', 'gitRepo', 'nfs', 'iscsi', 'glusterfs', 'rbd', 'flexVolume', 'cinder', 'cephfs', 'flocker', 'fc', 'azureFile', 'vsphereVolume', 'quobyte', 'azureDisk', 'photonPersistentDisk', 'portworxVolume', 'scaleIO', 'storageos'];

function restrictedVolumes_1_0(_m: PodMeta, spec: PodSpec): CheckResult {
  const bad: string[] = [];
  const types: string[] = [];
  for (const v of spec.volumes ?? []) {
    if (RESTRICTED_ALLOWED_VOLUMES.some((k) => v[k] != null)) continue;
    bad.push(String(v.name ?? ''));
    types.push(RESTRICTED_NAMED_VOLUMES.find((k) => v[k] != null) ?? 'unknown');
  }
  if (!bad.length) return ALLOWED;
  const typeList = sortedSet(types);
  return {
    allowed: false,
    forbiddenReason: 'restricted volume types',
    forbiddenDetail: `${pluralize('volume', 'volumes', bad.length)} ${joinQuote(bad)} ${pluralize('uses', 'use', bad.length)} ${pluralize('restricted volume type', 'restricted volume types', typeList.length)} ${joinQuote(typeList)}`,
  };
}

function runAsNonRoot_1_0(_m: PodMeta, spec: PodSpec): CheckResult {
  const podValue = spec.securityContext?.runAsNonRoot;
  const podBad = podValue === false;
  const podRunAsNonRoot = podValue === true;
  const explicitlyBad: string[] = [];
  const implicitlyBad: string[] = [];
  visitContainers(spec, (c) => {
    const v = c.securityContext?.runAsNonRoot;
    if (v != null) {
      if (!v) explicitlyBad.push(nameOf(c));
    } else if (!podRunAsNonRoot) implicitlyBad.push(nameOf(c));
  });
  const who = setters(podBad, explicitlyBad);
  if (who.length) return { allowed: false, forbiddenReason: 'runAsNonRoot != true', forbiddenDetail: `${who.join(' and ')} must not set securityContext.runAsNonRoot=false` };
  if (implicitlyBad.length) {
    return {
      allowed: false,
      forbiddenReason: 'runAsNonRoot != true',
      forbiddenDetail: `pod or ${pluralize('container', 'containers', implicitlyBad.length)} ${joinQuote(implicitlyBad)} must set securityContext.runAsNonRoot=true`,
    };
  }
  return ALLOWED;
}

function runAsUser_1_23(_m: PodMeta, spec: PodSpec): CheckResult {
  const bad: string[] = [];
  visitContainers(spec, (c) => {
    if (c.securityContext?.runAsUser === 0) bad.push(nameOf(c));
  });
  const who = setters(spec.securityContext?.runAsUser === 0, bad);
  if (!who.length) return ALLOWED;
  return { allowed: false, forbiddenReason: 'runAsUser=0', forbiddenDetail: `${who.join(' and ')} must not set runAsUser=0` };
}

function seccompProfileRestricted_1_19(_m: PodMeta, spec: PodSpec): CheckResult {
  const badValues: string[] = [];
  const podProfile = spec.securityContext?.seccompProfile;
  let podBad = false;
  let podSet = false;
  if (podProfile) {
    if (validSeccomp(podProfile.type)) podSet = true;
    else {
      podBad = true;
      badValues.push(podProfile.type ?? '');
    }
  }
  const explicitlyBad: string[] = [];
  const implicitlyBad: string[] = [];
  visitContainers(spec, (c) => {
    const p = c.securityContext?.seccompProfile;
    if (p) {
      if (!validSeccomp(p.type)) {
        explicitlyBad.push(nameOf(c));
        badValues.push(p.type ?? '');
      }
    } else if (!podSet) implicitlyBad.push(nameOf(c));
  });
  const who = setters(podBad, explicitlyBad);
  if (who.length) {
    return { allowed: false, forbiddenReason: 'seccompProfile', forbiddenDetail: `${who.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote(sortedSet(badValues))}` };
  }
  if (implicitlyBad.length) {
    return {
      allowed: false,
      forbiddenReason: 'seccompProfile',
      forbiddenDetail: `pod or ${pluralize('container', 'containers', implicitlyBad.length)} ${joinQuote(implicitlyBad)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"`,
    };
  }
  return ALLOWED;
}

/* ---- the registry ---- */

/** Every check kube 1.36 runs by default (policy.DefaultChecks()). */
export const CHECKS: readonly Check[] = [
  { id: 'appArmorProfile', level: 'baseline', versions: [{ minimumVersion: 0, check: appArmorProfile_1_0 }] },
  { id: 'capabilities_baseline', level: 'baseline', versions: [{ minimumVersion: 0, check: capabilitiesBaseline_1_0 }] },
  { id: 'hostNamespaces', level: 'baseline', versions: [{ minimumVersion: 0, check: hostNamespaces_1_0 }] },
  { id: 'hostPathVolumes', level: 'baseline', versions: [{ minimumVersion: 0, check: hostPathVolumes_1_0 }] },
  { id: 'hostPorts', level: 'baseline', versions: [{ minimumVersion: 0, check: hostPorts_1_0 }] },
  { id: 'hostProbesAndHostLifecycle', level: 'baseline', versions: [{ minimumVersion: 34, check: hostProbesAndHostLifecycle_1_34 }] },
  { id: 'privileged', level: 'baseline', versions: [{ minimumVersion: 0, check: privileged_1_0 }] },
  {
    id: 'procMount',
    level: 'baseline',
    versions: [
      { minimumVersion: 0, check: procMount_1_0 },
      { minimumVersion: 35, check: procMount_1_35_baseline },
    ],
  },
  {
    id: 'seLinuxOptions',
    level: 'baseline',
    versions: [
      { minimumVersion: 0, check: seLinuxOptions(SELINUX_TYPES_1_0) },
      { minimumVersion: 31, check: seLinuxOptions(SELINUX_TYPES_1_31) },
    ],
  },
  {
    id: 'seccompProfile_baseline',
    level: 'baseline',
    versions: [
      { minimumVersion: 0, check: seccompProfileBaseline_1_0 },
      { minimumVersion: 19, check: seccompProfileBaseline_1_19 },
    ],
  },
  {
    id: 'sysctls',
    level: 'baseline',
    versions: [
      { minimumVersion: 0, check: sysctls(SYSCTLS_1_0) },
      { minimumVersion: 27, check: sysctls(SYSCTLS_1_27) },
      { minimumVersion: 29, check: sysctls(SYSCTLS_1_29) },
      { minimumVersion: 32, check: sysctls(SYSCTLS_1_32) },
    ],
  },
  { id: 'windowsHostProcess', level: 'baseline', versions: [{ minimumVersion: 0, check: windowsHostProcess_1_0 }] },
  {
    id: 'allowPrivilegeEscalation',
    level: 'restricted',
    versions: [
      { minimumVersion: 8, check: allowPrivilegeEscalation_1_8 },
      { minimumVersion: 25, check: exceptWindows(allowPrivilegeEscalation_1_8) },
    ],
  },
  {
    id: 'capabilities_restricted',
    level: 'restricted',
    versions: [
      { minimumVersion: 22, check: capabilitiesRestricted_1_22, overrides: ['capabilities_baseline'] },
      { minimumVersion: 25, check: exceptWindows(capabilitiesRestricted_1_22), overrides: ['capabilities_baseline'] },
    ],
  },
  { id: 'procMount_restricted', level: 'restricted', versions: [{ minimumVersion: 35, check: procMount_1_0, overrides: ['procMount'] }] },
  { id: 'restrictedVolumes', level: 'restricted', versions: [{ minimumVersion: 0, check: restrictedVolumes_1_0, overrides: ['hostPathVolumes'] }] },
  {
    id: 'runAsNonRoot',
    level: 'restricted',
    versions: [
      { minimumVersion: 0, check: runAsNonRoot_1_0 },
      { minimumVersion: 35, check: exceptUserNamespace(runAsNonRoot_1_0) },
    ],
  },
  {
    id: 'runAsUser',
    level: 'restricted',
    versions: [
      { minimumVersion: 23, check: runAsUser_1_23 },
      { minimumVersion: 35, check: exceptUserNamespace(runAsUser_1_23) },
    ],
  },
  {
    id: 'seccompProfile_restricted',
    level: 'restricted',
    versions: [
      { minimumVersion: 19, check: seccompProfileRestricted_1_19, overrides: ['seccompProfile_baseline'] },
      { minimumVersion: 25, check: exceptWindows(seccompProfileRestricted_1_19), overrides: ['seccompProfile_baseline'] },
    ],
  },
];

/**
 * kube's checkRegistry: for each minor version up to the newest any check names, the ordered
 * check functions of each level. A later policy version ("latest", v1.99) evaluates as the newest.
 */
export class Evaluator {
  private readonly baseline: CheckFn[][] = [];
  private readonly restricted: CheckFn[][] = [];
  readonly maxVersion: number;

  constructor(checks: readonly Check[] = CHECKS) {
    this.maxVersion = Math.max(...checks.map((c) => c.versions[c.versions.length - 1].minimumVersion));
    const ordered = [...checks.filter((c) => c.level === 'baseline').sort((a, b) => bytewise(a.id, b.id)), ...checks.filter((c) => c.level === 'restricted').sort((a, b) => bytewise(a.id, b.id))];
    for (let v = 0; v <= this.maxVersion; v++) {
      const at = ordered.map((c) => ({ c, vc: versionAt(c, v) })).filter((x): x is { c: Check; vc: VersionedCheck } => x.vc !== undefined);
      const overridden = new Set(at.filter((x) => x.c.level === 'restricted').flatMap((x) => x.vc.overrides ?? []));
      this.baseline[v] = at.filter((x) => x.c.level === 'baseline').map((x) => x.vc.check);
      this.restricted[v] = at.filter((x) => x.c.level === 'restricted' || !overridden.has(x.c.id)).map((x) => x.vc.check);
    }
  }

  evaluatePod(lv: LevelVersion, meta: PodMeta, spec: PodSpec): CheckResult[] {
    if (lv.level === 'privileged') return [];
    const v = Math.min(lv.version, this.maxVersion);
    const fns = lv.level === 'baseline' ? this.baseline[v] : this.restricted[v];
    return fns.map((f) => f(meta, spec));
  }
}

function versionAt(check: Check, v: Version): VersionedCheck | undefined {
  let found: VersionedCheck | undefined;
  for (const vc of check.versions) if (vc.minimumVersion <= v) found = vc;
  return found;
}

/** kube's AggregateCheckResult: the forbidden results, in check order. */
export interface AggregateResult {
  allowed: boolean;
  reasons: string[];
  details: string[];
}

export function aggregate(results: CheckResult[]): AggregateResult {
  const reasons: string[] = [];
  const details: string[] = [];
  for (const r of results) {
    if (r.allowed) continue;
    reasons.push(r.forbiddenReason || 'unknown forbidden reason');
    details.push(r.forbiddenDetail ?? '');
  }
  return { allowed: reasons.length === 0, reasons, details };
}

/** "host ports, privileged": what a namespace's existing pods are told. */
export function forbiddenReason(a: AggregateResult): string {
  return a.reasons.join(', ');
}

/** "hostPort (container "a" uses hostPort 80), privileged (...)": what one pod is told. */
export function forbiddenDetail(a: AggregateResult): string {
  return a.reasons.map((r, i) => (a.details[i] ? `${r} (${a.details[i]})` : r)).join(', ');
}

