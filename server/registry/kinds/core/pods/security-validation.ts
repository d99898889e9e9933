// The security parts of kube's ValidatePodSpec: the pod's security context
// (validatePodSpecSecurityContext: user and group ids, sysctls and the host namespaces they may
// not reach, seccomp and AppArmor profiles, Windows options, the change policies), each
// container's (ValidateSecurityContext, the last of validateContainerCommon's checks), host ports
// with hostNetwork (validatePodHostNetworkDeps), Windows hostProcess containers
// (validateWindowsHostProcessPod), user namespaces beside the host's (validateHostUsers),
// hostnameOverride (validatePodHostName) and the pod's OS with the fields each OS refuses
// (validateOS, validateLinux, validateWindows). Field paths and messages as kube-apiserver 1.36
// words them.
//
// Options as kube-apiserver 1.36 sets them for a new object: namespaced sysctls refused with
// hostNetwork or hostIPC (AllowNamespacedSysctlsForHostNetAndHostIPC false); seLinuxChangePolicy
// Recursive only (SELinuxMount is off: AllowOnlyRecursiveSELinuxChangePolicy); hostNetwork refused
// beside hostUsers: false (UserNamespacesHostNetworkSupport, alpha, off), and so are volume
// devices (AllowUserNamespacesWithVolumeDevices false); procMount, hostUsers,
// supplementalGroupsPolicy, seLinuxChangePolicy and hostnameOverride are kept (their gates are
// on). Privileged and hostProcess containers are allowed, as in clusters started with
// --allow-privileged=true (kubeadm, kind, minikube); kube-apiserver's own default is false.
//
// kube prints a pointer nested in a struct it shows with %#v as an address; hearth prints the
// pointee in its place: (*bool)(true), (*core.Capabilities)(core.Capabilities{...}).
//
// A field the schema requires and the request leaves out is the schema walk's Required value;
// these checks look at the values that are there.
import { isPlainObject, objectsOf as objects } from '../../../../util/json.ts';
import { validateLocalDescendingPath } from './volume-validation.ts';
import { isDNS1123Subdomain } from '../../../../validation/names.ts';
import { goQuote } from '../../../../go/strconv.ts';
import { trimSpace } from '../../../../go/strings.ts';
import { duplicateError, forbiddenError, goValue, invalidError, notSupportedError, requiredError, tooLongError, type FieldError } from '../../../../validation/field.ts';
import type { Obj } from '../../../strategy.ts';

/** kube-apiserver's --allow-privileged (capabilities.Get().AllowPrivileged), as kubeadm, kind and minikube set it. */
const ALLOW_PRIVILEGED = true;

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

/** validation.IsValidUserID / IsValidGroupID: an id in [0, MaxInt32]. */
function idRange(errs: FieldError[], v: unknown, path: string): void {
  if (typeof v === 'number' && (v < 0 || v > 2147483647)) errs.push(invalidError(path, goValue(v), 'must be between 0 and 2147483647, inclusive'));
}

// ---------------------------------------------------------------------------------------------
// Go's %#v of the internal structs some messages print.

const goPtr = (type: string, pointee: string | undefined): string => `(*${type})(${pointee ?? 'nil'})`;
const goStruct = (type: string, fields: [string, string][]): string => `${type}{${fields.map(([k, v]) => `${k}:${v}`).join(', ')}}`;
const goStrPtr = (v: unknown): string => goPtr('string', typeof v === 'string' ? goQuote(v) : undefined);
const goBoolPtr = (v: unknown): string => goPtr('bool', typeof v === 'boolean' ? String(v) : undefined);
const goIntPtr = (v: unknown): string => goPtr('int64', typeof v === 'number' ? goValue(v) : undefined);
const goStructPtr = (type: string, v: unknown, show: (o: Obj) => string): string => goPtr(type, isPlainObject(v) ? show(v) : undefined);

/** A []core.Capability: nil when absent. */
function goCapabilities(v: unknown): string {
  if (!Array.isArray(v)) return '[]core.Capability(nil)';
  return `[]core.Capability{${v.map((c) => goQuote(typeof c === 'string' ? c : '')).join(', ')}}`;
}

/** core.SeccompProfile / core.AppArmorProfile: a type and a localhost profile. */
const goProfile = (type: string) => (p: Obj): string => goStruct(type, [['Type', goQuote(str(p.type) ?? '')], ['LocalhostProfile', goStrPtr(p.localhostProfile)]]);
const goSeccompProfile = goProfile('core.SeccompProfile');

/** core.SecurityContext, its fields in the internal type's order. */
function goSecurityContext(sc: Obj): string {
  const s = (v: unknown) => goQuote(str(v) ?? '');
  return goStruct('core.SecurityContext', [
    ['Capabilities', goStructPtr('core.Capabilities', sc.capabilities, (c) => goStruct('core.Capabilities', [['Add', goCapabilities(c.add)], ['Drop', goCapabilities(c.drop)]]))],
    ['Privileged', goBoolPtr(sc.privileged)],
    ['SELinuxOptions', goStructPtr('core.SELinuxOptions', sc.seLinuxOptions, (o) => goStruct('core.SELinuxOptions', [['User', s(o.user)], ['Role', s(o.role)], ['Type', s(o.type)], ['Level', s(o.level)]]))],
    [
      'WindowsOptions',
      goStructPtr('core.WindowsSecurityContextOptions', sc.windowsOptions, (w) =>
        goStruct('core.WindowsSecurityContextOptions', [
          ['GMSACredentialSpecName', goStrPtr(w.gmsaCredentialSpecName)],
          ['GMSACredentialSpec', goStrPtr(w.gmsaCredentialSpec)],
          ['RunAsUserName', goStrPtr(w.runAsUserName)],
          ['HostProcess', goBoolPtr(w.hostProcess)],
        ]),
      ),
    ],
    ['RunAsUser', goIntPtr(sc.runAsUser)],
    ['RunAsGroup', goIntPtr(sc.runAsGroup)],
    ['RunAsNonRoot', goBoolPtr(sc.runAsNonRoot)],
    ['ReadOnlyRootFilesystem', goBoolPtr(sc.readOnlyRootFilesystem)],
    ['AllowPrivilegeEscalation', goBoolPtr(sc.allowPrivilegeEscalation)],
    ['ProcMount', goPtr('core.ProcMountType', typeof sc.procMount === 'string' ? goQuote(sc.procMount) : undefined)],
    ['SeccompProfile', goStructPtr('core.SeccompProfile', sc.seccompProfile, goSeccompProfile)],
    ['AppArmorProfile', goStructPtr('core.AppArmorProfile', sc.appArmorProfile, goProfile('core.AppArmorProfile'))],
  ]);
}

// ---------------------------------------------------------------------------------------------
// Profiles and Windows options (pod and container alike).

const SECCOMP_TYPES = ['Localhost', 'RuntimeDefault', 'Unconfined'];
const APPARMOR_TYPES = ['Localhost', 'RuntimeDefault', 'Unconfined'];


/** validateSeccompProfileField: a known type; a localhost profile for Localhost and no other. */
function validateSeccompProfile(errs: FieldError[], sp: unknown, path: string): void {
  if (!isPlainObject(sp)) return;
  const type = str(sp.type);
  if (type === '') errs.push(requiredError(`${path}.type`, 'type is required when seccompProfile is set'));
  else if (type !== undefined && !SECCOMP_TYPES.includes(type)) errs.push(notSupportedError(`${path}.type`, goQuote(type), SECCOMP_TYPES));
  const profile = str(sp.localhostProfile);
  if (type === 'Localhost') {
    if (profile === undefined) errs.push(requiredError(`${path}.localhostProfile`, 'must be set when seccomp type is Localhost'));
    else validateLocalDescendingPath(errs, profile, `${path}.localhostProfile`);
  } else if (profile !== undefined) {
    errs.push(invalidError(`${path}.localhostProfile`, goSeccompProfile(sp), 'can only be set when seccomp type is Localhost'));
  }
}

/** ValidateAppArmorProfileField: a known type; for Localhost an unpadded profile of at most 4095 bytes, for the others none. */
function validateAppArmorProfile(errs: FieldError[], p: unknown, path: string): void {
  if (!isPlainObject(p)) return;
  const profile = str(p.localhostProfile);
  const at = `${path}.localhostProfile`;
  switch (p.type) {
    case 'Localhost':
      if (profile === undefined) {
        errs.push(requiredError(at, 'must be set when AppArmor type is Localhost'));
        break;
      }
      if (trimSpace(profile) !== profile) errs.push(invalidError(at, goQuote(profile), 'must not be padded with whitespace'));
      else if (profile === '') errs.push(requiredError(at, 'must be set when AppArmor type is Localhost'));
      if (bytes(profile) > 4095) errs.push(tooLongError(at, 4095));
      break;
    case 'RuntimeDefault':
    case 'Unconfined':
      if (profile !== undefined) errs.push(invalidError(at, goQuote(profile), 'can only be set when AppArmor type is Localhost'));
      break;
    case '':
      errs.push(requiredError(`${path}.type`, 'type is required when appArmorProfile is set'));
      break;
    default:
      if (typeof p.type === 'string') errs.push(notSupportedError(`${path}.type`, goQuote(p.type), APPARMOR_TYPES));
  }
}

const NETBIOS_DOMAIN = /^[^\\/:*?"<>|.][^\\/:*?"<>|]{0,14}$/u;
const DNS_DOMAIN = /^[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;

/** The rules validateWindowsSecurityContextOptions gives runAsUserName: [DOMAIN\]USER, each part within its limits. */
function runAsUserNameErrors(name: string): string[] {
  if (name === '') return ['runAsUserName cannot be an empty string'];
  // eslint-disable-next-line no-control-regex -- control characters are what this looks for
  if (/[\x00-\x1f\x7f]/.test(name)) return ['runAsUserName cannot contain control characters'];
  const parts = name.split('\\');
  if (parts.length > 2) return ['runAsUserName cannot contain more than one backslash'];
  const [domain, user] = parts.length === 1 ? ['', parts[0]] : parts;
  const msgs: string[] = [];
  if (bytes(domain) >= 256) msgs.push("runAsUserName's Domain length must be under 256 characters");
  if (parts.length === 2 && !NETBIOS_DOMAIN.test(domain) && !DNS_DOMAIN.test(domain)) msgs.push("runAsUserName's Domain doesn't match the NetBios nor the DNS format");
  if (user === '') msgs.push("runAsUserName's User cannot be empty");
  else if (bytes(user) > 104) msgs.push("runAsUserName's User length must not be longer than 104 characters");
  if (/^[. ]+$/.test(user)) msgs.push("runAsUserName's User cannot contain only periods or spaces");
  if (/["/\\:;|=,+*?<>@[\]]/.test(user)) msgs.push(`runAsUserName's User cannot contain the following characters: "/\\:;|=,+*?<>@[]`);
  return msgs;
}

/** validateWindowsSecurityContextOptions: a credential spec name (an RFC 1123 subdomain), a credential spec (1 byte to 64 KiB), a user name. */
function validateWindowsOptions(errs: FieldError[], w: unknown, path: string): void {
  if (!isPlainObject(w)) return;
  const specName = str(w.gmsaCredentialSpecName);
  if (specName !== undefined) for (const m of isDNS1123Subdomain(specName)) errs.push(invalidError(`${path}.gmsaCredentialSpecName`, goQuote(specName), m));
  const spec = str(w.gmsaCredentialSpec);
  if (spec === '') errs.push(invalidError(`${path}.gmsaCredentialSpec`, '""', 'gmsaCredentialSpec cannot be an empty string'));
  else if (spec !== undefined && bytes(spec) > 64 * 1024) errs.push(invalidError(`${path}.gmsaCredentialSpec`, goQuote(spec), 'gmsaCredentialSpec size must be under 64 KiB'));
  const user = str(w.runAsUserName);
  if (user !== undefined) for (const m of runAsUserNameErrors(user)) errs.push(invalidError(`${path}.runAsUserName`, goQuote(user), m));
}

// ---------------------------------------------------------------------------------------------
// A container's security context.

const PROC_MOUNTS = ['Default', 'Unmasked'];

/** Whether the pod shares the host's user namespace: hostUsers unset or true. */
export const usesHostUsers = (spec: Obj): boolean => spec.hostUsers !== false;

/**
 * ValidateSecurityContext for a container (regular or init): privileged as cluster policy
 * allows, user and group ids, procMount (Unmasked only in a user namespace), the seccomp
 * profile, allowPrivilegeEscalation: false with neither privileged nor CAP_SYS_ADMIN, Windows
 * options, the AppArmor profile. kube checks no other field (capabilities, seLinuxOptions,
 * readOnlyRootFilesystem) here; validateWindows refuses some for a Windows pod.
 */
export function validateSecurityContext(errs: FieldError[], sc: unknown, path: string, hostUsers: boolean): void {
  if (!isPlainObject(sc)) return;
  if (sc.privileged === true && !ALLOW_PRIVILEGED) errs.push(forbiddenError(`${path}.privileged`, 'disallowed by cluster policy'));
  idRange(errs, sc.runAsUser, `${path}.runAsUser`);
  idRange(errs, sc.runAsGroup, `${path}.runAsGroup`);
  const procMount = str(sc.procMount);
  if (procMount !== undefined) {
    if (!PROC_MOUNTS.includes(procMount)) errs.push(notSupportedError(`${path}.procMount`, goQuote(procMount), PROC_MOUNTS));
    if (hostUsers && procMount === 'Unmasked') errs.push(invalidError(`${path}.procMount`, goQuote(procMount), '`hostUsers` must be false to use `Unmasked`'));
  }
  validateSeccompProfile(errs, sc.seccompProfile, `${path}.seccompProfile`);
  if (sc.allowPrivilegeEscalation === false) {
    if (sc.privileged === true) errs.push(invalidError(path, goSecurityContext(sc), 'cannot set `allowPrivilegeEscalation` to false and `privileged` to true'));
    const added = isPlainObject(sc.capabilities) && Array.isArray(sc.capabilities.add) ? sc.capabilities.add : [];
    for (const cap of added) {
      if (cap === 'CAP_SYS_ADMIN') errs.push(invalidError(path, goSecurityContext(sc), 'cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN'));
    }
  }
  validateWindowsOptions(errs, sc.windowsOptions, `${path}.windowsOptions`);
  validateAppArmorProfile(errs, sc.appArmorProfile, `${path}.appArmorProfile`);
}

// ---------------------------------------------------------------------------------------------
// The pod's security context.

const SYSCTL_MAX_LENGTH = 253;
const SYSCTL_NAME_RE = '^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$';
const SYSCTL_NAME = new RegExp(SYSCTL_NAME_RE);
const FS_GROUP_CHANGE_POLICIES = ['Always', 'OnRootMismatch'];
const SUPPLEMENTAL_GROUPS_POLICIES = ['Merge', 'Strict'];

/** IsValidSysctlName: at most 253 bytes of dot- (or slash-) separated segments. */
const isValidSysctlName = (name: string): boolean => bytes(name) <= SYSCTL_MAX_LENGTH && SYSCTL_NAME.test(name);

/** The kernel namespaces of the sysctls that have one (component-helpers' sysctl.GetNamespace). */
const IPC_SYSCTLS = new Set(['kernel.sem', 'kernel.shmall', 'kernel.shmmax', 'kernel.shmmni', 'kernel.shm_rmid_forced', 'kernel.shm', 'kernel.msgmax', 'kernel.msgmnb', 'kernel.msgmni', 'kernel.msg']);
function sysctlNamespace(name: string): 'Net' | 'IPC' | undefined {
  // NormalizeName: a name whose first separator is '/' has its '.' and '/' swapped.
  const sep = name.search(/[./]/);
  let normal = sep !== -1 && name[sep] === '/' ? name.replace(/[./]/g, (c) => (c === '.' ? '/' : '.')) : name;
  const star = normal.indexOf('*');
  if (star !== -1) normal = normal.slice(0, star);
  if (IPC_SYSCTLS.has(normal)) return 'IPC';
  if (normal.startsWith('net.')) return 'Net';
  if (normal.startsWith('fs.mqueue.')) return 'IPC';
  return undefined;
}

/** validateSysctls: each named, well formed and once; none of a namespace the pod shares with the host (ValidateHostSysctl). */
function validateSysctls(errs: FieldError[], spec: Obj, sysctls: unknown, path: string): void {
  const seen = new Set<string>();
  objects(sysctls).forEach((s, i) => {
    const name = str(s.name);
    if (name === undefined) return;
    const at = `${path}[${i}].name`;
    if (name === '') errs.push(requiredError(at));
    else if (!isValidSysctlName(name)) errs.push(invalidError(at, goQuote(name), `must have at most ${SYSCTL_MAX_LENGTH} characters and match regex ${SYSCTL_NAME_RE}`));
    else if (seen.has(name)) errs.push(duplicateError(at, goQuote(name)));
    const ns = sysctlNamespace(name);
    if (spec.hostNetwork === true && ns === 'Net') errs.push(invalidError(at, goQuote(name), "may not be specified when 'hostNetwork' is true"));
    else if (spec.hostIPC === true && ns === 'IPC') errs.push(invalidError(at, goQuote(name), "may not be specified when 'hostIPC' is true"));
    seen.add(name);
  });
}

/** A one-of value, as kube's NotSupported reports it. */
function oneOf(errs: FieldError[], v: unknown, path: string, values: string[]): void {
  if (typeof v === 'string' && !values.includes(v)) errs.push(notSupportedError(path, goQuote(v), values));
}

/**
 * validatePodSpecSecurityContext at `path`.securityContext: fsGroup, runAsUser, runAsGroup and
 * supplemental groups in range; shareProcessNamespace not with hostPID (kube keeps both in the
 * internal security context, hence the path); sysctls; fsGroupChangePolicy; the seccomp profile,
 * Windows options and AppArmor profile; supplementalGroupsPolicy; seLinuxChangePolicy. kube does
 * not check seLinuxOptions or runAsNonRoot.
 */
export function validatePodSpecSecurityContext(errs: FieldError[], spec: Obj, path: string): void {
  const sc: Obj = isPlainObject(spec.securityContext) ? spec.securityContext : {};
  const at = `${path}.securityContext`;
  idRange(errs, sc.fsGroup, `${at}.fsGroup`);
  idRange(errs, sc.runAsUser, `${at}.runAsUser`);
  idRange(errs, sc.runAsGroup, `${at}.runAsGroup`);
  if (Array.isArray(sc.supplementalGroups)) sc.supplementalGroups.forEach((g: unknown, i: number) => idRange(errs, g, `${at}.supplementalGroups[${i}]`));
  if (spec.shareProcessNamespace === true && spec.hostPID === true) errs.push(invalidError(`${at}.shareProcessNamespace`, 'true', 'ShareProcessNamespace and HostPID cannot both be enabled'));
  validateSysctls(errs, spec, sc.sysctls, `${at}.sysctls`);
  oneOf(errs, sc.fsGroupChangePolicy, `${at}.fsGroupChangePolicy`, FS_GROUP_CHANGE_POLICIES);
  validateSeccompProfile(errs, sc.seccompProfile, `${at}.seccompProfile`);
  validateWindowsOptions(errs, sc.windowsOptions, `${at}.windowsOptions`);
  validateAppArmorProfile(errs, sc.appArmorProfile, `${at}.appArmorProfile`);
  oneOf(errs, sc.supplementalGroupsPolicy, `${at}.supplementalGroupsPolicy`, SUPPLEMENTAL_GROUPS_POLICIES);
  // (MountOption needs SELinuxMount, off in 1.36)
  oneOf(errs, sc.seLinuxChangePolicy, `${at}.seLinuxChangePolicy`, ['Recursive']);
}

// ---------------------------------------------------------------------------------------------
// Host namespaces and the rules spanning the containers.

/** podshelper.VisitContainersWithPath: init containers, then containers, then ephemeral containers. */
function visitContainers(spec: Obj, path: string, visit: (c: Obj, at: string) => void): void {
  for (const list of ['initContainers', 'containers', 'ephemeralContainers']) objects(spec[list]).forEach((c, i) => visit(c, `${path}.${list}[${i}]`));
}

/**
 * validatePodHostNetworkDeps: with hostNetwork, each regular container's hostPort equals its
 * containerPort. A Pod's are defaulted from them first; a template may leave them 0.
 */
export function validatePodHostNetworkDeps(errs: FieldError[], spec: Obj, path: string, resourceIsPod: boolean): void {
  if (spec.hostNetwork !== true) return;
  objects(spec.containers).forEach((c, i) =>
    objects(c.ports).forEach((p, j) => {
      const hostPort = typeof p.hostPort === 'number' ? p.hostPort : 0;
      const containerPort = typeof p.containerPort === 'number' ? p.containerPort : 0;
      if ((resourceIsPod || hostPort !== 0) && hostPort !== containerPort) {
        errs.push(invalidError(`${path}.containers[${i}].ports[${j}].hostPort`, goValue(hostPort), 'must match `containerPort` when `hostNetwork` is true'));
      }
    }),
  );
}

/**
 * validateWindowsHostProcessPod: a container's hostProcess agrees with the pod's; when any
 * container is one (its own or the pod's setting), all are, and the pod uses the host network.
 */
export function validateWindowsHostProcessPod(errs: FieldError[], spec: Obj, path: string): void {
  const hostProcess = (sc: unknown): boolean | undefined => {
    const v = isPlainObject(sc) && isPlainObject(sc.windowsOptions) ? sc.windowsOptions.hostProcess : undefined;
    return typeof v === 'boolean' ? v : undefined;
  };
  const pod = hostProcess(spec.securityContext);
  let containers = 0;
  let hostProcessContainers = 0;
  visitContainers(spec, path, (c, at) => {
    containers++;
    const own = hostProcess(c.securityContext);
    if (pod !== undefined && own !== undefined && pod !== own) {
      errs.push(invalidError(`${at}.securityContext.windowsOptions.hostProcess`, String(own), `pod hostProcess value must be identical if both are specified, was ${pod}`));
    }
    if (own ?? pod) hostProcessContainers++;
  });
  if (hostProcessContainers === 0) return;
  if (hostProcessContainers !== containers) errs.push(invalidError(path, '""', 'If pod contains any hostProcess containers then all containers must be HostProcess containers'));
  if (spec.hostNetwork !== true) errs.push(invalidError(`${path}.hostNetwork`, 'false', 'hostNetwork must be true if pod contains any hostProcess containers'));
  if (!ALLOW_PRIVILEGED) errs.push(forbiddenError(path, 'hostProcess containers are disallowed by cluster policy'));
}

const NOT_WITH_USER_NAMESPACE = 'when `hostUsers` is false';

/**
 * validateHostUsers: a pod in its own user namespace (hostUsers: false) shares no other namespace
 * with the host and has no volume devices. kube names hostPID and hostIPC in Go's case here.
 */
export function validateHostUsers(errs: FieldError[], spec: Obj, path: string): void {
  if (usesHostUsers(spec)) return;
  // (UserNamespacesHostNetworkSupport, alpha in 1.36, is off)
  if (spec.hostNetwork === true) errs.push(forbiddenError(`${path}.hostNetwork`, NOT_WITH_USER_NAMESPACE));
  if (spec.hostPID === true) errs.push(forbiddenError(`${path}.HostPID`, NOT_WITH_USER_NAMESPACE));
  if (spec.hostIPC === true) errs.push(forbiddenError(`${path}.HostIPC`, NOT_WITH_USER_NAMESPACE));
  visitContainers(spec, path, (c, at) => {
    if (Array.isArray(c.volumeDevices) && c.volumeDevices.length > 0) errs.push(forbiddenError(`${at}.volumeDevices`, NOT_WITH_USER_NAMESPACE));
  });
}

/** validatePodHostName: a hostnameOverride is an RFC 1123 subdomain of at most 64 bytes, set with neither setHostnameAsFQDN nor hostNetwork. */
export function validatePodHostName(errs: FieldError[], spec: Obj, path: string): void {
  const name = str(spec.hostnameOverride);
  if (name === undefined) return;
  const at = `${path}.hostnameOverride`;
  if (spec.setHostnameAsFQDN === true) errs.push(forbiddenError(at, 'may not be specified when setHostnameAsFQDN is true'));
  if (spec.hostNetwork === true) errs.push(forbiddenError(at, 'may not be specified when hostNetwork is true'));
  if (bytes(name) > 64) errs.push(tooLongError(at, 64));
  for (const m of isDNS1123Subdomain(name)) errs.push(invalidError(at, goQuote(name), m));
}

// ---------------------------------------------------------------------------------------------
// The pod's OS.

const OS_NAMES = ['linux', 'windows'];
const NOT_FOR_LINUX = 'windows options cannot be set for a linux pod';
const NOT_FOR_WINDOWS = 'cannot be set for a windows pod';

/** validateLinux: no Windows options, on the pod or a container. */
function validateLinux(errs: FieldError[], spec: Obj, path: string): void {
  if (isPlainObject(spec.securityContext) && spec.securityContext.windowsOptions !== undefined) errs.push(forbiddenError(`${path}.securityContext.windowsOptions`, NOT_FOR_LINUX));
  visitContainers(spec, path, (c, at) => {
    if (isPlainObject(c.securityContext) && c.securityContext.windowsOptions !== undefined) errs.push(forbiddenError(`${at}.securityContext.windowsOptions`, NOT_FOR_LINUX));
  });
}

/** The pod security context fields validateWindows refuses, in its order, each with the path kube names (some beside the security context). */
const POD_FIELDS_NOT_FOR_WINDOWS: [string, (spec: Obj, sc: Obj) => boolean][] = [
  ['securityContext.appArmorProfile', (_, sc) => sc.appArmorProfile !== undefined],
  ['securityContext.seLinuxOptions', (_, sc) => sc.seLinuxOptions !== undefined],
  ['hostUsers', (spec) => spec.hostUsers !== undefined],
  ['hostPID', (spec) => spec.hostPID === true],
  ['hostIPC', (spec) => spec.hostIPC === true],
  ['securityContext.seccompProfile', (_, sc) => sc.seccompProfile !== undefined],
  ['securityContext.fsGroup', (_, sc) => sc.fsGroup !== undefined],
  ['securityContext.fsGroupChangePolicy', (_, sc) => sc.fsGroupChangePolicy !== undefined],
  ['securityContext.sysctls', (_, sc) => Array.isArray(sc.sysctls) && sc.sysctls.length > 0],
  ['shareProcessNamespace', (spec) => spec.shareProcessNamespace !== undefined],
  ['securityContext.runAsUser', (_, sc) => sc.runAsUser !== undefined],
  ['securityContext.runAsGroup', (_, sc) => sc.runAsGroup !== undefined],
  ['securityContext.supplementalGroups', (_, sc) => Array.isArray(sc.supplementalGroups)],
  ['securityContext.supplementalGroupsPolicy', (_, sc) => sc.supplementalGroupsPolicy !== undefined],
  ['securityContext.seLinuxChangePolicy', (_, sc) => sc.seLinuxChangePolicy !== undefined],
];
/** The container security context fields validateWindows refuses, in its order. */
const CONTAINER_FIELDS_NOT_FOR_WINDOWS = ['appArmorProfile', 'seLinuxOptions', 'seccompProfile', 'capabilities', 'readOnlyRootFilesystem', 'privileged', 'allowPrivilegeEscalation', 'procMount', 'runAsUser', 'runAsGroup'];

/** validateWindows: none of the Linux-only fields, on the pod or a container. */
function validateWindows(errs: FieldError[], spec: Obj, path: string): void {
  const sc: Obj = isPlainObject(spec.securityContext) ? spec.securityContext : {};
  for (const [field, set] of POD_FIELDS_NOT_FOR_WINDOWS) if (set(spec, sc)) errs.push(forbiddenError(`${path}.${field}`, NOT_FOR_WINDOWS));
  visitContainers(spec, path, (c, at) => {
    if (!isPlainObject(c.securityContext)) return;
    for (const f of CONTAINER_FIELDS_NOT_FOR_WINDOWS) if (c.securityContext[f] !== undefined) errs.push(forbiddenError(`${at}.securityContext.${f}`, NOT_FOR_WINDOWS));
  });
}

/** validateOS, then for a valid name validateLinux or validateWindows. kube reports an unknown name at `os`. */
export function validatePodOS(errs: FieldError[], spec: Obj, path: string): void {
  if (!isPlainObject(spec.os)) return;
  const name = spec.os.name;
  if (name === '') return void errs.push(requiredError(`${path}.os.name`));
  if (typeof name !== 'string') return;
  if (!OS_NAMES.includes(name)) return void errs.push(notSupportedError(`${path}.os`, goQuote(name), OS_NAMES));
  if (name === 'linux') validateLinux(errs, spec, path);
  else validateWindows(errs, spec, path);
}
