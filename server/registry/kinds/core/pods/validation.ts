// The part of kube's ValidatePodSpec users meet: containers present, named (RFC 1123 labels, unique
// across init and regular containers), with an image, a known pull policy, ports in range with
// IANA service names, env variables and their sources, volume mounts of valid volumes (their
// subPath, subPathExpr, propagation and recursiveReadOnly), resource requirements, probes and
// lifecycle hooks; volumes (named once, one source each, each source's own fields, generic
// ephemeral volumes' claim templates: volume-validation.ts); restart and DNS policies; node
// selector; affinity, DNS config, readiness and scheduling gates and topology spread constraints
// (scheduling-validation.ts); the pod's and each container's security context, host ports
// with hostNetwork, hostProcess containers, user namespaces beside the host's, hostnameOverride
// and the OS with the fields it refuses (security-validation.ts); service account and node
// names, hostname, subdomain, deadline and tolerations. And ValidatePodUpdate's immutable spec.
// Field paths and messages as kube words them. Ephemeral containers get the common container checks
// and their own (validateEphemeralContainers). Not done: volume devices (beyond a mount's clash
// with one), envFrom, host aliases, priority class, runtime class,
// preemption policy and overhead; a Pod's projected token without a serviceAccountName
// (validatePodMetadataAndSpec: kube's ServiceAccount admission always sets one).
import { isPlainObject, objectsOf, semanticEqual } from '../../../../util/json.ts';
import { validateAnnotations, validateLabels } from '../../../../validation/object-meta.ts';
import { configKeyErrors, isDNS1123Label, isDNS1123Subdomain, isQualifiedName, isValidLabelValue, maxLenError } from '../../../../validation/names.ts';
import { goQuote } from '../../../../go/strconv.ts';
import { compareRationals, parseQuantity } from '../../../../util/quantity.ts';
import { withCanonicalQuantities } from '../../../../schema/quantities.ts';
import { validateAffinity, validatePodDNSConfig, validateReadinessGates, validateSchedulingGates, validateTopologySpreadConstraints } from './scheduling-validation.ts';
import {
  usesHostUsers,
  validateHostUsers,
  validatePodHostName,
  validatePodHostNetworkDeps,
  validatePodOS,
  validatePodSpecSecurityContext,
  validateSecurityContext,
  validateWindowsHostProcessPod,
} from './security-validation.ts';
import { duplicateError, forbiddenError, invalidError, notSupportedError, requiredError, type FieldError } from '../../../../validation/field.ts';
import { validateContainerResourceFieldSelector, validateObjectFieldSelector, validatePullPolicy, validateVolumeMounts, validateVolumeSource } from './volume-validation.ts';
import type { Obj } from '../../../strategy.ts';

const objects = objectsOf;

/** validation.IsValidPortNum's message. */
export const PORT_RANGE = 'must be between 1 and 65535, inclusive';

/** validation.IsValidPortName (an IANA_SVC_NAME): container ports, service target ports. */
export function portNameErrors(name: string): string[] {
  const errs: string[] = [];
  if (Buffer.byteLength(name, 'utf8') > 15) errs.push(maxLenError(15));
  if (!/^[-a-z0-9]+$/.test(name)) errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (!/[a-z]/.test(name)) errs.push('must contain at least one letter (a-z)');
  if (name.includes('--')) errs.push('must not contain consecutive hyphens');
  if (name.length > 0 && (name.startsWith('-') || name.endsWith('-'))) errs.push('must not begin or end with a hyphen');
  return errs;
}

function validatePorts(errs: FieldError[], ports: unknown, path: string): void {
  const names = new Set<string>();
  objects(ports).forEach((p, i) => {
    const at = `${path}[${i}]`;
    if (typeof p.name === 'string' && p.name !== '') {
      const msgs = portNameErrors(p.name);
      if (msgs.length) for (const m of msgs) errs.push(invalidError(`${at}.name`, goQuote(p.name), m));
      else if (names.has(p.name)) errs.push(duplicateError(`${at}.name`, goQuote(p.name)));
      else names.add(p.name);
    }
    if (p.containerPort === 0) errs.push(requiredError(`${at}.containerPort`));
    else if (typeof p.containerPort === 'number' && (p.containerPort < 1 || p.containerPort > 65535)) errs.push(invalidError(`${at}.containerPort`, String(p.containerPort), PORT_RANGE));
    if (typeof p.hostPort === 'number' && p.hostPort !== 0 && (p.hostPort < 1 || p.hostPort > 65535)) errs.push(invalidError(`${at}.hostPort`, String(p.hostPort), PORT_RANGE));
  });
}

/** validation.IsRelaxedEnvVarName's message (relaxed names are the rule since kube 1.34). */
const ENV_NAME = "a valid environment variable name must consist only of printable ASCII characters other than '='";

/** ValidateEnv: each variable named, with printable ASCII other than '=', and its valueFrom. */
function validateEnv(errs: FieldError[], env: unknown, path: string): void {
  objects(env).forEach((e, i) => {
    const name = typeof e.name === 'string' ? e.name : '';
    if (name === '') errs.push(requiredError(`${path}[${i}].name`));
    else if (!/^[\x20-\x3c\x3e-\x7e]*$/.test(name)) errs.push(invalidError(`${path}[${i}].name`, goQuote(name), ENV_NAME));
    if (isPlainObject(e.valueFrom)) validateEnvValueFrom(errs, e, `${path}[${i}].valueFrom`);
  });
}

/** The pod fields an env variable may take (validEnvDownwardAPIFieldPathExpressions), sorted. */
const ENV_FIELD_PATHS = ['metadata.name', 'metadata.namespace', 'metadata.uid', 'spec.nodeName', 'spec.serviceAccountName', 'status.hostIP', 'status.hostIPs', 'status.podIP', 'status.podIPs'];

/** validateEnvVarValueFrom: exactly one source, not with a value, each source well formed. */
function validateEnvValueFrom(errs: FieldError[], e: Obj, path: string): void {
  const from: Obj = e.valueFrom;
  let sources = 0;
  if (isPlainObject(from.fieldRef)) {
    sources++;
    validateObjectFieldSelector(errs, from.fieldRef, ENV_FIELD_PATHS, `${path}.fieldRef`);
  }
  if (isPlainObject(from.resourceFieldRef)) {
    sources++;
    validateContainerResourceFieldSelector(errs, from.resourceFieldRef, `${path}.resourceFieldRef`, false);
  }
  for (const ref of ['configMapKeyRef', 'secretKeyRef']) {
    if (!isPlainObject(from[ref])) continue;
    sources++;
    const name = typeof from[ref].name === 'string' ? from[ref].name : '';
    for (const m of isDNS1123Subdomain(name)) errs.push(invalidError(`${path}.${ref}.name`, goQuote(name), m));
    const key = typeof from[ref].key === 'string' ? from[ref].key : '';
    if (key === '') errs.push(requiredError(`${path}.${ref}.key`));
    else for (const m of configKeyErrors(key)) errs.push(invalidError(`${path}.${ref}.key`, goQuote(key), m));
  }
  const value = typeof e.value === 'string' ? e.value : '';
  if (sources === 0) errs.push(invalidError(path, '""', 'must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`'));
  else if (value !== '') errs.push(invalidError(path, '""', 'may not be specified when `value` is not empty'));
  else if (sources > 1) errs.push(invalidError(path, '""', 'may not have more than one field specified at a time'));
}

const MORE_THAN_ONE_HANDLER = 'may not specify more than 1 handler type';
const HTTP_SCHEMES = ['HTTP', 'HTTPS'];

/** ValidatePortNumOrName. */
function portNumOrNameErrors(errs: FieldError[], port: unknown, path: string): void {
  if (typeof port === 'number') {
    if (port < 1 || port > 65535) errs.push(invalidError(path, String(port), PORT_RANGE));
  } else if (typeof port === 'string') {
    for (const m of portNameErrors(port)) errs.push(invalidError(path, goQuote(port), m));
  }
}

/**
 * validateHandler: exactly one action (exec, httpGet, tcpSocket, grpc for probes; sleep for
 * lifecycle hooks), each well formed. `gracePeriod`: the pod's terminationGracePeriodSeconds.
 */
function validateHandler(errs: FieldError[], h: Obj, path: string, gracePeriod: unknown): void {
  let handlers = 0;
  const one = (name: string, check: (a: Obj, at: string) => void) => {
    if (!isPlainObject(h[name])) return;
    if (handlers > 0) return void errs.push(forbiddenError(`${path}.${name}`, MORE_THAN_ONE_HANDLER));
    handlers++;
    check(h[name], `${path}.${name}`);
  };
  one('exec', (a, at) => {
    if (!Array.isArray(a.command) || a.command.length === 0) errs.push(requiredError(`${at}.command`));
  });
  one('httpGet', (a, at) => {
    if (typeof a.path !== 'string' || a.path === '') errs.push(requiredError(`${at}.path`));
    portNumOrNameErrors(errs, a.port, `${at}.port`);
    const scheme = typeof a.scheme === 'string' ? a.scheme : '';
    if (!HTTP_SCHEMES.includes(scheme)) errs.push(notSupportedError(`${at}.scheme`, goQuote(scheme), HTTP_SCHEMES));
    for (const header of objects(a.httpHeaders)) {
      const name = typeof header.name === 'string' ? header.name : '';
      if (!/^[-A-Za-z0-9]+$/.test(name)) errs.push(invalidError(`${at}.httpHeaders`, goQuote(name), "a valid HTTP header must consist of alphanumeric characters or '-' (e.g. 'X-Header-Name', regex used for validation is '[-A-Za-z0-9]+')"));
    }
  });
  one('tcpSocket', (a, at) => portNumOrNameErrors(errs, a.port, `${at}.port`));
  one('grpc', (a, at) => portNumOrNameErrors(errs, typeof a.port === 'number' ? a.port : 0, `${at}.port`));
  one('sleep', (a, at) => {
    const seconds = typeof a.seconds === 'number' ? a.seconds : 0;
    if (typeof gracePeriod === 'number' && (seconds < 0 || seconds > gracePeriod)) {
      errs.push(invalidError(at, String(seconds), `must be non-negative and less than terminationGracePeriodSeconds (${gracePeriod})`));
    }
  });
  if (handlers === 0) errs.push(requiredError(path, 'must specify a handler type'));
}

/** validateProbe, with the rules of the probe's kind (liveness and startup succeed once; readiness has no grace period). */
function validateProbe(errs: FieldError[], probe: unknown, path: string, kind: 'liveness' | 'readiness' | 'startup', gracePeriod: unknown): void {
  if (!isPlainObject(probe)) return;
  validateHandler(errs, probe, path, gracePeriod);
  for (const f of ['initialDelaySeconds', 'timeoutSeconds', 'periodSeconds', 'successThreshold', 'failureThreshold']) {
    if (typeof probe[f] === 'number' && probe[f] < 0) errs.push(invalidError(`${path}.${f}`, String(probe[f]), 'must be greater than or equal to 0'));
  }
  const grace = probe.terminationGracePeriodSeconds;
  if (typeof grace === 'number' && grace <= 0) errs.push(invalidError(`${path}.terminationGracePeriodSeconds`, String(grace), 'must be greater than 0'));
  if (kind !== 'readiness' && probe.successThreshold !== 1) errs.push(invalidError(`${path}.successThreshold`, String(probe.successThreshold ?? 0), 'must be 1'));
  if (kind === 'readiness' && typeof grace === 'number') errs.push(invalidError(`${path}.terminationGracePeriodSeconds`, String(grace), 'must not be set for readinessProbes'));
}

const INIT_ONLY = 'may not be set for init containers without restartPolicy=Always';

/** A container's lifecycle hooks and probes; init containers that are no sidecars may have none. */
function validateProbesAndHooks(errs: FieldError[], c: Obj, path: string, init: boolean, gracePeriod: unknown): void {
  if (init && c.restartPolicy !== 'Always') {
    for (const f of ['lifecycle', 'livenessProbe', 'readinessProbe', 'startupProbe']) if (c[f] != null) errs.push(forbiddenError(`${path}.${f}`, INIT_ONLY));
    return;
  }
  if (isPlainObject(c.lifecycle)) {
    for (const hook of ['postStart', 'preStop']) if (isPlainObject(c.lifecycle[hook])) validateHandler(errs, c.lifecycle[hook], `${path}.lifecycle.${hook}`, gracePeriod);
  }
  validateProbe(errs, c.livenessProbe, `${path}.livenessProbe`, 'liveness', gracePeriod);
  validateProbe(errs, c.readinessProbe, `${path}.readinessProbe`, 'readiness', gracePeriod);
  validateProbe(errs, c.startupProbe, `${path}.startupProbe`, 'startup', gracePeriod);
}

/** Resource names kube knows without a domain (helper.IsStandardResourceName, quota's included). */
const STANDARD_RESOURCES = new Set(['cpu', 'memory', 'ephemeral-storage', 'requests.cpu', 'requests.memory', 'requests.ephemeral-storage', 'limits.cpu', 'limits.memory', 'limits.ephemeral-storage', 'pods', 'resourcequotas', 'services', 'replicationcontrollers', 'secrets', 'persistentvolumeclaims', 'configmaps', 'services.nodeports', 'services.loadbalancers', 'requests.storage']);
const isHugePages = (name: string): boolean => name.startsWith('hugepages-');
/** helper.IsNativeResource: no domain, or a kubernetes.io one. */
const isNative = (name: string): boolean => !name.includes('/') || name.includes('kubernetes.io/');
/** helper.IsExtendedResourceName: a domain-qualified name outside kubernetes.io, usable in quota as requests.<name>. */
const isExtended = (name: string): boolean => !isNative(name) && !name.startsWith('requests.') && isQualifiedName(`requests.${name}`).length === 0;

/**
 * validateContainerResourceName: qualified, then standard for a container (cpu, memory,
 * ephemeral-storage, hugepages-*) or an extended resource. kube prints a ResourceName unquoted.
 */
function resourceNameErrors(errs: FieldError[], name: string, at: string): void {
  if (name === 'cpu' || name === 'memory' || name === 'ephemeral-storage') return; // (the common case, valid)
  const qualified = isQualifiedName(name);
  for (const m of qualified) errs.push(invalidError(at, name, m));
  if (!name.includes('/')) {
    if (qualified.length === 0 && !STANDARD_RESOURCES.has(name) && !isHugePages(name) && !name.startsWith('requests.hugepages-')) {
      errs.push(invalidError(at, name, 'must be a standard resource type or fully qualified'));
    }
    if (!['cpu', 'memory', 'ephemeral-storage'].includes(name) && !isHugePages(name)) errs.push(invalidError(at, name, 'must be a standard resource for containers'));
  } else if (!isNative(name) && !isExtended(name)) {
    errs.push(invalidError(at, name, "doesn't follow extended resource name standard"));
  }
}

/** ValidateResourceQuantityValue: not negative; whole for extended resources. */
function quantityErrors(errs: FieldError[], resource: string, value: unknown, at: string): void {
  const q = typeof value === 'string' ? parseQuantity(value) : undefined;
  if (q === undefined) return; // (the schema walk reports what is no quantity)
  if (q.num < 0n) errs.push(invalidError(at, goQuote(value as string), 'must be greater than or equal to 0'));
  if (isExtended(resource) && q.den !== 1n) errs.push(invalidError(at, goQuote(value as string), 'must be an integer'));
}

/**
 * ValidateResourceRequirements for a container: each resource named and valued as above, a
 * request at most its limit (equal to it for resources that cannot be overcommitted: extended
 * ones and hugepages, which also need a limit), hugepages only with cpu or memory. Keys in sorted
 * order (kube walks a Go map).
 */
function validateResources(errs: FieldError[], r: Obj, path: string): void {
  const limits: Obj = isPlainObject(r.limits) ? r.limits : {};
  const requests: Obj = isPlainObject(r.requests) ? r.requests : {};
  const overcommit = (name: string) => isNative(name) && !isHugePages(name);
  const cpuOrMemory = (names: string[]) => names.includes('cpu') || names.includes('memory');
  const limitNames = Object.keys(limits).sort();
  const requestNames = Object.keys(requests).sort();
  for (const name of limitNames) {
    const at = `${path}.limits[${name}]`;
    resourceNameErrors(errs, name, at);
    quantityErrors(errs, name, limits[name], at);
  }
  for (const name of requestNames) {
    const at = `${path}.requests[${name}]`;
    resourceNameErrors(errs, name, at);
    quantityErrors(errs, name, requests[name], at);
    const request = typeof requests[name] === 'string' ? parseQuantity(requests[name]) : undefined;
    if (name in limits) {
      const limit = typeof limits[name] === 'string' ? parseQuantity(limits[name]) : undefined;
      if (request === undefined || limit === undefined) continue;
      const cmp = compareRationals(request, limit);
      if (cmp !== 0 && !overcommit(name)) errs.push(invalidError(`${path}.requests`, goQuote(requests[name]), `must be equal to ${name} limit of ${limits[name]}`));
      else if (cmp > 0) errs.push(invalidError(`${path}.requests`, goQuote(requests[name]), `must be less than or equal to ${name} limit of ${limits[name]}`));
    } else if (!overcommit(name)) {
      errs.push(requiredError(`${path}.limits`, 'Limit must be set for non overcommitable resources'));
    }
  }
  if (!cpuOrMemory(limitNames) && limitNames.some(isHugePages)) errs.push(forbiddenError(`${path}.limits`, 'HugePages require cpu or memory'));
  if (!cpuOrMemory(requestNames) && requestNames.some(isHugePages)) errs.push(forbiddenError(`${path}.requests`, 'HugePages require cpu or memory'));
}

/**
 * validateContainerCommon, for every kind of container: name, image, ports, env, volume mounts,
 * pull policy, resources, resize policy, security context. `hostUsers`: whether the pod shares
 * the host's user namespace; `restartPolicy`: the pod's.
 */
function validateContainerCommon(errs: FieldError[], c: Obj, path: string, volumes: Set<string>, hostUsers: boolean, restartPolicy: unknown): void {
  // (An absent name or containerPort is the schema walk's Required.)
  if (c.name === '') errs.push(requiredError(`${path}.name`));
  else if (typeof c.name === 'string') for (const m of isDNS1123Label(c.name)) errs.push(invalidError(`${path}.name`, goQuote(c.name), m));
  if (typeof c.image !== 'string' || c.image === '') errs.push(requiredError(`${path}.image`));
  validatePorts(errs, c.ports, `${path}.ports`);
  validateEnv(errs, c.env, `${path}.env`);
  validateVolumeMounts(errs, c, volumes, `${path}.volumeMounts`);
  validatePullPolicy(errs, c.imagePullPolicy, `${path}.imagePullPolicy`);
  if (isPlainObject(c.resources)) validateResources(errs, c.resources, `${path}.resources`);
  validateResizePolicy(errs, c.resizePolicy, `${path}.resizePolicy`, restartPolicy);
  validateSecurityContext(errs, c.securityContext, `${path}.securityContext`, hostUsers);
}

/**
 * A regular or init container: validateContainerCommon, then, as validateContainers and
 * validateInitContainers go on, the name's uniqueness (across regular and init containers),
 * probes and hooks.
 */
function validateContainer(errs: FieldError[], c: Obj, path: string, names: Set<string>, volumes: Set<string>, init: boolean, spec: Obj, hostUsers: boolean): void {
  validateContainerCommon(errs, c, path, volumes, hostUsers, spec.restartPolicy);
  if (typeof c.name === 'string' && c.name !== '') {
    if (names.has(c.name)) errs.push(duplicateError(`${path}.name`, goQuote(c.name)));
    else names.add(c.name);
  }
  validateProbesAndHooks(errs, c, path, init, spec.terminationGracePeriodSeconds);
}

const RESIZE_RESOURCES = ['cpu', 'memory'];
const RESIZE_RESTART_POLICIES = ['NotRequired', 'RestartContainer'];

/** validateResizePolicy: each resource once, cpu or memory, with a known restart policy (NotRequired in a pod that never restarts). */
function validateResizePolicy(errs: FieldError[], list: unknown, path: string, podRestartPolicy: unknown): void {
  const seen = new Set<string>();
  objects(list).forEach((p, i) => {
    const name = typeof p.resourceName === 'string' ? p.resourceName : '';
    if (seen.has(name)) errs.push(duplicateError(`${path}[${i}]`, goQuote(name)));
    seen.add(name);
    if (name === '') errs.push(requiredError(path));
    else if (!RESIZE_RESOURCES.includes(name)) errs.push(notSupportedError(path, goQuote(name), RESIZE_RESOURCES));
    const policy = typeof p.restartPolicy === 'string' ? p.restartPolicy : '';
    if (policy === '') errs.push(requiredError(path));
    else if (!RESIZE_RESTART_POLICIES.includes(policy)) errs.push(notSupportedError(path, goQuote(policy), RESIZE_RESTART_POLICIES));
    if (podRestartPolicy === 'Never' && policy !== 'NotRequired') errs.push(invalidError(path, goQuote(policy), "must be 'NotRequired' when `restartPolicy` is 'Never'"));
  });
}

/**
 * The fields of an EphemeralContainer that kube's allow list (allowedEphemeralContainerFields)
 * leaves out, in the Go struct's order: a debugging container serves nothing and reserves nothing.
 */
const EPHEMERAL_FORBIDDEN_FIELDS = ['ports', 'resources', 'resizePolicy', 'restartPolicy', 'restartPolicyRules', 'livenessProbe', 'readinessProbe', 'startupProbe', 'lifecycle'];
const EPHEMERAL_ONLY = 'cannot be set for an Ephemeral Container';

/** Whether a container field holds its Go zero value (a struct with nothing set; nil, not an empty list, for the rest). */
function isGoZeroField(field: string, v: unknown): boolean {
  if (v === undefined || v === null) return true;
  // Resources is the one non-pointer struct: `{}` (what defaulting writes) is its zero value.
  return field === 'resources' && isPlainObject(v) && Object.values(v).every((x) => x === undefined || x === null);
}

/**
 * validateEphemeralContainers: each one a valid container (and, as in a Pod, an image without
 * surrounding spaces), named once among all the pod's containers, targeting a regular or init
 * container that exists, with none of the fields only workloads may have and no subPath mounts.
 */
function validateEphemeralContainers(errs: FieldError[], spec: Obj, path: string, volumes: Set<string>, hostUsers: boolean): void {
  const list = objects(spec.ephemeralContainers);
  if (list.length === 0) return;
  const others = new Set([...objects(spec.containers), ...objects(spec.initContainers)].map((c) => (typeof c.name === 'string' ? c.name : '')));
  const names = new Set(others);
  list.forEach((c, i) => {
    const at = `${path}[${i}]`;
    validateContainerCommon(errs, c, at, volumes, hostUsers, spec.restartPolicy);
    if (typeof c.image === 'string' && c.image.trim() !== c.image) errs.push(invalidError(`${at}.image`, goQuote(c.image), 'must not have leading or trailing whitespace'));
    const name = typeof c.name === 'string' ? c.name : '';
    if (names.has(name)) errs.push(duplicateError(`${at}.name`, goQuote(name)));
    else names.add(name);
    const target = typeof c.targetContainerName === 'string' ? c.targetContainerName : '';
    if (target !== '' && !others.has(target)) errs.push({ reason: 'FieldValueNotFound', field: `${at}.targetContainerName`, message: `Not found: ${goQuote(target)}` });
    for (const field of EPHEMERAL_FORBIDDEN_FIELDS) if (!isGoZeroField(field, c[field])) errs.push(forbiddenError(`${at}.${field}`, EPHEMERAL_ONLY));
    objects(c.volumeMounts).forEach((m, j) => {
      for (const field of ['subPath', 'subPathExpr']) if (typeof m[field] === 'string' && m[field] !== '') errs.push(forbiddenError(`${at}.volumeMounts[${j}].${field}`, EPHEMERAL_ONLY));
    });
  });
}

/**
 * Checks of a PodSpec at `path` ("spec" for a Pod, "spec.template.spec" in a Deployment, ...).
 * Only a Pod's own spec is at "spec" (kube's PodValidationOptions.ResourceIsPod). `podMeta`: a
 * Pod's metadata (kube's podMeta; none for a template), whose name its ephemeral volumes' claims
 * take.
 */
export function validatePodSpec(spec: unknown, path: string, podMeta?: unknown): FieldError[] {
  if (!isPlainObject(spec)) return [];
  const errs: FieldError[] = [];
  const podName = isPlainObject(podMeta) && typeof podMeta.name === 'string' ? podMeta.name : '';
  const volumes = validateVolumes(errs, spec.volumes, `${path}.volumes`, podName);
  const names = new Set<string>();
  // An absent list is the schema walk's Required; an empty one is this check's.
  if (Array.isArray(spec.containers) && spec.containers.length === 0) errs.push(requiredError(`${path}.containers`));
  const hostUsers = usesHostUsers(spec);
  objects(spec.containers).forEach((c, i) => validateContainer(errs, c, `${path}.containers[${i}]`, names, volumes, false, spec, hostUsers));
  objects(spec.initContainers).forEach((c, i) => validateContainer(errs, c, `${path}.initContainers[${i}]`, names, volumes, true, spec, hostUsers));
  validateEphemeralContainers(errs, spec, `${path}.ephemeralContainers`, volumes, hostUsers);
  validatePodHostNetworkDeps(errs, spec, path, path === 'spec');
  oneOf(errs, spec.restartPolicy, `${path}.restartPolicy`, RESTART_POLICIES);
  oneOf(errs, spec.dnsPolicy, `${path}.dnsPolicy`, DNS_POLICIES);
  errs.push(...validateLabels(spec.nodeSelector, `${path}.nodeSelector`));
  validatePodSpecSecurityContext(errs, spec, path);
  // (then image pull secrets, whose one rule no decoded body can break: unknown fields are gone by now)
  validateAffinity(errs, spec.affinity, `${path}.affinity`);
  validatePodDNSConfig(errs, spec.dnsConfig, spec.dnsPolicy, `${path}.dnsConfig`);
  validateReadinessGates(errs, spec.readinessGates, `${path}.readinessGates`);
  validateSchedulingGates(errs, spec.schedulingGates, `${path}.schedulingGates`);
  validateTopologySpreadConstraints(errs, spec.topologySpreadConstraints, `${path}.topologySpreadConstraints`);
  validateWindowsHostProcessPod(errs, spec, path);
  validateHostUsers(errs, spec, path);
  validatePodHostName(errs, spec, path);
  for (const k of ['serviceAccountName', 'nodeName']) {
    const v = spec[k];
    if (typeof v === 'string' && v !== '') for (const m of isDNS1123Subdomain(v)) errs.push(invalidError(`${path}.${k}`, goQuote(v), m));
  }
  const deadline = spec.activeDeadlineSeconds;
  if (typeof deadline === 'number' && (deadline < 1 || deadline > 2147483647)) errs.push(invalidError(`${path}.activeDeadlineSeconds`, String(deadline), 'must be between 1 and 2147483647, inclusive'));
  for (const k of ['hostname', 'subdomain']) {
    const v = spec[k];
    if (typeof v === 'string' && v !== '') for (const m of isDNS1123Label(v)) errs.push(invalidError(`${path}.${k}`, goQuote(v), m));
  }
  validateTolerations(errs, spec.tolerations, `${path}.tolerations`);
  // (kube checks host aliases, priority class, runtime class, preemption policy and overhead
  // before the OS; hearth checks none of them)
  validatePodOS(errs, spec, path);
  return errs;
}

const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'];
const DNS_POLICIES = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];
const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

/** validateRestartPolicy, validateDNSPolicy: one of the values (in kube's order), never empty. */
function oneOf(errs: FieldError[], v: unknown, path: string, values: string[]): void {
  if (v === undefined || v === null) return; // (defaulted: absent only where the schema walk reports it)
  const text = String(v);
  if (text === '') errs.push(requiredError(path));
  else if (!values.includes(text)) errs.push(notSupportedError(path, goQuote(text), values));
}

/**
 * ValidateVolumes: each volume's source (validateVolumeSource, volume-validation.ts), then its
 * name (an RFC 1123 label, once among the valid ones). Returns the names of the valid volumes:
 * only those can be mounted (a mount of another is Not found, as in kube). `podName`, a Pod's
 * (none for a template): a claim may not name the one an ephemeral volume of the pod creates.
 */
function validateVolumes(errs: FieldError[], list: unknown, path: string, podName: string): Set<string> {
  const valid = new Set<string>();
  const volumes = objects(list);
  const nameOf = (v: Obj): string => (typeof v.name === 'string' ? v.name : '');
  const createdClaims = new Set(podName === '' ? [] : volumes.filter((v) => v.ephemeral != null).map((v) => `${podName}-${nameOf(v)}`));
  volumes.forEach((v, i) => {
    const at = `${path}[${i}]`;
    const own = validateVolumeSource(v, at, podName);
    const name = nameOf(v);
    if (name === '') own.push(requiredError(`${at}.name`));
    else for (const m of isDNS1123Label(name)) own.push(invalidError(`${at}.name`, goQuote(name), m));
    if (valid.has(name)) own.push(duplicateError(`${at}.name`, goQuote(name)));
    if (own.length === 0) valid.add(name);
    errs.push(...own);
    // (a volume naming such a claim stays valid: this error is not its own)
    const claim = isPlainObject(v.persistentVolumeClaim) ? v.persistentVolumeClaim.claimName : undefined;
    if (typeof claim === 'string' && createdClaims.has(claim)) {
      errs.push(invalidError(`${at}.persistentVolumeClaim.claimName`, goQuote(claim), 'must not reference a PVC that gets created for an ephemeral volume'));
    }
  });
  return valid;
}

/** ValidateTolerations. */
function validateTolerations(errs: FieldError[], list: unknown, path: string): void {
  objects(list).forEach((t, i) => {
    const at = `${path}[${i}]`;
    const key = typeof t.key === 'string' ? t.key : '';
    const operator = typeof t.operator === 'string' ? t.operator : '';
    const effect = typeof t.effect === 'string' ? t.effect : '';
    const value = typeof t.value === 'string' ? t.value : '';
    if (key !== '') for (const m of isQualifiedName(key)) errs.push(invalidError(`${at}.key`, goQuote(key), m));
    if (key === '' && operator !== 'Exists') errs.push(invalidError(`${at}.operator`, goQuote(operator), 'operator must be Exists when `key` is empty, which means "match all values and all keys"'));
    if (typeof t.tolerationSeconds === 'number' && effect !== 'NoExecute') errs.push(invalidError(`${at}.effect`, goQuote(effect), "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    if (operator === 'Equal' || operator === '') {
      const msgs = isValidLabelValue(value);
      if (msgs.length) errs.push(invalidError(`${at}.operator`, goQuote(value), msgs.join(';')));
    } else if (operator === 'Exists') {
      if (value !== '') errs.push(invalidError(`${at}.operator`, goToleration(t), "value must be empty when `operator` is 'Exists'"));
    } else {
      errs.push(notSupportedError(`${at}.operator`, goQuote(operator), ['Equal', 'Exists']));
    }
    if (effect !== '' && !TAINT_EFFECTS.includes(effect)) errs.push(notSupportedError(`${at}.effect`, goQuote(effect), TAINT_EFFECTS));
  });
}

/** A Toleration as Go's %#v prints it; kube prints a set tolerationSeconds as a pointer address, hearth as its value. */
function goToleration(t: Obj): string {
  const seconds = typeof t.tolerationSeconds === 'number' ? `(*int64)(${t.tolerationSeconds})` : '(*int64)(nil)';
  const s = (v: unknown) => goQuote(typeof v === 'string' ? v : '');
  return `core.Toleration{Key:${s(t.key)}, Operator:${s(t.operator)}, Value:${s(t.value)}, Effect:${s(t.effect)}, TolerationSeconds:${seconds}}`;
}

/**
 * ValidatePodTemplateSpec: the template's labels and annotations (at `path`.labels, .annotations:
 * kube's path skips the embedded ObjectMeta's "metadata"), then its spec at `path`.spec, which
 * may not hold ephemeral containers.
 */
export function validatePodTemplate(template: unknown, path: string): FieldError[] {
  if (!isPlainObject(template)) return [];
  const errs = [...validatePodTemplateMetadata(template, path), ...validatePodSpec(template.spec, `${path}.spec`)];
  if (isPlainObject(template.spec) && objects(template.spec.ephemeralContainers).length > 0) {
    errs.push(forbiddenError(`${path}.spec.ephemeralContainers`, 'ephemeral containers not allowed in pod template'));
  }
  return errs;
}

/** A pod template's labels and annotations, as ValidatePodTemplateSpec checks them. */
export function validatePodTemplateMetadata(template: unknown, path: string): FieldError[] {
  const meta = isPlainObject(template) && isPlainObject(template.metadata) ? template.metadata : {};
  return [...validateLabels(meta.labels, `${path}.labels`), ...validateAnnotations(meta.annotations, `${path}.annotations`)];
}

/** What ValidatePodUpdate names as the only fields a pod's update may change. */
const UPDATABLE_POD_FIELDS = [
  '`spec.containers[*].image`',
  '`spec.initContainers[*].image`',
  '`spec.activeDeadlineSeconds`',
  '`spec.tolerations` (only additions to existing tolerations)',
  '`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
].join(',');

/**
 * ValidatePodUpdate's spec rules: containers neither added nor removed, images present and
 * unpadded, activeDeadlineSeconds only set or lowered, tolerations only added (their
 * tolerationSeconds may change), scheduling gates only removed; any other change of the spec is
 * Forbidden. kube appends a go-cmp diff of the specs to that message (go-cmp's output is
 * deliberately unstable); hearth lists the top-level spec fields that changed in that diff's shape.
 * Equality is kube's semantic one (semanticEqual).
 */
export function validatePodUpdate(pod: Obj, old: Obj): FieldError[] {
  const spec: Obj = isPlainObject(pod.spec) ? pod.spec : {};
  // An object stored before quantities were canonical compares by value, as Semantic.DeepEqual does.
  const was: Obj = isPlainObject(old.spec) ? withCanonicalQuantities('io.k8s.api.core.v1.PodSpec', old.spec) : {};
  const errs: FieldError[] = [];
  for (const list of ['containers', 'initContainers']) {
    const now = objects(spec[list]);
    if (now.length !== objects(was[list]).length) {
      errs.push(forbiddenError(`spec.${list}`, 'pod updates may not add or remove containers'));
      return errs;
    }
    now.forEach((c, i) => {
      const image = typeof c.image === 'string' ? c.image : '';
      if (image === '') errs.push(requiredError(`spec.${list}[${i}].image`));
      else if (image.trim() !== image) errs.push(invalidError(`spec.${list}[${i}].image`, goQuote(image), 'must not have leading or trailing whitespace'));
    });
  }
  const deadline = spec.activeDeadlineSeconds;
  if (typeof deadline === 'number') {
    if (deadline < 0 || deadline > 2147483647) return [...errs, invalidError('spec.activeDeadlineSeconds', String(deadline), 'must be between 0 and 2147483647, inclusive')];
    if (typeof was.activeDeadlineSeconds === 'number' && was.activeDeadlineSeconds < deadline) return [...errs, invalidError('spec.activeDeadlineSeconds', String(deadline), 'must be less than or equal to previous value')];
  } else if (typeof was.activeDeadlineSeconds === 'number') {
    errs.push(invalidError('spec.activeDeadlineSeconds', '"null"', 'must not update from a positive integer to nil value'));
  }
  // The spec with what may change taken from the old one: anything else that differs is forbidden.
  const munged: Obj = { ...spec };
  for (const list of ['containers', 'initContainers']) {
    if (Array.isArray(spec[list])) munged[list] = objects(spec[list]).map((c, i) => ({ ...c, image: objects(was[list])[i]?.image }));
  }
  setOrDelete(munged, 'activeDeadlineSeconds', was.activeDeadlineSeconds);
  setOrDelete(munged, 'tolerations', was.tolerations);
  setOrDelete(munged, 'schedulingGates', was.schedulingGates);
  if (typeof was.terminationGracePeriodSeconds === 'number' && was.terminationGracePeriodSeconds < 0 && spec.terminationGracePeriodSeconds === 1) {
    munged.terminationGracePeriodSeconds = was.terminationGracePeriodSeconds;
  }
  const changed = specChangeError('spec', `pod updates may not change fields other than ${UPDATABLE_POD_FIELDS}`, 'core.PodSpec', was, munged);
  if (changed) errs.push(changed);
  errs.push(...tolerationUpdateErrors(objects(spec.tolerations), objects(was.tolerations)));
  const gates = new Set(objects(was.schedulingGates).map((g) => g.name));
  for (const g of objects(spec.schedulingGates)) {
    if (!gates.has(g.name)) errs.push(forbiddenError('spec.schedulingGates', `only deletion is allowed, but found new scheduling gate '${String(g.name)}'`));
  }
  return errs;
}

/** validateOnlyAddedTolerations: every old toleration still there, its tolerationSeconds aside. */
function tolerationUpdateErrors(now: Obj[], was: Obj[]): FieldError[] {
  // tolerationSeconds is left out on purpose (the rest sibling drops it)
  const withoutSeconds = ({ tolerationSeconds: _, ...t }: Obj) => t;
  for (const old of was) {
    if (!now.some((t) => semanticEqual(withoutSeconds(t), withoutSeconds(old)))) {
      return [forbiddenError('spec.tolerations', 'existing toleration can not be modified except its tolerationSeconds')];
    }
  }
  return [];
}

function setOrDelete(o: Obj, k: string, v: unknown): void {
  if (v === undefined) delete o[k];
  else o[k] = v;
}

const isEmpty = (v: unknown): boolean => v === undefined || v === null || (Array.isArray(v) && v.length === 0) || (isPlainObject(v) && Object.keys(v).length === 0);


/** The Go field name of a JSON key (nodeName → NodeName), as go-cmp names it. */
const goFieldName = (k: string): string => k.charAt(0).toUpperCase() + k.slice(1);

/**
 * The Forbidden error of an update that changed an immutable spec (what may change already taken
 * from the old one): kube's message, then a diff of the two. kube's is go-cmp's, whose output is
 * deliberately unstable; this one lists the changed top-level fields of `goType` in its shape.
 * Undefined when nothing changed (semanticEqual).
 */
export function specChangeError(field: string, message: string, goType: string, was: Obj, now: Obj): FieldError | undefined {
  const changed = [...new Set([...Object.keys(was), ...Object.keys(now)])].filter((k) => !semanticEqual(was[k], now[k]));
  if (changed.length === 0) return undefined;
  const lines = changed.flatMap((k) => [
    ...(isEmpty(was[k]) ? [] : [`- \t${goFieldName(k)}: ${JSON.stringify(was[k])},`]),
    ...(isEmpty(now[k]) ? [] : [`+ \t${goFieldName(k)}: ${JSON.stringify(now[k])},`]),
  ]);
  return forbiddenError(field, `${message}\n  ${goType}{\n${lines.join('\n')}\n  }\n`);
}
